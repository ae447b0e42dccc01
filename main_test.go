package browserpool_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// testRoot holds every pool root of this test binary, so TestMain can prove
// nothing was left under it.
var testRoot string

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{
		Root: &testRoot, Prefix: "browserpool-test-",
		HelperEnv: hostHelperEnv, Helper: func(v string) int {
			if side, ok := strings.CutPrefix(v, footprintHelper); ok {
				return runFootprintHelper(side)
			}
			runHostHelper()
			return 0
		},
	})
}

// newRoot returns a fresh pool root under testRoot, removed at cleanup
// after the pool (registered later) has closed.
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

// newRealPool returns a pool of real local browsers, closed at cleanup.
func newRealPool(t testing.TB, cfg browserpool.Config) *browserpool.Pool {
	t.Helper()
	requireBrowser(t)
	if cfg.Root == "" {
		cfg.Root = newRoot(t)
	}
	if cfg.LaunchTimeout == 0 {
		// A ceiling for a loaded 2-core machine, where a cold start can
		// take tens of seconds; tests of the timeout itself set their own.
		cfg.LaunchTimeout = 2 * time.Minute
	}
	p, err := browserpool.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitFor polls cond until it holds or the deadline passes (a ceiling for a
// loaded machine, not a timing assertion).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ctxT is a test's context. Its deadline is a ceiling for a 2-core machine
// running four real-browser tests at once (launches take seconds there),
// never a figure a test asserts.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// mustOpen opens a session of p or ends the test.
func mustOpen(t testing.TB, ctx context.Context, p *browserpool.Pool) *browserpool.Session {
	t.Helper()
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustTab returns s's active tab or ends the test.
func mustTab(t testing.TB, ctx context.Context, s *browserpool.Session) *browserpool.Tab {
	t.Helper()
	tab, err := s.Tab(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// servedTab serves h on 127.0.0.1 (closed at cleanup) and returns a tab of
// a new real pool at the server's root page, and the server.
func servedTab(t *testing.T, ctx context.Context, h http.HandlerFunc) (*browserpool.Tab, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	return tab, srv
}

// htmlTab is servedTab for a test of one static page: it runs the test in
// parallel and returns its context and a tab at the page.
func htmlTab(t *testing.T, html string) (context.Context, *browserpool.Tab, *httptest.Server) {
	t.Helper()
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(html)) })
	return ctx, tab, srv
}

// traced returns the arguments of tab's traced actions of one kind
// ("click"), oldest first.
func traced(tab *browserpool.Tab, action string) []string {
	var out []string
	for _, e := range tab.Trace() {
		if e.Action == action {
			out = append(out, e.Args)
		}
	}
	return out
}
