package browserpool_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/manifest"
)

func TestFleetFakeBrowserlessLeaseEndsAtOnceWhenTheURLCarriesTheTokenOrAPrefix(t *testing.T) {
	f := startFakeFleet(t, 2, "t0ken-in-url-77")
	behind := httptest.NewServer(http.StripPrefix("/bl", f)) // a proxy serving the server under /bl
	t.Cleanup(behind.Close)
	for name, u := range map[string]string{
		"token in the query": f.URL + "/chromium?token=" + f.Token,
		"behind a prefix":    "ws" + strings.TrimPrefix(behind.URL, "http") + "/bl/chromium?token=" + f.Token,
		"a prefix, no route": "ws" + strings.TrimPrefix(behind.URL, "http") + "/bl?token=" + f.Token,
	} {
		t.Run(name, func(t *testing.T) {
			p := newFleetPool(t, &browserpool.Browserless{URL: u, CleanupTimeout: time.Minute}, 0)
			ctx := ctxT(t)
			s := mustOpen(t, ctx, p)
			f.mu.Lock()
			lists := f.lists
			f.mu.Unlock()
			if err := s.Close(ctx); err != nil {
				t.Errorf("Session.Close: %v; want the lease confirmed ended", err)
			}
			f.mu.Lock()
			asked := f.lists > lists
			f.mu.Unlock()
			if !asked {
				t.Error("Session.Close did not ask the server's session list: the release went unconfirmed")
			}
			if err := p.Close(); err != nil {
				t.Errorf("Pool.Close: %v", err)
			}
			if st := p.Stats(); st.Leaked != 0 || st.CloseFailures != 0 {
				t.Errorf("Stats after closing: %d leaked, %d close failures; want none", st.Leaked, st.CloseFailures)
			}
		})
	}
}

func TestFleetFakeBrowserlessLeaseOfAServerThatDiedCountsAsEnded(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	p := newFleetPool(t, &browserpool.Browserless{URL: f.URL}, 0)
	s := mustOpen(t, ctxT(t), p)
	f.Close() // the server dies: its leases' sockets close, its HTTP API is gone
	<-s.Done()
	if err := p.Close(); err != nil {
		t.Errorf("Pool.Close after the server died: %v; want nil: the lease ended with its socket", err)
	}
	if st := p.Stats(); st.Leaked != 0 || st.CloseFailures != 0 {
		t.Errorf("Stats: %d leaked, %d close failures; want none", st.Leaked, st.CloseFailures)
	}
}

// silentServer accepts connections and never answers, until the test ends.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	return ln.Addr().String()
}

func TestPoolCloseFollowsALeaseRequestGivenUpOnForCleanupTimeoutNotTheLaunchDeadline(t *testing.T) {
	addr := silentServer(t)
	for name, l := range map[string]browserpool.Launcher{
		"browserless": &browserpool.Browserless{URL: "ws://" + addr, CleanupTimeout: 500 * time.Millisecond},
		"grid":        &browserpool.SeleniumGrid{URL: "http://" + addr, CleanupTimeout: 500 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			p := newFleetPool(t, l, time.Hour) // the launch itself would wait an hour
			ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
			defer cancel()
			_, err := p.Open(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "fleet at ") || !strings.Contains(err.Error(), addr) {
				t.Errorf("Open against a fleet that never answers: %v; want the deadline's class and a hint naming the fleet", err)
			}
			closed := make(chan error, 1)
			go func() { closed <- p.Close() }()
			select {
			case <-closed:
			case <-time.After(time.Minute): // CleanupTimeout is half a second; the old bound was the hour
				t.Fatal("Pool.Close still waits a minute on: it follows the request given up on past CleanupTimeout")
			}
		})
	}
}

func TestFleetLeaseSweepEndsAGridLeaseRecordedUnderAnotherSpellingOfItsURL(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	root := newRoot(t)
	id := newGridSession(t, f)
	writeLeaseEntries(t, root, manifest.Entry{Session: "s-dead", Fleet: browserpool.FleetSeleniumGrid, Endpoint: f.HTTP, LeaseID: id})
	p, _ := sweepPool(t, root, &browserpool.SeleniumGrid{URL: strings.Replace(f.HTTP, "http://", "HTTP://", 1) + "/"})
	if n := f.gridSessions(); n != 0 {
		t.Errorf("Grid sessions after the sweep = %d; want 0: the lease was recorded as %s and the pool was given %s/", n, f.HTTP, f.HTTP)
	}
	if got := leaseCountsOf(p); got.LeasesEnded != 1 {
		t.Errorf("sweep counts %+v; want one lease ended", got)
	}
}

func TestFleetFakeGridThatGivesNoSessionWithSlotsFreeSaysNoNodeTakesTheCapabilities(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	f.mu.Lock()
	f.postDelay = 3 * time.Second // the request waits as for a node that never comes
	f.mu.Unlock()
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: f.HTTP, Capabilities: map[string]any{"browserName": "firefox"}}, time.Second)
	_, err := p.Open(ctxT(t))
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrTimeout) {
		t.Fatalf("Open: %v; want an ErrTimeout *Error", err)
	}
	if !strings.Contains(e.Detail, "2 of its 2 slots were free") || !strings.Contains(e.Hint, "SeleniumGrid.Capabilities") {
		t.Errorf("error %q; want it to say the slots were free and point at the capabilities", err)
	}
}

func TestDialWebSocketEndsItsHandshakeWhenItsContextIsCancelled(t *testing.T) {
	addr := silentServer(t)
	ctx, cancel := context.WithCancel(ctxT(t)) // no deadline: only the cancel ends it
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() {
		_, err := browserpool.DialWebSocket(ctx, "ws://"+addr+"/chromium", browserpool.DialOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("DialWebSocket cancelled during the handshake: %v; want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("DialWebSocket still waits for a server that never answers, a minute after its context was cancelled")
	}
}
