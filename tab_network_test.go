package browserpool_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserpool/browserpool"
)

func TestNetworkLogShowsStatusesAndFailuresOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)
	ctx := ctxT(t)
	tab := e.tab(t, "/form.html")

	// A port nothing listens on: connecting to it is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/gone"
	l.Close()

	t.Run("the log starts at the first call", func(t *testing.T) {
		got := networkLog(t, tab)
		if len(got) != 0 {
			t.Errorf("first Network call = %+v, want empty (the page loaded before it)", got)
		}
	})

	t.Run("a 200, a 404 and a refused request, with tokens redacted", func(t *testing.T) {
		js := `Promise.allSettled([fetch('/form.html'), fetch('/missing.html?token=abcdefgh12345678ijklmnop&page=2'), fetch('` + closed + `')]).then(() => 1)`
		if err := tab.Evaluate(ctx, js, nil); err != nil {
			t.Fatal(err)
		}
		var got []browserpool.NetworkRequest
		waitFor(t, "three finished requests", func() bool {
			got = networkLog(t, tab)
			done := 0
			for _, r := range got {
				if r.Done {
					done++
				}
			}
			return done >= 3
		})
		want := []browserpool.NetworkRequest{
			{Method: "GET", URL: e.site.URL + "/form.html", Type: "Fetch", Status: 200, MIMEType: "text/html", Done: true},
			{Method: "GET", URL: e.site.URL + "/missing.html?token=REDACTED&page=2", Type: "Fetch", Status: 404, MIMEType: "text/plain", Done: true},
			// Requests go through the pool's network-policy proxy (the
			// default policy), which answers a refused origin by closing:
			// Chromium reports an empty response, not the refusal itself.
			{Method: "GET", URL: closed, Type: "Fetch", Failure: "net::ERR_EMPTY_RESPONSE", Done: true},
		}
		opts := []cmp.Option{
			cmpopts.IgnoreFields(browserpool.NetworkRequest{}, "Time", "Duration"),
			cmpopts.SortSlices(func(a, b browserpool.NetworkRequest) bool { return a.URL < b.URL }),
		}
		if diff := cmp.Diff(want, got, opts...); diff != "" {
			t.Errorf("Network (-want +got):\n%s", diff)
		}
		for _, r := range got {
			if r.Time.IsZero() || r.Duration <= 0 {
				t.Errorf("%s: no time or duration: %+v", r.URL, r)
			}
			if strings.Contains(r.URL, "abcdefgh") {
				t.Errorf("a token survived in the log: %s", r.URL)
			}
		}
	})

	t.Run("clear empties the log and later requests are logged", func(t *testing.T) {
		if err := tab.ClearNetwork(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := tab.Navigate(ctx, e.site.URL+"/popup.html"); err != nil {
			t.Fatal(err)
		}
		got := networkLog(t, tab)
		if len(got) != 1 || got[0].Type != "Document" || got[0].Status != 200 || got[0].URL != e.site.URL+"/popup.html" {
			t.Errorf("after clear and a navigation: %+v, want one Document 200 for /popup.html", got)
		}
	})
}

// networkLog reads tab's network log without the browser's own favicon
// requests, which come whenever the browser gets to them.
func networkLog(t *testing.T, tab *browserpool.Tab) []browserpool.NetworkRequest {
	t.Helper()
	got, err := tab.Network(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(got, func(r browserpool.NetworkRequest) bool { return strings.HasSuffix(r.URL, "/favicon.ico") })
}

// A cross-site iframe's document request starts on the page's session and
// ends in the iframe's own process (an out-of-process iframe): the page
// sees only its frame swapped.
func TestAPageWithACrossSiteIframeBecomesNetworkIdle(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	var base string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/inner" {
			fmt.Fprint(w, `<!doctype html><title>Inner</title>inner`)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>Outer</title><iframe src="%s/inner"></iframe>`, strings.Replace(base, "127.0.0.1", "localhost", 1))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	base = srv.URL
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, 30*time.Second)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	if _, err := tab.Network(ctx); err != nil { // the log starts at the first call
		t.Fatal(err)
	}
	err := tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{Action: func(ctx context.Context) error {
		_, err := tab.Navigate(ctx, base+"/")
		return err
	}})
	if err != nil {
		t.Fatalf("WaitNetworkIdle on a page with a cross-site iframe: %v", err)
	}
	var inner *browserpool.NetworkRequest
	for _, r := range networkLog(t, tab) {
		if strings.HasSuffix(r.URL, "/inner") {
			inner = &r
		}
	}
	if inner == nil || !inner.Done || inner.Status != 200 {
		t.Errorf("the iframe's document in the network log: %+v; want it done, status 200", inner)
	}
}

func TestAPageThatStartsWorkersBecomesNetworkIdle(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Workers</title>`)
	})
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `postMessage('up')`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, 60*time.Second)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Network(ctx); err != nil { // the log starts at the first call
		t.Fatal(err)
	}
	// A worker loads its script in a target of its own: the page's
	// session sees the request sent and never its end.
	start := `new Worker('/worker.js'); new Worker(URL.createObjectURL(new Blob(['postMessage(1)'], {type: 'text/javascript'}))); new SharedWorker('/worker.js?shared'); 1`
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = tab.WaitNetworkIdle(wctx, browserpool.NetworkIdleOptions{Action: func(ctx context.Context) error {
		return tab.Evaluate(ctx, start, nil)
	}})
	if err != nil {
		t.Fatalf("WaitNetworkIdle after starting three workers: %v", err)
	}
	var scripts []string
	for _, r := range networkLog(t, tab) {
		if r.Type == "Script" {
			scripts = append(scripts, fmt.Sprintf("%s done=%v", strings.SplitN(r.URL, ":", 2)[0], r.Done))
		}
	}
	if diff := cmp.Diff([]string{"http done=true", "blob done=true", "http done=true"}, scripts); diff != "" {
		t.Errorf("the workers' scripts in the network log (-want +got):\n%s", diff)
	}
}

// A CORS preflight, like a worker's script, comes without a loader and as
// its own document, but its answer and its end do come to the page's
// session: it is logged with its status once done, and waited for.
func TestACORSPreflightIsLoggedWithItsAnswer(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "PUT")
		w.Header().Set("Access-Control-Allow-Headers", "x-custom")
		if r.Method == http.MethodOptions {
			time.Sleep(300 * time.Millisecond)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(api.Close)
	site := serve(t, map[string]string{"/": `<!doctype html><title>CORS</title>`})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, 60*time.Second)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, site+"/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Network(ctx); err != nil {
		t.Fatal(err)
	}
	cross := strings.Replace(api.URL, "127.0.0.1", "localhost", 1) + "/item"
	err = tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{Action: func(ctx context.Context) error {
		return tab.Evaluate(ctx, "fetch("+strconv.Quote(cross)+", {method: 'PUT', headers: {'x-custom': '1'}}).then(r => r.text()), 1", nil)
	}})
	if err != nil {
		t.Fatal(err)
	}
	var preflight *browserpool.NetworkRequest
	for _, r := range networkLog(t, tab) {
		if r.Method == "OPTIONS" {
			preflight = &r
		}
	}
	if preflight == nil || !preflight.Done || preflight.Status != http.StatusNoContent || preflight.Duration < 250*time.Millisecond {
		t.Errorf("the preflight in the network log: %+v; want it done with status 204 after about 300 ms", preflight)
	}
}

// The browser drops the requests of a document that goes away (its frame
// navigates or is removed) without an event: they end with it, in the
// log and for WaitNetworkIdle.
func TestARequestWhosePageGoesAwayEndsWithIt(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	hold := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Page</title>`)
	})
	mux.HandleFunc("/frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><script>fetch('/hang?from=frame')</script>`)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select { // until the browser gives up on it, or the test ends
		case <-r.Context().Done():
		case <-hold:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hold) })
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, 60*time.Second)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Network(ctx); err != nil {
		t.Fatal(err)
	}
	inflight := func(url string) bool {
		for _, r := range networkLog(t, tab) {
			if strings.HasSuffix(r.URL, url) && !r.Done {
				return true
			}
		}
		return false
	}
	// A request of the page, and one of an iframe, which then navigates:
	// only the iframe's request ends.
	if err := tab.Evaluate(ctx, `fetch('/hang?from=page-early'); const f = document.createElement('iframe'); f.id = 'f'; f.src = '/frame'; document.body.append(f); 1`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the iframe's request in flight", func() bool { return inflight("/hang?from=frame") })
	if err := tab.Evaluate(ctx, `document.getElementById('f').src = '/?framed'; 1`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the iframe's request ended", func() bool { return !inflight("/hang?from=frame") })
	if !inflight("/hang?from=page-early") {
		t.Errorf("the page's request ended as its iframe navigated: %+v", networkLog(t, tab))
	}
	// An iframe's request in flight as the page navigates away.
	if err := tab.Evaluate(ctx, `document.getElementById('f').src = '/frame'; 1`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the iframe's second request in flight", func() bool { return inflight("/hang?from=frame") })
	// The page's own request, then a navigation within the wait.
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err = tab.WaitNetworkIdle(wctx, browserpool.NetworkIdleOptions{Action: func(ctx context.Context) error {
		return tab.Evaluate(ctx, `fetch('/hang?from=page'); setTimeout(() => location.href = '/?next', 200); 1`, nil)
	}})
	if err != nil {
		t.Fatalf("WaitNetworkIdle across a navigation that left a request behind: %v", err)
	}
	waitFor(t, "the next page loaded", func() bool {
		for _, r := range networkLog(t, tab) {
			if strings.HasSuffix(r.URL, "/?next") && r.Done {
				return true
			}
		}
		return false
	})
	var got []string
	for _, r := range networkLog(t, tab) {
		if strings.Contains(r.URL, "/hang") {
			got = append(got, fmt.Sprintf("%s done=%v %s", r.URL[len(srv.URL):], r.Done, r.Failure))
		}
	}
	// The browser says when it drops an iframe's request as the iframe
	// navigates, and says nothing of those it drops as the page does.
	cut := "cut off: its page navigated away before it ended"
	want := []string{"/hang?from=page-early done=true " + cut, "/hang?from=frame done=true net::ERR_ABORTED", "/hang?from=frame done=true " + cut, "/hang?from=page done=true " + cut}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the requests left behind, in the network log (-want +got):\n%s", diff)
	}
}
