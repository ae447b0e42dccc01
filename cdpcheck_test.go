package browserpool_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
)

var updateCDPGolden = flag.Bool("update-cdp-golden", false, "rewrite testdata/cdp/*.golden from the messages the attach and CDP check tests get")

// cdpGolden compares got with testdata/cdp/<name>.golden (or rewrites it with
// -update-cdp-golden).
func cdpGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "cdp", name+".golden")
	if *updateCDPGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update-cdp-golden to create it)", err, t.Name())
	}
	if diff := cmp.Diff(strings.TrimSuffix(string(want), "\n"), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// withoutPort replaces every mention of port with PORT, so messages are stable.
func withoutPort(msg string, port int) string {
	return strings.ReplaceAll(msg, strconv.Itoa(port), "PORT")
}

// cdpError returns err as *browserpool.Error, failing the test if it is not.
func cdpError(t *testing.T, err error) *browserpool.Error {
	t.Helper()
	var e *browserpool.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *browserpool.Error", err, err)
	}
	return e
}

// closedLocalPort returns a 127.0.0.1 port nothing listens on.
func closedLocalPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func ctxWithin(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCheckCDPOnAClosedPortSaysHowToStartChrome(t *testing.T) {
	port := closedLocalPort(t)
	for _, endpoint := range []string{strconv.Itoa(port), "127.0.0.1:" + strconv.Itoa(port), "http://127.0.0.1:" + strconv.Itoa(port)} {
		_, err := browserpool.CheckCDP(ctxT(t), endpoint)
		if !errors.Is(err, browserpool.ErrCDPRefused) {
			t.Fatalf("CheckCDP(%q) error = %v, want ErrCDPRefused", endpoint, err)
		}
		cdpGolden(t, "refused", withoutPort(cdpError(t, err).Error(), port))
	}
}

func TestCheckCDPOnAnotherHTTPServerSaysItIsNotDevTools(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"not-devtools-404", http.NotFound},
		{"not-devtools-html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>My dev server</title>")
		}},
		{"not-devtools-json", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"Browser":"Chrome/1.0"}`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			port := srv.Listener.Addr().(*net.TCPAddr).Port
			_, err := browserpool.CheckCDP(ctxT(t), srv.URL)
			if !errors.Is(err, browserpool.ErrCDPNotDevTools) {
				t.Fatalf("CheckCDP error = %v, want ErrCDPNotDevTools", err)
			}
			cdpGolden(t, tc.name, withoutPort(err.Error(), port))
		})
	}
}

func TestCheckCDPOnAListenerThatNeverAnswersTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = browserpool.CheckCDP(ctxWithin(t, 300*time.Millisecond), "127.0.0.1:"+strconv.Itoa(port))
	if !errors.Is(err, browserpool.ErrCDPTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("CheckCDP error = %v, want ErrCDPTimeout and context.DeadlineExceeded", err)
	}
	cdpGolden(t, "timeout", withoutPort(err.Error(), port))
}

func TestCheckCDPRejectsEndpointsOfNoAcceptedForm(t *testing.T) {
	var got []string
	for _, endpoint := range []string{
		"",
		"localhost",
		"http://localhost",
		"ftp://localhost:9222",
		"http://user:secret@localhost:9222",
		"ws://127.0.0.1:9222/devtools/page/ABC",
		"127.0.0.1:99999",
	} {
		_, err := browserpool.CheckCDP(ctxT(t), endpoint)
		if !errors.Is(err, browserpool.ErrInvalidURL) {
			t.Errorf("CheckCDP(%q) error = %v, want ErrInvalidURL", endpoint, err)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("CheckCDP(%q) error shows the password: %v", endpoint, err)
		}
		got = append(got, fmt.Sprintf("%q\n\t%v", endpoint, err))
	}
	cdpGolden(t, "invalid-endpoints", strings.Join(got, "\n"))
}

func TestCheckCDPReachesAHostNameAtItsIPBecauseChromeRefusesNamedHostHeaders(t *testing.T) {
	fake := newFakeDevTools(t, false)
	hosts := map[string]string{"host.docker.internal": "127.0.0.1"}
	p := newAttachPool(t)
	for _, endpoint := range []string{
		"host.docker.internal:" + strconv.Itoa(fake.port),
		"http://host.docker.internal:" + strconv.Itoa(fake.port),
		"ws://host.docker.internal:" + strconv.Itoa(fake.port) + fake.wsPath,
	} {
		info, err := p.CheckCDPWithHosts(ctxT(t), endpoint, hosts)
		if err != nil {
			t.Fatalf("CheckCDP(%q): %v", endpoint, err)
		}
		want := browserpool.CDPInfo{
			Endpoint: "http://host.docker.internal:" + strconv.Itoa(fake.port), Host: "host.docker.internal", Port: fake.port,
			Address: "127.0.0.1:" + strconv.Itoa(fake.port), Browser: fakeProduct, ProtocolVersion: "1.3", UserAgent: fakeUserAgent,
			SessionID: "shared-cdp-" + strconv.Itoa(fake.port),
		}
		if diff := cmp.Diff(want, info); diff != "" {
			t.Errorf("CheckCDP(%q) info (-want +got):\n%s", endpoint, diff)
		}
	}
	for _, h := range fake.hostHeaders() {
		if _, err := netip.ParseAddrPort(h); err != nil {
			t.Errorf("the browser got Host header %q; Chrome refuses any name but localhost", h)
		}
	}
	if n := fake.upgrades.Load(); n != 1 {
		t.Errorf("the browser saw %d websocket connections for three checks by one pool, want 1 (the first is kept and reused)", n)
	}
}

func TestCheckCDPOnAnUnknownHostSaysWhereDockerHostsLive(t *testing.T) {
	_, err := newAttachPool(t).CheckCDPWithHosts(ctxT(t), "host.docker.internal:9222", nil)
	if !errors.Is(err, browserpool.ErrCDPUnreachable) {
		t.Fatalf("CheckCDP error = %v, want ErrCDPUnreachable", err)
	}
	cdpGolden(t, "unreachable", err.Error())
}

func TestPoolCheckCDPAndAttachWaitOnOnePendingPromptAndNeverRaiseASecond(t *testing.T) {
	fake := newFakeDevTools(t, true)
	endpoint := "127.0.0.1:" + strconv.Itoa(fake.port)
	p := newAttachPool(t)

	// Chrome holds the handshake while it asks the user. (The deadlines
	// here only have to outlast the /json/version probe on a loaded
	// machine: the fake holds the handshake until Allow.)
	_, err := p.CheckCDP(ctxWithin(t, 3*time.Second), endpoint)
	if !errors.Is(err, browserpool.ErrCDPPromptPending) {
		t.Fatalf("CheckCDP while the prompt is up: error = %v, want ErrCDPPromptPending", err)
	}
	cdpGolden(t, "prompt-pending", withoutPort(err.Error(), fake.port))
	waitFor(t, "the handshake to reach the browser", func() bool { return fake.upgrades.Load() == 1 })

	// Checking again and attaching join the handshake under way.
	if _, err := p.CheckCDP(ctxWithin(t, 2*time.Second), "http://localhost:"+strconv.Itoa(fake.port)); !errors.Is(err, browserpool.ErrCDPPromptPending) {
		t.Fatalf("second CheckCDP: error = %v, want ErrCDPPromptPending", err)
	}
	_, err = p.Attach(ctxWithin(t, 3*time.Second), endpoint)
	if !errors.Is(err, browserpool.ErrCDPPromptPending) {
		t.Fatalf("Attach while the prompt is up: error = %v, want ErrCDPPromptPending", err)
	}
	cdpGolden(t, "prompt-pending-attach", withoutPort(err.Error(), fake.port))

	// The user clicks Allow: the one pending connection becomes the session.
	close(fake.allow)
	s, err := p.Attach(ctxT(t), endpoint)
	if err != nil {
		t.Fatalf("Attach after Allow: %v", err)
	}
	info := s.Info()
	want := browserpool.SessionInfo{ID: "shared-cdp-" + strconv.Itoa(fake.port), Channel: "cdp", Port: fake.port, Version: fakeProduct, State: browserpool.StateLive, Ours: false}
	got := browserpool.SessionInfo{ID: info.ID, Channel: info.Channel, Port: info.Port, Version: info.Version, State: info.State, Ours: info.Ours}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attached session info (-want +got):\n%s", diff)
	}
	ci, err := p.CheckCDP(ctxT(t), endpoint)
	if err != nil || ci.Browser != fakeProduct {
		t.Errorf("CheckCDP after Allow = %+v, %v; want %s", ci, err, fakeProduct)
	}
	if n := fake.upgrades.Load(); n != 1 {
		t.Errorf("the browser saw %d websocket connections, want 1: every retry must join the pending one", n)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the browser to see the disconnect", func() bool { return fake.open.Load() == 0 })

	// A closed pool checks nothing.
	p.Close()
	if _, err := p.CheckCDP(ctxT(t), endpoint); !errors.Is(err, browserpool.ErrPoolClosed) {
		t.Errorf("CheckCDP on a closed pool: error = %v, want ErrPoolClosed", err)
	}
}

func TestPlainCheckCDPLeavesNothingBehindAndSaysItsConnectionWasWithdrawn(t *testing.T) {
	fake := newFakeDevTools(t, true)
	endpoint := "127.0.0.1:" + strconv.Itoa(fake.port)
	_, err := browserpool.CheckCDP(ctxWithin(t, 3*time.Second), endpoint)
	if !errors.Is(err, browserpool.ErrCDPPromptPending) {
		t.Fatalf("CheckCDP while the prompt is up: error = %v, want ErrCDPPromptPending", err)
	}
	cdpGolden(t, "prompt-pending-plain", withoutPort(err.Error(), fake.port))
	if n := fake.upgrades.Load(); n != 1 {
		t.Errorf("the browser saw %d websocket connections, want 1", n)
	}
	// The check belongs to no pool: its connection is gone when it returns.
	waitFor(t, "the browser to see the check's connection close", func() bool { return fake.open.Load() == 0 })

	// Allowed, the check answers and again keeps nothing open.
	close(fake.allow)
	ci, err := browserpool.CheckCDP(ctxT(t), endpoint)
	if err != nil || ci.Browser != fakeProduct {
		t.Fatalf("CheckCDP after Allow = %+v, %v; want %s", ci, err, fakeProduct)
	}
	waitFor(t, "the browser to see the check's connection close", func() bool { return fake.open.Load() == 0 })
}

const (
	fakeProduct   = "Chrome/144.0.7559.60"
	fakeUserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/144.0.0.0 Safari/537.36"
)

// fakeDevTools is an HTTP server on 127.0.0.1 that answers like Chrome's
// DevTools endpoint: /json/version, the browser websocket (answering
// Browser.getVersion and nothing else of note), and Chrome's refusal of a
// Host header naming anything but an IP or localhost. With a prompt, it
// holds every websocket handshake until allow is closed, as Chrome 144+ does
// while "Allow remote debugging?" waits for the user.
type fakeDevTools struct {
	srv      *httptest.Server
	port     int
	wsPath   string
	allow    chan struct{}
	stop     chan struct{}
	upgrades atomic.Int32 // websocket handshakes begun
	open     atomic.Int32 // websocket connections open

	mu    sync.Mutex
	hosts []string          // guarded by mu; Host headers received
	conns []*websocket.Conn // guarded by mu
	wg    sync.WaitGroup    // websocket handlers
}

func newFakeDevTools(t *testing.T, prompt bool) *fakeDevTools {
	f := &fakeDevTools{wsPath: "/devtools/browser/0c8a4d4e-6a51-4bb6-a3c5-bd53b2d0f1a7", allow: make(chan struct{}), stop: make(chan struct{})}
	if !prompt {
		close(f.allow)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.port = f.srv.Listener.Addr().(*net.TCPAddr).Port
	t.Cleanup(func() {
		f.mu.Lock()
		close(f.stop)
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.srv.CloseClientConnections()
		f.srv.Close()
		f.wg.Wait()
	})
	return f
}

func (f *fakeDevTools) hostHeaders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.hosts...)
}

func (f *fakeDevTools) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hosts = append(f.hosts, r.Host)
	f.mu.Unlock()
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if _, err := netip.ParseAddr(host); err != nil && host != "localhost" {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "Host header is specified and is not an IP address or localhost.")
		return
	}
	switch r.URL.Path {
	case "/json/version":
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		json.NewEncoder(w).Encode(map[string]string{
			"Browser": fakeProduct, "Protocol-Version": "1.3", "User-Agent": fakeUserAgent,
			"webSocketDebuggerUrl": "ws://" + r.Host + f.wsPath,
		})
	case f.wsPath:
		f.upgrades.Add(1)
		select {
		case <-f.allow:
		case <-f.stop:
			return
		case <-r.Context().Done():
			return
		}
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		f.mu.Lock()
		select {
		case <-f.stop:
			f.mu.Unlock()
			c.Close()
			return
		default:
		}
		f.conns = append(f.conns, c)
		f.wg.Add(1)
		f.mu.Unlock()
		f.open.Add(1)
		defer f.wg.Done()
		defer f.open.Add(-1)
		f.answer(c)
	default:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
	}
}

// answer replies to every CDP request on c until it closes.
func (f *fakeDevTools) answer(c *websocket.Conn) {
	defer c.Close()
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(b, &req) != nil {
			continue
		}
		var result any = map[string]any{}
		switch req.Method {
		case "Browser.getVersion":
			result = map[string]string{"protocolVersion": "1.3", "product": fakeProduct, "revision": "@0", "userAgent": fakeUserAgent, "jsVersion": "14.4"}
		case "Target.getTargets":
			result = map[string]any{"targetInfos": []any{}}
		}
		reply, _ := json.Marshal(map[string]any{"id": req.ID, "result": result})
		if c.WriteMessage(websocket.TextMessage, reply) != nil {
			return
		}
	}
}
