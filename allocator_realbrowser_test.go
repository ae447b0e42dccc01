package browserpool_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
)

// TestAllocatorOnRealChromiumQueuesTheFifthAndSixthTask runs six tasks on
// one computer with a cap of 4 and real Chromium: four get their own
// browsers at once, two queue, and the fifth and sixth get browsers, in
// that order, as the first two finish. It skips only when no browser is
// installed and BROWSERPOOL_REQUIRE_BROWSER is not 1.
func TestAllocatorOnRealChromiumQueuesTheFifthAndSixthTask(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	// Six launches, four at once: on a loaded 2-core machine they take
	// seconds each, so the deadline is generous and the queue has no budget
	// of its own (ctx bounds the waits): what is tested is the order.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p, err := browserpool.NewPool(browserpool.Config{Root: t.TempDir(), LaunchTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	audit := &auditLog{}
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{
		Computers: []browserpool.Computer{{Name: "local", Pool: p}}, // Cap zero: the default 4
		Budget:    -1,
		Audit:     audit.add,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	// evaluate proves a lease's browser is real and its own.
	evaluate := func(l *browserpool.Lease) {
		t.Helper()
		tab, err := l.Session().OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatalf("%s: open tab: %v", l.Task(), err)
		}
		reply, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(fmt.Sprintf("%q + (6*7)", l.Task())).SetReturnByValue(true))
		if err != nil {
			t.Fatalf("%s: evaluate: %v", l.Task(), err)
		}
		if got, want := string(reply.Result.Value), fmt.Sprintf(`"%s42"`, l.Task()); got != want {
			t.Errorf("%s: evaluate gave %s, want %s", l.Task(), got, want)
		}
	}

	leases := map[string]*browserpool.Lease{}
	for _, task := range []string{"t1", "t2", "t3", "t4"} {
		l, err := a.Acquire(ctx, task, browserpool.AcquireOptions{Computer: "local"})
		if err != nil {
			t.Fatalf("Acquire(%s): %v", task, err)
		}
		leases[task] = l
	}
	fifth := acquireInBackground(ctx, a, "t5")
	waitFor(t, "t5 to queue", func() bool { return a.Stats().Total.Waiting == 1 })
	sixth := acquireInBackground(ctx, a, "t6")
	waitFor(t, "t6 to queue", func() bool { return a.Stats().Total.Waiting == 2 })

	pids := map[int]string{}
	for _, task := range []string{"t1", "t2", "t3", "t4"} {
		l := leases[task]
		evaluate(l)
		pid := l.Session().Info().PID
		if other, dup := pids[pid]; dup || pid == 0 {
			t.Fatalf("%s's browser pid %d (shared with %q)", task, pid, other)
		}
		pids[pid] = task
	}
	// A queued task never preempts: all four are still live.
	st := a.Stats().Total
	if diff := cmp.Diff([]int{4, 4, 2, 0}, []int{st.Cap, st.InUse, st.Waiting, len(p.Sessions()) - 4}); diff != "" {
		t.Errorf("cap, in use, waiting, extra sessions (-want +got):\n%s", diff)
	}

	if err := a.Finish(ctx, "t1", browserpool.TaskCompleted); err != nil {
		t.Fatal(err)
	}
	r := <-fifth
	if r.err != nil {
		t.Fatalf("t5: %v", r.err)
	}
	evaluate(r.lease)
	if st := a.Stats().Total; st.Waiting != 1 || st.InUse != 4 {
		t.Errorf("after t1 finished: waiting %d, in use %d; want 1, 4", st.Waiting, st.InUse)
	}
	if err := a.Finish(ctx, "t2", browserpool.TaskFailed); err != nil {
		t.Fatal(err)
	}
	r6 := <-sixth
	if r6.err != nil {
		t.Fatalf("t6: %v", r6.err)
	}
	evaluate(r6.lease)
	for _, task := range []string{"t3", "t4", "t5", "t6"} {
		if err := a.Finish(ctx, task, browserpool.TaskCompleted); err != nil {
			t.Errorf("Finish(%s): %v", task, err)
		}
	}
	if n := len(p.Sessions()); n != 0 {
		t.Errorf("%d sessions live after every task finished", n)
	}
	st = a.Stats().Total
	got := []any{st.Acquires, st.Waits, st.Reclaims[browserpool.TaskCompleted], st.Reclaims[browserpool.TaskFailed], st.Leaked, st.InUse}
	if diff := cmp.Diff([]any{uint64(6), uint64(2), uint64(5), uint64(1), 0, 0}, got); diff != "" {
		t.Errorf("acquires, waits, completed, failed, leaked, in use (-want +got):\n%s", diff)
	}
	if n := p.Stats().Closes[browserpool.ReasonTaskEnd]; n != 6 {
		t.Errorf("the pool closed %d sessions with reason task_end, want 6", n)
	}
	a.Close()
	want := []string{
		"allocated t1@local S1", "allocated t2@local S2", "allocated t3@local S3", "allocated t4@local S4",
		"queued t5@local ahead=0", "queued t6@local ahead=1",
		"reclaimed t1@local S1 state=completed reason=task_end",
		"allocated t5@local S5",
		"reclaimed t2@local S2 state=failed reason=task_end",
		"allocated t6@local S6",
		"reclaimed t3@local S3 state=completed reason=task_end",
		"reclaimed t4@local S4 state=completed reason=task_end",
		"reclaimed t5@local S5 state=completed reason=task_end",
		"reclaimed t6@local S6 state=completed reason=task_end",
	}
	if diff := cmp.Diff(want, audit.lines(false)); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

func acquireInBackground(ctx context.Context, a *browserpool.Allocator, task string) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		l, err := a.Acquire(ctx, task, browserpool.AcquireOptions{Computer: "local"})
		ch <- acquired{l, err}
	}()
	return ch
}
