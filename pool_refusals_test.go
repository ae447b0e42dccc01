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
