// Room: tests of the DevTools probe and handshakes, against httptest
// servers: no browser needed. fakeBrowser.mu guards its connections.

package devtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/devtools"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestParseAcceptsEveryEndpointFormAndSaysWhyNot(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want devtools.Endpoint
		why  string
	}{
		{in: "9222", want: devtools.Endpoint{Host: "127.0.0.1", Port: 9222}},
		{in: ":9222", want: devtools.Endpoint{Host: "127.0.0.1", Port: 9222}},
		{in: "host.docker.internal:9222", want: devtools.Endpoint{Host: "host.docker.internal", Port: 9222}},
		{in: "http://10.0.0.1:9222/json", want: devtools.Endpoint{Host: "10.0.0.1", Port: 9222}},
		{in: "https://chrome.example:443", want: devtools.Endpoint{Host: "chrome.example", Port: 443, Secure: true}},
		{in: "ws://[::1]:9222/devtools/browser/abc", want: devtools.Endpoint{Host: "::1", Port: 9222, WSPath: "/devtools/browser/abc"}},
		{in: "ws://127.0.0.1:9222", want: devtools.Endpoint{Host: "127.0.0.1", Port: 9222}},
		{in: "", why: "the endpoint is empty"},
		{in: "localhost", why: "expected a port, host:port or a URL"},
		{in: "http://localhost", why: "the endpoint has no port (DevTools has no default port; Chrome's documentation uses 9222)"},
		{in: "ftp://localhost:9222", why: `scheme "ftp" is not a DevTools scheme`},
		{in: "http://u:p@localhost:9222", why: "credentials in the URL are not allowed"},
		{in: "ws://127.0.0.1:9222/devtools/page/ABC", why: "a websocket endpoint must be the browser's (/devtools/browser/<id>), not a page's"},
		{in: "127.0.0.1:99999", why: `port "99999" is not a number from 1 to 65535`},
	} {
		got, err := devtools.Parse(tc.in)
		var pe *devtools.ParseError
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case tc.why != "" && (!errors.As(err, &pe) || pe.Why != tc.why):
			t.Errorf("Parse(%q) error = %v, want *ParseError %q", tc.in, err, tc.why)
		case tc.why == "":
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
			}
		}
	}
}

func TestResolvePrefersIPv4AndReportsANameWithoutAddresses(t *testing.T) {
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "dual.test" {
			return []netip.Addr{netip.MustParseAddr("::1"), netip.MustParseAddr("::ffff:10.1.2.3")}, nil
		}
		return nil, nil
	}
	ip, err := devtools.Resolve(ctxT(t), lookup, devtools.Endpoint{Host: "dual.test", Port: 1})
	if err != nil || ip != netip.MustParseAddr("10.1.2.3") {
		t.Errorf("Resolve(dual.test) = %v, %v; want 10.1.2.3", ip, err)
	}
	_, err = devtools.Resolve(ctxT(t), lookup, devtools.Endpoint{Host: "none.test", Port: 1})
	var dns *net.DNSError
	if !errors.As(err, &dns) || !dns.IsNotFound {
		t.Errorf("Resolve(none.test) error = %v, want a not-found *net.DNSError", err)
	}
	called := false
	ip, err = devtools.Resolve(ctxT(t), func(context.Context, string, string) ([]netip.Addr, error) {
		called = true
		return nil, nil
	}, devtools.Endpoint{Host: "::ffff:127.0.0.1", Port: 1})
	if err != nil || ip != netip.MustParseAddr("127.0.0.1") || called {
		t.Errorf("Resolve(an IP) = %v, %v (lookup called: %v); want 127.0.0.1 without a lookup", ip, err, called)
	}
}

// target returns the endpoint of srv as a Target at 127.0.0.1.
func target(t *testing.T, srv *httptest.Server) *devtools.Target {
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	return devtools.NewTarget(devtools.Endpoint{Host: "localhost", Port: port}, netip.MustParseAddr("127.0.0.1"))
}

func TestAskVersionFindsTheBrowserWebsocketAtTheResolvedAddress(t *testing.T) {
	var host atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host.Store(r.Host)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"Browser":"Chrome/144.0.1.2","Protocol-Version":"1.3","User-Agent":"UA","webSocketDebuggerUrl":"ws://localhost:1/devtools/browser/xyz"}`)
	}))
	defer srv.Close()
	tg := target(t, srv)
	v, err := tg.AskVersion(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if v.Browser != "Chrome/144.0.1.2" || v.Protocol != "1.3" || v.UserAgent != "UA" {
		t.Errorf("version = %+v", v)
	}
	if want := "ws://" + tg.Addr.String() + "/devtools/browser/xyz"; tg.WSURL != want || tg.Product != "Chrome/144.0.1.2" {
		t.Errorf("target WSURL %q product %q, want %q and the product", tg.WSURL, tg.Product, want)
	}
	if h := host.Load().(string); h != tg.Addr.String() {
		t.Errorf("Host header %q, want the resolved address %s (Chrome refuses names)", h, tg.Addr)
	}
}

func TestAskVersionSaysWhatAnsweredInsteadOfDevTools(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    devtools.AnswerError
	}{
		{"404", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			devtools.AnswerError{Answer: "HTTP 404 (text/plain)", Status: 404}},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>")
		}, devtools.AnswerError{Answer: "an HTML page, not DevTools JSON", Status: 200}},
		{"json-without-ws", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"Browser":"x"}`)
		}, devtools.AnswerError{Answer: "JSON without the browser's webSocketDebuggerUrl", Status: 200}},
		{"host-refused", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprint(w, "Host header is specified and is not an IP address or localhost.")
		}, devtools.AnswerError{Answer: "HTTP 500", Status: 500, HostRefused: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			_, err := target(t, srv).AskVersion(ctxT(t))
			var ae *devtools.AnswerError
			if !errors.As(err, &ae) {
				t.Fatalf("AskVersion error = %v, want *AnswerError", err)
			}
			if diff := cmp.Diff(tc.want, *ae); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAskVersionOnAClosedPortIsAConnErrorBeforeAnyConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	tg := devtools.NewTarget(devtools.Endpoint{Host: "127.0.0.1", Port: port}, netip.MustParseAddr("127.0.0.1"))
	_, err = tg.AskVersion(ctxT(t))
	var ce *devtools.ConnError
	if !errors.As(err, &ce) || ce.Connected {
		t.Errorf("AskVersion error = %#v, want a *ConnError with Connected false", err)
	}
}

// pipeTransport is an in-memory Transport whose browser side the test
// drives.
type pipeTransport struct {
	in     chan []byte // browser -> client
	out    chan []byte // client -> browser
	closed chan struct{}
	once   sync.Once
}

func newPipe() *pipeTransport {
	return &pipeTransport{in: make(chan []byte, 8), out: make(chan []byte, 8), closed: make(chan struct{})}
}

func (p *pipeTransport) ReadMessage() ([]byte, error) {
	select {
	case b := <-p.in:
		return b, nil
	case <-p.closed:
		return nil, io.EOF
	}
}

func (p *pipeTransport) WriteMessage(b []byte) error {
	select {
	case p.out <- append([]byte(nil), b...):
		return nil
	case <-p.closed:
		return io.ErrClosedPipe
	}
}

func (p *pipeTransport) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func TestBrowserVersionIsOneRoundTripThatSkipsEvents(t *testing.T) {
	p := newPipe()
	p.in <- []byte(`{"method":"Target.targetCreated","params":{}}`)
	p.in <- []byte(`{"id":1,"result":{"protocolVersion":"1.3","product":"HeadlessChrome/156.0.0.0"}}`)
	v, err := devtools.BrowserVersion(ctxT(t), p)
	if err != nil || v.Product != "HeadlessChrome/156.0.0.0" || v.ProtocolVersion != "1.3" {
		t.Fatalf("BrowserVersion = %+v, %v", v, err)
	}
	if got := string(<-p.out); got != `{"id":1,"method":"Browser.getVersion"}` {
		t.Errorf("wrote %s, want one Browser.getVersion with id 1", got)
	}
	select {
	case <-p.closed:
		t.Error("BrowserVersion closed a transport whose caller goes on using it")
	default:
	}
}

func TestBrowserVersionReturnsAnErrorReplyAsAResponseError(t *testing.T) {
	p := newPipe()
	p.in <- []byte(`{"id":1,"error":{"code":-32601,"message":"'Browser.getVersion' wasn't found"}}`)
	_, err := devtools.BrowserVersion(ctxT(t), p)
	var re *rpcc.ResponseError
	if !errors.As(err, &re) || re.Code != -32601 {
		t.Errorf("BrowserVersion error = %v, want *rpcc.ResponseError -32601", err)
	}
}

func TestBrowserVersionEndsWithItsContextAndSaysWhy(t *testing.T) {
	p := newPipe()
	why := errors.New("the browser exited")
	ctx, cancel := context.WithCancelCause(context.Background())
	go func() {
		<-p.out // the request was written: the browser never answers
		cancel(why)
	}()
	if _, err := devtools.BrowserVersion(ctx, p); !errors.Is(err, why) {
		t.Errorf("BrowserVersion error = %v, want the context's cause", err)
	}
}

// fakeBrowser serves a browser websocket that holds each handshake until
// allow is closed, then answers Browser.getVersion.
type fakeBrowser struct {
	srv      *httptest.Server
	url      string
	allow    chan struct{}
	upgrades atomic.Int32
	open     atomic.Int32

	mu    sync.Mutex
	conns []*websocket.Conn // guarded by mu
}

func newFakeBrowser(t *testing.T, prompt bool) *fakeBrowser {
	f := &fakeBrowser{allow: make(chan struct{})}
	if !prompt {
		close(f.allow)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	f.url = "ws://" + f.srv.Listener.Addr().String() + "/devtools/browser/abc"
	t.Cleanup(func() {
		f.srv.CloseClientConnections()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

func (f *fakeBrowser) serve(w http.ResponseWriter, r *http.Request) {
	f.upgrades.Add(1)
	select {
	case <-f.allow:
	case <-r.Context().Done():
		return
	}
	c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.conns = append(f.conns, c)
	f.mu.Unlock()
	f.open.Add(1)
	defer f.open.Add(-1)
	defer c.Close()
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return
		}
		var req struct {
			ID int64 `json:"id"`
		}
		json.Unmarshal(b, &req)
		reply := `{"id":` + strconv.FormatInt(req.ID, 10) + `,"result":{"protocolVersion":"1.3","product":"Chrome/144.0.0.0"}}`
		if c.WriteMessage(websocket.TextMessage, []byte(reply)) != nil {
			return
		}
	}
}

func await(t *testing.T, h *devtools.Handshake) {
	t.Helper()
	select {
	case <-h.Done():
	case <-ctxT(t).Done():
		t.Fatal("the handshake never ended")
	}
}

func TestEveryLookupInOneTableJoinsTheOneHandshakeTheUserIsAskedAbout(t *testing.T) {
	f := newFakeBrowser(t, true)
	a := devtools.NewTable(time.Minute, time.Minute)
	defer a.Close()
	b := devtools.NewTable(time.Minute, time.Minute)
	defer b.Close()
	h := a.ForCheck(f.url)
	waitUntil(t, "the handshake reaches the browser", func() bool { return f.upgrades.Load() == 1 })
	for name, got := range map[string]*devtools.Handshake{"check again": a.ForCheck(f.url), "attach": a.ForAttach(f.url)} {
		if got != h {
			t.Errorf("%s: a new handshake, want the one under way", name)
		}
	}
	// Tables share nothing: another owner's table makes its own connection
	// (there is no process-wide table to find the first one in).
	if other := b.ForAttach(f.url); other == h {
		t.Error("attach from another table joined the first table's handshake, want its own")
	}
	waitUntil(t, "the other table's handshake reaches the browser", func() bool { return f.upgrades.Load() == 2 })
	b.Close()
	close(f.allow)
	await(t, h)
	if h.Err != nil || h.Version.Product != "Chrome/144.0.0.0" {
		t.Fatalf("handshake = %+v, %v", h.Version, h.Err)
	}
	if !h.Claim() {
		t.Fatal("Claim of the allowed connection failed")
	}
	if h.Claim() {
		t.Error("a second Claim of one connection succeeded")
	}
	if got := a.ForCheck(f.url); got != h {
		t.Error("a check after the claim opened a new connection, want the one in use")
	}
	if n := f.upgrades.Load(); n != 2 {
		t.Errorf("the browser saw %d websocket handshakes, want 2 (one per table)", n)
	}
	h.Release()
	h.Conn.Close()
	waitUntil(t, "the browser sees the disconnect", func() bool { return f.open.Load() == 0 })
}

func TestAParkedConnectionNobodyClaimsIsClosed(t *testing.T) {
	f := newFakeBrowser(t, false)
	ct := devtools.NewTable(time.Minute, 20*time.Millisecond)
	defer ct.Close()
	h := ct.ForCheck(f.url)
	await(t, h)
	if h.Err != nil {
		t.Fatal(h.Err)
	}
	waitUntil(t, "the parked connection is closed", func() bool { return f.open.Load() == 0 })
	if h.Claim() {
		t.Error("Claim of an expired connection succeeded")
	}
	if got := ct.ForAttach(f.url); got == h {
		t.Error("ForAttach returned the expired handshake")
	} else {
		await(t, got)
		if !got.Claim() {
			t.Fatal("Claim of the fresh connection failed")
		}
		got.Release()
		got.Conn.Close()
	}
}

func TestAHandshakeNobodyAllowsEndsWhenThePatienceRunsOut(t *testing.T) {
	f := newFakeBrowser(t, true)
	ct := devtools.NewTable(30*time.Millisecond, time.Minute)
	defer ct.Close()
	h := ct.ForAttach(f.url)
	await(t, h)
	if !errors.Is(h.Err, devtools.ErrPatienceOver) {
		t.Errorf("handshake error = %v, want ErrPatienceOver", h.Err)
	}
}

func TestCloseEndsPendingHandshakesAndParkedConnectionsAndLeavesNoGoroutine(t *testing.T) {
	held := newFakeBrowser(t, true)
	open := newFakeBrowser(t, false)
	before := leakcheck.Goroutines()
	ct := devtools.NewTable(time.Minute, time.Minute)
	pending := ct.ForAttach(held.url)
	parked := ct.ForCheck(open.url)
	await(t, parked)
	waitUntil(t, "the held handshake reaches the browser", func() bool { return held.upgrades.Load() == 1 })
	ct.Close()
	await(t, pending)
	if !errors.Is(pending.Err, devtools.ErrClosed) {
		t.Errorf("pending handshake error = %v, want ErrClosed", pending.Err)
	}
	select {
	case <-parked.Conn.Done():
	default:
		t.Error("Close left the parked connection open")
	}
	if h := ct.ForAttach(open.url); h.Err == nil || h.Claim() {
		t.Errorf("ForAttach on a closed table = %v, want a failed handshake", h.Err)
	}
	waitUntil(t, "every goroutine of the table ends", func() bool { return len(leakcheck.Since(before)) == 0 || onlyServers(leakcheck.Since(before)) })
}

// onlyServers reports whether the goroutines are the test servers' own.
func onlyServers(gs []leakcheck.Goroutine) bool {
	for _, g := range gs {
		if strings.Contains(g.Stack, "internal/devtools.") && !strings.Contains(g.Stack, "devtools_test.") {
			return false
		}
	}
	return true
}
