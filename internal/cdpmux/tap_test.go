// Room: tests of taps, and of the events a session keeps before and
// after its conn is dialed. No locks.

package cdpmux_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

func TestATapSeesEverySessionEventInOrderThenTheEnd(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	var mu sync.Mutex
	var got []string
	ended := make(chan struct{})
	if err := m.Tap(p.sessionID, func(method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		if method == "" {
			got = append(got, "end")
			close(ended)
			return
		}
		got = append(got, method+" "+string(params))
	}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		b.Emit(p.sessionID, "Test.tick", map[string]int{"n": i})
	}
	b.Emit("", "Test.browserLevel", nil) // not the tapped session's
	b.DetachTarget("TARGET_1")
	<-ended
	mu.Lock()
	defer mu.Unlock()
	want := []string{`Test.tick {"n":0}`, `Test.tick {"n":1}`, `Test.tick {"n":2}`, "end"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tapped events (-want +got):\n%s", diff)
	}
	if err := m.Tap("NO_SUCH_SESSION", func(string, json.RawMessage) {}); !errors.Is(err, cdpmux.ErrUnknownSession) {
		t.Errorf("Tap of an unknown session: %v, want ErrUnknownSession", err)
	}
}

// ticksArriveInOrder emits three Test.tick events on sessionID and checks
// that a stream on conn, opened first, receives them in order.
func ticksArriveInOrder(ctx context.Context, t *testing.T, b *cdptest.Browser, sessionID string, conn *rpcc.Conn) {
	t.Helper()
	s, err := rpcc.NewStream(ctx, "Test.tick", conn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []tick{{100}, {101}, {102}}
	for _, ev := range want {
		b.Emit(sessionID, "Test.tick", ev)
	}
	var got []tick
	for range want {
		var ev tick
		if err := s.RecvMsg(&ev); err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events on the dialed conn (-want +got):\n%s", diff)
	}
}

func TestTheBrowsersEventsAreNotKeptUntilItsConnIsDialedThenArriveInOrder(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{EventQueueLimit: 8})
	ctx := t.Context()
	// Nobody can read the browser session's events before Browser() is
	// dialed: they are neither queued nor counted as dropped.
	for i := range 20 {
		b.Emit("", "Test.tick", tick{i})
	}
	if _, err := m.BrowserDirect().Call(ctx, "Browser.getVersion", nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cdpmux.Stats{}, m.Stats()); diff != "" {
		t.Errorf("Stats before Browser() (-want +got):\n%s", diff)
	}
	ticksArriveInOrder(ctx, t, b, "", m.Browser())
	if m.Browser() != m.Browser() {
		t.Error("Browser() dialed a second conn")
	}
}

func TestBrowserDialedFirstOnAnEndedMuxFailsItsCallsWithTheEnd(t *testing.T) {
	b := cdptest.NewBrowser(t)
	m := newMux(t, b, cdpmux.Options{})
	m.Close()
	_, err := cdp.NewClient(m.Browser()).Browser.GetVersion(t.Context())
	if !errors.Is(err, cdpmux.ErrConnClosed) {
		t.Errorf("a call on an ended mux's first Browser(): error = %v, want ErrConnClosed", err)
	}
}
