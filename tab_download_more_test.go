package browserpool_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/fleettest"
)

// A download of a data: URL reports the URL by its media type and length:
// a page's data: link can carry megabytes, which a Download (and the
// session's list of them) carried whole into a person's log or a model's
// context.
func TestADownloadOfADataURLReportsItsTypeAndLengthNotItsBytes(t *testing.T) {
	data := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 300_000)))
	ctx, tab, _ := htmlTab(t, `<a download="big.txt" href="data:text/plain;base64,`+data+`">Big</a>`)
	link := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Big")
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, link) })
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("data:text/plain;base64,… (%d characters)", len(data))
	if dl.URL != want || dl.Bytes != 300_000 {
		t.Errorf("Download.URL of %d characters, Bytes %d; want %q and 300000 bytes", len(dl.URL), dl.Bytes, want)
	}
	var listed []string
	for _, d := range tab.Session().Downloads() {
		listed = append(listed, d.URL)
	}
	if diff := cmp.Diff([]string{want}, listed); diff != "" {
		t.Errorf("Session.Downloads' URLs (-want +got):\n%s", diff)
	}
}

// A download the site sends without a size (chunked) and cuts short says
// how much arrived and that no size was announced, not "of 0 bytes".
func TestADownloadCutShortWithoutASizeSaysNoSizeWasAnnounced(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, withRoute(`<a href="/cut">Cut</a>`, "/cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="cut.bin"`)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(make([]byte, 50_000))
		w.(http.Flusher).Flush() // chunked: no Content-Length
		panic(http.ErrAbortHandler)
	}))
	link := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Cut")
	_, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, link) })
	if !errors.Is(err, browserpool.ErrDownloadFailed) || strings.Contains(err.Error(), "of 0 bytes") || !strings.Contains(err.Error(), "the site announced no size") {
		t.Errorf("WaitDownload of a chunked download cut short: %v; want ErrDownloadFailed saying the site announced no size", err)
	}
}

// A download the caller's deadline ends part way is cancelled in the
// browser, so that it does not land later beside the one a retry starts
// (as "slow (1).bin"), and the error says how much had arrived and to
// retry with a longer deadline.
func TestADownloadTheDeadlineEndsIsCancelledAndSaysHowMuchArrived(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tab, _ := servedTab(t, ctx, withRoute(`<a href="/slow">Slow</a>`, "/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="slow.bin"`)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "2000")
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	progress, err := tab.Session().Browser().Browser.DownloadProgress(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer progress.Close()
	link := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Slow")
	// Long enough for the click, the download's start and Chromium's
	// periodic progress report of the first 1000 bytes on a loaded machine.
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = tab.WaitDownload(short, func(ctx context.Context) error { return tab.Click(ctx, link) })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cancelled after 1000 of 2000 bytes") || !strings.Contains(err.Error(), "trigger the download again with a longer deadline") {
		t.Errorf("WaitDownload whose deadline ended part way: %v; want the deadline's error saying 1000 of 2000 bytes arrived and to retry with a longer deadline", err)
	}
	for {
		ev, err := progress.Recv() // ends with ctx
		if err != nil {
			t.Fatalf("the browser never said the download was cancelled: %v", err)
		}
		if ev.State == "canceled" {
			return
		}
	}
}

// withRoute serves path with h and every other path with page.
func withRoute(page, path string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == path {
			h(w, r)
			return
		}
		w.Write([]byte(page))
	}
}

// On a remote browser (a Browserless lease) a download the caller's
// deadline ends while its bytes stream over CDP says the same: how much
// had reached this machine (the browser hands the stream over in chunks,
// so the 1000 bytes the site sent, short of one, are not counted), and to
// retry with a longer deadline.
func TestARemoteDownloadTheDeadlineEndsSaysHowMuchArrived(t *testing.T) {
	requireBrowser(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	site := httptest.NewServer(withRoute(`<title>files</title>`, "/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="slow.bin"`)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "2000")
		w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(site.Close)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Token: "s3cret-t0ken"})
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 0)
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	if _, err := tab.Navigate(ctx, site.URL+"/"); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := tab.WaitDownload(short, func(ctx context.Context) error { _, err := tab.Navigate(ctx, site.URL+"/slow"); return err })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "of 2000 bytes had reached this machine") || !strings.Contains(err.Error(), "trigger the download again with a longer deadline") {
		t.Errorf("a remote WaitDownload whose deadline ended part way: %v; want the deadline's error saying how much of the 2000 bytes had reached this machine and to retry with a longer deadline", err)
	}
}

// The browser reports a download (Browser.downloadWillBegin, on its own
// session) with nothing ordering it after the tab's navigation it aborted:
// on a loaded machine the report came after Navigate had waited 250 ms,
// and the hint said the server sent no page and began no download.
func TestANavigationToADownloadReportedLateStillSaysItIsADownload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, tab := fakeTab(t)
		ctx := context.Background()
		b.Delay("Browser.downloadWillBegin", 600*time.Millisecond)
		b.Handle("Page.navigate", func(c *cdptest.Call) (any, error) {
			b.Emit("", "Browser.downloadWillBegin", map[string]any{
				"frameId": tab.ID(), "guid": "late-guid", "url": "https://fake.test/r.csv", "suggestedFilename": "r.csv",
			})
			return map[string]any{"frameId": tab.ID(), "errorText": "net::ERR_ABORTED"}, nil
		})
		_, err := tab.Navigate(ctx, "https://fake.test/r.csv")
		if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "answers with a file to download") {
			t.Errorf("Navigate to a download the browser reported 600 ms late: %v; want ErrNavigation whose hint says the browser is saving a file", err)
		}
	})
}

// A navigation the server answers with no page (a 204) and no download
// says so, after the wait for a download that never comes.
func TestANavigationThatBeganNoDownloadSaysTheServerSentNoPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, tab := fakeTab(t)
		ctx := context.Background()
		b.Handle("Page.navigate", func(c *cdptest.Call) (any, error) {
			return map[string]any{"frameId": tab.ID(), "errorText": "net::ERR_ABORTED"}, nil
		})
		_, err := tab.Navigate(ctx, "https://fake.test/no-content")
		if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "the server sent no page to show") {
			t.Errorf("Navigate to a URL with no page and no download: %v; want ErrNavigation whose hint says the server sent no page", err)
		}
	})
}
