package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// TestACallThatNeverReachedTheBrowserIsRetryableAndOneInFlightIsNot provokes
// both sides of Error.Retryable on the fake: a call in flight when its tab
// is detached may have run in the browser; calls made after, on the detached
// tab or on a closed session, were never written.
func TestACallThatNeverReachedTheBrowserIsRetryableAndOneInFlightIsNot(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	b := l.Browsers()[0]
	errc, release := heldEvaluate(t, ctx, b, tab)
	defer release()
	b.DetachTarget(tab.ID())

	inFlight := cdpError(t, <-errc)
	if !errors.Is(inFlight, browserpool.ErrTabClosed) || inFlight.Retryable() {
		t.Errorf("call in flight at the detach: error = %v, Retryable() = %v; want ErrTabClosed, not retryable (the browser may have run it)", inFlight, inFlight.Retryable())
	}
	after := cdpError(t, tab.Evaluate(ctx, "1+1", nil))
	if !errors.Is(after, browserpool.ErrTabClosed) || !after.Retryable() {
		t.Errorf("call after the detach: error = %v, Retryable() = %v; want ErrTabClosed, retryable (nothing was sent)", after, after.Retryable())
	}

	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := s.Tabs(ctx)
	closed := cdpError(t, err)
	if !errors.Is(closed, browserpool.ErrSessionClosed) || !closed.Retryable() {
		t.Errorf("call on a closed session: error = %v, Retryable() = %v; want ErrSessionClosed, retryable", closed, closed.Retryable())
	}
	var nilErr *browserpool.Error
	if nilErr.Retryable() {
		t.Error("(*Error)(nil).Retryable() = true, want false")
	}
}

func TestACallTheBrowserDoesNotImplementSaysSoInsteadOfBlamingItsArguments(t *testing.T) {
	ctx := ctxT(t)
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	_, err := tab.PDF(ctx, browserpool.PDFOptions{})
	var be *browserpool.Error
	if !errors.As(err, &be) || strings.Contains(be.Hint, "check its arguments") || !strings.Contains(be.Hint, "cdptest does not implement") {
		t.Errorf("PDF on a fake browser without printToPDF: %v; want the fake's own hint, not one about the call's arguments", err)
	}
}
