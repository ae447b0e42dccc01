package cdpmux_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	cdppage "github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// These tests drive the fake through internal/cdpmux and mafredri/cdp, as
// the pool does, and prove each fault end to end.

// hangLimit bounds a wait that only a bug would make long.
const hangLimit = 10 * time.Second

// await returns the next error from errc, failing the test if none comes
// within hangLimit (the call hung).
func await(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(hangLimit):
		t.Fatalf("a call did not return within %v: it hangs", hangLimit)
		return nil
	}
}

// closedWithin fails the test unless ch is closed within hangLimit; what
// names what ch's closing means ("the mux ended").
func closedWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangLimit):
		t.Fatalf("waited %v for this, in vain: %s", hangLimit, what)
	}
}

// inFlight starts eval(expr) on p and returns once the browser holds its
// reply at g, so the call is in flight.
func inFlight(ctx context.Context, t *testing.T, g *cdptest.Gate, n int, p page, expr string) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := eval(ctx, p, expr)
		errc <- err
	}()
	if err := g.Wait(ctx, n); err != nil {
		t.Fatalf("waiting for %s to be in flight: %v", expr, err)
	}
	return errc
}

// fence makes a browser-level call: when it returns, the mux has
// dispatched every message the browser sent before its reply.
func fence(ctx context.Context, t *testing.T, m *cdpmux.Mux) {
	t.Helper()
	if _, err := cdp.NewClient(m.Browser()).Browser.GetVersion(ctx); err != nil {
		t.Fatalf("Browser.getVersion: %v", err)
	}
}

// tap records the id of every request the mux writes.
type tap struct {
	*cdptest.Transport
	mu  sync.Mutex
	ids map[uint64]int // guarded by mu; id -> times written
}

func (tp *tap) WriteMessage(msg []byte) error {
	var req struct {
		ID uint64 `json:"id"`
	}
	json.Unmarshal(msg, &req)
	tp.mu.Lock()
	tp.ids[req.ID]++
	tp.mu.Unlock()
	return tp.Transport.WriteMessage(msg)
}

func TestRepliesFindTheirCallersAcrossSessionsByConnectionUniqueIDs(t *testing.T) {
	b := cdptest.NewBrowser(t)
	tp := &tap{Transport: b.Transport(), ids: make(map[uint64]int)}
	m, err := cdpmux.New(tp, cdpmux.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx := t.Context()
	pages := []page{openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")}

	const workers, calls = 4, 25
	var wg sync.WaitGroup
	errc := make(chan error, len(pages)*workers+1)
	for pi, p := range pages {
		for w := range workers {
			wg.Go(func() {
				for i := range calls {
					n := pi*100000 + w*1000 + i
					got, err := eval(ctx, p, fmt.Sprintf("%d+1", n))
					if err != nil {
						errc <- err
						return
					}
					if want := strconv.Itoa(n + 1); got != want {
						errc <- fmt.Errorf("page %d: %d+1 = %s, want %s", pi, n, got, want)
						return
					}
				}
			})
		}
	}
	wg.Go(func() {
		bc := cdp.NewClient(m.Browser())
		for range calls {
			if _, err := bc.Target.GetTargets(ctx, nil); err != nil {
				errc <- err
				return
			}
		}
	})
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}

	// Every conn numbers its calls from 1; on the wire each id is used once.
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for id, n := range tp.ids {
		if n != 1 {
			t.Errorf("id %d was written %d times", id, n)
		}
	}
	if want := 3*2 + len(pages)*workers*calls + calls; len(tp.ids) != want {
		t.Errorf("%d distinct ids written, want %d", len(tp.ids), want)
	}
}

func TestEventsArriveInOrderOnTheirOwnSession(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p1, p2 := openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")
	streams := make([]rpcc.Stream, 2)
	for i, p := range []page{p1, p2} {
		s, err := rpcc.NewStream(ctx, "Test.tick", p.conn)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		streams[i] = s
	}

	const n = 300
	var want [2][]tick
	for i := range n {
		b.Emit(p1.sessionID, "Test.tick", tick{i})
		b.Emit(p2.sessionID, "Test.tick", tick{-i})
		want[0] = append(want[0], tick{i})
		want[1] = append(want[1], tick{-i})
	}

	for i, s := range streams {
		var got []tick
		for range n {
			var ev tick
			if err := s.RecvMsg(&ev); err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			got = append(got, ev)
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("events on session %d (-want +got):\n%s", i+1, diff)
		}
	}
}

func TestUndialedSessionDropsEventsOverTheQueueLimitButStillGetsItsReplies(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	m := newMux(t, b, cdpmux.Options{EventQueueLimit: 8})
	ctx := t.Context()
	// Attach without dialing: the mux learns the session and queues its
	// events for a reader that does not exist yet.
	var reply struct {
		SessionID string `json:"sessionId"`
	}
	args := target.NewAttachToTargetArgs("TARGET_1").SetFlatten(true)
	if err := rpcc.Invoke(ctx, "Target.attachToTarget", args, &reply, m.Browser()); err != nil {
		t.Fatal(err)
	}

	for i := range 20 {
		b.Emit(reply.SessionID, "Test.tick", map[string]int{"n": i})
	}
	fence(ctx, t, m)

	if diff := cmp.Diff(cdpmux.Stats{EventsDropped: 12}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	conn, err := m.Dial(ctx, reply.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval(ctx, page{conn: conn, c: cdp.NewClient(conn)}, "1+1")
	if err != nil || got != "2" {
		t.Errorf("1+1 on the full session = %q, %v; want 2, nil", got, err)
	}
}

func TestCancelledCallReturnsContextErrorAndLaterCallsWork(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	g := b.Hold("Runtime.evaluate")
	callCtx, cancel := context.WithCancel(ctx)

	errc := inFlight(callCtx, t, g, 1, p, "1000")
	cancel()

	if err := await(t, errc); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
	g.Release() // the late reply reaches the mux after its caller left
	got, err := eval(ctx, p, "2+2")
	if err != nil || got != "4" {
		t.Errorf("2+2 after the cancelled call = %q, %v; want 4, nil", got, err)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestDelayedRepliesTakeTheirDelayOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := cdptest.NewBrowser(t)
		m := newMux(t, b, cdpmux.Options{})
		ctx := t.Context()
		p := openPage(ctx, t, m, "about:blank")
		b.Delay("Runtime.evaluate", 30*time.Second)

		start := time.Now()
		short, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := eval(short, p, "1")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call with a 10s deadline: %v, want context.DeadlineExceeded", err)
		}
		if got := time.Since(start); got != 10*time.Second {
			t.Errorf("the deadline fired after %v, want 10s", got)
		}

		start = time.Now()
		done := make(chan string)
		go func() {
			got, err := eval(ctx, p, "6*7")
			if err != nil {
				t.Errorf("6*7: %v", err)
			}
			done <- got
		}()
		fence(ctx, t, m) // not delayed: answered while the other call waits
		if got := time.Since(start); got != 0 {
			t.Errorf("an undelayed call took %v, want 0", got)
		}
		if got := <-done; got != "42" {
			t.Errorf("6*7 = %q, want 42", got)
		}
		if got := time.Since(start); got != 30*time.Second {
			t.Errorf("the delayed reply took %v, want 30s", got)
		}
	})
}

func TestEOFMidCallFailsEveryPendingCallOnEveryConnWithErrConnClosed(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*cdptest.Browser)
		cause error
	}{
		{"process exits", func(b *cdptest.Browser) { b.Exit(1) }, io.EOF},
		{"connection drops", func(b *cdptest.Browser) { b.DropConnection() }, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeftAfter(t)
			b := cdptest.NewBrowser(t)
			m := newMux(t, b, cdpmux.Options{})
			ctx := t.Context()
			p1, p2 := openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")
			evals := b.Hold("Runtime.evaluate")
			getTargets := b.Hold("Target.getTargets")
			pending := []<-chan error{inFlight(ctx, t, evals, 1, p1, "1"), inFlight(ctx, t, evals, 2, p2, "2")}
			browserCall := make(chan error, 1)
			go func() {
				_, err := cdp.NewClient(m.Browser()).Target.GetTargets(ctx, nil)
				browserCall <- err
			}()
			if err := getTargets.Wait(ctx, 1); err != nil {
				t.Fatal(err)
			}
			pending = append(pending, browserCall)

			tc.fault(b)

			for i, errc := range pending {
				err := await(t, errc)
				if !errors.Is(err, cdpmux.ErrConnClosed) || !errors.Is(err, tc.cause) {
					t.Errorf("pending call %d: %v; want ErrConnClosed caused by %v", i, err, tc.cause)
				}
			}
			<-m.Done()
			var end *cdpmux.EndError
			if !errors.As(m.Err(), &end) || end.Reason != cdpmux.ErrConnClosed || end.Cause != tc.cause {
				t.Errorf("m.Err() = %v, want an *EndError for ErrConnClosed caused by %v", m.Err(), tc.cause)
			}
			if _, err := eval(ctx, p1, "3"); !errors.Is(err, cdpmux.ErrConnClosed) {
				t.Errorf("a call after the end: %v, want ErrConnClosed", err)
			}
		})
	}
}

func TestNavigateThroughTheMuxFiresTheLoadEventAndUpdatesThePage(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	if err := p.c.Page.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	load, err := p.c.Page.LoadEventFired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer load.Close()

	nav, err := p.c.Page.Navigate(ctx, cdppage.NewNavigateArgs("https://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load.Recv(); err != nil {
		t.Fatalf("waiting for Page.loadEventFired: %v", err)
	}

	if nav.ErrorText != nil || string(nav.FrameID) != p.targetID {
		t.Errorf("Page.navigate = %+v, want frame %s and no error", nav, p.targetID)
	}
	if got, err := eval(ctx, p, "location.href"); err != nil || got != `"https://example.com/"` {
		t.Errorf("location.href = %s, %v; want \"https://example.com/\"", got, err)
	}
	tree, err := p.c.Page.GetFrameTree(ctx)
	if err != nil || tree.FrameTree.Frame.URL != "https://example.com/" {
		t.Errorf("Page.getFrameTree = %+v, %v; want the new URL", tree, err)
	}
}

func TestBrowserCloseAnswersThenEndsTheMuxWithEOF(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	openPage(ctx, t, m, "about:blank")

	if err := cdp.NewClient(m.Browser()).Browser.Close(ctx); err != nil {
		t.Errorf("Browser.close: %v, want nil", err)
	}

	<-m.Done()
	if err := m.Err(); !errors.Is(err, cdpmux.ErrConnClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("m.Err() = %v, want ErrConnClosed caused by io.EOF", err)
	}
	<-b.Exited()
	if status, _ := b.ExitStatus(); status != 0 {
		t.Errorf("exit status %d, want 0", status)
	}
}

// The fake's transport has exactly the method set the mux needs.
var _ cdpmux.Transport = (*cdptest.Transport)(nil)

func TestConcurrentUseThenExitEndsEveryCallWithoutHanging(t *testing.T) {
	noGoroutineLeftAfter(t)
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{EventQueueLimit: 16})
	ctx := t.Context()
	pages := []page{openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank"), openPage(ctx, t, m, "about:blank")}
	b.Delay("Page.navigate", time.Millisecond) // replies overtake one another

	progress := make(chan struct{}, 1024)
	done := func() {
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	check := func(what string, err error) bool {
		if err == nil {
			done()
			return true
		}
		if !errors.Is(err, cdpmux.ErrConnClosed) {
			errc <- fmt.Errorf("%s: %w, want success or ErrConnClosed", what, err)
		}
		return false
	}
	for _, p := range pages {
		wg.Go(func() {
			for i := 0; ; i++ {
				got, err := eval(ctx, p, fmt.Sprintf("%d*2", i))
				if !check("evaluate", err) {
					return
				}
				if want := strconv.Itoa(2 * i); got != want {
					errc <- fmt.Errorf("%d*2 = %s, want %s", i, got, want)
					return
				}
			}
		})
		wg.Go(func() { // direct calls beside the conn's (over a pipe, they read for themselves)
			for i := 0; ; i++ {
				got, err := callEval(ctx, m, p, fmt.Sprintf("%d*3", i))
				if !check("direct evaluate", err) {
					return
				}
				if want := strconv.Itoa(3 * i); got != want {
					errc <- fmt.Errorf("direct %d*3 = %s, want %s", i, got, want)
					return
				}
			}
		})
		wg.Go(func() {
			for {
				if _, err := p.c.Page.Navigate(ctx, cdppage.NewNavigateArgs("https://a.test/")); !check("navigate", err) {
					return
				}
			}
		})
	}
	wg.Go(func() { // tabs come and go beside the busy ones
		bc := cdp.NewClient(m.Browser())
		for {
			ct, err := bc.Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
			if !check("createTarget", err) {
				return
			}
			if _, err := bc.Target.CloseTarget(ctx, target.NewCloseTargetArgs(ct.TargetID)); !check("closeTarget", err) {
				return
			}
		}
	})
	wg.Go(func() { // events beside the calls, and readers of the fake's state
		bc := cdp.NewClient(m.Browser())
		for {
			for _, p := range pages {
				b.Emit(p.sessionID, "Test.tick", nil)
			}
			b.Targets()
			// A round trip per round keeps the events from outrunning
			// the mux's reader.
			if _, err := bc.Browser.GetVersion(ctx); !check("getVersion", err) {
				return
			}
		}
	})

	for range 500 {
		<-progress
	}
	b.Exit(1)

	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	closedWithin(t, finished, "every call returned after the browser exited")
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// tick is the params of the fake's Test.tick events.
type tick struct{ N int }
