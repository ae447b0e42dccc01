package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// wsLauncher is a third-party launcher as a remote fleet would write one:
// it leases a browser (a cdptest browser here) and hands the pool a
// Transport that is a real websocket (an httptest server bridging to the
// browser), nothing else. The pool must treat it like its own browsers.
type wsLauncher struct {
	l   *cdptest.Launcher
	srv *httptest.Server

	mu       sync.Mutex
	browsers map[string]browserpool.Transport // guarded by mu; by path
}

func newWSLauncher(t *testing.T, l *cdptest.Launcher) *wsLauncher {
	w := &wsLauncher{l: l, browsers: map[string]browserpool.Transport{}}
	w.srv = httptest.NewServer(http.HandlerFunc(w.bridge))
	t.Cleanup(w.srv.Close)
	return w
}

// bridge carries messages between the websocket and the browser's
// transport until either side ends, then closes both.
func (w *wsLauncher) bridge(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	bt := w.browsers[r.URL.Path]
	w.mu.Unlock()
	if bt == nil {
		http.NotFound(rw, r)
		return
	}
	c, err := (&websocket.Upgrader{}).Upgrade(rw, r, nil)
	if err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		for {
			msg, err := bt.ReadMessage()
			if err != nil || c.WriteMessage(websocket.TextMessage, msg) != nil {
				return
			}
		}
	}()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil || bt.WriteMessage(msg) != nil {
			break
		}
	}
	bt.Close()
	c.Close()
	<-done
}

func (w *wsLauncher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	lb, err := w.l.Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	path := "/devtools/browser/" + spec.SessionID
	w.mu.Lock()
	w.browsers[path] = lb.Transport()
	w.mu.Unlock()
	c, resp, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(w.srv.URL, "http")+path, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		lb.Stop(ctx)
		return nil, err
	}
	return wsBrowser{LaunchedBrowser: lb, t: wsTransport{c}}, nil
}

// wsBrowser is a leased browser whose only connection is the websocket.
type wsBrowser struct {
	browserpool.LaunchedBrowser
	t wsTransport
}

func (b wsBrowser) Transport() browserpool.Transport { return b.t }

type wsTransport struct{ c *websocket.Conn }

func (t wsTransport) ReadMessage() ([]byte, error) {
	_, b, err := t.c.ReadMessage()
	return b, err
}
func (t wsTransport) WriteMessage(b []byte) error { return t.c.WriteMessage(websocket.TextMessage, b) }
func (t wsTransport) Close() error                { return t.c.Close() }

func TestALauncherGivingOnlyAWebsocketTransportGetsTheSameSessions(t *testing.T) {
	l := cdptest.NewLauncher(t, cdptest.WithoutLeakCheck())
	w := newWSLauncher(t, l)
	var c closes
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: w, Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	var got float64
	if err := tab.Evaluate(ctx, "1+1", &got); err != nil || got != 2 {
		t.Fatalf("Evaluate over the websocket = %v, %v; want 2", got, err)
	}
	if v := s.Info().Version; v != "cdptest/1.0" {
		t.Errorf("session version %q, want the launcher's", v)
	}

	// A crash reaches the session through the websocket as it does through
	// a pipe: the call in flight fails, the session is reclaimed with the
	// browser's exit status, and the next call is retryable.
	errc, release := heldEvaluate(t, ctx, l.Browsers()[0], tab)
	defer release()
	l.Browsers()[0].Exit(3)
	if err := <-errc; !errors.Is(err, browserpool.ErrBrowserExited) {
		t.Errorf("call in flight: error = %v, want ErrBrowserExited", err)
	}
	<-s.Done()
	if err := s.Err(); !errors.Is(err, browserpool.ErrBrowserExited) || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("Session.Err() = %v, want ErrBrowserExited naming status 3", err)
	}
	waitFor(t, "the close event", func() bool { return len(c.reasons(s.ID())) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonCrashed}, c.reasons(s.ID())); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
	if err := cdpError(t, tab.Evaluate(ctx, "1", nil)); !err.Retryable() {
		t.Errorf("a call after the crash: %v, Retryable() = false, want true", err)
	}

	// A second session over the seam is independent of the first.
	s2 := mustOpen(t, ctx, p)
	if s2.ID() == s.ID() || len(l.Browsers()) != 2 {
		t.Fatalf("second session %s on %d browsers, want a new one on a second browser", s2.ID(), len(l.Browsers()))
	}
	if err := s2.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// noFilesLauncher fails every launch as a spawn out of file descriptors
// does (launch's pipe2 or epoll_create1 meeting EMFILE).
type noFilesLauncher struct{}

func (noFilesLauncher) Launch(context.Context, browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	return nil, fmt.Errorf("launch: starting chromium: spawning: %w", os.NewSyscallError("epoll_create1", syscall.EMFILE))
}

func TestALaunchOutOfFileDescriptorsSaysSoAndHowToFreeSome(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: noFilesLauncher{}, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Open(t.Context())
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrLaunchFailed) || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("Open = %v, want an ErrLaunchFailed *Error wrapping EMFILE", err)
	}
	for _, want := range []string{"file descriptors", "close the sessions", "ulimit -n"} {
		if !strings.Contains(e.Hint, want) || !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
