package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// Navigate takes the HTTP status of the document it loaded without asking
// the page after the load event: the status script
// reports it as the document starts (also after a cross-site navigation,
// which swaps the renderer, and whatever the page later claims with the
// same timestamp title), or, once the tab follows the network, the main
// frame's document response (the final one after redirects) does. A tab
// whose Performance domain the user turned off still gets it right, by
// asking after the load event. Same-document navigations have no status,
// HTTP error pages have theirs, and a page the browser cannot load is an
// ErrNavigation error (issue 14).
func TestNavigateTakesTheStatusOfTheFinalResponseWithoutAReadAfterTheLoad(t *testing.T) {
	requireBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r1":
			http.Redirect(w, r, "/r2?code=abc", http.StatusMovedPermanently)
		case "/r2":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/ok":
			fmt.Fprint(w, "<title>ok</title><iframe src='/framed'></iframe>")
		case "/framed":
			w.WriteHeader(http.StatusTeapot) // a subframe's status is not the page's
			fmt.Fprint(w, "framed")
		case "/replace":
			fmt.Fprint(w, `<title>r</title><script>history.replaceState(null, "", "/replaced?session=s3cr3t")</script>`)
		case "/spoof":
			fmt.Fprint(w, `<title>s</title><script>console.timeStamp("browserpool-document-status:999")</script>`)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "<title>oops</title>the site's own error page")
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<title>not here</title>no such page")
		}
	}))
	defer srv.Close()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Status   int
		FinalURL string
		SameDoc  bool
	}
	crossSite := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) // another site: another renderer
	cases := []struct {
		path string
		want got
	}{
		{"/ok", got{200, srv.URL + "/ok", false}},
		{"/ok#part", got{0, srv.URL + "/ok#part", true}}, // the URL the tab shows, its fragment new
		{"/missing", got{404, srv.URL + "/missing", false}},
		{"/r1", got{200, srv.URL + "/ok", false}},
		{"/broken", got{500, srv.URL + "/broken", false}},
		{"/replace", got{200, srv.URL + "/replaced?session=REDACTED", false}}, // the URL the page shows once loaded
		{crossSite + "/missing", got{404, crossSite + "/missing", false}},
		{"/spoof", got{200, srv.URL + "/spoof", false}},
	}
	run := func(mode string) {
		for _, tc := range cases {
			u := tc.path
			if strings.HasPrefix(u, "/") {
				u = srv.URL + u
			}
			res, err := tab.Navigate(ctx, u)
			if err != nil {
				t.Fatalf("%s: Navigate %s: %v", mode, tc.path, err)
			}
			if diff := cmp.Diff(tc.want, got{res.Status, res.FinalURL, res.LoaderID == ""}); diff != "" {
				t.Errorf("%s: Navigate %s (-want +got):\n%s", mode, tc.path, diff)
			}
		}
	}
	run("with the status script")
	if n := browserpool.StatusReadsAfterLoad(tab); n != 0 {
		t.Errorf("%d navigations asked the page for their status after the load event, want 0: the status script reports it", n)
	}
	if err := tab.Client().Performance.Disable(ctx); err != nil { // the user's own call
		t.Fatal(err)
	}
	run("with the Performance domain off")
	if n := browserpool.StatusReadsAfterLoad(tab); n == 0 {
		t.Error("no navigation read its status after the load event with the Performance domain off: where did the status come from?")
	}
	tab, err = s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Network(ctx); err != nil { // turns the Network domain on
		t.Fatal(err)
	}
	if err := tab.Client().Performance.Disable(ctx); err != nil {
		t.Fatal(err)
	}
	run("with the Network domain")
	if n := browserpool.StatusReadsAfterLoad(tab); n != 0 {
		t.Errorf("%d navigations asked the page for their status after the load event with the Network domain on, want 0", n)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	_, err = tab.Navigate(ctx, closed)
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "net::ERR_") {
		t.Errorf("Navigate to a closed port: %v, want ErrNavigation with the browser's net:: error", err)
	}
}

func TestANavigationCutShortByTheCallersDeadlineIsTheCallersErrorNotTheLibrarysTimeout(t *testing.T) {
	// The page's head arrives, its body never ends: the load event waits.
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hang" {
			fmt.Fprint(w, "<!doctype html><title>ok</title>")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>slow</title><p>start")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = tab.Navigate(short, srv.URL+"/hang")
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, browserpool.ErrTimeout) || !strings.Contains(err.Error(), "before the caller's context ended") || strings.Contains(err.Error(), "NavigationTimeout") {
		t.Errorf("Navigate cut short by a 1 s deadline: error = %v, want the caller's context.DeadlineExceeded, not ErrTimeout and its 30 s", err)
	}
	short, cancel = context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = tab.Reload(short)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, browserpool.ErrTimeout) {
		t.Errorf("Reload cut short by a 1 s deadline: error = %v, want the caller's context.DeadlineExceeded", err)
	}
}

func TestANavigationCutShortByItsSessionClosingSaysTheSessionClosed(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	st := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	closed := make(chan error, 1)
	time.AfterFunc(300*time.Millisecond, func() { closed <- s.Close(context.Background()) })
	_, err := tab.Navigate(ctx, st.URL+"/hang")
	if !errors.Is(err, browserpool.ErrSessionClosed) || errors.Is(err, browserpool.ErrNavigation) || strings.Contains(err.Error(), "WaitDownload") {
		t.Errorf("Navigate while its session closed = %v; want ErrSessionClosed, not a navigation error pointing at a download", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// slowLoadSite serves /slow, a page whose image never comes while the test
// runs (its load event never fires), and a fast page at any other path.
func slowLoadSite(t *testing.T) *httptest.Server {
	t.Helper()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			w.Write([]byte(`<title>slow</title><img src="/hang">`))
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		default:
			w.Write([]byte(`<title>fast</title><button>Go</button>`))
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) }) // runs first: the image's handler returns
	return srv
}

func TestANavigationReplacedByAnotherEndsAtOnceSayingSo(t *testing.T) {
	t.Parallel()
	srv := slowLoadSite(t)
	// A NavigationTimeout the test can afford to wait out: the replaced
	// navigation used to end only there, as a timeout.
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{NavigationTimeout: 8 * time.Second})))

	slow := make(chan error, 1)
	go func() {
		_, err := tab.Navigate(ctx, srv.URL+"/slow")
		slow <- err
	}()
	waitFor(t, "the slow page to commit", func() bool {
		var title string
		return tab.Evaluate(ctx, "document.title", &title) == nil && title == "slow"
	})
	if _, err := tab.Navigate(ctx, srv.URL+"/fast"); err != nil {
		t.Fatalf("the second Navigate: %v", err)
	}
	err := <-slow
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "another navigation replaced it") || !strings.Contains(err.Error(), "/fast") {
		t.Errorf("the replaced Navigate returned %v; want an ErrNavigation saying another navigation replaced it and where the tab is", err)
	}
}

func TestANavigationReplacedBeforeItsPageCameSaysSoNotThatItWasADownload(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	asked, answer := make(chan struct{}, 1), make(chan struct{})
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			asked <- struct{}{}
			select {
			case <-answer:
			case <-r.Context().Done():
			}
		}
		w.Write([]byte(`<title>page</title>`))
	})
	t.Cleanup(func() { close(answer) })
	first := make(chan error, 1)
	go func() {
		_, err := tab.Navigate(ctx, srv.URL+"/hang")
		first <- err
	}()
	<-asked // the first navigation waits for its server
	if _, err := tab.Navigate(ctx, srv.URL+"/fast"); err != nil {
		t.Fatalf("the second Navigate: %v", err)
	}
	err := <-first
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "another Navigate of this tab began") || strings.Contains(err.Error(), "download") {
		t.Errorf("the replaced Navigate returned %v; want an ErrNavigation saying another Navigate replaced it, not a download hint", err)
	}
}

// WaitLoad follows a navigation that replaced the page it waited for, with
// another caller (a snapshot) reading the tab's events meanwhile. Whether
// that caller takes the new page's events before WaitLoad looks is a race
// no test can pin: on the code before the watch's document count was read
// too, this passed as well.
func TestWaitLoadFollowsANavigationThatReplacedItsPage(t *testing.T) {
	t.Parallel()
	srv := slowLoadSite(t)
	ctx := ctxT(t)
	// The timeout must outlast the page's commit (a navigation that times
	// out before it is stopped, and never commits): 2 s did not on a
	// machine at a load average of 18.
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{NavigationTimeout: 6 * time.Second})))
	if _, err := tab.Navigate(ctx, srv.URL+"/slow"); !errors.Is(err, browserpool.ErrTimeout) {
		t.Fatalf("the slow page's load: %v; want it to time out, its image hanging", err)
	}
	waitFor(t, "the slow page to commit", func() bool {
		var title string
		return tab.Evaluate(ctx, "document.title", &title) == nil && title == "slow"
	})
	// WaitLoad waits for the slow page's load, which never comes; a script
	// takes the tab elsewhere, and a snapshot reads the new page's events
	// as they arrive, before WaitLoad looks.
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second) // it waited this out
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- tab.WaitLoad(wctx) }()
	if err := tab.Evaluate(ctx, `setTimeout(() => location.href = "`+srv.URL+`/fast", 100)`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a snapshot of the new page", func() bool {
		s, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
		return err == nil && s.Title == "fast"
	})
	if err := <-waited; err != nil {
		t.Errorf("WaitLoad across the replacing navigation: %v; want the new page's load", err)
	}
}

func TestNavigateFollowsAPageThatSendsTheTabOnByItself(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gate": // a login gateway's script redirect
			w.Write([]byte(`<title>gate</title><script>location.replace("/sso")</script>`))
		case "/sso": // and another, as the page loads
			w.Write([]byte(`<title>sso</title><script>document.addEventListener("DOMContentLoaded", () => location.href = "/home?tab=2")</script>`))
		default:
			w.Write([]byte(`<title>home</title>`))
		}
	}))
	t.Cleanup(srv.Close)
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	res, err := tab.Navigate(ctx, srv.URL+"/gate")
	if err != nil {
		t.Fatalf("Navigate to a page that redirects by script twice: %v", err)
	}
	if res.FinalURL != srv.URL+"/home?tab=2" || res.Status != 200 {
		t.Errorf("the result: FinalURL %q, status %d; want where the redirects led, %s/home?tab=2, 200", res.FinalURL, res.Status, srv.URL)
	}
	if got := eval[string](t, tab, "document.title + ' ' + document.readyState"); got != "home complete" {
		t.Errorf("after Navigate the tab shows %q; want the loaded home page", got)
	}
}

// TestANavigationThePagesOwnReplacedSaysSo: a link of the page followed
// while Navigate waits for its server replaces the navigation; the error
// says so and where the tab went, at once even while the link's own
// server has not answered (Chromium holds calls into the page until then,
// so the error must not ask the page).
func TestANavigationThePagesOwnReplacedSaysSo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		slow  bool     // the link's server answers only once Navigate has returned
		where []string // what the error says of where the tab is, one of
	}{
		{name: "the link's page answers at once", where: []string{"the tab is at ", "the tab is going to "}},
		{name: "the link's server is slow", slow: true, where: []string{"the tab is going to "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := ctxT(t)
			asked := make(chan struct{}, 1)
			release := make(chan struct{})
			tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/hang":
					asked <- struct{}{}
					select {
					case <-time.After(5 * time.Second):
					case <-r.Context().Done():
					}
					w.Write([]byte(`<title>late</title>`))
				case "/own":
					if c.slow {
						select {
						case <-release:
						case <-r.Context().Done():
						}
					}
					w.Write([]byte(`<title>own</title>`))
				default:
					w.Write([]byte(`<title>start</title><a href="/own?email=alice%40example.com" style="position:fixed;left:0;top:0;width:100px;height:100px">Own</a>`))
				}
			})
			nav := make(chan error, 1)
			go func() {
				_, err := tab.Navigate(ctx, srv.URL+"/hang")
				nav <- err
			}()
			<-asked // the Navigate waits for its server
			// A person clicks a link of the page meanwhile (the click
			// waits, up to its own bound, for the link's page).
			clicked := make(chan error, 1)
			go func() { clicked <- tab.ClickAt(ctx, 50, 50) }()
			err := <-nav
			close(release)
			if err := <-clicked; err != nil {
				t.Errorf("the click on the link: %v", err)
			}
			if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "the page's own navigation") || strings.Contains(err.Error(), "download") {
				t.Fatalf("a Navigate the page's own replaced returned %v; want an ErrNavigation saying the page's navigation replaced it, not a download hint", err)
			}
			said := false
			for _, w := range c.where {
				said = said || strings.Contains(err.Error(), w+srv.URL+"/own")
			}
			if !said {
				t.Errorf("the error %q does not say where the tab went: want one of %q followed by %s/own", err, c.where, srv.URL)
			}
			if strings.Contains(err.Error(), "alice") {
				t.Errorf("the error %q carries the link's query string", err)
			}
		})
	}
}

func TestANavigationToAPageWhoseScriptNeverReturnsLeavesTheTabTakingCommands(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>busy</title><p>before</p><script>while (true) {}</script><p>after</p>`))
	}))
	t.Cleanup(srv.Close)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{NavigationTimeout: 3 * time.Second})))
	// The tab's renderer up first (a snapshot waits for its events with
	// the caller's context): on a loaded machine its start alone can take
	// the 3 s the navigation has.
	snap(t, tab, browserpool.SnapshotOptions{})
	_, err := tab.Navigate(ctx, srv.URL)
	var be *browserpool.Error
	if !errors.Is(err, browserpool.ErrTimeout) || !errors.As(err, &be) || !strings.Contains(be.Hint, "stopped in a moment") {
		t.Fatalf("Navigate to a page whose script never returns: %v; want ErrTimeout saying the script is stopped", err)
	}
	// The next call works once the script is stopped: no call of the tab
	// waits for ever behind it.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := tab.Snapshot(sctx, browserpool.SnapshotOptions{}); err != nil {
		t.Errorf("a snapshot after the navigation timed out: %v; want the page (its script stopped)", err)
	}
}

// A page busy in a script does not let the tab leave it: a navigation's
// document never replaces it, and the browser holds the tab's every later
// call. The hint said to take a snapshot (which then waited out the
// caller's deadline); it says to close the tab, which works.
func TestANavigationFromAPageBusyInAScriptSaysToCloseTheTab(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	base := serve(t, map[string]string{"/a": "<title>A</title>", "/b": "<title>B</title>"})
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{NavigationTimeout: 2 * time.Second}))
	tab := mustTab(t, ctx, s)
	navigateUnderLoad(t, ctx, tab, base+"/a")
	if err := tab.Evaluate(ctx, "setTimeout(() => { for (;;) {} }, 50), 1", nil); err != nil {
		t.Fatal(err)
	}
	for { // until the loop has begun: the page stops answering
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := tab.Evaluate(short, "1", nil)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	_, err := tab.Navigate(ctx, base+"/b")
	var be *browserpool.Error
	if !errors.Is(err, browserpool.ErrTimeout) || !errors.As(err, &be) || !strings.Contains(be.Hint, "close the tab (Session.CloseTab)") {
		t.Fatalf("Navigate from a busy page: %v; want ErrTimeout whose hint says to close the tab", err)
	}
	if err := s.CloseTab(ctx, tab.ID()); err != nil {
		t.Fatalf("closing the held tab, as the hint says: %v", err)
	}
	next, err := s.OpenTab(ctx, base+"/b")
	if err != nil {
		t.Fatalf("a new tab after closing the held one: %v", err)
	}
	if got := eval[string](t, next, "document.title"); got != "B" {
		t.Errorf("the new tab shows %q, want B", got)
	}
}

// A navigation the browser refuses (an unsafe port here: no network
// needed) returns its ErrNavigation once the tab shows the error page, not
// before: Chromium commits that page about 100 ms after it answers, and
// Session.Tabs listed the page before until then.
func TestAFailedNavigationReturnsOnceTheTabShowsItsErrorPage(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	tab := mustTab(t, ctx, s)
	const unsafe = "http://127.0.0.1:6000/" // X11's port: Chromium refuses it
	if _, err := tab.Navigate(ctx, unsafe); !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "ERR_UNSAFE_PORT") {
		t.Fatalf("Navigate(%s) returned %v; want an ErrNavigation naming net::ERR_UNSAFE_PORT", unsafe, err)
	}
	tabs, err := s.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, ti := range tabs {
		urls = append(urls, ti.URL)
	}
	if diff := cmp.Diff([]string{unsafe}, urls); diff != "" {
		t.Errorf("Session.Tabs right after the failed Navigate (-want +got):\n%s", diff)
	}
}

// navigateUnderLoad navigates tab to url, again if the tab's short
// NavigationTimeout ran out first (a test's set-up on a loaded machine,
// not what it tests), or fails the test.
func navigateUnderLoad(t *testing.T, ctx context.Context, tab *browserpool.Tab, url string) {
	t.Helper()
	var err error
	for range 5 {
		if _, err = tab.Navigate(ctx, url); !errors.Is(err, browserpool.ErrTimeout) {
			break
		}
	}
	if err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
}
