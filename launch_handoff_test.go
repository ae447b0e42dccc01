// Room: P9 beyond the pool: a launch one caller gave up on is handed to
// the others waiting for the same name (Tracker) or browser key
// (Registry), and a caller who gave up holds nothing. No locks.

package browserpool_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// result is one Open or Attach's outcome.
type result[T any] struct {
	v   T
	err error
}

func TestATrackerLaunchItsOpenerGaveUpOnGoesToTheNextCallerOfTheName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(20 * time.Second)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		opener := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := tr.Open(ctx, "chat1", "research")
			opener <- err
		}()
		time.Sleep(time.Second)
		waiter := make(chan result[*browserpool.Session], 1)
		go func() {
			s, err := tr.Open(context.Background(), "chat1", "research")
			waiter <- result[*browserpool.Session]{s, err}
		}()
		err = <-opener
		var e *browserpool.Error
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) || e.Op != "Tracker.Open" || e.Name != "research" {
			t.Errorf("the opener's Open = %v; want its own deadline, from Tracker.Open naming research", err)
		}
		got := <-waiter
		if got.err != nil {
			t.Fatalf("the caller still waiting for the name got %v; want the session its opener gave up on", got.err)
		}
		if err := got.v.Err(); err != nil {
			t.Errorf("the session handed over: %v", err)
		}
		if diff := cmp.Diff(uint64(1), p.Stats().Launches); diff != "" {
			t.Errorf("launches (-want +got):\n%s", diff)
		}
	})
}

func TestARegistryLaunchItsOpenerGaveUpOnGoesToTheOtherHolders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, reg := slowRegistry(t)
		parent := browserpool.NewIdentity("tool-1")
		child := parent.Child("helper")
		opener := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := reg.Attach(ctx, parent)
			opener <- err
		}()
		time.Sleep(time.Second)
		waiter := make(chan result[*browserpool.Holder], 1)
		go func() {
			h, err := reg.Attach(context.Background(), child)
			waiter <- result[*browserpool.Holder]{h, err}
		}()
		if err := <-opener; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the opener's Attach = %v; want its own deadline", err)
		}
		got := <-waiter
		if got.err != nil {
			t.Fatalf("the holder still waiting got %v; want the browser its opener gave up on", got.err)
		}
		if err := got.v.Session().Err(); err != nil {
			t.Errorf("the browser handed over: %v", err)
		}
		if diff := cmp.Diff([]string{child.HolderKey()}, reg.Holders(parent.BrowserKey())); diff != "" {
			t.Errorf("holders: the one who gave up holds nothing (-want +got):\n%s", diff)
		}
	})
}

func TestABrowserClosesWhenItsLastRealHolderDetachesThoughAnotherGaveUpWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, reg := slowRegistry(t)
		parent := browserpool.NewIdentity("tool-1")
		child := parent.Child("helper")
		opened := make(chan result[*browserpool.Holder], 1)
		go func() {
			h, err := reg.Attach(context.Background(), parent)
			opened <- result[*browserpool.Holder]{h, err}
		}()
		time.Sleep(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, err := reg.Attach(ctx, child); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the child's Attach = %v; want its deadline", err)
		}
		cancel()
		got := <-opened
		if got.err != nil {
			t.Fatal(got.err)
		}
		if diff := cmp.Diff([]string{parent.HolderKey()}, reg.Holders(parent.BrowserKey())); diff != "" {
			t.Errorf("holders (-want +got):\n%s", diff)
		}
		if err := got.v.Detach(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(got.v.Session().Err(), browserpool.ErrSessionClosed) {
			t.Errorf("after its only real holder detached the browser is %v; want closed", got.v.Session().Err())
		}
	})
}

func TestABrowserEveryCallerGaveUpOnIsClosedWhenItsLaunchEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, reg := slowRegistry(t)
		id := browserpool.NewIdentity("tool-1")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := reg.Attach(ctx, id); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Attach = %v; want its deadline", err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		st := p.Stats()
		if diff := cmp.Diff(map[browserpool.CloseReason]uint64{browserpool.ReasonAbandoned: 1}, st.Closes); diff != "" {
			t.Errorf("closes once the launch ended (-want +got):\n%s", diff)
		}
		if reg.Holders(id.BrowserKey()) != nil {
			t.Errorf("the registry still knows the browser: holders %v", reg.Holders(id.BrowserKey()))
		}
	})
}

func TestTrackerErrorsNameTheTrackerAndTellWhatToDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: time.Minute})
		tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p, PerWorkflow: 2})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := tr.Open(ctx, "wf", "a"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute) // a is reclaimed as idle
		synctest.Wait()
		if _, err := tr.Open(ctx, "wf", "b"); err != nil {
			t.Fatal(err)
		}
		_, err = tr.Lookup("wf", "a")
		checkText(t, "Lookup of a reclaimed name", err, []string{"name=a", "workflow=wf", "its open sessions: [b]"}, []string{"session=a"})
		_, err = tr.Open(ctx, "wf", "bad name")
		checkText(t, "Open with a bad name", err, []string{"Tracker.Open", `session name "bad name"`}, []string{"ValidateID"})
		tr.Close()
		_, err = tr.Open(ctx, "wf", "c")
		checkText(t, "Open on a closed tracker", err, []string{"the tracker is closed", "create a new Tracker"}, []string{"create a new Pool"})
	})
}

func TestAPoolOpenItsCallerGaveUpOnSaysTheContextErrorOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(20 * time.Second)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Open(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Open = %v, want its deadline", err)
		}
		if n := strings.Count(err.Error(), "context deadline exceeded"); n != 1 {
			t.Errorf("Open's error says the context error %d times: %v", n, err)
		}
	})
}

// slowRegistry returns a registry over a fake pool whose launches take
// 20 s, closed at cleanup.
func slowRegistry(t *testing.T) (*browserpool.Pool, *browserpool.Registry) {
	t.Helper()
	l := cdptest.NewLauncher(t)
	l.SetLaunchDelay(20 * time.Second)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	reg, err := browserpool.NewRegistry(browserpool.RegistryConfig{Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return p, reg
}

// checkText checks that err's text has every string of want and none of
// unwanted.
func checkText(t *testing.T, what string, err error, want, unwanted []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err, w)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(err.Error(), u) {
			t.Errorf("%s: %q says %q", what, err, u)
		}
	}
}

func TestAProfileHeldByALaunchItsCallerGaveUpOnSaysToRetryNotToCloseIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(20 * time.Second)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := p.OpenProfile(ctx, "shop"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("OpenProfile with a 1 s deadline: %v", err)
		}
		_, err := p.OpenProfile(context.Background(), "shop")
		if !errors.Is(err, browserpool.ErrProfileInUse) {
			t.Fatalf("OpenProfile while the abandoned launch starts: %v; want ErrProfileInUse", err)
		}
		checkText(t, "OpenProfile", err, []string{"gave up on is still starting", "retry in a moment"}, []string{"close the session"})
		time.Sleep(30 * time.Second) // the launch ends and its session is closed
		synctest.Wait()
		s, err := p.OpenProfile(context.Background(), "shop")
		if err != nil {
			t.Fatalf("OpenProfile once the abandoned launch ended: %v", err)
		}
		s.Close(context.Background())
	})
}

func TestTrackerLookupOfANameClosedToMakeRoomSaysSo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: -1})
		tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p, PerWorkflow: 2, Global: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		ctx := context.Background()
		if _, err := tr.Open(ctx, "chat-1", "research"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		if _, err := tr.Open(ctx, "chat-2", "shop"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		_, err = tr.Lookup("chat-1", "research")
		checkText(t, "Lookup of an evicted name", err, []string{"least recently used", `chat-2's "shop"`, "global limit is 1", "TrackerConfig.Global"}, nil)
	})
}

// P9 and I4 on real Chromium: a launch its first caller gave up on goes to
// the next caller of the name, and an AcquireFor owner's Finish hands its
// browser to the child task still using it.
func TestHandOversOfALaunchAndOfABrowserOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)

	tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond) // a cold start takes hundreds
	_, err = tr.Open(short, "chat-1", "research")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Tracker.Open with a 20 ms deadline: %v; want its deadline", err)
	}
	s, err := tr.Open(ctx, "chat-1", "research")
	if err != nil {
		t.Fatalf("the next Open of the name: %v; want the launch the first gave up on", err)
	}
	if n := p.Stats().Launches; n != 1 {
		t.Errorf("launches = %d; want the one, handed over", n)
	}
	if err := mustTab(t, ctx, s).Evaluate(ctx, "1", nil); err != nil {
		t.Errorf("a call on the session handed over: %v", err)
	}

	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c", Pool: p, Cap: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	parent := browserpool.NewIdentity("tool-1")
	if _, err := a.AcquireFor(ctx, "parent", parent, browserpool.AcquireOptions{Computer: "c"}); err != nil {
		t.Fatal(err)
	}
	child, err := a.AcquireFor(ctx, "child", parent.Child("helper"), browserpool.AcquireOptions{Computer: "c"})
	if err != nil {
		t.Fatal(err)
	}
	tab := mustTab(t, ctx, child.Session())
	if err := a.Finish(ctx, "parent", browserpool.TaskCompleted); err != nil {
		t.Fatal(err)
	}
	if err := tab.Evaluate(ctx, "1", nil); err != nil {
		t.Errorf("the child's call after its parent finished: %v; want its browser still open", err)
	}
	if child.Owner() != "child" {
		t.Errorf("the child's lease is owned by %q; want child", child.Owner())
	}
}
