package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// allocFixture is an Allocator over computers made of cdptest launchers,
// one launcher and one pool per computer, with every audit event recorded.
type allocFixture struct {
	t         testing.TB
	a         *browserpool.Allocator
	pools     map[string]*browserpool.Pool
	launchers map[string]*cdptest.Launcher
	audit     *auditLog
}

// newAllocFixture builds the allocator of cfg, filling in each computer's
// Pool (cdptest launcher, root under t.TempDir, no idle reaper) and Audit.
// Everything closes at cleanup. Inside a synctest bubble, call it there.
func newAllocFixture(t testing.TB, cfg browserpool.AllocatorConfig) *allocFixture {
	t.Helper()
	f := &allocFixture{t: t, pools: map[string]*browserpool.Pool{}, launchers: map[string]*cdptest.Launcher{}, audit: &auditLog{}}
	for i, c := range cfg.Computers {
		l := cdptest.NewLauncher(t)
		p, err := browserpool.NewPool(browserpool.Config{Root: t.TempDir(), Launcher: l, IdleTimeout: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		cfg.Computers[i].Pool = p
		f.pools[c.Name], f.launchers[c.Name] = p, l
	}
	cfg.Audit = f.audit.add
	a, err := browserpool.NewAllocator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	f.a = a
	return f
}

func oneComputer(name string, cap int) browserpool.AllocatorConfig {
	return browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: name, Cap: cap}}}
}

type acquired struct {
	lease *browserpool.Lease
	err   error
}

// acquireAsync runs Acquire on its own goroutine.
func (f *allocFixture) acquireAsync(ctx context.Context, task string, opts browserpool.AcquireOptions) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		l, err := f.a.Acquire(ctx, task, opts)
		ch <- acquired{l, err}
	}()
	return ch
}

func (f *allocFixture) mustAcquire(task string, opts browserpool.AcquireOptions) *browserpool.Lease {
	f.t.Helper()
	l, err := f.a.Acquire(context.Background(), task, opts)
	if err != nil {
		f.t.Fatalf("Acquire(%s): %v", task, err)
	}
	return l
}

func (f *allocFixture) mustFinish(task string, state browserpool.TaskState) {
	f.t.Helper()
	if err := f.a.Finish(context.Background(), task, state); err != nil {
		f.t.Fatalf("Finish(%s): %v", task, err)
	}
}

// auditLog records audit events and shows them as stable lines.
type auditLog struct {
	mu  sync.Mutex
	evs []browserpool.AuditEvent
}

func (l *auditLog) add(ev browserpool.AuditEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func (l *auditLog) events() []browserpool.AuditEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]browserpool.AuditEvent(nil), l.evs...)
}

// lines renders the events one per line, sessions numbered S1, S2, ... in
// order of first appearance. With waits, queue waits are shown (exact
// inside a synctest bubble).
func (l *auditLog) lines(waits bool) []string {
	ids := map[string]string{}
	var out []string
	for _, ev := range l.events() {
		s := string(ev.Kind) + " " + ev.Task + "@" + ev.Computer
		if ev.Session != "" {
			if ids[ev.Session] == "" {
				ids[ev.Session] = fmt.Sprintf("S%d", len(ids)+1)
			}
			s += " " + ids[ev.Session]
		}
		if ev.Owner != "" {
			s += " owner=" + ev.Owner
		}
		if ev.Kind == browserpool.AuditQueued || ev.Kind == browserpool.AuditQueueTimeout {
			s += fmt.Sprintf(" ahead=%d", ev.Ahead)
		}
		if waits && ev.Wait != 0 {
			s += " wait=" + ev.Wait.String()
		}
		if ev.State != "" {
			s += " state=" + string(ev.State)
		}
		if ev.Reason != "" {
			s += " reason=" + string(ev.Reason)
		}
		if ev.Err != nil {
			s += " err=" + errClass(ev.Err)
		}
		out = append(out, s)
	}
	return out
}

// errClass names the class of an allocator error, for compact comparisons.
func errClass(err error) string {
	for _, c := range []error{browserpool.ErrQueueTimeout, browserpool.ErrRejected, browserpool.ErrQueueFull,
		browserpool.ErrTaskFinished, browserpool.ErrLeaked, browserpool.ErrPoolClosed, browserpool.ErrLaunchFailed,
		context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			return strings.TrimPrefix(fmt.Sprint(c), "context ")
		}
	}
	return err.Error()
}

func TestAllocatorGivesEachTaskItsOwnSession(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 4))
	seen := map[string]string{}
	for _, task := range []string{"t1", "t2", "t3"} {
		l := f.mustAcquire(task, browserpool.AcquireOptions{Computer: "c1"})
		if other, dup := seen[l.Session().ID()]; dup {
			t.Fatalf("tasks %s and %s got the same session %s", other, task, l.Session().ID())
		}
		seen[l.Session().ID()] = task
		got := []any{l.Task(), l.Owner(), l.Computer(), l.Shared(), l.Waited()}
		if diff := cmp.Diff([]any{task, task, "c1", false, time.Duration(0)}, got); diff != "" {
			t.Errorf("lease of %s (-want +got):\n%s", task, diff)
		}
	}
	// Acquiring again while the session lives is the same lease, not a new
	// session.
	l1 := f.mustAcquire("t1", browserpool.AcquireOptions{})
	l1again := f.mustAcquire("t1", browserpool.AcquireOptions{Computer: "c1"})
	if l1 != l1again {
		t.Errorf("a second Acquire of t1 returned another lease")
	}
	if got := len(f.launchers["c1"].Browsers()); got != 3 {
		t.Errorf("launched %d browsers for 3 tasks, want 3", got)
	}
	st := f.a.Stats().Computers["c1"]
	if diff := cmp.Diff([]int{4, 3, 0, 0}, []int{st.Cap, st.InUse, st.Waiting, st.Starting}); diff != "" {
		t.Errorf("cap, in use, waiting, starting (-want +got):\n%s", diff)
	}
}

// TestAllocatorQueueIsStrictFIFOWithManyWaiters hammers one slot with many
// waiters (run it with -race): the order in which they get the slot is
// exactly the order in which they queued.
func TestAllocatorQueueIsStrictFIFOWithManyWaiters(t *testing.T) {
	const n = 64
	cfg := oneComputer("c1", 1)
	cfg.Budget = -1
	f := newAllocFixture(t, cfg)
	f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})

	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		task := fmt.Sprintf("w%02d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ctx := context.Background()
			if i%2 == 1 { // half of them with a context that can end
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			l, err := f.a.Acquire(ctx, task, browserpool.AcquireOptions{Computer: "c1"})
			if err != nil {
				t.Errorf("Acquire(%s): %v", task, err)
				return
			}
			mu.Lock()
			order = append(order, l.Task())
			mu.Unlock()
			if err := f.a.Finish(ctx, task, browserpool.TaskCompleted); err != nil {
				t.Errorf("Finish(%s): %v", task, err)
			}
		}()
	}
	close(start) // all race to queue at once
	waitFor(t, "every waiter to queue", func() bool { return f.a.Stats().Total.Waiting == n })

	var queued []string
	for i, ev := range f.audit.events() {
		if ev.Kind != browserpool.AuditQueued {
			continue
		}
		if ev.Ahead != len(queued) {
			t.Errorf("event %d: %s queued with %d ahead, want %d", i, ev.Task, ev.Ahead, len(queued))
		}
		queued = append(queued, ev.Task)
	}
	f.mustFinish("holder", browserpool.TaskCompleted)
	wg.Wait()
	if diff := cmp.Diff(queued, order); diff != "" {
		t.Errorf("grant order differs from queue order (-want +got):\n%s", diff)
	}
	st := f.a.Stats().Total
	got := []uint64{st.Acquires, st.Waits, st.Reclaims[browserpool.TaskCompleted], st.CancelledAcquires, st.QueueTimeouts}
	if diff := cmp.Diff([]uint64{n + 1, n, n + 1, 0, 0}, got); diff != "" {
		t.Errorf("acquires, waits, reclaims, cancelled, timeouts (-want +got):\n%s", diff)
	}
}

// TestAllocatorWaitersThatLeaveKeepTheRestInOrder queues six tasks behind a
// cap of 2, lets two of them give up, and checks who gets the slots, in
// which order, and the audit of every step, on the fake clock.
func TestAllocatorWaitersThatLeaveKeepTheRestInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 2))
		f.mustAcquire("h1", browserpool.AcquireOptions{Computer: "c1"})
		f.mustAcquire("h2", browserpool.AcquireOptions{Computer: "c1"})
		res := map[string]<-chan acquired{}
		cancels := map[string]context.CancelFunc{}
		for _, w := range []string{"w1", "w2", "w3", "w4", "w5", "w6"} {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancels[w] = cancel
			res[w] = f.acquireAsync(ctx, w, browserpool.AcquireOptions{Computer: "c1"})
			synctest.Wait() // queued, in this order
			time.Sleep(time.Second)
		}
		for _, w := range []string{"w2", "w5"} {
			cancels[w]()
			if r := <-res[w]; !errors.Is(r.err, context.Canceled) {
				t.Errorf("%s: got %v, want context.Canceled", w, r.err)
			}
		}
		f.mustFinish("h1", browserpool.TaskCompleted)
		if r := <-res["w1"]; r.err != nil {
			t.Fatalf("w1: %v", r.err)
		}
		f.mustFinish("h2", browserpool.TaskFailed)
		if r := <-res["w3"]; r.err != nil {
			t.Fatalf("w3: %v", r.err)
		}
		synctest.Wait()
		if st := f.a.Stats().Total; st.Waiting != 2 || st.InUse != 2 {
			t.Errorf("waiting %d, in use %d; want 2 and 2", st.Waiting, st.InUse)
		}
		f.mustFinish("w3", browserpool.TaskCancelled)
		if r := <-res["w4"]; r.err != nil {
			t.Fatalf("w4: %v", r.err)
		}
		f.mustFinish("w1", browserpool.TaskCompleted)
		if r := <-res["w6"]; r.err != nil {
			t.Fatalf("w6: %v", r.err)
		}
		f.mustFinish("w4", browserpool.TaskCompleted)
		f.mustFinish("w6", browserpool.TaskCompleted)
		synctest.Wait()

		want := []string{
			"allocated h1@c1 S1",
			"allocated h2@c1 S2",
			"queued w1@c1 ahead=0",
			"queued w2@c1 ahead=1",
			"queued w3@c1 ahead=2",
			"queued w4@c1 ahead=3",
			"queued w5@c1 ahead=4",
			"queued w6@c1 ahead=5",
			"cancelled w2@c1 wait=5s err=canceled",
			"cancelled w5@c1 wait=2s err=canceled",
			"reclaimed h1@c1 S1 state=completed reason=task_end",
			"allocated w1@c1 S3 wait=6s",
			"reclaimed h2@c1 S2 state=failed reason=task_end",
			"allocated w3@c1 S4 wait=4s",
			"reclaimed w3@c1 S4 state=cancelled reason=task_end",
			"allocated w4@c1 S5 wait=3s",
			"reclaimed w1@c1 S3 state=completed reason=task_end",
			"allocated w6@c1 S6 wait=1s",
			"reclaimed w4@c1 S5 state=completed reason=task_end",
			"reclaimed w6@c1 S6 state=completed reason=task_end",
		}
		if diff := cmp.Diff(want, f.audit.lines(true)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
		st := f.a.Stats().Computers["c1"]
		st.Reclaims = nil
		want2 := browserpool.ComputerStats{Cap: 2, Acquires: 6, Waits: 6, WaitTime: 21 * time.Second, CancelledAcquires: 2}
		if diff := cmp.Diff(want2, st); diff != "" {
			t.Errorf("stats (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorQueueBudgetRunsOutAfter30Seconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		holder := f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		start := time.Now()
		first := f.acquireAsync(context.Background(), "first", browserpool.AcquireOptions{Computer: "c1"})
		time.Sleep(10 * time.Second)
		second := f.acquireAsync(context.Background(), "second", browserpool.AcquireOptions{Computer: "c1"})

		r := <-first
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("first gave up after %v, want 30s", got)
		}
		want := `browserpool: Allocator.Acquire task=first: timed out waiting for a browser session: waited 30s for a free slot on computer "c1" (cap 1, all in use); 0 tasks were ahead when it queued, 0 still ahead (hint: the computer stayed busy for the whole budget: retry later, finish tasks that no longer need a browser, or raise AcquireOptions.Budget, AllocatorConfig.Budget or the computer's Cap)`
		if r.err == nil || r.err.Error() != want {
			t.Errorf("first: got\n%v\nwant\n%s", r.err, want)
		}
		if !errors.Is(r.err, browserpool.ErrQueueTimeout) {
			t.Errorf("first: errors.Is(err, ErrQueueTimeout) = false")
		}
		r = <-second
		if got := time.Since(start); got != 40*time.Second {
			t.Errorf("second gave up after %v, want 40s", got)
		}
		if r.err == nil || !strings.Contains(r.err.Error(), "waited 30s for a free slot on computer \"c1\" (cap 1, all in use); 1 task was ahead when it queued, 0 still ahead") {
			t.Errorf("second: got %v", r.err)
		}

		// No preemption: the running task kept its session throughout.
		if err := holder.Session().Err(); err != nil {
			t.Errorf("the holder's session ended: %v", err)
		}
		if n := f.pools["c1"].Stats().Closes; len(n) != 0 {
			t.Errorf("sessions closed while tasks queued: %v", n)
		}
		st := f.a.Stats().Computers["c1"]
		got := []any{st.QueueTimeouts, st.Waits, st.WaitTime, st.InUse, st.Waiting}
		if diff := cmp.Diff([]any{uint64(2), uint64(2), 60 * time.Second, 1, 0}, got); diff != "" {
			t.Errorf("timeouts, waits, wait time, in use, waiting (-want +got):\n%s", diff)
		}
		synctest.Wait()
		wantAudit := []string{
			"allocated holder@c1 S1",
			"queued first@c1 ahead=0",
			"queued second@c1 ahead=1",
			"queue_timeout first@c1 ahead=0 wait=30s err=timed out waiting for a browser session",
			"queue_timeout second@c1 ahead=0 wait=30s err=timed out waiting for a browser session",
		}
		if diff := cmp.Diff(wantAudit, f.audit.lines(true)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorPerCallBudgetOverridesTheConfiguredOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		start := time.Now()
		_, err := f.a.Acquire(context.Background(), "quick", browserpool.AcquireOptions{Computer: "c1", Budget: 2 * time.Second})
		if !errors.Is(err, browserpool.ErrQueueTimeout) || time.Since(start) != 2*time.Second {
			t.Errorf("after %v: %v; want ErrQueueTimeout after 2s", time.Since(start), err)
		}
		// Without a budget only the context bounds the wait.
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		start = time.Now()
		_, err = f.a.Acquire(ctx, "patient", browserpool.AcquireOptions{Computer: "c1", Budget: -1})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Hour {
			t.Errorf("after %v: %v; want context.DeadlineExceeded after 1h", time.Since(start), err)
		}
	})
}

func TestAllocatorBudgetsOfDifferentLengthsEachRunOutOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		start := time.Now()
		gaveUp := map[string]time.Duration{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, w := range []struct {
			task   string
			budget time.Duration
		}{{"long", 10 * time.Second}, {"none", -1}, {"short", 2 * time.Second}, {"mid", 5 * time.Second}} {
			wg.Add(1)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			go func() {
				defer wg.Done()
				_, err := f.a.Acquire(ctx, w.task, browserpool.AcquireOptions{Computer: "c1", Budget: w.budget})
				mu.Lock()
				gaveUp[w.task+" "+errClass(err)] = time.Since(start)
				mu.Unlock()
			}()
			synctest.Wait()
		}
		wg.Wait()
		want := map[string]time.Duration{
			"short timed out waiting for a browser session": 2 * time.Second,
			"mid timed out waiting for a browser session":   5 * time.Second,
			"long timed out waiting for a browser session":  10 * time.Second,
			"none deadline exceeded":                        time.Minute,
		}
		if diff := cmp.Diff(want, gaveUp); diff != "" {
			t.Errorf("who gave up when (-want +got):\n%s", diff)
		}
	})
}

// TestAllocatorSlotHandedToALeavingWaiterGoesToTheNext makes the head waiter
// give up at the instant the slot is handed to it: the slot (and a browser
// launching for it, if it got that far) goes to the next waiter, and no
// browser is launched for the one that left.
func TestAllocatorSlotHandedToALeavingWaiterGoesToTheNext(t *testing.T) {
	for range 20 { // the two goroutines race differently each time
		synctest.Test(t, func(t *testing.T) {
			f := newAllocFixture(t, oneComputer("c1", 1))
			f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			leaving := f.acquireAsync(ctx, "leaving", browserpool.AcquireOptions{Computer: "c1"})
			synctest.Wait()
			next := f.acquireAsync(context.Background(), "next", browserpool.AcquireOptions{Computer: "c1"})
			synctest.Wait()

			f.mustFinish("holder", browserpool.TaskCompleted) // hands the slot to "leaving"
			cancel()                                          // which gives up at once

			if r := <-leaving; !errors.Is(r.err, context.Canceled) {
				t.Errorf("leaving: got %v, want context.Canceled", r.err)
			}
			r := <-next
			if r.err != nil {
				t.Fatalf("next: %v", r.err)
			}
			if got := len(f.launchers["c1"].Browsers()); got != 2 {
				t.Errorf("launched %d browsers, want 2 (holder, then one for leaving-or-next)", got)
			}
			synctest.Wait()
			st := f.a.Stats().Computers["c1"]
			got := []any{st.InUse, st.Starting, st.Closing, st.Waiting, st.CancelledAcquires, st.Acquires}
			if diff := cmp.Diff([]any{1, 0, 0, 0, uint64(1), uint64(2)}, got); diff != "" {
				t.Errorf("in use, starting, closing, waiting, cancelled, acquires (-want +got):\n%s", diff)
			}
			if n := f.pools["c1"].Stats().Closes[browserpool.ReasonAbandoned]; n != 0 {
				t.Errorf("%d browsers closed as abandoned; the next waiter should have got it", n)
			}
		})
	}
}

func TestAllocatorLaunchWhoseWaiterLeavesGoesToTheNextWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.launchers["c1"].SetLaunchDelay(5 * time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		first := f.acquireAsync(ctx, "first", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait() // launching
		second := f.acquireAsync(context.Background(), "second", browserpool.AcquireOptions{Computer: "c1"})
		time.Sleep(time.Second)
		cancel()
		if r := <-first; !errors.Is(r.err, context.Canceled) {
			t.Errorf("first: got %v, want context.Canceled", r.err)
		}
		start := time.Now()
		r := <-second
		if r.err != nil {
			t.Fatal(r.err)
		}
		if got := time.Since(start); got != 4*time.Second {
			t.Errorf("second got the browser %v after first left, want 4s (the rest of first's launch)", got)
		}
		if r.lease.Waited() != time.Second {
			t.Errorf("second waited %v in the queue, want 1s", r.lease.Waited())
		}
		if got := len(f.launchers["c1"].Browsers()); got != 1 {
			t.Errorf("launched %d browsers, want 1", got)
		}
		synctest.Wait()
		want := []string{
			"queued second@c1 ahead=0",
			"cancelled first@c1 err=canceled",
			"allocated second@c1 S1 wait=1s",
		}
		if diff := cmp.Diff(want, f.audit.lines(true)); diff != "" {
			t.Errorf("audit (-want +got):\n%s", diff)
		}
	})
}

func TestAllocatorLaunchWhoseWaiterLeavesIsClosedWhenNobodyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.launchers["c1"].SetLaunchDelay(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := f.a.Acquire(ctx, "first", browserpool.AcquireOptions{Computer: "c1"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
		if st := f.a.Stats().Total; st.Starting != 1 || st.InUse != 0 {
			t.Errorf("starting %d, in use %d; want the orphaned launch to keep its slot (1, 0)", st.Starting, st.InUse)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := f.pools["c1"].Stats().Closes[browserpool.ReasonAbandoned]; n != 1 {
			t.Errorf("closed %d abandoned browsers, want 1", n)
		}
		st := f.a.Stats().Total
		if st.Starting != 0 || st.Closing != 0 || st.InUse != 0 {
			t.Errorf("starting %d, closing %d, in use %d after the close; want 0, 0, 0", st.Starting, st.Closing, st.InUse)
		}
		// The slot is free again.
		f.launchers["c1"].SetLaunchDelay(0)
		f.mustAcquire("later", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject})
	})
}

func TestAllocatorArrivalTakesOverALaunchWhoseWaiterLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.launchers["c1"].SetLaunchDelay(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		f.a.Acquire(ctx, "first", browserpool.AcquireOptions{Computer: "c1"})
		time.Sleep(time.Second)
		start := time.Now()
		l := f.mustAcquire("later", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject})
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("later got its session after %v, want the 3s left of the launch under way", got)
		}
		if got := len(f.launchers["c1"].Browsers()); got != 1 || l.Session() == nil {
			t.Errorf("launched %d browsers, want 1", got)
		}
	})
}
