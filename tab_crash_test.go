// Room: tests of a tab whose renderer crashed or that was detached: what
// its calls say, and how the session goes on (real Chromium's Page.crash,
// and the fake's CrashTarget and DetachTarget). No locks.

package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestATabWhoseRendererCrashedSaysSoOnEveryLaterCallAndTheSessionLivesOn(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	// Page.crash kills the renderer; its own reply may never come.
	_ = tab.Client().Page.Crash(ctx)
	var first error
	waitFor(t, "a call on the crashed tab to fail", func() bool {
		first = tab.Evaluate(ctx, "1", nil)
		return first != nil
	})
	later := tab.Evaluate(ctx, "1", nil)
	for _, c := range []struct {
		call string
		err  error
	}{{"first failing", first}, {"later", later}} {
		var be *browserpool.Error
		if !errors.As(c.err, &be) || !errors.Is(c.err, browserpool.ErrTabClosed) || !strings.Contains(be.Detail, "renderer crashed") {
			t.Errorf("%s call on the crashed tab: error = %v, want ErrTabClosed saying the renderer crashed", c.call, c.err)
		}
		if msg := c.err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "hint: ") {
			t.Errorf("%s call: message %q, want one line with a hint", c.call, msg)
		}
	}
	if !cdpError(t, later).Retryable() {
		t.Errorf("the later call was refused before it was sent, yet Retryable() = false: %v", later)
	}
	if err := s.Err(); err != nil {
		t.Errorf("a tab's crash ended its session: %v", err)
	}
	// The browser still lists the crashed tab, but it answers nothing:
	// naming it, or asking for the active tab when it is the only one,
	// says so at once instead of attaching to it and hanging.
	for _, id := range []string{tab.ID(), ""} {
		_, err := s.Tab(ctx, id)
		var be *browserpool.Error
		if !errors.As(err, &be) || !errors.Is(err, browserpool.ErrTabClosed) || !strings.Contains(be.Detail, "renderer crashed") || !strings.Contains(be.Hint, "CloseTab("+tab.ID()+")") {
			t.Errorf("Session.Tab(%q) after the crash: error = %v, want ErrTabClosed saying the renderer crashed, hinting CloseTab(%s)", id, err, tab.ID())
		}
	}
	tabs, err := s.Tabs(ctx)
	if err != nil || len(tabs) != 1 || !tabs[0].Crashed {
		t.Errorf("Session.Tabs after the crash: %+v, %v; want the tab listed, marked Crashed", tabs, err)
	}
	if err := s.CloseTab(ctx, tab.ID()); err != nil {
		t.Fatalf("CloseTab of the crashed tab: %v", err)
	}
	again, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	var two int
	if err := again.Evaluate(ctx, "1+1", &two); err != nil || two != 2 {
		t.Errorf("a new tab after the crash: Evaluate = %d, %v; want 2", two, err)
	}
	if got, err := s.Tab(ctx, ""); err != nil || got.ID() != again.ID() {
		t.Errorf("the active tab after closing the crashed one: %v, %v; want the new tab %s", got, err, again.ID())
	}
	// A crashed tab closed behind the session's back (on the raw browser
	// client) is gone, not "still listed".
	_ = again.Client().Page.Crash(ctx)
	waitFor(t, "the second crash to reach the tab", func() bool {
		_, err := s.Tab(ctx, again.ID())
		return errors.Is(err, browserpool.ErrTabClosed)
	})
	if _, err := s.Browser().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(again.ID()))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the browser to stop listing the closed crashed tab", func() bool {
		_, err := s.Tab(ctx, again.ID())
		return !errors.Is(err, browserpool.ErrTabClosed)
	})
	if _, err := s.Tab(ctx, again.ID()); !errors.Is(err, browserpool.ErrTabNotFound) {
		t.Errorf("Session.Tab of a crashed tab closed on the raw client: %v, want ErrTabNotFound", err)
	}
	if n := s.CrashedTabs(); n != 0 {
		t.Errorf("the session still remembers %d crashed tabs after the browser stopped listing them, want 0", n)
	}
}

func TestATabCrashOrDetachFailsItsCallAndTheNextWithErrTabClosedSayingWhich(t *testing.T) {
	for name, tc := range map[string]struct {
		fault  func(b *cdptest.Browser, id string)
		detail string
	}{
		"crash":  {(*cdptest.Browser).CrashTarget, "the tab's renderer crashed"},
		"detach": {(*cdptest.Browser).DetachTarget, "the tab was closed or detached"},
	} {
		t.Run(name, func(t *testing.T) {
			l := cdptest.NewLauncher(t)
			p := newFakePool(t, l, browserpool.Config{})
			ctx := ctxT(t)
			s := mustOpen(t, ctx, p)
			tab := mustTab(t, ctx, s)
			errc, release := heldEvaluate(t, ctx, l.Browsers()[0], tab)
			defer release()
			tc.fault(l.Browsers()[0], tab.ID())
			// The call in flight, then the next one (refused before it is
			// sent, so retryable elsewhere), both say what happened.
			inFlight := <-errc
			next := tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{})
			for _, c := range []struct {
				call      string
				err       error
				retryable bool
			}{{"in flight", inFlight, false}, {"next", next, true}} {
				var be *browserpool.Error
				if !errors.As(c.err, &be) || !errors.Is(c.err, browserpool.ErrTabClosed) || !strings.Contains(be.Detail, tc.detail) || be.Retryable() != c.retryable {
					t.Errorf("call %s: error = %v, want ErrTabClosed saying %q, Retryable() %v", c.call, c.err, tc.detail, c.retryable)
				}
				if msg := c.err.Error(); strings.Contains(msg, "\n") {
					t.Errorf("call %s: the message has a line break: %q", c.call, msg)
				}
			}
			if s.Err() != nil {
				t.Errorf("a tab fault ended the session: %v", s.Err())
			}
		})
	}
}

func TestACrashedTabIsRefusedByIDAndAsTheActiveTabUntilCloseTabClosesIt(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	other, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActivateTab(ctx, tab.ID()); err != nil {
		t.Fatal(err)
	}
	l.Browsers()[0].CrashTarget(tab.ID())
	waitFor(t, "the crash to reach the tab", func() bool {
		_, err := s.Tab(ctx, tab.ID())
		return errors.Is(err, browserpool.ErrTabClosed)
	})
	_, err = s.Tab(ctx, tab.ID())
	if be := cdpError(t, err); !strings.Contains(be.Detail, "renderer crashed") || !strings.Contains(be.Hint, "CloseTab("+tab.ID()+")") || !be.Retryable() {
		t.Errorf("Session.Tab of the crashed tab: %v, want the crash, a CloseTab hint, retryable", err)
	}
	// The active tab crashed: "" now means the other one.
	if got, err := s.Tab(ctx, ""); err != nil || got.ID() != other.ID() {
		t.Errorf("Session.Tab(\"\") = %v, %v; want the tab that did not crash, %s", got, err, other.ID())
	}
	if err := s.CloseTab(ctx, tab.ID()); err != nil {
		t.Fatalf("CloseTab of the crashed tab: %v", err)
	}
	if _, err := s.Tab(ctx, tab.ID()); !errors.Is(err, browserpool.ErrTabNotFound) {
		t.Errorf("Session.Tab of the closed tab: %v, want ErrTabNotFound", err)
	}
	// A crashed tab closed behind the session's back (on the raw browser
	// client) is gone, not "still listed".
	l.Browsers()[0].CrashTarget(other.ID())
	waitFor(t, "the second crash to reach the tab", func() bool {
		_, err := s.Tab(ctx, other.ID())
		return errors.Is(err, browserpool.ErrTabClosed)
	})
	if _, err := s.Browser().Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(other.ID()))); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tab(ctx, other.ID()); !errors.Is(err, browserpool.ErrTabNotFound) {
		t.Errorf("Session.Tab of a crashed tab closed on the raw client: %v, want ErrTabNotFound", err)
	}
	if n := s.CrashedTabs(); n != 0 {
		t.Errorf("the session still remembers %d crashed tabs after the browser stopped listing them, want 0", n)
	}
}

// CloseTab right after a crash, while the session is still noting it (the
// crash is noted on the connection's reader), closed the tab or failed
// with the crash's own error, whose hint is to call CloseTab (seen in
// ExampleBrowser_CrashTarget on a loaded machine). It closes the tab.
func TestCloseTabRightAfterACrashClosesTheTab(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	for i := range 200 {
		tab, err := s.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		l.BrowserFor(s).CrashTarget(tab.ID())
		if err := s.CloseTab(ctx, tab.ID()); err != nil {
			t.Fatalf("CloseTab %d right after the tab's crash: %v", i, err)
		}
	}
}
