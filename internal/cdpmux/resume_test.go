// Room: tests of the reader's resumption: events read while nobody
// calls or after a long call, and the idle timer that decides when the
// reader takes the read role back. No locks.

package cdpmux_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

func TestEventsWhileNobodyCallsReachTheirSessionOnceTheReaderResumes(t *testing.T) {
	noGoroutineLeftAfter(t)
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		resume func(ctx context.Context, sb *scripted, m *cdpmux.Mux) <-chan error
	}{
		{"after the resume delay", cdpmux.ReaderResumeDelay, nil},
		{"at once for a conn call", time.Hour, func(ctx context.Context, sb *scripted, m *cdpmux.Mux) <-chan error {
			errc := make(chan error, 1)
			go func() {
				_, err := cdp.NewClient(m.Browser()).Browser.GetVersion(ctx)
				errc <- err
			}()
			return errc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, m := newScripted(t, cdpmux.Options{ResumeDelay: tc.delay})
			ctx := t.Context()
			sb.attach(ctx, m, "S1", tc.delay == time.Hour) // the reader may resume before a poll sees the role free
			sn := &seen{got: make(chan struct{}, 1)}
			if err := m.Tap("S1", sn.tap); err != nil {
				t.Fatal(err)
			}
			// A caller reads its own reply, then nobody calls.
			req, _, errc := startCall(ctx, sb, m, "S1")
			sb.reply(req, `{}`)
			if err := await(t, errc); err != nil {
				t.Fatal(err)
			}
			var conn <-chan error
			if tc.resume != nil {
				conn = tc.resume(ctx, sb, m)
				sb.reply(sb.next("Browser.getVersion"), `{"protocolVersion":"1.3","product":"C","revision":"","userAgent":"","jsVersion":""}`)
			}
			sb.event("S1", "Test.tick", `{"n":7}`)
			awaitEvent(t, sn, 7, "while nobody called")
			if conn != nil {
				if err := await(t, conn); err != nil {
					t.Errorf("conn call: %v", err)
				}
			}
			ns, byCaller, _ := sn.get()
			if diff := cmp.Diff([]int{7}, ns); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]bool{false}, byCaller); diff != "" {
				t.Errorf("read by a caller (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsAfterACallLongerThanTheResumeDelayStillReachTheirSession(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{ResumeDelay: cdpmux.ReaderResumeDelay})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", false)
	sn := &seen{got: make(chan struct{}, 1)}
	if err := m.Tap("S1", sn.tap); err != nil {
		t.Fatal(err)
	}
	// Calls until one is read by its own caller (the reader may resume
	// between two on a loaded machine), held until the idle timer fired
	// during it and, the call being long, stopped: the caller's release
	// must arm it again for the reader to resume.
	for led := false; !led; {
		req, _, errc := startCall(ctx, sb, m, "S1")
		led = m.ReadRole() == "caller"
		if led {
			fires := m.IdleFires()
			deadline := time.Now().Add(hangLimit)
			for m.IdleFires() == fires || m.IdleArmed() {
				if time.Now().After(deadline) {
					t.Fatalf("the idle timer did not fire and stop within %v while a caller read (fires %d, armed %v)", hangLimit, m.IdleFires()-fires, m.IdleArmed())
				}
				time.Sleep(100 * time.Microsecond)
			}
		}
		sb.reply(req, `{}`)
		if err := await(t, errc); err != nil {
			t.Fatal(err)
		}
	}
	sb.event("S1", "Test.tick", `{"n":9}`)
	awaitEvent(t, sn, 9, "after the call")
	if ns, _, _ := sn.get(); !slices.Equal(ns, []int{9}) {
		t.Errorf("events %v, want [9]", ns)
	}
}

func TestALongCallStopsTheIdleTimerInsteadOfFiringItEveryDelay(t *testing.T) {
	noGoroutineLeftAfter(t)
	sb, m := newScripted(t, cdpmux.Options{ResumeDelay: cdpmux.ReaderResumeDelay})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", false)
	// Each fire runs a goroutine of its own (time.AfterFunc): a call held
	// for fifty delays (a navigation, a tab opening in a window) must not
	// cost fifty of them. Fewer fires on a loaded machine still pass.
	for led := false; !led; {
		req, _, errc := startCall(ctx, sb, m, "S1")
		if led = m.ReadRole() == "caller"; led {
			fires := m.IdleFires()
			time.Sleep(50 * cdpmux.ReaderResumeDelay) // the call's length, not a wait for an outcome
			if n := m.IdleFires() - fires; n > 2 {
				t.Errorf("the idle timer fired %d times during one call of 50 resume delays, want at most 2", n)
			}
		}
		sb.reply(req, `{}`)
		if err := await(t, errc); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCallsFollowingOneAnotherFireTheIdleTimerEverLessOften(t *testing.T) {
	noGoroutineLeftAfter(t)
	// A call here takes well under the delay, also under -race on a loaded
	// machine (a call longer than the wait ends the stream's backoff).
	const delay = 20 * time.Millisecond
	sb, m := newScripted(t, cdpmux.Options{ResumeDelay: delay})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", false)
	// Every fire costs the process a goroutine and a thread's wake-up: at
	// one per delay, a stream of short calls paid a tenth of its speed.
	// With the wait doubling up to 32 delays, 64 delays of calls meet
	// about 7 fires (at 1, 3, 7, 15, 31 and 63 delays); a call longer than
	// the wait on a loaded machine adds a few.
	fires := m.IdleFires()
	calls := 0
	for start := time.Now(); time.Since(start) < 64*delay; calls++ {
		req, _, errc := startCall(ctx, sb, m, "S1")
		sb.reply(req, `{}`)
		if err := await(t, errc); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.IdleFires() - fires; n > 20 {
		t.Errorf("the idle timer fired %d times during %d calls over 64 resume delays, want at most 20 (one per delay is 64)", n, calls)
	}
	// The stream over, the reader still resumes and reads an event.
	sn := &seen{got: make(chan struct{}, 1)}
	if err := m.Tap("S1", sn.tap); err != nil {
		t.Fatal(err)
	}
	sb.event("S1", "Test.tick", `{"n":4}`)
	awaitEvent(t, sn, 4, "after the stream")
}

func TestAListenerHasTheReaderReadEventsAtOnceAndAfterEveryDirectCall(t *testing.T) {
	noGoroutineLeftAfter(t)
	// An hour's delay: without Listen, nothing but a call would read the
	// events below.
	sb, m := newScripted(t, cdpmux.Options{ResumeDelay: time.Hour})
	ctx := t.Context()
	sb.attach(ctx, m, "S1", true)
	sn := &seen{got: make(chan struct{}, 1)}
	if err := m.Tap("S1", sn.tap); err != nil {
		t.Fatal(err)
	}
	stop := m.Listen()
	sb.event("S1", "Test.tick", `{"n":1}`)
	awaitEvent(t, sn, 1, "while a listener waited")
	// A direct call made meanwhile gives the role back to the reader, not
	// to the timer.
	req, _, errc := startCall(ctx, sb, m, "S1")
	sb.reply(req, `{}`)
	if err := await(t, errc); err != nil {
		t.Fatal(err)
	}
	waitRole(t, m, "reader")
	sb.event("S1", "Test.tick", `{"n":2}`)
	awaitEvent(t, sn, 2, "while a listener waited")
	stop()
	stop() // a second stop is harmless
	// Nobody listening, the reader gives the role up after the next
	// direct call, as before.
	sb.fence(ctx, m, true)
	ns, byCaller, _ := sn.get()
	if diff := cmp.Diff([]int{1, 2}, ns); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, false}, byCaller); diff != "" {
		t.Errorf("read by a caller (-want +got):\n%s", diff)
	}
}

// awaitEvent waits until sn's tap saw event n (sent when, for the failure
// message).
func awaitEvent(t *testing.T, sn *seen, n int, when string) {
	t.Helper()
	deadline := time.After(hangLimit)
	for ns, _, _ := sn.get(); !slices.Contains(ns, n); ns, _, _ = sn.get() {
		select {
		case <-sn.got:
		case <-deadline:
			t.Fatalf("event %d, sent %s, was not read within %v", n, when, hangLimit)
		}
	}
}
