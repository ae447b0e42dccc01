package browserpool_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestRawClientCallsKeepASessionFromIdleReclaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: 10 * time.Minute})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		// From here on, only raw CDP calls. A 20-minute raw call first:
		// in flight, it keeps the session.
		l.Browsers()[0].Delay("Runtime.evaluate", 20*time.Minute)
		done := make(chan error, 1)
		go func() {
			_, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1+1"))
			done <- err
		}()
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if err := s.Err(); err != nil {
			t.Fatalf("reclaimed with a raw Tab.Client call in flight: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Then a raw browser call every 5 minutes for 30 minutes: each is
		// a use.
		for range 6 {
			time.Sleep(5 * time.Minute)
			synctest.Wait()
			if err := s.Err(); err != nil {
				t.Fatalf("reclaimed though raw Session.Browser calls came every 5 minutes: %v", err)
			}
			if _, err := s.Browser().Browser.GetVersion(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// No more calls: the idle timeout applies again.
		time.Sleep(12 * time.Minute)
		synctest.Wait()
		if !errors.Is(s.Err(), browserpool.ErrSessionClosed) {
			t.Fatalf("12 minutes after the last raw call: Err() = %v, want closed", s.Err())
		}
	})
}

func TestARawClientCallShowsInTheSessionsInfoAndThePoolsStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		synctest.Wait()
		type use struct{ InFlight, CallsInFlight, SessionsInUse int }
		useNow := func() use {
			st := p.Stats()
			return use{s.Info().InFlight, st.CallsInFlight, st.SessionsInUse}
		}
		before := s.Info().LastUsed
		l.Browsers()[0].Delay("Runtime.evaluate", time.Minute)
		done := make(chan error, 1)
		go func() {
			_, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1+1"))
			done <- err
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		if diff := cmp.Diff(use{1, 1, 1}, useNow()); diff != "" {
			t.Errorf("with a raw Tab.Client call in flight (-want +got):\n%s", diff)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if diff := cmp.Diff(use{0, 0, 0}, useNow()); diff != "" {
			t.Errorf("after the raw call (-want +got):\n%s", diff)
		}
		if last := s.Info().LastUsed; last.Sub(before) < time.Minute {
			t.Errorf("Info().LastUsed = %v, %v after the last package call; want the raw call's end, a minute later", last, last.Sub(before))
		}
	})
}

func TestARawCallShowsInTheSessionsInfoAndThePoolsStatsOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	// A first call returns once the tab's setup calls are answered; then
	// nothing is in flight until the raw call.
	if err := tab.Evaluate(ctx, "1", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tab's setup calls to end", func() bool { return s.Info().InFlight == 0 })
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("new Promise(r => setTimeout(r, 1500))").SetAwaitPromise(true))
		done <- err
	}()
	waitFor(t, "the raw call to show in Info and Stats", func() bool {
		st := p.Stats()
		return s.Info().InFlight == 1 && st.CallsInFlight == 1 && st.SessionsInUse == 1 && st.SessionsIdle == 0
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	waitFor(t, "the raw call to leave Info and Stats", func() bool {
		st := p.Stats()
		return s.Info().InFlight == 0 && st.CallsInFlight == 0 && st.SessionsIdle == 1
	})
	// The call's end is its last use: at least 1.5 s after it started, and
	// not after it returned.
	if last := s.Info().LastUsed; last.Before(start.Add(1500*time.Millisecond)) || last.After(ended) {
		t.Errorf("Info().LastUsed = %v; want the raw call's end, between %v and %v", last, start.Add(1500*time.Millisecond), ended)
	}
}

func TestDialogsThePoolAnswersOnItsOwnDoNotKeepASessionFromIdleReclaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: 10 * time.Minute})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		// From here on no call of ours: the page opens an alert every
		// minute, and the tab (no handler) dismisses each one.
		sid := browserpool.TabCDPSessionID(tab)
		b := l.Browsers()[0]
		b.Handle("Page.handleJavaScriptDialog", func(*cdptest.Call) (any, error) { return map[string]any{}, nil })
		for range 15 {
			time.Sleep(time.Minute)
			b.Emit(sid, "Page.javascriptDialogOpening", map[string]any{
				"url": "about:blank", "frameId": tab.ID(), "message": "tick", "type": "alert", "hasBrowserHandler": false, "defaultPrompt": "",
			})
			synctest.Wait()
		}
		if !errors.Is(s.Err(), browserpool.ErrSessionClosed) {
			t.Fatalf("15 minutes of dialogs after the last call (idle timeout 10 minutes): Err() = %v, want closed", s.Err())
		}
		if ds := tab.Dialogs(); len(ds) < 9 || ds[0].By != browserpool.DialogDismissed {
			t.Errorf("Dialogs() = %+v; want the alerts of the 10 minutes before the reclaim, dismissed by the tab", ds)
		}
	})
}

func TestAPageOpeningAlertsOnATimerIsStillReclaimedWhenIdleOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{IdleTimeout: 2 * time.Second})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	if err := tab.Evaluate(ctx, "setInterval(() => alert('tick'), 200), 0", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tab to dismiss three alerts", func() bool { return len(tab.Dialogs()) >= 3 })
	waitFor(t, "the idle session to be reclaimed though its page keeps opening alerts", func() bool {
		return errors.Is(s.Err(), browserpool.ErrSessionClosed)
	})
}

func TestAWaitLastsAsLongAsItsCallersDeadlineEvenPastTheDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: -1})
		s := mustOpen(t, context.Background(), p)
		tab := mustTab(t, context.Background(), s)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		err := tab.WaitVisible(ctx, "#never")
		if took := time.Since(start); took < 2*time.Minute || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, browserpool.ErrTimeout) {
			t.Errorf("WaitVisible with a 2-minute deadline ended after %v with %v; want the caller's deadline, past DefaultWaitTimeout (%v)", took, err, browserpool.DefaultWaitTimeout)
		}
		// Without a deadline, DefaultWaitTimeout bounds it, and the hint
		// says how to wait longer.
		start = time.Now()
		err = tab.WaitVisible(context.Background(), "#never")
		if took := time.Since(start); took != browserpool.DefaultWaitTimeout || !errors.Is(err, browserpool.ErrTimeout) || !strings.Contains(err.Error(), "pass a context with a deadline") {
			t.Errorf("WaitVisible without a deadline ended after %v with %v; want ErrTimeout after %v saying to pass a deadline", took, err, browserpool.DefaultWaitTimeout)
		}
	})
}

func TestAnEvaluatedScriptsTokensStayOutOfTheTrace(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	tab.Evaluate(ctx, `fetch("/api?access_token=SECRETTOKEN123&q=a")`, nil) // the fake may not run it: the trace entry is what counts
	tr := tab.Trace()
	if len(tr) == 0 {
		t.Fatal("no trace entry")
	}
	if got := tr[len(tr)-1].Args; strings.Contains(got, "SECRETTOKEN123") || !strings.Contains(got, "access_token=REDACTED") {
		t.Errorf("the evaluate entry's args = %q; want the token redacted", got)
	}
}

func TestAScreenshotNamedJPGIsAJPEG(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "a.jpg"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(shot.Path)
	if err != nil || len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
		t.Errorf("a.jpg starts % x (%v); want a JPEG (ff d8)", b[:min(len(b), 4)], err)
	}
}
