package browserpool_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// hangingSite serves a page at every path but /hang, which answers only
// once the test ends.
func hangingSite(t *testing.T) http.HandlerFunc {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	return withRoute("<title>ok</title>ok", "/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
}

// A Navigate whose caller's context had already ended sends nothing, so it
// stops nothing either: the Navigate right after it loads, every time, and
// its error says truthfully that nothing was sent.
func TestANavigateAfterOneWhoseContextHadAlreadyEndedLoads(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, hangingSite(t))
	for i := range 5 {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		_, err := tab.Navigate(ended, srv.URL+"/two")
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing was sent") || strings.Contains(err.Error(), "did not answer") {
			t.Errorf("try %d: Navigate with a cancelled context = %v; want context.Canceled saying nothing was sent", i, err)
		}
		if _, err := tab.Navigate(ctx, srv.URL+"/ok"); err != nil {
			t.Fatalf("try %d: the Navigate right after one with a cancelled context: %v", i, err)
		}
	}
}

// A Navigate cut short by its caller's deadline while the server held it
// stops that navigation before it returns: the stop cannot reach the
// browser after the next Navigate's and abort that one instead.
func TestANavigateAfterOneCutShortByItsDeadlineLoads(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, hangingSite(t))
	for i := range 5 {
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := tab.Navigate(short, srv.URL+"/hang")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("try %d: Navigate to a server that never answers, with a short deadline = %v; want context.DeadlineExceeded", i, err)
		}
		if _, err := tab.Navigate(ctx, srv.URL+"/ok"); err != nil {
			t.Fatalf("try %d: the Navigate right after one cut short by its deadline: %v", i, err)
		}
	}
}

// An HTTP error status with an empty body is a page that loaded, as one
// with a body is: Chromium shows its own error page for it, and Navigate
// returns nil with the server's status, as its doc says.
func TestANavigateToAnErrorStatusWithAnEmptyBodyLoadsWithTheServersStatus(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			w.WriteHeader(http.StatusNotFound)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		case "/gone":
			http.Redirect(w, r, "/503", http.StatusFound)
		case "/503":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Write([]byte("<title>home</title>home"))
		}
	})
	type got struct {
		Status   int
		FinalURL string
	}
	for _, tc := range []struct {
		path string
		want got
	}{
		{"/404", got{404, srv.URL + "/404"}},
		{"/500", got{500, srv.URL + "/500"}},
		{"/gone", got{503, srv.URL + "/503"}}, // where the redirect led
	} {
		res, err := tab.Navigate(ctx, srv.URL+tc.path)
		if err != nil {
			t.Errorf("Navigate to %s, which answers with an empty body: %v; want nil", tc.path, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got{res.Status, res.FinalURL}); diff != "" {
			t.Errorf("Navigate to %s (-want +got):\n%s", tc.path, diff)
		}
		last, ok := tab.LastNavigation()
		if diff := cmp.Diff(res, last); !ok || diff != "" {
			t.Errorf("LastNavigation after %s (-Navigate's result +last):\n%s", tc.path, diff)
		}
	}
}

// A URL answering 204 No Content shows no page and saves no file: the
// error says the server sent no page and the tab stays where it was, not
// that the browser is saving a download. A URL answering with a file still
// says it is being saved.
func TestANavigateToANoContentAnswerSaysTheServerSentNoPageNotADownload(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/file":
			w.Header().Set("Content-Disposition", "attachment; filename=report.txt")
			w.Write([]byte("report"))
		default:
			w.Write([]byte("<title>home</title>home"))
		}
	})
	_, err := tab.Navigate(ctx, srv.URL+"/204")
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrNavigation) {
		t.Fatalf("Navigate to a 204 answer = %v; want an ErrNavigation", err)
	}
	if !strings.Contains(e.Hint, "sent no page") || strings.Contains(e.Hint, "saving") {
		t.Errorf("Navigate to a 204 answer: hint %q; want it to say the server sent no page, not that a download is being saved", e.Hint)
	}
	if got := eval[string](t, tab, "location.href"); got != srv.URL+"/" {
		t.Errorf("after Navigate to a 204 answer the tab is at %s; want it still on %s", got, srv.URL+"/")
	}
	if dls := tab.Session().Downloads(); len(dls) != 0 {
		t.Errorf("Session.Downloads after a 204 answer = %+v; want none", dls)
	}

	_, err = tab.Navigate(ctx, srv.URL+"/file")
	if !errors.As(err, &e) || !strings.Contains(e.Hint, "is saving it in Session.DownloadDir") {
		t.Errorf("Navigate to a file = %v; want an ErrNavigation whose hint says the browser is saving it", err)
	}
	waitFor(t, "the file in Session.Downloads", func() bool { return len(tab.Session().Downloads()) == 1 })
}

// A port outside 1-65535 is no URL, and neither is one whose host Chromium
// refuses (300 is no IPv4 byte): both are ErrInvalidURL, not a protocol
// error.
func TestANavigateToAnOutOfRangePortOrAnInvalidHostIsErrInvalidURL(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	for _, u := range []string{"http://127.0.0.1:99999/", "http://127.0.0.1:0/", "http://300.1.1.1/"} {
		_, err := tab.Navigate(ctx, u)
		if !errors.Is(err, browserpool.ErrInvalidURL) || errors.Is(err, browserpool.ErrProtocol) {
			t.Errorf("Navigate(%s) = %v; want ErrInvalidURL", u, err)
		}
	}
	if _, err := tab.Session().OpenTab(ctx, "http://127.0.0.1:70000/"); !errors.Is(err, browserpool.ErrInvalidURL) {
		t.Errorf("OpenTab with port 70000 = %v; want ErrInvalidURL", err)
	}
}

// A same-document Navigate (a fragment of the page the tab is on) reports
// the URL the tab then shows and becomes the tab's last navigation.
func TestASameDocumentNavigateReportsTheURLTheTabShowsAndIsTheLastNavigation(t *testing.T) {
	ctx, tab, srv := htmlTab(t, `<title>home</title><p id="x">x</p>`)
	res, err := tab.Navigate(ctx, srv.URL+"/#x")
	if err != nil {
		t.Fatal(err)
	}
	want := browserpool.NavigateResult{SessionID: tab.SessionID(), TabID: tab.ID(), Channel: browserpool.ChannelCDP, URL: srv.URL + "/#x", FinalURL: srv.URL + "/#x"}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("same-document Navigate (-want +got):\n%s", diff)
	}
	last, ok := tab.LastNavigation()
	if diff := cmp.Diff(want, last); !ok || diff != "" {
		t.Errorf("LastNavigation after a same-document Navigate (-want +got):\n%s", diff)
	}
}

// A page whose document came and was parsed but whose image never loads
// times out on its load event; the error says resources hold the load and
// the page is usable, not that a script of the page's may be busy.
func TestANavigateWhoseImageNeverLoadsSaysThePageIsUsableNotThatAScriptHoldsIt(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := httptest.NewServer(withRoute(`<title>slow</title><p>text</p><img src="/hang">`, "/hang", hangingSite(t)))
	t.Cleanup(srv.Close)
	p := newRealPool(t, browserpool.Config{NavigationTimeout: 5 * time.Second})
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	_, err := tab.Navigate(ctx, srv.URL+"/slow")
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrTimeout) {
		t.Fatalf("Navigate to a page whose image never loads = %v; want ErrTimeout", err)
	}
	if !strings.Contains(e.Hint, "held by resources still loading") || !strings.Contains(e.Hint, "usable") || strings.Contains(e.Hint, "script of the page's keeps it busy") {
		t.Errorf("hint %q; want it to say resources hold the load event and the page is usable, not blame a script", e.Hint)
	}
	if got := snap(t, tab, browserpool.SnapshotOptions{}).Title; got != "slow" {
		t.Errorf("snapshot after the timeout shows %q; want the page, %q", got, "slow")
	}
}
