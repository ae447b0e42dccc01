package browserpool_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// The seam between the policy layers and the pool (pool_seam.go), driven on
// cdptest browsers: no Chromium needed.

func TestTheSeamClosesASessionOnceWithTheReasonItIsGiven(t *testing.T) {
	var mu sync.Mutex
	var closed []browserpool.CloseReason
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{Hooks: browserpool.Hooks{
		SessionClosed: func(ev browserpool.SessionEvent) {
			mu.Lock()
			closed = append(closed, ev.Reason)
			mu.Unlock()
		},
	}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if got := browserpool.SeamUsage(s).Ended; got != "" {
		t.Fatalf("a live session's usage says it ended (%q)", got)
	}

	// Layers closing at once, with a context that can end (the close runs
	// on a goroutine) and with one that cannot (it runs on the caller's).
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := context.Background()
			if i%2 == 0 {
				c = ctx
			}
			errs[i] = browserpool.SeamClose(c, s, browserpool.ReasonLRU)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("close %d: %v", i, err)
		}
	}
	if err := s.Err(); !errors.Is(err, browserpool.ErrSessionClosed) {
		t.Errorf("s.Err() = %v, want ErrSessionClosed", err)
	}
	if got := browserpool.SeamUsage(s).Ended; got != browserpool.ReasonLRU {
		t.Errorf("usage says the session ended with %q, want lru", got)
	}
	// Closing a closed session with another reason changes nothing.
	if err := browserpool.SeamClose(ctx, s, browserpool.ReasonExplicit); err != nil {
		t.Errorf("closing again: %v", err)
	}
	if diff := cmp.Diff(map[browserpool.CloseReason]uint64{browserpool.ReasonLRU: 1}, p.Stats().Closes); diff != "" {
		t.Errorf("Stats().Closes (-want +got):\n%s", diff)
	}
	waitFor(t, "the SessionClosed event", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(closed) > 0
	})
	p.Close() // runs every queued hook
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonLRU}, closed); diff != "" {
		t.Errorf("SessionClosed reasons (-want +got):\n%s", diff)
	}
}

func TestTheSeamRetriesWhatACloseLeftBehind(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	l.FailStops(errors.New("kill: operation not permitted"))
	if err := browserpool.SeamClose(context.Background(), s, browserpool.ReasonTaskEnd); !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("close of a browser that cannot be stopped: %v, want ErrCloseFailed", err)
	}
	if got := p.Stats().Leaked; got != 1 {
		t.Fatalf("Stats().Leaked = %d, want 1", got)
	}
	if err := browserpool.SeamRetryCleanup(s); err == nil {
		t.Fatal("a retry while the browser still cannot be stopped succeeded")
	}
	if got := p.Stats().Leaked; got != 1 {
		t.Errorf("after a failed retry: Stats().Leaked = %d, want 1", got)
	}
	l.FailStops(nil)
	if err := browserpool.SeamRetryCleanup(s); err != nil {
		t.Fatalf("retry once the browser can be stopped: %v", err)
	}
	if got := p.Stats().Leaked; got != 0 {
		t.Errorf("after a retry that worked: Stats().Leaked = %d, want 0", got)
	}
	if err := browserpool.SeamRetryCleanup(s); err != nil {
		t.Errorf("a retry with nothing left to clean up: %v", err)
	}
}

func TestTheSeamsUsageSeesACallInFlightAndWhenItEnded(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	// The tab's page events are switched on in the background, by calls of
	// the session: let them land before the session counts as idle.
	if err := browserpool.WaitPageEvents(ctx, tab); err != nil {
		t.Fatal(err)
	}
	before := browserpool.SeamUsage(s)
	if before.Busy || before.InFlight != 0 {
		t.Fatalf("an idle session's usage: %+v", before)
	}
	errc, release := heldEvaluate(t, ctx, l.Browsers()[0], tab)
	during := browserpool.SeamUsage(s)
	if diff := cmp.Diff(browserpool.SeamUse{InFlight: 1, Busy: true}, browserpool.SeamUse{InFlight: during.InFlight, Busy: during.Busy}); diff != "" {
		t.Errorf("usage with a call in flight (-want +got):\n%s", diff)
	}
	if during.IdleSince.Before(before.IdleSince) {
		t.Errorf("the call's start (%v) is before the last use (%v)", during.IdleSince, before.IdleSince)
	}
	release()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	after := browserpool.SeamUsage(s)
	if diff := cmp.Diff(browserpool.SeamUse{}, browserpool.SeamUse{InFlight: after.InFlight, Busy: after.Busy, Ended: after.Ended}); diff != "" {
		t.Errorf("usage after the call (-want +got):\n%s", diff)
	}
	if after.IdleSince.Before(during.IdleSince) {
		t.Errorf("idle since %v, before the call started (%v)", after.IdleSince, during.IdleSince)
	}
}

func TestTheSeamsTabCountDoesNotCountAsAUse(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	first := mustTab(t, ctx, s)
	second, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	// The tabs' page events are switched on in the background; their
	// replies are calls of the session: let them land first.
	for _, tab := range []*browserpool.Tab{first, second} {
		if err := browserpool.WaitPageEvents(ctx, tab); err != nil {
			t.Fatal(err)
		}
	}
	tabs, err := s.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idle := browserpool.SeamUsage(s).IdleSince
	n, err := browserpool.SeamTabCount(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(tabs) || n != 2 {
		t.Errorf("tabCount = %d, Tabs lists %d, want 2", n, len(tabs))
	}
	if got := browserpool.SeamUsage(s).IdleSince; !got.Equal(idle) {
		t.Errorf("tabCount touched the session: idle since %v, was %v", got, idle)
	}
}
