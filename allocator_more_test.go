// Room: the Allocator's rejections, bindings, shared sessions, failed
// closes and launches, Close, stats, config checks, the audit hook and the
// benchmark (the fixture and the queue are allocator_test.go's).

package browserpool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/semaphore"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestAllocatorRejectPolicyFailsAtOnceAtTheCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		start := time.Now()
		_, err := f.a.Acquire(context.Background(), "eager", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject})
		if time.Since(start) != 0 {
			t.Errorf("reject took %v", time.Since(start))
		}
		want := `browserpool: Allocator.Acquire task=eager: computer is at its session cap: computer "c1" has all 1 of its sessions in use and the acquire asked for PolicyReject (hint: retry later, or acquire with PolicyQueue to wait in line for a free slot)`
		if err == nil || err.Error() != want {
			t.Errorf("got\n%v\nwant\n%s", err, want)
		}
		if !errors.Is(err, browserpool.ErrRejected) {
			t.Errorf("errors.Is(err, ErrRejected) = false")
		}
		// A rejected task holds nothing and may queue later.
		queued := f.acquireAsync(context.Background(), "eager", browserpool.AcquireOptions{})
		synctest.Wait()
		// Rejection also respects the queue: with someone waiting, a free
		// slot would go to them first, so reject.
		_, err = f.a.Acquire(context.Background(), "other", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject})
		if !errors.Is(err, browserpool.ErrRejected) || !strings.Contains(err.Error(), "; 1 tasks are queued") {
			t.Errorf("got %v, want ErrRejected naming the queue", err)
		}
		f.mustFinish("holder", browserpool.TaskCompleted)
		if r := <-queued; r.err != nil {
			t.Fatal(r.err)
		}
		st := f.a.Stats().Computers["c1"]
		if st.Rejections != 2 || st.QueueFull != 0 {
			t.Errorf("rejections %d, queue full %d; want 2, 0", st.Rejections, st.QueueFull)
		}
	})
}

func TestAllocatorFullQueueRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := oneComputer("c1", 1)
		cfg.MaxQueue = 2
		f := newAllocFixture(t, cfg)
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f.acquireAsync(ctx, "w1", browserpool.AcquireOptions{Computer: "c1"})
		f.acquireAsync(ctx, "w2", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		_, err := f.a.Acquire(ctx, "w3", browserpool.AcquireOptions{Computer: "c1"})
		want := `browserpool: Allocator.Acquire task=w3: session queue is full: computer "c1" has all 1 of its sessions in use and 2 tasks already waiting (MaxQueue 2) (hint: the computer is overloaded: retry later, or finish tasks that no longer need a browser)`
		if err == nil || err.Error() != want {
			t.Errorf("got\n%v\nwant\n%s", err, want)
		}
		if st := f.a.Stats().Total; st.Rejections != 1 || st.QueueFull != 1 {
			t.Errorf("rejections %d, queue full %d; want 1, 1", st.Rejections, st.QueueFull)
		}
		cancel()
		synctest.Wait()
	})
}

func TestAllocatorBindingErrorsNameBothComputers(t *testing.T) {
	cfg := browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1"}, {Name: "c2"}}}
	f := newAllocFixture(t, cfg)
	ctx := context.Background()
	if err := f.a.Bind("t1", "c1"); err != nil {
		t.Fatal(err)
	}
	if err := f.a.Bind("t1", "c1"); err != nil {
		t.Errorf("binding again to the same computer: %v", err)
	}
	_, wrongAcquire := f.a.Acquire(ctx, "t1", browserpool.AcquireOptions{Computer: "c2"})
	wrongBind := f.a.Bind("t1", "c2")
	_, unbound := f.a.Acquire(ctx, "t2", browserpool.AcquireOptions{})
	unknown := f.a.Bind("t2", "c9")
	badID := f.a.Bind("no spaces", "c1")
	f.mustAcquire("owner", browserpool.AcquireOptions{Computer: "c2"})
	_, crossShare := f.a.Acquire(ctx, "t1", browserpool.AcquireOptions{ShareWith: "owner"})
	_, noShare := f.a.Acquire(ctx, "t1", browserpool.AcquireOptions{ShareWith: "nobody"})
	finishUnknown := f.a.Finish(ctx, "t2", browserpool.TaskCompleted)

	got := []string{}
	for _, err := range []error{wrongAcquire, wrongBind, unbound, unknown, badID, crossShare, noShare, finishUnknown} {
		got = append(got, fmt.Sprint(err))
	}
	want := []string{
		`browserpool: Allocator.Acquire task=t1: task is bound to another computer: task t1 is bound to computer "c1", not "c2" (hint: acquire on computer "c1" (leave AcquireOptions.Computer empty to use the binding), or Finish the task and start a new task on "c2")`,
		`browserpool: Allocator.Bind task=t1: task is bound to another computer: task t1 is bound to computer "c1", not "c2" (hint: acquire on computer "c1" (leave AcquireOptions.Computer empty to use the binding), or Finish the task and start a new task on "c2")`,
		`browserpool: Allocator.Acquire task=t2: task is not bound to a computer: task t2 is bound to no computer; computers: [c1, c2] (hint: bind the task first with Allocator.Bind(task, computer), or name the computer in AcquireOptions.Computer)`,
		`browserpool: Allocator.Bind task=t2: no such computer: no computer is named "c9"; computers: [c1, c2] (hint: use one of the computer names listed above)`,
		`browserpool: Allocator.Bind: invalid id: task "no spaces" (hint: use 1 to 64 letters, digits, '-' or '_')`,
		`browserpool: Allocator.Acquire task=t1: task is bound to another computer: task t1 is bound to computer "c1", but task owner's session is on "c2" (hint: share only with tasks on computer "c1", or drop ShareWith to get a session of the task's own)`,
		`browserpool: Allocator.Acquire task=t1: no session to share: task nobody holds no live session of its own on computer "c1" (hint: acquire a session for the task named in ShareWith first, or drop ShareWith to give this task its own session)`,
		`browserpool: Allocator.Finish task=t2: task is not bound to a computer: task t2 is not known: never bound, or already finished (hint: nothing to finish: a task is known from its first Bind or Acquire until its Finish; check the task's name)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	for i, class := range []error{browserpool.ErrWrongComputer, browserpool.ErrWrongComputer, browserpool.ErrNotBound, browserpool.ErrUnknownComputer,
		browserpool.ErrInvalidID, browserpool.ErrWrongComputer, browserpool.ErrNotShared, browserpool.ErrNotBound} {
		var e *browserpool.Error
		err := []error{wrongAcquire, wrongBind, unbound, unknown, badID, crossShare, noShare, finishUnknown}[i]
		if !errors.Is(err, class) || !errors.As(err, &e) {
			t.Errorf("error %d is not an *Error of class %v: %v", i, class, err)
		}
	}
	// After Finish the binding is forgotten: the task id may start anew
	// elsewhere.
	f.mustFinish("t1", browserpool.TaskCompleted)
	if err := f.a.Bind("t1", "c2"); err != nil {
		t.Errorf("binding a finished task anew: %v", err)
	}
}

func TestAllocatorShareWithUsesTheOwnersSessionWithoutASlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		owner := f.mustAcquire("owner", browserpool.AcquireOptions{Computer: "c1"})

		// Without a share strategy a task never gets another's session: at
		// the cap it is rejected (or would queue).
		_, err := f.a.Acquire(context.Background(), "helper", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject})
		if !errors.Is(err, browserpool.ErrRejected) {
			t.Fatalf("helper without ShareWith: got %v, want ErrRejected", err)
		}
		shared := f.mustAcquire("helper", browserpool.AcquireOptions{ShareWith: "owner", Policy: browserpool.PolicyReject})
		if shared.Session() != owner.Session() || !shared.Shared() || shared.Owner() != "owner" || shared.Task() != "helper" {
			t.Errorf("shared lease: session %s (owner's %s), shared %v, owner %q, task %q",
				shared.Session().ID(), owner.Session().ID(), shared.Shared(), shared.Owner(), shared.Task())
		}
		if again := f.mustAcquire("helper", browserpool.AcquireOptions{ShareWith: "owner"}); again != shared {
			t.Errorf("acquiring the share again returned another lease")
		}
		// A task holding a share cannot silently switch to a session of its
		// own.
		_, err = f.a.Acquire(context.Background(), "helper", browserpool.AcquireOptions{})
		want := fmt.Sprintf(`browserpool: Allocator.Acquire task=helper: task already has a session or an acquire in progress: task helper already holds session %s shared from task owner (hint: use the session the task already holds (Lease.Session), or Finish the task before acquiring differently)`, owner.Session().ID())
		if err == nil || err.Error() != want {
			t.Errorf("got\n%v\nwant\n%s", err, want)
		}
		if st := f.a.Stats().Total; st.InUse != 1 || st.Sharing != 1 || st.Acquires != 2 {
			t.Errorf("in use %d, sharing %d, acquires %d; want 1, 1, 2", st.InUse, st.Sharing, st.Acquires)
		}
		// The helper finishing leaves the owner's session alone.
		f.mustFinish("helper", browserpool.TaskCompleted)
		if err := owner.Session().Err(); err != nil {
			t.Errorf("the owner's session ended when the helper finished: %v", err)
		}
		f.mustFinish("owner", browserpool.TaskCompleted)
		if err := owner.Session().Err(); err == nil {
			t.Errorf("the owner's session is still live after the owner finished")
		}
		synctest.Wait()
		want2 := []string{
			"allocated owner@c1 S1",
			"rejected helper@c1 err=computer is at its session cap",
			"allocated helper@c1 S1 owner=owner",
			"released helper@c1 S1 owner=owner state=completed",
			"reclaimed owner@c1 S1 state=completed reason=task_end",
		}
		if diff := cmp.Diff(want2, f.audit.lines(false)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorCountsAFailedCloseAsLeakedAndRetriesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := oneComputer("c1", 1)
		cfg.LeakRetry = time.Minute
		f := newAllocFixture(t, cfg)
		l := f.mustAcquire("t1", browserpool.AcquireOptions{Computer: "c1"})
		waiter := f.acquireAsync(context.Background(), "t2", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()

		f.launchers["c1"].FailStops(errors.New("kill: operation not permitted"))
		err := f.a.Finish(context.Background(), "t1", browserpool.TaskFailed)
		var e *browserpool.Error
		if !errors.Is(err, browserpool.ErrLeaked) || !errors.As(err, &e) || e.Session != l.Session().ID() || e.Task != "t1" {
			t.Fatalf("Finish: got %v, want an ErrLeaked *Error naming t1 and its session", err)
		}
		wantHint := "nothing to do for this task: the allocator retries the close every 1m0s and reports it in Allocator.Stats (Leaked); check the computer if the count keeps growing"
		if e.Hint != wantHint {
			t.Errorf("hint %q, want %q", e.Hint, wantHint)
		}
		// One sentence, one hint: the session's own close error inside it
		// has neither its prefix nor its hint.
		if msg := err.Error(); strings.Count(msg, "browserpool:") != 1 || strings.Count(msg, "(hint:") != 1 {
			t.Errorf("the leak error reads %q; want one browserpool: prefix and one hint", msg)
		}
		// A leaked session does not hold its slot: the queue moves on.
		f.launchers["c1"].FailStops(nil)
		if r := <-waiter; r.err != nil {
			t.Fatalf("t2: %v", r.err)
		}
		st := f.a.Stats().Total
		got := []any{st.Leaked, st.Leaks, st.LeaksRecovered, st.Reclaims[browserpool.TaskFailed], st.InUse}
		if diff := cmp.Diff([]any{1, uint64(1), uint64(0), uint64(0), 1}, got); diff != "" {
			t.Errorf("leaked, leaks, recovered, failed reclaims, in use (-want +got):\n%s", diff)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		st = f.a.Stats().Total
		got = []any{st.Leaked, st.Leaks, st.LeaksRecovered}
		if diff := cmp.Diff([]any{0, uint64(1), uint64(1)}, got); diff != "" {
			t.Errorf("after the retry: leaked, leaks, recovered (-want +got):\n%s", diff)
		}
		if got := manifestSessions(t, f.pools["c1"]); len(got) != 1 || got[0] == l.Session().ID() {
			t.Errorf("manifest after the retry names %v, want only t2's session", got)
		}
		want := []string{
			"allocated t1@c1 S1",
			"queued t2@c1 ahead=0",
			"leaked t1@c1 S1 state=failed reason=task_end err=session could not be closed",
			"allocated t2@c1 S2",
			"leak_recovered t1@c1 S1 state=failed",
		}
		if diff := cmp.Diff(want, f.audit.lines(false)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorFinishWhileQueuedEndsTheAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		r := f.acquireAsync(context.Background(), "t1", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		f.mustFinish("t1", browserpool.TaskCancelled)
		got := <-r
		want := `browserpool: Allocator.Acquire task=t1: task finished while acquiring a session: Finish(cancelled) ended the task while it waited for a session on computer "c1" (hint: the task is over; use a new task id if more browser work is needed)`
		if got.err == nil || got.err.Error() != want {
			t.Errorf("got\n%v\nwant\n%s", got.err, want)
		}
		if st := f.a.Stats().Total; st.Waiting != 0 || st.CancelledAcquires != 1 {
			t.Errorf("waiting %d, cancelled %d; want 0, 1", st.Waiting, st.CancelledAcquires)
		}
	})
}

func TestAllocatorFinishDuringALaunchHandsItToTheNextWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.launchers["c1"].SetLaunchDelay(time.Second)
		first := f.acquireAsync(context.Background(), "first", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		second := f.acquireAsync(context.Background(), "second", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		f.mustFinish("first", browserpool.TaskCancelled)
		if r := <-first; !errors.Is(r.err, browserpool.ErrTaskFinished) {
			t.Errorf("first: got %v, want ErrTaskFinished", r.err)
		}
		if r := <-second; r.err != nil {
			t.Fatal(r.err)
		}
		if got := len(f.launchers["c1"].Browsers()); got != 1 {
			t.Errorf("launched %d browsers, want 1", got)
		}
	})
}

func TestAllocatorReacquireAfterACrashRelaunchesInTheTasksSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		l := f.mustAcquire("t1", browserpool.AcquireOptions{Computer: "c1"})
		waiter := f.acquireAsync(context.Background(), "t2", browserpool.AcquireOptions{Computer: "c1", Budget: -1})
		synctest.Wait()
		f.launchers["c1"].Browsers()[0].Exit(1)
		<-l.Session().Done()
		l2 := f.mustAcquire("t1", browserpool.AcquireOptions{})
		if l2 == l || l2.Session() == l.Session() || l2.Session().Err() != nil {
			t.Errorf("re-acquire after a crash did not give a new live session")
		}
		st := f.a.Stats().Total
		if st.InUse != 1 || st.Waiting != 1 {
			t.Errorf("in use %d, waiting %d; want 1, 1 (t2 still queued)", st.InUse, st.Waiting)
		}
		f.mustFinish("t1", browserpool.TaskCompleted)
		if r := <-waiter; r.err != nil {
			t.Fatal(r.err)
		}
		synctest.Wait()
		want := []string{
			"allocated t1@c1 S1",
			"queued t2@c1 ahead=0",
			"reclaimed t1@c1 S1 reason=crashed",
			"allocated t1@c1 S2",
			"reclaimed t1@c1 S2 state=completed reason=task_end",
			"allocated t2@c1 S3",
		}
		if diff := cmp.Diff(want, f.audit.lines(false)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorFailedLaunchGivesTheSlotBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.launchers["c1"].FailLaunches(errors.New("no display"))
		_, err := f.a.Acquire(context.Background(), "t1", browserpool.AcquireOptions{Computer: "c1"})
		var e *browserpool.Error
		if !errors.Is(err, browserpool.ErrLaunchFailed) || !errors.As(err, &e) || e.Task != "t1" || e.Op != "Allocator.Acquire" {
			t.Fatalf("got %v, want ErrLaunchFailed from Allocator.Acquire (the call made, not the launch's Pool.Open) naming t1", err)
		}
		f.launchers["c1"].FailLaunches(nil)
		f.mustAcquire("t1", browserpool.AcquireOptions{Policy: browserpool.PolicyReject})
		st := f.a.Stats().Total
		if st.LaunchFailures != 1 || st.Acquires != 1 || st.InUse != 1 {
			t.Errorf("launch failures %d, acquires %d, in use %d; want 1, 1, 1", st.LaunchFailures, st.Acquires, st.InUse)
		}
		synctest.Wait()
		want := []string{"launch_failed t1@c1 err=browser launch failed", "allocated t1@c1 S1"}
		if diff := cmp.Diff(want, f.audit.lines(false)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorCloseEndsWaitersAndReclaimsHeldSessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		l := f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		waiter := f.acquireAsync(context.Background(), "waiter", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		if err := f.a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.a.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		r := <-waiter
		if !errors.Is(r.err, browserpool.ErrPoolClosed) {
			t.Errorf("waiter: got %v, want ErrPoolClosed", r.err)
		}
		if l.Session().Err() == nil {
			t.Errorf("the held session is still live after Close")
		}
		if n := len(f.pools["c1"].Sessions()); n != 0 {
			t.Errorf("%d sessions live after Close", n)
		}
		_, err := f.a.Acquire(context.Background(), "holder", browserpool.AcquireOptions{})
		if !errors.Is(err, browserpool.ErrPoolClosed) {
			t.Errorf("Acquire after Close: got %v, want ErrPoolClosed", err)
		}
		want := []string{
			"allocated holder@c1 S1",
			"queued waiter@c1 ahead=0",
			"cancelled waiter@c1 err=pool is closed",
			"reclaimed holder@c1 S1 reason=shutdown",
		}
		if diff := cmp.Diff(want, f.audit.lines(false)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
		if st := f.a.Stats().Total; st.ShutdownReclaims != 1 || st.InUse != 0 {
			t.Errorf("shutdown reclaims %d, in use %d; want 1, 0", st.ShutdownReclaims, st.InUse)
		}
	})
}

func TestAllocatorStatsArePerComputerAndTotal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1", Cap: 1}, {Name: "c2", Cap: 2}}}
		f := newAllocFixture(t, cfg)
		f.mustAcquire("a1", browserpool.AcquireOptions{Computer: "c1"})
		f.mustAcquire("b1", browserpool.AcquireOptions{Computer: "c2"})
		f.acquireAsync(context.Background(), "a2", browserpool.AcquireOptions{Computer: "c1"})
		time.Sleep(3 * time.Second)
		f.acquireAsync(context.Background(), "a3", browserpool.AcquireOptions{Computer: "c1"})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		f.mustFinish("b1", browserpool.TaskCompleted)
		got := f.a.Stats()
		want := browserpool.AllocatorStats{
			Total: browserpool.ComputerStats{Cap: 3, InUse: 1, Waiting: 2, OldestWait: 5 * time.Second, Acquires: 2, Waits: 2,
				Reclaims: map[browserpool.TaskState]uint64{browserpool.TaskCompleted: 1}},
			Computers: map[string]browserpool.ComputerStats{
				"c1": {Cap: 1, InUse: 1, Waiting: 2, OldestWait: 5 * time.Second, Acquires: 1, Waits: 2, Reclaims: map[browserpool.TaskState]uint64{}},
				"c2": {Cap: 2, Acquires: 1, Reclaims: map[browserpool.TaskState]uint64{browserpool.TaskCompleted: 1}},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
		f.a.Close()
	})
}

func TestNewAllocatorRejectsBadConfigNamingTheField(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: t.TempDir(), Launcher: cdptest.NewLauncher(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		cfg  browserpool.AllocatorConfig
		want string
	}{
		{browserpool.AllocatorConfig{}, "Computers: at least one computer is required"},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a b", Pool: p}}}, `Computers[0].Name: "a b" is not 1 to 64 letters, digits, '-' or '_'`},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a"}}}, "Computers[0].Pool: is required"},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a", Pool: p, Cap: -1}}}, "Computers[0].Cap: must not be negative (got -1); zero means 4"},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a", Pool: p}, {Name: "a", Pool: p}}}, `Computers[1].Name: "a" names two computers`},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a", Pool: p}, {Name: "b", Pool: p}}}, `Computers[1].Pool: already serves computer "a"; give each computer its own Pool`},
		{browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a", Pool: p}}, MaxQueue: -1}, "MaxQueue: must not be negative (got -1); zero means unbounded"},
	} {
		_, err := browserpool.NewAllocator(tc.cfg)
		want := "browserpool: NewAllocator: invalid config: " + tc.want + " (hint: fix the AllocatorConfig field named above)"
		if err == nil || err.Error() != want || !errors.Is(err, browserpool.ErrInvalidConfig) {
			t.Errorf("got\n%v\nwant\n%s", err, want)
		}
	}
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "a", Pool: p}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cfg := a.Config()
	got := []any{cfg.Computers[0].Cap, cfg.Budget, cfg.MaxQueue, cfg.LeakRetry}
	if diff := cmp.Diff([]any{4, 30 * time.Second, 0, time.Minute}, got); diff != "" {
		t.Errorf("defaults: cap, budget, max queue, leak retry (-want +got):\n%s", diff)
	}
}

func TestAllocatorAuditHookNeverStallsAllocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var calls int
		l := cdptest.NewLauncher(t)
		p, err := browserpool.NewPool(browserpool.Config{Root: t.TempDir(), Launcher: l, IdleTimeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{
			Computers: []browserpool.Computer{{Name: "c1", Pool: p}},
			Audit: func(ev browserpool.AuditEvent) {
				calls++
				if calls == 1 {
					<-release // a slow hook
				}
				if calls == 2 {
					panic("a buggy hook")
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range []string{"t1", "t2", "t3"} {
			if _, err := a.Acquire(context.Background(), task, browserpool.AcquireOptions{Computer: "c1"}); err != nil {
				t.Fatal(err)
			}
			if err := a.Finish(context.Background(), task, browserpool.TaskCompleted); err != nil {
				t.Fatal(err)
			}
		}
		close(release)
		a.Close()
		if calls != 6 {
			t.Errorf("audit ran %d times, want 6", calls)
		}
	})
}

// manifestSessions returns the session ids p's manifest records.
func manifestSessions(t testing.TB, p *browserpool.Pool) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.Config().Root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Entries []struct{ Session string } }
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range m.Entries {
		ids = append(ids, e.Session)
	}
	return ids
}

// BenchmarkAllocatorOnCdptest measures whole acquire/finish pairs on fake
// browsers, with a cap of 4 and g goroutines: each pair launches a cdptest
// browser through the pool (manifest writes included) and closes it. The
// semaphore variant does the same launches and closes under an
// x/sync/semaphore of 4, in the same run: the floor for a fair queue over
// this pool. The queue's own cost, without browsers, is in
// BenchmarkAllocatorHandoff.
func BenchmarkAllocatorOnCdptest(b *testing.B) {
	for _, g := range []int{1, 8, 256} {
		b.Run(fmt.Sprintf("goroutines=%d/semaphore", g), func(b *testing.B) {
			p, err := browserpool.NewPool(browserpool.Config{Root: b.TempDir(), Launcher: cdptest.NewLauncher(b), IdleTimeout: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			sem := semaphore.NewWeighted(4)
			ctx := context.Background()
			runPairs(b, g, func(string) error {
				if err := sem.Acquire(ctx, 1); err != nil {
					return err
				}
				defer sem.Release(1)
				s, err := p.Open(ctx)
				if err != nil {
					return err
				}
				return s.Close(ctx)
			})
		})
		b.Run(fmt.Sprintf("goroutines=%d/allocator", g), func(b *testing.B) {
			p, err := browserpool.NewPool(browserpool.Config{Root: b.TempDir(), Launcher: cdptest.NewLauncher(b), IdleTimeout: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1", Pool: p}}})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			ctx := context.Background()
			runPairs(b, g, func(task string) error {
				if _, err := a.Acquire(ctx, task, browserpool.AcquireOptions{Computer: "c1"}); err != nil {
					return err
				}
				return a.Finish(ctx, task, browserpool.TaskCompleted)
			})
		})
	}
}

// runPairs runs b.N calls of pair over g goroutines and reports pairs/s.
func runPairs(b *testing.B, g int, pair func(task string) error) {
	b.Helper()
	var next sync.WaitGroup
	var mu sync.Mutex
	left := b.N
	b.ResetTimer()
	for i := range g {
		task := fmt.Sprintf("g%d", i)
		next.Add(1)
		go func() {
			defer next.Done()
			for {
				mu.Lock()
				if left == 0 {
					mu.Unlock()
					return
				}
				left--
				mu.Unlock()
				if err := pair(task); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	next.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}
