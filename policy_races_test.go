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

// The policy layer's races: a share against its owner's Finish, a queued
// acquire against its pool's Close, a second Open against EndWorkflow.

func TestAnAcquireForWhoseOwnerFinishesJustBeforeTheShareOwnsTheBrowserInstead(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 2))
	ctx := ctxT(t)
	parent := browserpool.NewIdentity("chat-7")
	opts := browserpool.AcquireOptions{Computer: "c1"}
	owner, err := f.a.AcquireFor(ctx, "parent-task", parent, opts)
	if err != nil {
		t.Fatal(err)
	}
	browserpool.SetHookBeforeShareForTest(t.Cleanup, func() { f.mustFinish("parent-task", browserpool.TaskCompleted) })
	child, err := f.a.AcquireFor(ctx, "child-task", parent.Child("helper"), opts)
	if err != nil {
		t.Fatalf("AcquireFor after its owner finished: %v; want a browser of the child's own", err)
	}
	<-owner.Session().Done() // the owner's Finish closed its browser: nobody held it
	type view struct {
		Owner      string
		Shared     bool
		Alive      bool
		Holders    []string
		SameAsGone bool
	}
	got := view{child.Owner(), child.Shared(), child.Session().Err() == nil, f.a.HoldersOf("chat-7"), child.Session() == owner.Session()}
	if diff := cmp.Diff(view{"child-task", false, true, []string{"child-task"}, false}, got); diff != "" {
		t.Errorf("the child's lease (-want +got):\n%s", diff)
	}
}

func TestAnAcquireForRacingItsOwnersFinishAlwaysGetsALiveBrowser(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 2))
	ctx := ctxT(t)
	for i := range 40 {
		parent := browserpool.NewIdentity(fmt.Sprintf("chat-%d", i))
		opts := browserpool.AcquireOptions{Computer: "c1"}
		if _, err := f.a.AcquireFor(ctx, "parent", parent, opts); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.mustFinish("parent", browserpool.TaskCompleted)
		}()
		child, err := f.a.AcquireFor(ctx, "child", parent.Child("helper"), opts)
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: AcquireFor racing its owner's Finish: %v", i, err)
		}
		if err := child.Session().Err(); err != nil {
			t.Fatalf("round %d: the child's browser after its owner finished: %v; want it live (shared then handed over, or its own)", i, err)
		}
		f.mustFinish("child", browserpool.TaskCompleted)
	}
}

func TestAQueuedAcquireLeavesWithErrPoolClosedWhenItsComputersPoolCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 1))
		f.mustAcquire("holder", browserpool.AcquireOptions{Computer: "c1"})
		start := time.Now()
		queued := f.acquireAsync(context.Background(), "queued", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait()
		if err := f.pools["c1"].Close(); err != nil {
			t.Fatal(err)
		}
		r := <-queued
		if waited := time.Since(start); waited >= 30*time.Second {
			t.Errorf("the queued acquire returned after %v: it waited out its budget", waited)
		}
		want := `browserpool: Allocator.Acquire task=queued: pool is closed: the pool of computer "c1" was closed (Pool.Close) while the task waited in its queue; the task holds no slot (hint: close the Allocator too: no browser can be launched on that computer any more; give it a new Pool in a new Allocator to go on)`
		if r.err == nil || r.err.Error() != want || !errors.Is(r.err, browserpool.ErrPoolClosed) {
			t.Errorf("the queued acquire: got\n%v\nwant\n%s", r.err, want)
		}
		// A later acquire on the full computer is not queued behind a
		// closed pool either.
		_, err := f.a.Acquire(context.Background(), "late", browserpool.AcquireOptions{Computer: "c1"})
		if !errors.Is(err, browserpool.ErrPoolClosed) || time.Since(start) >= 30*time.Second {
			t.Errorf("an acquire after the pool closed: %v after %v; want ErrPoolClosed at once", err, time.Since(start))
		}
		if st := f.a.Stats().Computers["c1"]; st.Waiting != 0 || st.QueueTimeouts != 0 {
			t.Errorf("waiting %d, queue timeouts %d after the pool closed; want 0 and 0", st.Waiting, st.QueueTimeouts)
		}
	})
}

func TestATrackerOpenWaitingForAnotherCallersLaunchIsToldEndWorkflowTookIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(time.Second)
		p := newFakePool(t, l, browserpool.Config{IdleTimeout: -1})
		tr := newTracker(t, p, browserpool.TrackerConfig{})
		ctx := context.Background()
		type opened struct {
			s   *browserpool.Session
			err error
		}
		results := make(chan opened, 2)
		for range 2 {
			go func() { s, err := tr.Open(ctx, "w1", "news"); results <- opened{s, err} }()
		}
		synctest.Wait() // one launches, the other waits for that launch
		if err := tr.EndWorkflow(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			r := <-results
			if !errors.Is(r.err, browserpool.ErrSessionClosed) || !strings.Contains(r.err.Error(), "EndWorkflow") {
				t.Errorf("an Open whose session EndWorkflow took: error %v (a session returned: %t); want ErrSessionClosed naming EndWorkflow", r.err, r.s != nil)
			}
		}
	})
}

// TestThePolicyRacesOnRealChromium runs the queued acquire against its
// pool's Close, and two Opens of one name against EndWorkflow, with real
// browsers: the queued acquire leaves with ErrPoolClosed at once, and an
// Open either says EndWorkflow took its session or returns a live one.
func TestThePolicyRacesOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	ctx := ctxT(t)
	t.Run("a queued acquire when the pool closes", func(t *testing.T) {
		p := newRealPool(t, browserpool.Config{})
		a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "local", Pool: p, Cap: 1}}, Budget: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		holder, err := a.Acquire(ctx, "holder", browserpool.AcquireOptions{Computer: "local"})
		if err != nil {
			t.Fatal(err)
		}
		queued := make(chan error, 1)
		go func() {
			_, err := a.Acquire(ctx, "queued", browserpool.AcquireOptions{Computer: "local"})
			queued <- err
		}()
		waitFor(t, "the second task to queue", func() bool { return a.Stats().Computers["local"].Waiting == 1 })
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-queued; !errors.Is(err, browserpool.ErrPoolClosed) {
			t.Errorf("the queued acquire: %v; want ErrPoolClosed", err)
		}
		if err := holder.Session().Err(); !errors.Is(err, browserpool.ErrSessionClosed) {
			t.Errorf("the holder's session after Pool.Close: %v; want ErrSessionClosed", err)
		}
	})
	t.Run("two opens of one name and EndWorkflow", func(t *testing.T) {
		p := newRealPool(t, browserpool.Config{})
		tr := newTracker(t, p, browserpool.TrackerConfig{})
		type opened struct {
			s   *browserpool.Session
			err error
		}
		results := make(chan opened, 2)
		open := func() { s, err := tr.Open(ctx, "w1", "news"); results <- opened{s, err} }
		go open()
		waitFor(t, "the launch to start", func() bool { return p.Stats().SessionsStarting == 1 })
		go open()
		if err := tr.EndWorkflow(ctx, "w1"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			switch r := <-results; {
			case r.err != nil && !errors.Is(r.err, browserpool.ErrSessionClosed):
				t.Errorf("an Open racing EndWorkflow: %v; want ErrSessionClosed or a live session", r.err)
			case r.err == nil && r.s.Err() != nil:
				t.Errorf("an Open racing EndWorkflow returned a closed session: %v", r.s.Err())
			}
		}
	})
}

func TestASecondAcquireOfATaskWhoseFirstIsUnderWaySaysToWaitForIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newAllocFixture(t, oneComputer("c1", 2))
		f.launchers["c1"].SetLaunchDelay(time.Second)
		first := f.acquireAsync(context.Background(), "t1", browserpool.AcquireOptions{Computer: "c1"})
		synctest.Wait() // the first acquire's browser is starting
		_, err := f.a.Acquire(context.Background(), "t1", browserpool.AcquireOptions{Computer: "c1"})
		want := `browserpool: Allocator.Acquire task=t1: task already has a session or an acquire in progress: task t1 already has an acquire in progress on computer "c1" (hint: wait for that acquire to return (a task runs one at a time), then use its lease)`
		if err == nil || err.Error() != want || !errors.Is(err, browserpool.ErrTaskBusy) {
			t.Errorf("a second acquire while the first is under way: got\n%v\nwant\n%s", err, want)
		}
		if r := <-first; r.err != nil {
			t.Errorf("the first acquire: %v", r.err)
		}
	})
}

func TestALookupWhileTheTrackerClosesASessionToMakeRoomSaysItWasEvicted(t *testing.T) {
	g := stopGateLauncher{l: cdptest.NewLauncher(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: g, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 1})
	ctx := ctxT(t)
	if _, err := tr.Open(ctx, "w1", "main"); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() { _, err := tr.Open(ctx, "w2", "main"); opened <- err }()
	<-g.entered // w1's browser is being stopped to make room
	_, err = tr.Lookup("w1", "main")
	close(g.gate)
	if !errors.Is(err, browserpool.ErrSessionNotFound) || !strings.Contains(err.Error(), `as the least recently used, to make room for workflow w2's "main"`) {
		t.Errorf("Lookup of a session being closed to make room: %v; want ErrSessionNotFound saying it was evicted for w2", err)
	}
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
}

func TestASessionAllocatorCloseEndedSaysSoAndNotThatItsPoolClosed(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 1))
	l := f.mustAcquire("t1", browserpool.AcquireOptions{Computer: "c1"})
	if err := f.a.Close(); err != nil {
		t.Fatal(err)
	}
	<-l.Session().Done()
	var e *browserpool.Error
	if err := l.Session().Err(); !errors.As(err, &e) || e.Hint != "it was closed by Allocator.Close, with the task that held it: acquire sessions from an allocator that is still open" {
		t.Errorf("a session Allocator.Close ended: %v; want a hint naming Allocator.Close", err)
	}
	// One Pool.Close ended is told its pool closed.
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	s := mustOpen(t, ctxT(t), p)
	p.Close()
	if err := s.Err(); !errors.As(err, &e) || !strings.HasPrefix(e.Hint, "its pool was closed (Pool.Close)") {
		t.Errorf("a session Pool.Close ended: %v; want a hint naming Pool.Close", err)
	}
}
