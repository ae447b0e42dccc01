package browserpool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// Pool.Open with a context that had already ended launched a whole
// browser for nobody (closed as abandoned), and with a warm browser ready
// it handed one over; Tracker.Open and Allocator.Acquire refuse such a
// context. Open now does too, launching and taking nothing (found by
// helper 84's audit).
func TestPoolOpenWithAContextAlreadyEndedLaunchesAndTakesNothing(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, warm := range []int{0, 1} {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Warm: warm})
		waitFor(t, "the warm browsers to be ready", func() bool { return p.Stats().SessionsWarm == warm })
		s, err := p.Open(ended)
		if s != nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "had ended before the call") {
			t.Errorf("Warm %d: Open(ended ctx) = %v, %v; want no session and the context's class saying it had ended before the call", warm, s, err)
		}
		st := p.Stats()
		if diff := cmp.Diff([2]int{warm, 0}, [2]int{st.SessionsWarm, len(l.Browsers()) - warm}); diff != "" {
			t.Errorf("Warm %d: warm browsers left, browsers launched beyond them (-want +got):\n%s", warm, diff)
		}
	}
}

// Pool.CloseSession after Pool.Close said "session not found … open a new
// one", which a closed pool cannot do; it is ErrPoolClosed, as every other
// call of a closed pool is.
func TestPoolCloseSessionAfterCloseIsErrPoolClosed(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{s.ID(), "s-unknown"} {
		if err := p.CloseSession(ctx, id); !errors.Is(err, browserpool.ErrPoolClosed) {
			t.Errorf("CloseSession(%s) after Close: %v; want ErrPoolClosed", id, err)
		}
	}
}

// Allocator.Acquire on a computer whose Pool was closed said only "pool is
// closed", naming neither the computer nor what to do, and counted the
// refusal as a launch failure (found by helper 84's audit).
func TestAcquireOnAComputerWhosePoolClosedNamesItAndIsNoLaunchFailure(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1", Pool: p, Cap: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = a.Acquire(ctxT(t), "t1", browserpool.AcquireOptions{Computer: "c1"})
	if !errors.Is(err, browserpool.ErrPoolClosed) {
		t.Fatalf("Acquire on a closed pool: %v, want ErrPoolClosed", err)
	}
	for _, want := range []string{`computer "c1"`, "close the Allocator too"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	st := a.Stats().Computers["c1"]
	if st.LaunchFailures != 0 || st.InUse != 0 || st.Starting != 0 {
		t.Errorf("after the refusal: %d launch failures, %d in use, %d starting; want 0, 0, 0", st.LaunchFailures, st.InUse, st.Starting)
	}
}

// Tracker.Lookup after the tracker's pool (or the tracker) was closed
// said the session was not found and hinted Tracker.Open, which can only
// fail (found by helper 84's audit).
func TestTrackerLookupOnceItsPoolOrItIsClosedIsErrPoolClosed(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{})
	ctx := ctxT(t)
	if _, err := tr.Open(ctx, "w", "main"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := tr.Lookup("w", "main")
	if !errors.Is(err, browserpool.ErrPoolClosed) || strings.Contains(err.Error(), "Tracker.Open") {
		t.Errorf("Lookup after Pool.Close: %v, want ErrPoolClosed with no hint to open again", err)
	}
	tr.Close()
	_, err = tr.Lookup("w", "main")
	if diff := cmp.Diff("browserpool: Tracker.Lookup: pool is closed: the tracker is closed (hint: create a new Tracker (over a Pool that is still open); a closed one cannot be reused)", err.Error()); diff != "" {
		t.Errorf("Lookup after Tracker.Close (-want +got):\n%s", diff)
	}
}
