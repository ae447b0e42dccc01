package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnv makes the test binary run as the server (for the stdio tests):
// its command line comes as a JSON array in serveArgsEnv.
const (
	serveEnv     = "BROWSERPOOL_MCP_TEST_SERVE"
	serveArgsEnv = "BROWSERPOOL_MCP_TEST_ARGS"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testRoot holds every pool root of this test binary (and of the servers it
// starts as subprocesses), so TestMain can prove nothing was left under it.
var testRoot string

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv(serveArgsEnv)), &args); err != nil {
			fmt.Fprintln(os.Stderr, "bad", serveArgsEnv, err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "browserpool-mcp:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "browserpool-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testRoot = dir
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if code == 0 {
		if err := leakcheck.Check(ctx, testRoot); err != nil {
			fmt.Fprintln(os.Stderr, "leak check:", err)
			code = 1
		}
	}
	os.RemoveAll(testRoot)
	os.Exit(code)
}

// newRoot returns a fresh pool root under testRoot, removed at cleanup
// after the server (registered later) has closed.
func newRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp(testRoot, "root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// requireBrowser skips or fails a real-browser test without a browser
// (see leakcheck.RequireBrowser).
func requireBrowser(t testing.TB) { t.Helper(); leakcheck.RequireBrowser(t) }

// newServer returns a server over a fresh root, closed at cleanup.
func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Pool.Root == "" {
		cfg.Pool.Root = newRoot(t)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Server.Close: %v", err)
		}
	})
	return s
}

// connect connects a real SDK client to s over in-memory transports.
func connect(t testing.TB, s *Server) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error (a tool error is
// returned for the caller to check).
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its text.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, textOf(res))
	}
	return textOf(res)
}

// fails calls a tool that must fail and returns its error text.
func fails(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, textOf(res))
	}
	return textOf(res)
}

// textOf joins a result's text contents.
func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// find returns the first submatch of re in s, failing the test without one.
func find(t testing.TB, re, s string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no match for %s in:\n%s", re, s)
	}
	return m[1]
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const formPage = `<!doctype html>
<html><head><title>Sign up</title></head><body>
<h1>Sign up</h1>
<label>Email <input id="email" type="text"></label>
<label><input id="agree" type="checkbox"> I agree</label>
<label>Plan <select id="plan"><option value="free">Free</option><option value="pro">Pro</option></select></label>
<button onclick="document.getElementById('out').textContent = 'clicked ' + document.getElementById('email').value">Go</button>
<button onclick="document.getElementById('out').textContent = confirm('Sure?') ? 'confirmed' : 'declined'">Ask</button>
<p id="out">waiting</p>
</body></html>`

const toolsPage = `<!doctype html>
<html><head><title>Tools</title></head><body style="height: 5000px">
<button id="hov" onmouseover="document.getElementById('out').textContent = 'hovered'">Hover me</button>
<label>Name <input id="name" type="text" onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'entered ' + this.value"></label>
<label>Mail <input id="mail" type="email" value="ann@"></label>
<label>Count <input id="count" type="number" value="4"></label>
<label>Colors <select id="colors" multiple><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select></label>
<label>File <input id="file" type="file"></label>
<a href="/report.csv">Report</a>
<button onclick="setTimeout(() => { const p = document.createElement('p'); p.id = 'late'; p.textContent = 'arrived later'; document.body.appendChild(p) }, 300)">Later</button>
<p id="out">waiting</p>
</body></html>`

// newSite serves the test pages on 127.0.0.1.
func newSite(t testing.TB) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, formPage)
	})
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>other page</p>`)
	})
	mux.HandleFunc("/tools", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, toolsPage)
	})
	mux.HandleFunc("/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		fmt.Fprint(w, "a,b\n1,2\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}
