package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
)

// site is the test web site: the pages under testdata/ and a few dynamic
// endpoints, served on two loopback ports. URL and Other are two origins of
// one site (127.0.0.1, two ports: same process in Chromium); Cross is the
// second port by the name localhost, another site, so an iframe from it is
// an out-of-process iframe.
//
// Pages may use {{OTHER}} and {{CROSS}}, replaced by those origins.
// Dynamic endpoints:
//
//	/ws            a websocket that answers each message and stays open
//	/events        an EventSource stream that stays open
//	/slow?ms=N     answers "slow done" after N ms
//	/hang          never answers (until the site closes)
//	/download?name=N[&fail=1]  an attachment suggesting file name N (fail: cut short)
//	/big?n=N       a page of N list items with links and buttons
type site struct {
	URL, Other, Cross string

	done chan struct{}
	wg   sync.WaitGroup
}

// startSite serves the test site until the test ends. Start it before the
// pool, so the pool (and its browsers' connections) close first.
func startSite(t testing.TB) *site {
	t.Helper()
	s := &site{done: make(chan struct{})}
	srv1 := httptest.NewServer(s)
	srv2 := httptest.NewServer(s)
	s.URL, s.Other = srv1.URL, srv2.URL
	s.Cross = "http://localhost:" + strconv.Itoa(srv2.Listener.Addr().(*net.TCPAddr).Port)
	t.Cleanup(func() {
		close(s.done)
		srv1.Close()
		srv2.Close()
		s.wg.Wait()
	})
	return s
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	q := r.URL.Query()
	switch r.URL.Path {
	case "/ws":
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		stop := make(chan struct{})
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			select {
			case <-s.done:
			case <-stop:
			}
			c.Close()
		}()
		for {
			typ, msg, err := c.ReadMessage()
			if err != nil {
				break
			}
			c.WriteMessage(typ, append([]byte("echo "), msg...))
		}
		close(stop)
	case "/events":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: hello\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case "/slow":
		ms, _ := strconv.Atoi(q.Get("ms"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-s.done:
		}
		fmt.Fprint(w, "slow done")
	case "/hang":
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
	case "/download":
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", q.Get("name")))
		if q.Get("fail") != "" {
			w.Header().Set("Content-Length", "1000")
			fmt.Fprint(w, "short")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		fmt.Fprint(w, "id,value\n1,2\n")
	case "/big":
		n, _ := strconv.Atoi(q.Get("n"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Big</title><h1>Big page</h1><ul>")
		for i := range n {
			switch i % 3 {
			case 0:
				fmt.Fprintf(w, "<li><a href=\"/item/%d\">Item %d</a></li>", i, i)
			case 1:
				fmt.Fprintf(w, "<li><button>Action %d</button></li>", i)
			default:
				fmt.Fprintf(w, "<li>Text %d</li>", i)
			}
		}
		fmt.Fprint(w, "</ul>")
	default:
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "" || strings.Contains(name, "/") || !strings.HasSuffix(name, ".html") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		page := strings.NewReplacer("{{OTHER}}", s.Other, "{{CROSS}}", s.Cross).Replace(string(b))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}
}

// agentEnv is a site, a pool and one session shared by the subtests of one
// test: launching a browser per subtest would cost more than the tests.
type agentEnv struct {
	site *site
	pool *browserpool.Pool
	sess *browserpool.Session
}

func newAgentEnv(t testing.TB) *agentEnv {
	t.Helper()
	// Each test gets its own site, pool and browser and shares nothing, so
	// the agent-action tests run in parallel (go test's -parallel bound).
	if tt, ok := t.(*testing.T); ok {
		tt.Parallel()
	}
	requireBrowser(t)
	st := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	s, err := p.Open(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return &agentEnv{site: st, pool: p, sess: s}
}

// tab opens a tab on page (a path of the site, or a full URL), closed when
// the test ends.
func (e *agentEnv) tab(t testing.TB, page string) *browserpool.Tab {
	t.Helper()
	ctx := ctxT(t)
	u := page
	if !strings.HasPrefix(page, "http") {
		u = e.site.URL + page
	}
	tab, err := e.sess.OpenTab(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.sess.CloseTab(ctx, tab.ID()); err != nil && !errors.Is(err, browserpool.ErrSessionClosed) {
			t.Errorf("closing tab: %v", err)
		}
	})
	return tab
}

// snap takes a snapshot or fails the test.
func snap(t testing.TB, tab *browserpool.Tab, opts browserpool.SnapshotOptions) browserpool.Snapshot {
	t.Helper()
	s, err := tab.Snapshot(ctxT(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ref returns the ref of role/name in s or fails the test.
func ref(t testing.TB, s browserpool.Snapshot, role, name string) string {
	t.Helper()
	r := s.Find(role, name)
	if r == "" {
		t.Fatalf("no %s %q in the snapshot:\n%s", role, name, s.Text)
	}
	return r
}

// eval evaluates expr in tab into a new T.
func eval[T any](t testing.TB, tab *browserpool.Tab, expr string) T {
	t.Helper()
	var v T
	if err := tab.Evaluate(ctxT(t), expr, &v); err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until expr is truthy in tab (a condition in the page, with
// the test's deadline).
func waitJS(t testing.TB, tab *browserpool.Tab, expr string) {
	t.Helper()
	if err := tab.WaitCondition(ctxT(t), expr, nil); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}
