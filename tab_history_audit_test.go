package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// serveRoutes serves routes by path on 127.0.0.1 (every other path is not
// found) until the test ends, and returns the server's URL.
func serveRoutes(t *testing.T, routes map[string]http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// htmlRoute answers with the HTML page body.
func htmlRoute(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// redirectLoop answers every request with a redirect to itself: Chromium
// gives up with net::ERR_TOO_MANY_REDIRECTS and shows its error page.
func redirectLoop(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, r.URL.Path, http.StatusFound)
}

// Back or Forward onto an entry whose load now fails showed the browser's
// error page at once, yet waited out the whole NavigationTimeout for the
// entry (Chromium shows the error page as an entry of its own) and then
// said the page did not finish loading.
func TestBackOrForwardOntoAnEntryWhoseLoadFailsSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	var failing atomic.Bool
	srv := serveRoutes(t, map[string]http.HandlerFunc{
		"/a":    htmlRoute("<title>A</title>a"),
		"/b":    htmlRoute("<title>B</title>b"),
		"/loop": redirectLoop,
		"/flaky": func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() {
				redirectLoop(w, r)
				return
			}
			// Not kept in the back-forward cache (an unload handler):
			// Forward loads it again.
			w.Header().Set("Cache-Control", "no-store")
			htmlRoute("<title>Flaky</title>up<script>addEventListener('unload', () => {})</script>")(w, r)
		},
	})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	for _, u := range []string{"/a", "/loop", "/b"} {
		tab.Navigate(ctx, srv+u) // /loop fails: its entry stays
	}
	// Well within NavigationTimeout's 30 s default: running out is the
	// caller's deadline, not the answer wanted.
	short, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := tab.Back(short)
	checkFailedEntry(t, "Back", err, srv+"/loop")

	for _, u := range []string{"/a", "/flaky"} {
		if _, err := tab.Navigate(ctx, srv+u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tab.Back(ctx); err != nil {
		t.Fatalf("Back to /a: %v", err)
	}
	failing.Store(true)
	short, cancel = context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err = tab.Forward(short)
	checkFailedEntry(t, "Forward", err, srv+"/flaky")
}

func checkFailedEntry(t *testing.T, what string, err error, page string) {
	t.Helper()
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrNavigation) || !errors.As(err, &e) || e.Hint == "" {
		t.Fatalf("%s onto an entry whose load fails = %v; want an ErrNavigation with a hint", what, err)
	}
	for _, want := range []string{page, "net::ERR_TOO_MANY_REDIRECTS"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s's error %q does not name %s", what, err, want)
		}
	}
}

// A Reload whose load failed returned nil, with the browser's error page's
// URL (chrome-error://chromewebdata/) for the page's.
func TestAReloadWhoseLoadFailsIsANavigationError(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	var failing atomic.Bool
	srv := serveRoutes(t, map[string]http.HandlerFunc{
		"/flaky": func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() {
				redirectLoop(w, r)
				return
			}
			htmlRoute("<title>Flaky</title>up")(w, r)
		},
	})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, srv+"/flaky"); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	res, err := tab.Reload(ctx)
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrNavigation) || !errors.As(err, &e) || e.Hint == "" {
		t.Fatalf("Reload whose load fails = %+v, %v; want an ErrNavigation with a hint", res, err)
	}
	if !strings.Contains(err.Error(), "net::ERR_TOO_MANY_REDIRECTS") || !strings.Contains(err.Error(), srv+"/flaky") {
		t.Errorf("Reload's error %q does not name the page and net::ERR_TOO_MANY_REDIRECTS", err)
	}
}

// WaitLoad on a tab a page opened whose first page is slow (3.5 s here)
// returned nil after two seconds, while the tab had not committed it.
func TestWaitLoadOnAPopupWaitsForItsSlowFirstPage(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := serveRoutes(t, map[string]http.HandlerFunc{
		"/": htmlRoute(`<title>Opener</title><button onclick="window.open('/slow')">Open slow</button>`),
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			select { // a slow server
			case <-time.After(3500 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
			htmlRoute("<title>Slow</title><p>slow page")(w, r)
		},
	})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	opener := mustTab(t, ctx, s)
	if _, err := opener.Navigate(ctx, srv+"/"); err != nil {
		t.Fatal(err)
	}
	openPopup := func() *browserpool.Tab {
		t.Helper()
		if err := opener.Click(ctx, ref(t, snap(t, opener, browserpool.SnapshotOptions{}), "button", "Open slow")); err != nil {
			t.Fatal(err)
		}
		popup, err := s.Tab(ctx, popupID(t, ctx, opener))
		if err != nil {
			t.Fatal(err)
		}
		return popup
	}

	popup := openPopup()
	if err := popup.WaitLoad(ctx); err != nil {
		t.Fatalf("WaitLoad on the popup: %v", err)
	}
	info, err := popup.PageInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]string{srv + "/slow", "Slow"}, [2]string{info.URL, info.Title}); diff != "" {
		t.Errorf("the popup's URL and title after WaitLoad (-want +got):\n%s", diff)
	}
	if err := s.CloseTab(ctx, popup.ID()); err != nil {
		t.Fatal(err)
	}

	// A deadline shorter than the page's wait is an error saying the
	// first page has not arrived, never nil.
	popup = openPopup()
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err = popup.WaitLoad(short)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "first page") {
		t.Errorf("WaitLoad on the popup with a deadline before its first page came = %v; want the deadline's error saying its first page has not arrived", err)
	}
}

// WaitNavigation whose action opened a new tab (a target=_blank link)
// waited out its deadline and said only that no navigation committed.
func TestWaitNavigationWhoseActionOpensANewTabSaysSoAtOnce(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := serveRoutes(t, map[string]http.HandlerFunc{
		"/":  htmlRoute(`<title>Opener</title><a href="/b" target="_blank">New tab link</a>`),
		"/b": htmlRoute("<title>B</title>b"),
	})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, srv+"/"); err != nil {
		t.Fatal(err)
	}
	link := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "New tab link")
	short, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := tab.WaitNavigation(short, func(ctx context.Context) error { return tab.Click(ctx, link) })
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrNavigation) || !errors.As(err, &e) || !strings.Contains(e.Hint, "Session.Tab") {
		t.Fatalf("WaitNavigation whose click opened a new tab = %v; want an ErrNavigation pointing to Session.Tabs", err)
	}
	for _, want := range []string{"new tab", srv + "/b"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("WaitNavigation's error %q does not say %q", err, want)
		}
	}
	if got := eval[string](t, tab, "document.title"); got != "Opener" {
		t.Errorf("the tab that opened the new one shows %q, want it to stay on Opener", got)
	}
}

// A ref in a same-site iframe nested in a cross-site iframe that has since
// navigated read as hidden (ErrNotVisible), not as gone.
func TestARefInAFrameNestedInACrossSiteFrameThatNavigatedIsStale(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	// The server answers as 127.0.0.1 and as localhost, two sites:
	// the middle frame is out of process, the nested one back on the
	// top page's site.
	site := func(r *http.Request, host string) string {
		_, port, _ := strings.Cut(r.Host, ":")
		return "http://" + host + ":" + port
	}
	srv := serveRoutes(t, map[string]http.HandlerFunc{
		"/": func(w http.ResponseWriter, r *http.Request) {
			htmlRoute(fmt.Sprintf(`<title>Top</title><iframe id=cross src="%s/cross"></iframe>`, site(r, "localhost")))(w, r)
		},
		"/cross": func(w http.ResponseWriter, r *http.Request) {
			htmlRoute(fmt.Sprintf(`<p>cross</p><iframe src="%s/nested"></iframe>`, site(r, "127.0.0.1")))(w, r)
		},
		"/nested": htmlRoute(`<button>Nested</button>`),
		"/other":  htmlRoute(`<p>other</p>`),
	})
	cross := strings.Replace(srv, "127.0.0.1", "localhost", 1)
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, srv+"/"); err != nil {
		t.Fatal(err)
	}
	var nested string
	waitFor(t, "the nested frame's button in a snapshot", func() bool {
		nested = snap(t, tab, browserpool.SnapshotOptions{}).Find("button", "Nested")
		return nested != ""
	})
	// A click on it lands while its frames stand.
	if err := tab.Click(ctx, nested); err != nil {
		t.Fatalf("Click on the nested frame's button: %v", err)
	}
	eval[bool](t, tab, fmt.Sprintf("f = document.getElementById('cross'), f.onload = () => window.moved = true, f.src = %q, true", cross+"/other"))
	waitJS(t, tab, "window.moved")
	if err := tab.Click(ctx, nested); !errors.Is(err, browserpool.ErrStaleRef) {
		t.Errorf("Click on a ref in a frame whose parent frame navigated = %v; want ErrStaleRef", err)
	}
}
