// Room: tests of how a session's end (crash, detach, a closed target)
// reaches the calls on it. No locks.

package cdpmux_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

func TestCrashedTargetFailsItsPendingCallsWithErrTargetCrashed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		crash func(b *cdptest.Browser, targetID string)
	}{
		// Chrome tells every session of the page (Inspector.targetCrashed)
		// and every discovering client (Target.targetCrashed).
		{"CrashTarget", func(b *cdptest.Browser, targetID string) { b.CrashTarget(targetID) }},
		// The browser-level event alone must be enough for the mux.
		{"Target.targetCrashed alone", func(b *cdptest.Browser, targetID string) {
			b.Emit("", "Target.targetCrashed", map[string]any{"targetId": targetID, "status": "crashed", "errorCode": 139})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := cdptest.NewBrowser(t)
			m := newMux(t, b, cdpmux.Options{})
			ctx := t.Context()
			if err := cdp.NewClient(m.Browser()).Target.SetDiscoverTargets(ctx, target.NewSetDiscoverTargetsArgs(true)); err != nil {
				t.Fatal(err)
			}
			p, other := openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")
			g := b.Hold("Runtime.evaluate")
			errc := inFlight(ctx, t, g, 1, p, "1")

			tc.crash(b, p.targetID)

			if err := await(t, errc); !errors.Is(err, cdpmux.ErrTargetCrashed) {
				t.Errorf("pending call on the crashed page: %v, want ErrTargetCrashed", err)
			}
			if _, err := eval(ctx, p, "1"); !errors.Is(err, cdpmux.ErrTargetCrashed) {
				t.Errorf("later call on the crashed page: %v, want ErrTargetCrashed", err)
			}
			g.Release()
			if got, err := eval(ctx, other, "1+1"); err != nil || got != "2" {
				t.Errorf("1+1 on the other page = %q, %v; want 2, nil", got, err)
			}
		})
	}
}

func TestDetachMidCallFailsPendingCallsWithErrDetached(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	g := b.Hold("Runtime.evaluate")
	errc := inFlight(ctx, t, g, 1, p, "1")

	b.DetachTarget(p.targetID)

	if err := await(t, errc); !errors.Is(err, cdpmux.ErrDetached) {
		t.Errorf("pending call: %v, want ErrDetached", err)
	}
	if _, err := eval(ctx, p, "1"); !errors.Is(err, cdpmux.ErrDetached) {
		t.Errorf("later call: %v, want ErrDetached", err)
	}
	g.Release()

	// The page is still there and can be attached again.
	conn, sid, err := m.Attach(ctx, p.targetID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := eval(ctx, page{conn: conn, c: cdp.NewClient(conn)}, "1+1"); err != nil || got != "2" {
		t.Errorf("1+1 after reattaching = %q, %v; want 2, nil", got, err)
	}
	if diff := cmp.Diff([]string{sid}, b.Targets()[0].Sessions); diff != "" {
		t.Errorf("sessions of the page (-want +got):\n%s", diff)
	}
}

func TestCallOnDetachedSessionGetsSessionlessErrorWithoutHanging(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	// The browser detaches the session, but its Target.detachedFromTarget
	// has not reached the mux when the next call goes out.
	news := b.Hold("Target.detachedFromTarget")
	b.DetachTarget(p.targetID)

	errc := make(chan error, 1)
	go func() {
		_, err := eval(ctx, p, "1")
		errc <- err
	}()

	var re *rpcc.ResponseError
	if err := await(t, errc); !errors.As(err, &re) {
		t.Fatalf("call on the detached session: %v, want an *rpcc.ResponseError", err)
	}
	want := &rpcc.ResponseError{Code: -32001, Message: "Session with given id not found."}
	if diff := cmp.Diff(want, re); diff != "" {
		t.Errorf("error reply (-want +got):\n%s", diff)
	}

	news.Release()
	fence(ctx, t, m)
	if _, err := eval(ctx, p, "1"); !errors.Is(err, cdpmux.ErrDetached) {
		t.Errorf("call after the mux heard of the detach: %v, want ErrDetached", err)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestSessionlessErrorReplyReachesItsCaller(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	b.SessionlessErrorFor("Runtime.evaluate")

	errc := make(chan error, 1)
	go func() {
		_, err := eval(ctx, p, "1")
		errc <- err
	}()

	var re *rpcc.ResponseError
	if err := await(t, errc); !errors.As(err, &re) || re.Code != -32001 {
		t.Fatalf("Runtime.evaluate: %v, want an *rpcc.ResponseError with code -32001", err)
	}
	if err := p.c.Page.Enable(ctx); err != nil {
		t.Errorf("Page.enable on the same session: %v, want nil (only Runtime.evaluate is scripted)", err)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestClosingATargetEndsItsSessionInTheMux(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	bc := cdp.NewClient(m.Browser())

	if _, err := bc.Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(p.targetID))); err != nil {
		t.Fatal(err)
	}
	fence(ctx, t, m)

	if _, err := eval(ctx, p, "1"); !errors.Is(err, cdpmux.ErrDetached) {
		t.Errorf("call on the closed page: %v, want ErrDetached", err)
	}
	if diff := cmp.Diff([]cdptest.Target(nil), b.Targets()); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
}
