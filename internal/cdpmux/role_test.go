// Room: tests of the read role (a direct caller reading its own reply) over
// a real pipe the test plays the browser on. No locks of their own.

package cdpmux_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

// request is one request the mux wrote.
type request struct {
	ID        uint64 `json:"id"`
	SessionID string `json:"sessionId"`
	Method    string `json:"method"`
}

// scripted is a browser the test plays by hand over a real pipe: the mux
// reads what the test writes through a PipeTransport (so reads have
// deadlines and callers may read), and each request the mux writes arrives
// on reqs.
type scripted struct {
	t    *testing.T
	w    *os.File // the browser's end of the pipe the mux reads
	reqs chan request
}

// reqWriter is the mux's end of the other direction: it parses each
// request (one or more NUL-terminated messages per Write).
type reqWriter struct{ reqs chan request }

func (rw reqWriter) Write(b []byte) (int, error) {
	for frame := range frames(b) {
		var r request
		if err := json.Unmarshal(frame, &r); err != nil {
			return 0, err
		}
		rw.reqs <- r
	}
	return len(b), nil
}

func (rw reqWriter) Close() error { return nil }

// newScripted starts a mux on a scripted browser. The mux's reader stays
// parked for an hour after a caller read its reply unless something else
// must be read (opts.ResumeDelay unless set), so who reads is up to the
// test.
func newScripted(t *testing.T, opts cdpmux.Options) (*scripted, *cdpmux.Mux) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	sb := &scripted{t: t, w: w, reqs: make(chan request, 1024)}
	if opts.ResumeDelay == 0 {
		opts.ResumeDelay = time.Hour
	}
	m, err := cdpmux.New(cdpmux.NewPipeTransport(r, reqWriter{sb.reqs}), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.Close()
		w.Close()
	})
	return sb, m
}

// send writes one message to the mux.
func (sb *scripted) send(format string, args ...any) {
	sb.t.Helper()
	if _, err := fmt.Fprintf(sb.w, format+"\x00", args...); err != nil {
		sb.t.Fatalf("writing to the mux: %v", err)
	}
}

// next returns the next request the mux wrote.
func (sb *scripted) next(method string) request {
	sb.t.Helper()
	select {
	case r := <-sb.reqs:
		if r.Method != method {
			sb.t.Fatalf("the mux wrote %s, want %s", r.Method, method)
		}
		return r
	case <-time.After(hangLimit):
		sb.t.Fatalf("the mux wrote no %s within %v", method, hangLimit)
		return request{}
	}
}

// reply answers r with result.
func (sb *scripted) reply(r request, result string) {
	sb.t.Helper()
	sb.send(`{"id":%d,"sessionId":%q,"result":%s}`, r.ID, r.SessionID, result)
}

// event sends an event of session sid.
func (sb *scripted) event(sid, method, params string) {
	sb.t.Helper()
	sb.send(`{"method":%q,"sessionId":%q,"params":%s}`, method, sid, params)
}

// attach announces session sid and returns once the mux knows it (see
// fence for free).
func (sb *scripted) attach(ctx context.Context, m *cdpmux.Mux, sid string, free bool) {
	sb.t.Helper()
	sb.event("", "Target.attachedToTarget", fmt.Sprintf(`{"sessionId":%q,"targetInfo":{"targetId":"T-%s"}}`, sid, sid))
	sb.fence(ctx, m, free)
}

// fence makes a direct call on the browser's session and answers it: when
// it returns, the mux has dispatched everything sent before. With free, it
// then waits until nobody holds the read role (the reader gives it up once
// it handed the reply over, for the hour newScripted sets), so that the
// next direct call reads for itself.
func (sb *scripted) fence(ctx context.Context, m *cdpmux.Mux, free bool) {
	sb.t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "", "Browser.getVersion", nil)
		errc <- err
	}()
	sb.reply(sb.next("Browser.getVersion"), `{"product":"scripted"}`)
	if err := await(sb.t, errc); err != nil {
		sb.t.Fatalf("fence: %v", err)
	}
	if free {
		waitRole(sb.t, m, "free")
	}
}

// waitRole waits until the read role is held by who ("free", "reader",
// "caller"). There is nothing to wait on but the mux's state, so it polls.
func waitRole(t *testing.T, m *cdpmux.Mux, who string) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for m.ReadRole() != who {
		if time.Now().After(deadline) {
			t.Fatalf("the read role is %s after %v, want %s", m.ReadRole(), hangLimit, who)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// seen is what a tap saw: each event's n, and whether it ran on a direct
// caller reading for its reply.
type seen struct {
	mu       sync.Mutex
	ns       []int  // guarded by mu
	byCaller []bool // guarded by mu
	ended    bool   // guarded by mu
	got      chan struct{}
}

func (sn *seen) tap(method string, params json.RawMessage) {
	buf := make([]byte, 64<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	var p struct{ N int }
	json.Unmarshal(params, &p)
	sn.mu.Lock()
	if method == "" {
		sn.ended = true
	} else {
		sn.ns = append(sn.ns, p.N)
		sn.byCaller = append(sn.byCaller, strings.Contains(stack, "cdpmux.(*Mux).lead("))
	}
	sn.mu.Unlock()
	select {
	case sn.got <- struct{}{}:
	default:
	}
}

func (sn *seen) get() ([]int, []bool, bool) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return append([]int(nil), sn.ns...), append([]bool(nil), sn.byCaller...), sn.ended
}

// startCall makes a direct Runtime.evaluate on sid and returns once the
// scripted browser has its request.
func startCall(ctx context.Context, sb *scripted, m *cdpmux.Mux, sid string) (request, <-chan string, <-chan error) {
	sb.t.Helper()
	out, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		raw, err := m.Call(ctx, sid, "Runtime.evaluate", []byte(`{"expression":"1"}`))
		out <- string(raw)
		errc <- err
	}()
	return sb.next("Runtime.evaluate"), out, errc
}

func TestADirectCallReadsItsOwnReplyAndDeliversTheEventsBeforeItInOrder(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	sn := &seen{got: make(chan struct{}, 1)}
	if err := m.Tap("S1", sn.tap); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		req, out, errc := startCall(ctx, sb, m, "S1")
		if got := m.ReadRole(); got != "caller" {
			t.Fatalf("round %d: the read role is %s while the call is in flight, want caller", round, got)
		}
		for i := range 3 {
			sb.event("S1", "Test.tick", fmt.Sprintf(`{"n":%d}`, 3*round+i))
		}
		sb.reply(req, fmt.Sprintf(`{"round":%d}`, round))
		if err := await(t, errc); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got, want := <-out, fmt.Sprintf(`{"round":%d}`, round); got != want {
			t.Errorf("round %d: reply %s, want %s", round, got, want)
		}
		if n, _ := m.Use(); n != 0 {
			t.Errorf("round %d: Use() in flight = %d after the call returned, want 0", round, n)
		}
	}
	ns, byCaller, _ := sn.get()
	if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5, 6, 7, 8}, ns); diff != "" {
		t.Errorf("events the tap saw (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, true, true, true, true, true, true, true}, byCaller); diff != "" {
		t.Errorf("events read by the caller itself (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestASecondDirectCallAndAConnCallGetTheirRepliesWhileACallerReads(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	reqA, outA, errA := startCall(ctx, sb, m, "S1")
	if got := m.ReadRole(); got != "caller" {
		t.Fatalf("the read role is %s while the first call is in flight, want caller", got)
	}
	reqB, outB, errB := startCall(ctx, sb, m, "S1")
	errC := make(chan error, 1)
	var version string
	go func() {
		v, err := cdp.NewClient(m.Browser()).Browser.GetVersion(ctx)
		if err == nil {
			version = v.Product
		}
		errC <- err
	}()
	reqC := sb.next("Browser.getVersion")
	if n, _ := m.Use(); n != 3 {
		t.Errorf("Use() in flight = %d with three calls held, want 3", n)
	}
	// The first caller reads both other replies and hands them over.
	sb.reply(reqC, `{"protocolVersion":"1.3","product":"C","revision":"","userAgent":"","jsVersion":""}`)
	sb.reply(reqB, `{"call":"B"}`)
	if err := await(t, errC); err != nil || version != "C" {
		t.Errorf("conn call = %q, %v; want C, nil", version, err)
	}
	if err := await(t, errB); err != nil {
		t.Errorf("second direct call: %v", err)
	} else if got := <-outB; got != `{"call":"B"}` {
		t.Errorf("second direct call's reply %s, want B's", got)
	}
	if got := m.ReadRole(); got != "caller" {
		t.Errorf("the read role is %s while the first call still waits, want caller", got)
	}
	sb.reply(reqA, `{"call":"A"}`)
	if err := await(t, errA); err != nil {
		t.Errorf("first direct call: %v", err)
	} else if got := <-outA; got != `{"call":"A"}` {
		t.Errorf("first direct call's reply %s, want A's", got)
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after every call returned, want 0", n)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestACallerCancelledWhileReadingReturnsAndItsLateReplyLosesNothing(t *testing.T) {
	for _, size := range []int{10, 300 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			noGoroutineLeftAfter(t)
			sb, m := newScripted(t, cdpmux.Options{})
			ctx := t.Context()
			sb.attach(ctx, m, "S1", true)
			callCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			req, _, errc := startCall(callCtx, sb, m, "S1")
			// The first half of the reply, then the caller gives up.
			reply := fmt.Sprintf(`{"id":%d,"sessionId":"S1","result":{"big":"%s"}}`, req.ID, strings.Repeat("x", size))
			wrote := make(chan error, 1)
			go func() {
				_, err := io.WriteString(sb.w, reply[:len(reply)/2])
				wrote <- err
			}()
			if err := await(t, wrote); err != nil {
				t.Fatal(err)
			}
			cancel()
			if err := await(t, errc); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled call: %v, want context.Canceled", err)
			}
			if n, _ := m.Use(); n != 0 {
				t.Errorf("Use() in flight = %d after its caller left, want 0: nobody waits for it", n)
			}
			// The rest of it, then the next call's reply: that call must get
			// its own, and the late one must have been routed (not
			// malformed, not unroutable).
			go func() {
				_, err := io.WriteString(sb.w, reply[len(reply)/2:]+"\x00")
				wrote <- err
			}()
			reqB, outB, errB := startCall(ctx, sb, m, "S1")
			if err := await(t, wrote); err != nil {
				t.Fatal(err)
			}
			sb.reply(reqB, `{"call":"B"}`)
			if err := await(t, errB); err != nil {
				t.Fatalf("the next call: %v", err)
			}
			if got := <-outB; got != `{"call":"B"}` {
				t.Errorf("the next call's reply %.40s, want its own", got)
			}
			if n, _ := m.Use(); n != 0 {
				t.Errorf("Use() in flight = %d after the late reply, want 0", n)
			}
			if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
			// And the mux still reads for its callers.
			sb.fence(ctx, m, true)
		})
	}
}

func TestTheTransportFailingUnderACallerEndsEveryCallAndSessionAsUnderTheReader(t *testing.T) {
	noGoroutineLeftAfter(t)
	exit := errors.New("browser exited with status 3")
	sb, m := newScripted(t, cdpmux.Options{Cause: func(error) error { return exit }})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	sn := &seen{got: make(chan struct{}, 1)}
	if err := m.Tap("S1", sn.tap); err != nil {
		t.Fatal(err)
	}
	_, _, errA := startCall(ctx, sb, m, "S1")
	if got := m.ReadRole(); got != "caller" {
		t.Fatalf("the read role is %s while the call is in flight, want caller", got)
	}
	_, _, errB := startCall(ctx, sb, m, "S1")
	errC := make(chan error, 1)
	go func() {
		_, err := cdp.NewClient(m.Browser()).Browser.GetVersion(ctx)
		errC <- err
	}()
	sb.next("Browser.getVersion")
	sb.w.Close() // EOF under the reading caller
	for name, errc := range map[string]<-chan error{"reading caller": errA, "second direct call": errB, "conn call": errC} {
		err := await(t, errc)
		if !errors.Is(err, cdpmux.ErrConnClosed) || !errors.Is(err, exit) || errors.Is(err, cdpmux.ErrNotSent) {
			t.Errorf("%s: %v, want ErrConnClosed caused by the exit (and not ErrNotSent: it was sent)", name, err)
		}
		var ee *cdpmux.EndError
		if name != "conn call" && (!errors.As(err, &ee) || ee.SessionID != "S1") {
			t.Errorf("%s: %v, want S1's *EndError", name, err)
		}
	}
	closedWithin(t, m.Done(), "the mux ended")
	if err := m.Err(); !errors.Is(err, exit) {
		t.Errorf("Err() = %v, want the exit", err)
	}
	if _, _, ended := sn.get(); !ended {
		t.Error("the session's tap did not see its end")
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after the end, want 0", n)
	}
}

func TestASessionEndReadByTheCallerEndsItsCall(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	_, _, errc := startCall(ctx, sb, m, "S1")
	if got := m.ReadRole(); got != "caller" {
		t.Fatalf("the read role is %s while the call is in flight, want caller", got)
	}
	sb.event("", "Target.detachedFromTarget", `{"sessionId":"S1"}`)
	var ee *cdpmux.EndError
	if err := await(t, errc); !errors.As(err, &ee) || !errors.Is(err, cdpmux.ErrDetached) || ee.SessionID != "S1" {
		t.Errorf("call on the detached session: %v, want S1's *EndError, ErrDetached", err)
	}
	if n, _ := m.Use(); n != 0 {
		t.Errorf("Use() in flight = %d after the detach, want 0", n)
	}
	sb.fence(ctx, m, true)
}

func TestClosingTheMuxWhileACallerReadsEndsTheCall(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	_, _, errc := startCall(ctx, sb, m, "S1")
	if got := m.ReadRole(); got != "caller" {
		t.Fatalf("the read role is %s while the call is in flight, want caller", got)
	}
	m.Close()
	if err := await(t, errc); !errors.Is(err, cdpmux.ErrConnClosed) {
		t.Errorf("call in flight at Close: %v, want ErrConnClosed", err)
	}
	select {
	case <-m.Done():
	default:
		t.Error("Done is not closed after Close returned")
	}
}

func TestATransportWithoutReadDeadlinesKeepsEveryReadOnTheReader(t *testing.T) {
	noGoroutineLeftAfter(t)
	r, w := io.Pipe() // no deadlines
	reqs := make(chan request, 16)
	m, err := cdpmux.New(cdpmux.NewPipeTransport(r, reqWriter{reqs}), cdpmux.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer w.Close()
	sb := &scripted{t: t, reqs: reqs}
	for range 2 {
		errc := make(chan error, 1)
		go func() {
			_, err := m.Call(t.Context(), "", "Browser.getVersion", nil)
			errc <- err
		}()
		req := sb.next("Browser.getVersion")
		if got := m.ReadRole(); got != "reader" {
			t.Errorf("the read role is %s during a direct call, want reader", got)
		}
		fmt.Fprintf(w, `{"id":%d,"result":{}}`+"\x00", req.ID)
		if err := await(t, errc); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTheMuxSuiteOverAPipe runs the tests of calls, events and faults
// again with the fake's connection carried over a real pipe, where direct
// callers read for themselves whenever they find nobody reading.
func TestTheMuxSuiteOverAPipe(t *testing.T) {
	overPipe = true
	defer func() { overPipe = false }()
	for name, test := range map[string]func(*testing.T){
		"direct call":            TestADirectCallGetsItsReplyAndCountsAsUseWhileInFlight,
		"direct call ends":       TestADirectCallFailsLikeAConnCallWhenItsSessionOrConnectionEnds,
		"direct call errors":     TestADirectCallReportsErrorRepliesAndCancellation,
		"go":                     TestGoHasEveryRequestInFlightAtOnceAndHandsEachReplyInItsPlace,
		"go, session ended":      TestGoOnAnEndedSessionReportsEveryRequestUnsentWithTheEnd,
		"go, ends midway":        TestGoSettlesWhatIsLeftWithTheEndOfItsSessionOrOfTheConnection,
		"events in order":        TestEventsArriveInOrderOnTheirOwnSession,
		"queue limit":            TestUndialedSessionDropsEventsOverTheQueueLimitButStillGetsItsReplies,
		"cancelled call":         TestCancelledCallReturnsContextErrorAndLaterCallsWork,
		"EOF mid call":           TestEOFMidCallFailsEveryPendingCallOnEveryConnWithErrConnClosed,
		"crash":                  TestCrashedTargetFailsItsPendingCallsWithErrTargetCrashed,
		"detach":                 TestDetachMidCallFailsPendingCallsWithErrDetached,
		"navigate":               TestNavigateThroughTheMuxFiresTheLoadEventAndUpdatesThePage,
		"browser close":          TestBrowserCloseAnswersThenEndsTheMuxWithEOF,
		"concurrent use, exit":   TestConcurrentUseThenExitEndsEveryCallWithoutHanging,
		"tap":                    TestATapSeesEverySessionEventInOrderThenTheEnd,
		"crash of every session": TestMuxTargetCrashedEndsEverySessionOfTheTarget,
	} {
		t.Run(name, test)
	}
}
