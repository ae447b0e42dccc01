package browserpool_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// Small surprises of a new user's first hour (issue 20 item 7).

func TestASecondOnLaunchAddsToTheFirstRatherThanReplacingIt(t *testing.T) {
	l := cdptest.NewLauncher(t)
	var mu sync.Mutex
	var got []string
	for _, name := range []string{"first", "second"} {
		l.OnLaunch(func(*cdptest.Browser) {
			mu.Lock()
			got = append(got, name)
			mu.Unlock()
		})
	}
	p := newFakePool(t, l, browserpool.Config{})
	mustOpen(t, ctxT(t), p)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"first", "second"}, got); diff != "" {
		t.Errorf("OnLaunch hooks run for one launch (-want +got):\n%s", diff)
	}
}

// A 404 is not success in disguise: Navigate reports the main resource's
// HTTP status, and where redirects led (issue 20 item 2).
func TestNavigateReportsTheHTTPStatusAndTheURLAfterRedirects(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r1":
			http.Redirect(w, r, "/r2", http.StatusMovedPermanently)
		case "/r2":
			http.Redirect(w, r, "/final?token=s3cr3t", http.StatusFound)
		case "/final", "/ok":
			fmt.Fprint(w, "<title>ok</title>fine")
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<title>not here</title>no such page")
		}
	}))
	defer srv.Close()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	type got struct {
		Status        int
		URL, FinalURL string
	}
	for _, tc := range []struct {
		path string
		want got
	}{
		{"/missing", got{404, srv.URL + "/missing", srv.URL + "/missing"}},
		{"/r1", got{200, srv.URL + "/r1", srv.URL + "/final?token=REDACTED"}},
		{"/ok", got{200, srv.URL + "/ok", srv.URL + "/ok"}},
		// A query is where the tab is (a search, a page number): only a
		// token in it is hidden.
		{"/ok?q=shoes&page=2&api_key=k", got{200, srv.URL + "/ok?q=shoes&page=2&api_key=REDACTED", srv.URL + "/ok?q=shoes&page=2&api_key=REDACTED"}},
		// A fragment stays: the tab went nowhere else.
		{"/ok#reviews", got{200, srv.URL + "/ok#reviews", srv.URL + "/ok#reviews"}},
	} {
		res, err := tab.Navigate(ctx, srv.URL+tc.path)
		if err != nil {
			t.Fatalf("Navigate %s: %v", tc.path, err)
		}
		if diff := cmp.Diff(tc.want, got{res.Status, res.URL, res.FinalURL}); diff != "" {
			t.Errorf("Navigate %s (-want +got):\n%s", tc.path, diff)
		}
		if last, ok := tab.LastNavigation(); !ok || last != res {
			t.Errorf("LastNavigation after %s = %+v, %v; want %+v", tc.path, last, ok, res)
		}
	}
	// OpenTab navigates too: its tab's LastNavigation says how it went.
	opened, err := s.OpenTab(ctx, srv.URL+"/gone")
	if err != nil {
		t.Fatal(err)
	}
	if last, ok := opened.LastNavigation(); !ok || last.Status != 404 || last.FinalURL != srv.URL+"/gone" {
		t.Errorf("OpenTab's LastNavigation = %+v, %v; want status 404 at /gone", last, ok)
	}
	blank, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if last, ok := blank.LastNavigation(); ok {
		t.Errorf("a tab opened on about:blank has LastNavigation %+v, want none", last)
	}
}

// A caller's huge input is not echoed whole into an error: the message
// shows its start and says how long it was (issue 13 item 7).
func TestHugeInputsAreCutShortInErrors(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	huge := strings.Repeat("x", 70_000)
	_, navErr := tab.Navigate(ctx, "http://fail.invalid/"+huge)
	_, tabErr := s.Tab(ctx, huge)
	_, sessErr := p.Session(ctx, huge)
	_, schemeErr := tab.Navigate(ctx, huge+"://host/")
	for name, err := range map[string]error{"Navigate": navErr, "Session.Tab": tabErr, "Pool.Session": sessErr, "Navigate (scheme)": schemeErr} {
		if err == nil {
			t.Errorf("%s with a 70 KB input: no error", name)
			continue
		}
		msg := err.Error()
		if len(msg) > 1500 || !strings.Contains(msg, "bytes in all)") {
			t.Errorf("%s: a %d-byte error for a 70 KB input (want it cut, saying the length): %.300s", name, len(msg), msg)
		}
	}
	if !errors.Is(navErr, browserpool.ErrNavigation) {
		t.Errorf("Navigate to an unresolvable host: %v, want ErrNavigation", navErr)
	}
}

// Open never hands out a browser that has already exited (issue 13 item 7).
func TestOpenDoesNotReturnABrowserThatAlreadyExited(t *testing.T) {
	t.Parallel()
	l := cdptest.NewLauncher(t, cdptest.WithoutLeakCheck())
	l.OnLaunch(func(b *cdptest.Browser) { b.Exit(3) })
	p := newFakePool(t, l, browserpool.Config{})
	s, err := p.Open(ctxT(t))
	if err == nil {
		t.Fatalf("Open returned session %s of a browser that exited as it started", s.ID())
	}
	if !errors.Is(err, browserpool.ErrLaunchFailed) || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("Open of a browser that exited: %v, want ErrLaunchFailed naming exit status 3", err)
	}
	if n := len(p.Sessions()); n != 0 {
		t.Errorf("%d live sessions after the failed open, want 0", n)
	}
}
