package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// hangSite serves pages whose script never returns: on a click, or while
// the page loads.
func hangSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hang</title><button onclick="while (true) {}">Freeze</button><p>before the freeze</p>`)
	})
	mux.HandleFunc("/hangload", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>HangLoad</title><p>loading</p><script>while (true) {}</script>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestAPageStuckInAScriptAnswersWithinTheCallBoundAndTakesTheNextCall(t *testing.T) {
	requireBrowser(t)
	site := hangSite(t)
	s := newServer(t, Config{CallTimeout: 3 * time.Second, Pool: browserpool.Config{NavigationTimeout: 3 * time.Second}})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/hang"})
	freeze := find(t, `button "Freeze" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))

	// The click starts a loop that never returns: the click gives up at
	// the call's bound, and its error says the script is being stopped,
	// in an agent's words.
	msg := fails(t, cs, "browser_click", map[string]any{"ref": freeze})
	if !strings.Contains(msg, "it is stopped in a moment") || strings.Contains(msg, "context") || strings.Contains(msg, "deadline") {
		t.Errorf("a click on a page that loops for ever:\n%s", msg)
	}
	waitFor(t, "the page to answer again", func() bool {
		res := call(t, cs, "browser_evaluate", map[string]any{"function": "1 + 1"})
		return !res.IsError && textOf(res) == "2"
	})

	// A page whose script loops while it loads: the navigation gives up
	// at its bound, says the script is being stopped, and the page is
	// read after it.
	msg = fails(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/hangload"})
	if !strings.Contains(msg, "it is stopped in a moment") || strings.Contains(msg, "caller's context") {
		t.Errorf("a navigation to a page that loops while it loads:\n%s", msg)
	}
	waitFor(t, "the page to be read", func() bool {
		res := call(t, cs, "browser_snapshot", nil)
		return !res.IsError && strings.Contains(textOf(res), "loading")
	})
}

// waitCallStarted waits until logs shows that a call of tool started (the
// server's -v line).
func waitCallStarted(t *testing.T, logs *lockedBuffer, tool string) {
	t.Helper()
	waitFor(t, tool+" to be in flight", func() bool {
		return strings.Contains(logs.String(), `msg="tool call" tool=`+tool)
	})
}

// waitDone waits until run, started on a goroutine, returned on done.
func waitDone(t *testing.T, done <-chan error) {
	t.Helper()
	var err error
	waitFor(t, "the server to stop", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Errorf("run: %v", err)
	}
}

// callAsync calls a tool on a goroutine of its own and sends its result's
// text (or the protocol error's) on the channel it returns.
func callAsync(cs *mcp.ClientSession, name string, args map[string]any) <-chan string {
	out := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			out <- "protocol error: " + err.Error()
			return
		}
		out <- textOf(res)
	}()
	return out
}

// neverThere is a browser_wait_for that outlasts every waitFor: only
// something else than its own timeout ends it in time.
var neverThere = map[string]any{"text": "never there", "timeout": 110}

func TestASignalStopsTheCallsInFlightOverStdio(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	ctx, signal := context.WithCancel(context.Background())
	defer signal()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	t.Cleanup(func() { fromClient.Close(); fromServer.Close() })
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-root", newRoot(t), "-v"}, toServer, fromServer, &logs) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	stopped := callAsync(cs, "browser_wait_for", neverThere)
	waitCallStarted(t, &logs, "browser_wait_for")

	signal()
	waitDone(t, done)
	fromServer.Close() // as the server's stdout closes when it exits
	if msg := <-stopped; !strings.Contains(msg, "shutting down") {
		t.Errorf("the call in flight when the server stopped got:\n%s", msg)
	}
}

// serveHTTP runs the command with -http on a free loopback port until the
// returned signal, and returns the MCP URL it serves, its log and run's
// result.
func serveHTTP(t *testing.T, args ...string) (url string, signal func(), logs *lockedBuffer, done chan error) {
	t.Helper()
	ctx, signal := context.WithCancel(context.Background())
	t.Cleanup(signal)
	logs = &lockedBuffer{}
	done = make(chan error, 1)
	args = append([]string{"-http", "127.0.0.1:0", "-root", newRoot(t), "-v"}, args...)
	go func() { done <- run(ctx, args, strings.NewReader(""), io.Discard, logs) }()
	addr := regexp.MustCompile(`url=(http://\S+)`)
	waitFor(t, "the server to listen", func() bool { return addr.MatchString(logs.String()) })
	return addr.FindStringSubmatch(logs.String())[1], signal, logs, done
}

func TestASignalEndsAnHTTPServerWithAClientConnectedAtOnce(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	// Shutdown waits this long for open connections: a client's event
	// stream that the server does not end itself would hold it.
	was := httpShutdownGrace
	httpShutdownGrace = time.Hour
	t.Cleanup(func() { httpShutdownGrace = was })

	t.Run("idle", func(t *testing.T) {
		url, signal, _, done := serveHTTP(t)
		cs := connectHTTP(t, url, &http.Client{})
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
		signal()
		waitDone(t, done)
	})
	t.Run("with a call in flight", func(t *testing.T) {
		url, signal, logs, done := serveHTTP(t)
		cs := connectHTTP(t, url, &http.Client{})
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
		stopped := callAsync(cs, "browser_wait_for", neverThere)
		waitCallStarted(t, logs, "browser_wait_for")
		signal()
		waitDone(t, done)
		if msg := <-stopped; !strings.Contains(msg, "shutting down") {
			t.Errorf("the call in flight when the server stopped got:\n%s", msg)
		}
	})
}

// cutter records an HTTP client's connections so a test can cut them, as
// a client that crashes or loses its network does.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (c *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		c.mu.Lock()
		c.conns = append(c.conns, conn)
		c.mu.Unlock()
	}
	return conn, err
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
}

func TestACallWhoseHTTPRequestIsCutStopsAndLeavesTheBrowserIdle(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	link := &cutter{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: &http.Transport{DialContext: link.dial}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	callAsync(cs, "browser_wait_for", neverThere)
	waitFor(t, "the wait to run in the browser", func() bool { return s.pool.Stats().CallsInFlight > 0 })

	link.cut()
	waitFor(t, "the browser to have no call in flight", func() bool { return s.pool.Stats().CallsInFlight == 0 })
}

func TestOverHTTPTheIdleTimeoutClosesOnlyTheBrowserAndTheNextCallSaysSo(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{Pool: browserpool.Config{IdleTimeout: time.Second}})
	hs := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs := connectHTTP(t, hs.URL, hs.Client())
	sess := find(t, `session (\S+), tab`, ok(t, cs, "browser_navigate", map[string]any{"url": site.URL}))
	waitFor(t, "the idle browser to be closed, and its client to have a note", func() bool { return len(s.pool.Sessions()) == 0 && pendingNotes(s) > 0 })

	// The client's MCP session lives on: its next call works, and says
	// why its pages are gone.
	got := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	if !strings.Contains(got, `Note: your browser session "default" (id `+sess+`) was closed because it had no tool call for the idle timeout`) {
		t.Errorf("the call after the idle timeout:\n%s", got)
	}
}

func TestTheCallSessionAndEvictionFlags(t *testing.T) {
	for _, tc := range []struct {
		args                 []string
		call, session, evict time.Duration
	}{
		{nil, DefaultCallTimeout, DefaultSessionTimeout, DefaultEvictGrace},
		{[]string{"-call-timeout", "5s", "-session-timeout", "2h", "-evict-grace", "1m"}, 5 * time.Second, 2 * time.Hour, time.Minute},
		// Zero is never for the session and none for the eviction grace:
		// the Config's and HTTPOptions' negative.
		{[]string{"-session-timeout", "0", "-evict-grace", "0"}, DefaultCallTimeout, -1, -1},
	} {
		o, err := parse(tc.args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if got := [3]time.Duration{o.cfg.CallTimeout, o.sessionTimeout, o.cfg.EvictGrace}; got != [3]time.Duration{tc.call, tc.session, tc.evict} {
			t.Errorf("%v: call, session and evict = %v, want %v", tc.args, got, [3]time.Duration{tc.call, tc.session, tc.evict})
		}
	}
	for _, bad := range [][]string{{"-call-timeout", "0"}, {"-session-timeout", "-1s"}, {"-evict-grace", "-1s"}} {
		if _, err := parse(bad, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
