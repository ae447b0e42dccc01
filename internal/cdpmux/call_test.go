// Room: tests of direct calls (Mux.Call, Direct.Call) on the fake browser. No locks.

package cdpmux_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// direct starts Runtime.evaluate(expr) as a direct call on p and returns
// once the browser holds its reply at g (n calls held in all).
func direct(ctx context.Context, t *testing.T, m *cdpmux.Mux, g *cdptest.Gate, n int, p page, expr string) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := callEval(ctx, m, p, expr)
		errc <- err
	}()
	if err := g.Wait(ctx, n); err != nil {
		t.Fatalf("waiting for %s to be in flight: %v", expr, err)
	}
	return errc
}

// openDirect opens a blank page through m and returns it with its
// direct-call handle.
func openDirect(ctx context.Context, t *testing.T, m *cdpmux.Mux) (page, *cdpmux.Direct) {
	t.Helper()
	p := openPage(ctx, t, m, "about:blank")
	d, err := m.Direct(p.sessionID)
	if err != nil {
		t.Fatal(err)
	}
	return p, d
}

// callEval evaluates expr by a direct call and returns its value's JSON.
func callEval(ctx context.Context, m *cdpmux.Mux, p page, expr string) (string, error) {
	params, _ := json.Marshal(map[string]any{"expression": expr})
	raw, err := m.Call(ctx, p.sessionID, "Runtime.evaluate", params)
	if err != nil {
		return "", err
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	return string(r.Result.Value), nil
}

func TestADirectCallGetsItsReplyAndCountsAsUseWhileInFlight(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p1, p2 := openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")
	g := b.Hold("Runtime.evaluate")
	errc := direct(ctx, t, m, g, 1, p1, "40+2")
	if n, _ := m.Use(); n != 1 {
		t.Errorf("Use() in flight = %d while the direct call is held, want 1", n)
	}
	// A call through the other page's conn is not confused with it.
	other := inFlight(ctx, t, g, 2, p2, "1+1")
	g.Release()
	if err := await(t, errc); err != nil {
		t.Fatalf("direct call: %v", err)
	}
	if err := await(t, other); err != nil {
		t.Fatalf("conn call: %v", err)
	}
	if got, err := callEval(ctx, m, p1, "40+2"); err != nil || got != "42" {
		t.Errorf("40+2 by a direct call = %q, %v; want 42, nil", got, err)
	}
	var v struct {
		Product string `json:"product"`
	}
	if raw, err := m.Call(ctx, "", "Browser.getVersion", nil); err != nil || json.Unmarshal(raw, &v) != nil || v.Product == "" {
		t.Errorf(`Browser.getVersion on the browser's own session "" = %s, %v; want a product`, raw, err)
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after every call returned, want 0", n)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestADirectCallFailsLikeAConnCallWhenItsSessionOrConnectionEnds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*cdptest.Browser, page)
		want  error
	}{
		{"detach", func(b *cdptest.Browser, p page) { b.DetachTarget(p.targetID) }, cdpmux.ErrDetached},
		{"crash", func(b *cdptest.Browser, p page) { b.CrashTarget(p.targetID) }, cdpmux.ErrTargetCrashed},
		{"exit", func(b *cdptest.Browser, p page) { b.Exit(1) }, cdpmux.ErrConnClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeftAfter(t)
			b := cdptest.NewBrowser(t)
			m := newMux(t, b, cdpmux.Options{})
			ctx := t.Context()
			p, d := openDirect(ctx, t, m)
			g := b.Hold("Runtime.evaluate")
			errc := direct(ctx, t, m, g, 1, p, "1")
			tc.fault(b, p)
			var ee *cdpmux.EndError
			if err := await(t, errc); !errors.Is(err, tc.want) || !errors.As(err, &ee) {
				t.Errorf("direct call in flight: %v, want an *EndError that is %v", err, tc.want)
			}
			if n, _ := m.Use(); n != 0 {
				t.Errorf("Use() in flight = %d after the end, want 0", n)
			}
			_, err := callEval(ctx, m, p, "1")
			if !errors.Is(err, cdpmux.ErrNotSent) || !errors.Is(err, cdpmux.ErrUnknownSession) && !errors.Is(err, cdpmux.ErrConnClosed) {
				t.Errorf("later direct call: %v, want ErrNotSent and the session unknown (or the connection closed)", err)
			}
			// The session's own handle keeps its end: a later call says how
			// it ended, as its conn would, and that nothing was sent.
			_, err = d.Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`))
			if !errors.Is(err, cdpmux.ErrNotSent) || !errors.Is(err, tc.want) {
				t.Errorf("later call on the session's Direct handle: %v, want ErrNotSent and %v", err, tc.want)
			}
			g.Release()
		})
	}
}

func TestADirectCallReportsErrorRepliesAndCancellation(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")

	var re *rpcc.ResponseError
	if _, err := m.Call(ctx, p.sessionID, "No.suchMethod", nil); !errors.As(err, &re) {
		t.Errorf("unknown method: %v, want an *rpcc.ResponseError", err)
	}

	g := b.Hold("Runtime.evaluate")
	callCtx, cancel := context.WithCancel(ctx)
	errc := direct(callCtx, t, m, g, 1, p, "1000")
	if n, _ := m.Use(); n != 1 {
		t.Errorf("Use() in flight = %d while its caller waits, want 1", n)
	}
	left := time.Now()
	cancel()
	if err := await(t, errc); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled direct call: %v, want context.Canceled", err)
	}
	// Nobody waits for it any more: the session may go idle from now,
	// though the browser has not answered.
	if n, last := m.Use(); n != 0 || last.Before(left) {
		t.Errorf("Use() = %d, %v after its caller left at %v; want 0 in flight, last use when it left", n, last, left)
	}
	if _, err := m.Call(callCtx, p.sessionID, "Runtime.evaluate", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("direct call with an ended ctx: %v, want context.Canceled", err)
	}
	g.Release() // the late reply reaches the mux after its caller left
	if got, err := callEval(ctx, m, p, "2+2"); err != nil || got != "4" {
		t.Errorf("2+2 after the cancelled call = %q, %v; want 4, nil", got, err)
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after the late reply, want 0", n)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestInvokeEncodesItsParamsAndDecodesItsReplyOrSaysWhichMethodFailed(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := m.BrowserDirect().Invoke(ctx, "Target.createTarget", map[string]string{"url": "about:blank"}, &created); err != nil || created.TargetID == "" {
		t.Fatalf("Target.createTarget: targetId %q, error %v; want an id and nil", created.TargetID, err)
	}
	err := m.BrowserDirect().Invoke(ctx, "Target.createTarget", map[string]any{"url": make(chan int)}, nil)
	if err == nil || !strings.Contains(err.Error(), "encoding Target.createTarget params") {
		t.Errorf("unencodable params: error = %v, want one naming the encoding of Target.createTarget's params", err)
	}
	var wrong struct {
		TargetID int `json:"targetId"`
	}
	err = m.BrowserDirect().Invoke(ctx, "Target.createTarget", map[string]string{"url": "about:blank"}, &wrong)
	if err == nil || !strings.Contains(err.Error(), "decoding the reply of Target.createTarget") {
		t.Errorf("reply that does not fit: error = %v, want one naming the reply of Target.createTarget", err)
	}
}

// goResult is what Direct.Go's done was given.
type goResult struct {
	replies []json.RawMessage
	errs    []error
}

// goBatch calls d.Go with reqs and returns the channel done sends on.
func goBatch(d *cdpmux.Direct, reqs ...cdpmux.Request) <-chan goResult {
	done := make(chan goResult, 2) // a second run of done would show
	d.Go(reqs, func(replies []json.RawMessage, errs []error) { done <- goResult{replies, errs} })
	return done
}

// settledOnce waits for done's one run and checks there is no second.
func settledOnce(t *testing.T, done <-chan goResult) goResult {
	t.Helper()
	var r goResult
	select {
	case r = <-done:
	case <-time.After(hangLimit):
		t.Fatalf("Go's done did not run within %v", hangLimit)
	}
	select {
	case <-done:
		t.Errorf("Go's done ran twice")
	default:
	}
	return r
}

func TestGoHasEveryRequestInFlightAtOnceAndHandsEachReplyInItsPlace(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	_, d := openDirect(ctx, t, m)
	g := b.Hold("Runtime.evaluate")
	// Go returns with the evaluations held by the browser: nothing of
	// ours waits for them.
	done := goBatch(d,
		cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"1+1"}`)},
		cdpmux.Request{Method: "No.suchMethod"},
		cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"2+2"}`)},
		cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"3+3"}`)},
	)
	wctx, cancel := context.WithTimeout(ctx, hangLimit)
	defer cancel()
	if err := g.Wait(wctx, 3); err != nil {
		g.Release()
		t.Fatalf("waiting for the three evaluations to be in flight together: %v", err)
	}
	if n, _ := m.Use(); n != 4 && n != 3 {
		t.Errorf("Use() in flight = %d with the evaluations held, want 3 or 4 (the unknown method may be answered)", n)
	}
	g.Release()
	r := settledOnce(t, done)

	var got []string
	for i, raw := range r.replies {
		if r.errs[i] != nil {
			got = append(got, "error")
			continue
		}
		var v struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		got = append(got, string(v.Result.Value))
	}
	if diff := cmp.Diff([]string{"2", "error", "4", "6"}, got); diff != "" {
		t.Errorf("replies in request order (-want +got):\n%s", diff)
	}
	var re *rpcc.ResponseError
	if !errors.As(r.errs[1], &re) {
		t.Errorf("the unknown method's error = %v, want the browser's error reply (*rpcc.ResponseError)", r.errs[1])
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after Go's done ran, want 0", n)
	}
}

func TestGoOnAnEndedSessionReportsEveryRequestUnsentWithTheEnd(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p, d := openDirect(ctx, t, m)
	b.DetachTarget(p.targetID)
	closedWithin(t, p.conn.Context().Done(), "the detached session's conn ended")

	r := settledOnce(t, goBatch(d, cdpmux.Request{Method: "Page.enable"}, cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"1"}`)}))

	for i, err := range r.errs {
		if !errors.Is(err, cdpmux.ErrNotSent) || !errors.Is(err, cdpmux.ErrDetached) {
			t.Errorf("request %d on the detached session: %v, want ErrNotSent and ErrDetached", i, err)
		}
	}
}

func TestGoSettlesWhatIsLeftWithTheEndOfItsSessionOrOfTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(b *cdptest.Browser, m *cdpmux.Mux, d *cdpmux.Direct, targetID string)
		want error
	}{
		{"target detached", func(b *cdptest.Browser, _ *cdpmux.Mux, _ *cdpmux.Direct, id string) { b.DetachTarget(id) }, cdpmux.ErrDetached},
		{"session closed here", func(_ *cdptest.Browser, _ *cdpmux.Mux, d *cdpmux.Direct, _ string) { d.Close() }, cdpmux.ErrDetached},
		{"target crashed", func(b *cdptest.Browser, _ *cdpmux.Mux, _ *cdpmux.Direct, id string) { b.CrashTarget(id) }, cdpmux.ErrTargetCrashed},
		{"connection closed", func(_ *cdptest.Browser, m *cdpmux.Mux, _ *cdpmux.Direct, _ string) { m.Close() }, cdpmux.ErrConnClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := cdptest.NewBrowser(t)
			m := newMux(t, b, cdpmux.Options{})
			ctx := t.Context()
			p, d := openDirect(ctx, t, m)
			g := b.Hold("Runtime.evaluate")
			defer g.Release()
			done := goBatch(d,
				cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"1"}`)},
				cdpmux.Request{Method: "Runtime.evaluate", Params: []byte(`{"expression":"2"}`)},
			)
			wctx, cancel := context.WithTimeout(ctx, hangLimit)
			defer cancel()
			if err := g.Wait(wctx, 2); err != nil {
				t.Fatalf("waiting for the two evaluations to be in flight: %v", err)
			}
			tc.end(b, m, d, p.targetID)
			r := settledOnce(t, done)
			for i, err := range r.errs {
				if !errors.Is(err, tc.want) || errors.Is(err, cdpmux.ErrNotSent) {
					t.Errorf("request %d left when the %s: %v, want %v (sent, so not ErrNotSent)", i, tc.name, err, tc.want)
				}
			}
			if n, _ := m.Use(); n != 0 {
				t.Errorf("Use() in flight = %d after the end, want 0", n)
			}
		})
	}
}

// attachDirect creates a blank target through m and attaches to it with
// AttachDirect.
func attachDirect(ctx context.Context, t *testing.T, m *cdpmux.Mux) *cdpmux.Direct {
	t.Helper()
	ct, err := cdp.NewClient(m.Browser()).Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.AttachDirect(ctx, string(ct.TargetID))
	if err != nil {
		t.Fatalf("AttachDirect: %v", err)
	}
	return d
}

func TestASessionAttachedDirectKeepsNoEventsUntilItsOneConnIsDialed(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{EventQueueLimit: 8})
	ctx := t.Context()
	d := attachDirect(ctx, t, m)
	var tapped int // the tap runs on the reader, one event at a time; read after fence
	if err := m.Tap(d.ID(), func(method string, _ json.RawMessage) {
		if method == "Test.tick" {
			tapped++
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		b.Emit(d.ID(), "Test.tick", tick{i})
	}
	fence(ctx, t, m)
	// Kept for a conn, 12 of the 20 would have overflowed the queue of 8.
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats before Conn() (-want +got):\n%s", diff)
	}
	if tapped != 20 {
		t.Errorf("the tap saw %d events before Conn(), want 20", tapped)
	}
	if _, err := d.Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`)); err != nil {
		t.Errorf("a direct call before Conn(): %v", err)
	}
	if d.Dialed() {
		t.Error("Dialed() before Conn() = true")
	}

	conn := d.Conn()
	if !d.Dialed() {
		t.Error("Dialed() after Conn() = false")
	}
	ticksArriveInOrder(ctx, t, b, d.ID(), conn)
	if d.Conn() != conn {
		t.Error("a second Conn() dialed another conn")
	}
	if _, err := m.Dial(ctx, d.ID()); err == nil || !strings.Contains(err.Error(), "already dialed") {
		t.Errorf("Dial after Conn(): %v, want an already-dialed error", err)
	}
}

func TestClosingADirectSessionEndsItsConnAndItsCallsSayItIsDetached(t *testing.T) {
	for _, dialFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("conn-dialed-first=%v", dialFirst), func(t *testing.T) {
			noGoroutineLeftAfter(t)
			b := cdptest.NewBrowser(t)
			m := newMux(t, b, cdpmux.Options{})
			ctx := t.Context()
			d := attachDirect(ctx, t, m)
			if dialFirst {
				d.Conn()
			}
			d.Close()
			select {
			case <-d.Done():
			default:
				t.Error("Done() is open after Close")
			}
			// Dialed before or after the end, the conn is closed by it.
			conn := d.Conn()
			closedWithin(t, conn.Context().Done(), "the closed session's conn closed")
			if _, err := d.Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`)); !errors.Is(err, cdpmux.ErrDetached) || !errors.Is(err, cdpmux.ErrNotSent) {
				t.Errorf("a direct call after Close: %v, want ErrDetached and ErrNotSent", err)
			}
			if err := rpcc.Invoke(ctx, "Runtime.evaluate", map[string]string{"expression": "1"}, nil, conn); !errors.Is(err, cdpmux.ErrDetached) {
				t.Errorf("a call on the conn after Close: %v, want ErrDetached", err)
			}
			// The browser's own session is not ended by its handle's Close.
			m.BrowserDirect().Close()
			fence(ctx, t, m)
		})
	}
}

func TestAQuietDirectCallDoesNotCountAsUse(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	_, d := openDirect(ctx, t, m)
	_, before := m.Use()
	g := b.Hold("Runtime.evaluate")
	errc := make(chan error, 1)
	go func() {
		_, err := d.Quiet().Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`))
		errc <- err
	}()
	if err := g.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n, last := m.Use(); n != 0 || !last.Equal(before) {
		t.Errorf("Use() = %d, %v while a quiet call is in flight; want 0 and the last use before it, %v", n, last, before)
	}
	g.Release()
	if err := await(t, errc); err != nil {
		t.Fatal(err)
	}
	if n, last := m.Use(); n != 0 || !last.Equal(before) {
		t.Errorf("Use() = %d, %v after a quiet call; want 0 and the last use before it, %v", n, last, before)
	}
	// The handle it came from still counts.
	if _, err := d.Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`)); err != nil {
		t.Fatal(err)
	}
	if _, last := m.Use(); !last.After(before) {
		t.Errorf("Use() last = %v after a counted call, want later than %v", last, before)
	}
}
