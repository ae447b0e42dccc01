package browserpool_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestDownloadsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)
	tab := e.tab(t, "/download.html")
	s := snap(t, tab, browserpool.SnapshotOptions{})
	dir := e.sess.DownloadDir()
	download := func(t *testing.T, link string) (browserpool.Download, error) {
		t.Helper()
		r := ref(t, s, "link", link)
		return tab.WaitDownload(ctxT(t), func(ctx context.Context) error { return tab.Click(ctx, r) })
	}

	t.Run("a clicked download lands in the session's downloads dir under its name", func(t *testing.T) {
		dl, err := download(t, "Report")
		if err != nil {
			t.Fatal(err)
		}
		if dl.Path != filepath.Join(dir, "report.csv") || dl.SuggestedName != "report.csv" || dl.Bytes != 13 || dl.TabID != tab.ID() {
			t.Errorf("Download = %+v, want %s/report.csv of 13 bytes", dl, dir)
		}
		if b, err := os.ReadFile(dl.Path); err != nil || string(b) != "id,value\n1,2\n" {
			t.Errorf("file content %q, %v", b, err)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the downloads dir made by the first download: %v, %v; want mode 0700", fi.Mode(), err)
		}
		if !strings.HasPrefix(dir, e.sess.Info().OutputDir+string(filepath.Separator)) {
			t.Errorf("DownloadDir %s is not inside the output dir %s", dir, e.sess.Info().OutputDir)
		}
		if strings.Contains(dl.URL, "s3cr3t") || !strings.Contains(dl.URL, "token=REDACTED") {
			t.Errorf("Download.URL %q shows the token", dl.URL)
		}
	})

	t.Run("a second download of the same name gets a new name and overwrites nothing", func(t *testing.T) {
		dl, err := download(t, "Report")
		if err != nil {
			t.Fatal(err)
		}
		if dl.Path != filepath.Join(dir, "report (1).csv") {
			t.Errorf("second report.csv went to %s, want report (1).csv", dl.Path)
		}
	})

	t.Run("hostile suggested names stay plain names inside the downloads dir", func(t *testing.T) {
		for _, link := range []string{"Climbing name", "Absolute name", "Dots only"} {
			dl, err := download(t, link)
			if err != nil {
				t.Fatalf("%s: %v", link, err)
			}
			base := filepath.Base(dl.Path)
			t.Logf("%s: suggested %q, saved as %q", link, dl.SuggestedName, base)
			if filepath.Dir(dl.Path) != dir || strings.HasPrefix(base, ".") || strings.ContainsAny(base, `/\`) {
				t.Errorf("%s (suggested %q) landed at %s", link, dl.SuggestedName, dl.Path)
			}
		}
		entries, err := os.ReadDir(filepath.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if en.Name() != "downloads" {
				t.Errorf("something landed next to the downloads dir: %s", en.Name())
			}
		}
	})

	t.Run("a navigation to a file, as the trigger, downloads it (its aborted load is no error)", func(t *testing.T) {
		var href string
		if err := tab.Evaluate(ctxT(t), `document.querySelector('a').href.replace('report.csv', 'navigated.csv')`, &href); err != nil {
			t.Fatal(err)
		}
		dl, err := tab.WaitDownload(ctxT(t), func(ctx context.Context) error { _, err := tab.Navigate(ctx, href); return err })
		if err != nil {
			t.Fatalf("WaitDownload with Navigate as the trigger: %v", err)
		}
		if dl.Path != filepath.Join(dir, "navigated.csv") {
			t.Errorf("Download = %+v, want %s/navigated.csv", dl, dir)
		}
	})

	t.Run("a download cut short is ErrDownloadFailed", func(t *testing.T) {
		_, err := download(t, "Broken")
		if !errors.Is(err, browserpool.ErrDownloadFailed) {
			t.Errorf("error = %v, want ErrDownloadFailed", err)
		}
		// Chromium's cancel reports 0 bytes received; 5 arrived.
		if strings.Contains(err.Error(), "after 0 of") || !strings.Contains(err.Error(), "cancelled before it completed (the site announced 1000 bytes)") {
			t.Errorf("error = %v, want it not to claim 0 bytes arrived", err)
		}
	})

	t.Run("no download within the deadline is a context error saying so", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
		defer cancel()
		_, err := tab.WaitDownload(ctx, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error = %v, want DeadlineExceeded", err)
		}
	})
}

// Output dirs are made on first use: a session that writes no artifact
// leaves no output/<id> (nor output/<id>/downloads) behind after a clean
// close (issue 20 item 5, issue 13 item 7).
func TestASessionWithoutArtifactsLeavesNoOutputDir(t *testing.T) {
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if err := mustTab(t, ctx, s).Evaluate(ctx, "1", nil); err != nil {
		t.Fatal(err)
	}
	out := s.Info().OutputDir
	if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("while the session is open: output dir %s: %v, want it absent", out, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(out); !errors.Is(err, os.ErrNotExist) {
		entries, _ := os.ReadDir(out)
		t.Errorf("after a clean close: output dir %s: %v (entries %v), want it absent", out, err, entries)
	}
}

func TestADownloadWhoseTriggerOpensAPageSaysSoInsteadOfWaitingItsTimeoutOut(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`<title>not found</title>`))
		case "/mirror": // starts its file a moment after it loads
			w.Write([]byte(`<title>mirror</title><p>Your download begins shortly</p><script>setTimeout(() => location.href = "/file", 1000)</script>`))
		case "/file":
			w.Header().Set("Content-Disposition", `attachment; filename="f.txt"`)
			w.Write([]byte("f"))
		default:
			w.Write([]byte(`<title>files</title><a href="/missing">Broken link</a> <a href="/mirror">Mirror</a>`))
		}
	})
	clickLink := func(name string) func(context.Context) error {
		r := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", name)
		return func(ctx context.Context) error { return tab.Click(ctx, r) }
	}
	// Without the check it waited for DefaultDownloadTimeout; the test's
	// deadline stops it well before, as an error of another kind.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := tab.WaitDownload(wctx, clickLink("Broken link"))
	if !errors.Is(err, browserpool.ErrDownloadFailed) || !strings.Contains(err.Error(), "opened a page") || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("WaitDownload whose click opened a 404 page: %v; want ErrDownloadFailed naming the page and its status", err)
	}

	if _, err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatal(err)
	}
	dl, err := tab.WaitDownload(wctx, clickLink("Mirror"))
	if err != nil || dl.SuggestedName != "f.txt" {
		t.Errorf("WaitDownload through a page that starts its file itself: %+v, %v; want f.txt", dl, err)
	}
}

func TestADownloadNobodyWaitedForIsSavedUnderItsNameAndListed(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/file" {
			w.Header().Set("Content-Disposition", `attachment; filename="notes.txt"`)
			w.Write([]byte("notes"))
			return
		}
		w.Write([]byte(`<title>files</title><a href="/file">Notes</a>`))
	})
	s := tab.Session()
	notes := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Notes")
	// Two plain clicks, then a WaitDownload racing the session's own
	// watch for the same file: each lands once, under its name.
	for range 2 {
		if err := tab.Click(ctx, notes); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the two clicked downloads in Session.Downloads", func() bool { return len(s.Downloads()) == 2 })
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, notes) })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range s.Downloads() {
		names = append(names, filepath.Base(d.Path))
		if b, err := os.ReadFile(d.Path); err != nil || string(b) != "notes" || d.TabID != tab.ID() || d.SuggestedName != "notes.txt" {
			t.Errorf("listed download %+v: content %q, %v; want notes.txt of this tab holding the file", d, b, err)
		}
	}
	if diff := cmp.Diff([]string{"notes.txt", "notes (1).txt", "notes (2).txt"}, names); diff != "" {
		t.Errorf("Session.Downloads' files (-want +got):\n%s", diff)
	}
	if dl.Path != filepath.Join(s.DownloadDir(), "notes (2).txt") {
		t.Errorf("WaitDownload's file %s; want the third, notes (2).txt", dl.Path)
	}
	entries, err := os.ReadDir(s.DownloadDir())
	if err != nil || len(entries) != 3 {
		t.Errorf("the downloads dir holds %d files (%v); want the 3 downloads and nothing under the browser's names", len(entries), err)
	}
}

func TestSessionDownloadsListsAFakeBrowsersDownloadsToo(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "Files", cdptest.Link("Export", "/export.csv").Downloads("export.csv", []byte("a,b\n")))
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{}))
	tab := mustTab(t, ctx, s)
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Export")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the download in Session.Downloads", func() bool { return len(s.Downloads()) == 1 })
	d := s.Downloads()[0]
	if b, err := os.ReadFile(d.Path); err != nil || string(b) != "a,b\n" || filepath.Base(d.Path) != "export.csv" || d.TabID != tab.ID() {
		t.Errorf("the listed download %+v holds %q (%v); want export.csv of this tab", d, b, err)
	}
}

func TestAWaitDownloadWithoutADownloadOrWithAFailingTriggerSaysWhichItWas(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>nothing to download</title>`)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := tab.WaitDownload(short, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no download started") || strings.Contains(err.Error(), "before the browser answered") {
		t.Errorf("WaitDownload that saw no download before the caller's deadline: %v; want the deadline's class saying no download started", err)
	}
	// Without a trigger, the likely cause is a click made before the call:
	// the hint says to pass it as the trigger.
	var he *browserpool.Error
	if !errors.As(err, &he) || !strings.Contains(he.Hint, "pass that click as the trigger") {
		t.Errorf("WaitDownload(ctx, nil) that saw no download: %v; want its hint to say a click made before the call is to be passed as the trigger", err)
	}
	short2, cancel2 := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel2()
	_, err = tab.WaitDownload(short2, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, browserpool.ErrDownloadFailed) || !strings.Contains(err.Error(), "no download started") {
		t.Errorf("WaitDownload whose trigger the deadline cut short: %v; want the deadline's class saying no download started, not a failed trigger", err)
	}
	boom := errors.New("the button was not found")
	_, err = tab.WaitDownload(ctx, func(context.Context) error { return boom })
	var be *browserpool.Error
	if !errors.Is(err, browserpool.ErrDownloadFailed) || !errors.Is(err, boom) || !errors.As(err, &be) || be.Tab != tab.ID() {
		t.Errorf("WaitDownload whose trigger failed: %v; want an ErrDownloadFailed *Error naming the tab, wrapping the trigger's error", err)
	}
}

// windowsAndFramesSite answers a page whose downloads start in a window it
// opens (a target=_blank link, window.open) and in a frame of another site
// (localhost: a process of its own), at other, the same server's port.
func windowsAndFramesSite(other *string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dl":
			w.Header().Set("Content-Disposition", `attachment; filename="`+r.URL.Query().Get("name")+`.txt"`)
			w.Write([]byte("content"))
		case "/frame":
			w.Write([]byte(`<title>frame</title><a href="/dl?name=framed">Framed file</a>`))
		default:
			w.Write([]byte(`<title>downloads</title>
<a href="/dl?name=blank" target="_blank">Blank file</a>
<button onclick="window.open('/dl?name=opened')">Opened file</button>
<iframe title="other site" src="` + *other + `/frame" width=400 height=80></iframe>`))
		}
	}
}

func TestADownloadInAWindowTheTabOpensOrInAFrameOfAnotherSiteIsTheTabs(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	var other string
	tab, srv := servedTab(t, ctx, windowsAndFramesSite(&other))
	other = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if _, err := tab.Navigate(ctx, srv.URL); err != nil { // the frame at other's address now
		t.Fatal(err)
	}
	if err := tab.WaitLoad(ctx); err != nil {
		t.Fatal(err)
	}
	// The frame's link, clicked where it is, without a snapshot having
	// attached the frame's process.
	var at struct{ X, Y float64 }
	if err := tab.Evaluate(ctx, `(() => { const r = document.querySelector("iframe").getBoundingClientRect(); return {X: r.x + 30, Y: r.y + 18} })()`, &at); err != nil {
		t.Fatal(err)
	}
	triggers := []struct {
		name    string
		trigger func(ctx context.Context) error
	}{
		{"blank.txt", func(ctx context.Context) error {
			return tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Blank file"))
		}},
		{"opened.txt", func(ctx context.Context) error {
			return tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Opened file"))
		}},
		{"framed.txt", func(ctx context.Context) error { return tab.ClickAt(ctx, at.X, at.Y) }},
	}
	var want []string
	for _, tr := range triggers {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		dl, err := tab.WaitDownload(wctx, tr.trigger)
		cancel()
		if err != nil || dl.TabID != tab.ID() || filepath.Base(dl.Path) != tr.name {
			t.Errorf("WaitDownload for %s: %+v, %v; want it saved under its name, with the tab's id", tr.name, dl, err)
		}
		want = append(want, tr.name+" "+tab.ID())
	}
	var got []string
	for _, dl := range tab.Session().Downloads() {
		got = append(got, filepath.Base(dl.Path)+" "+dl.TabID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Session.Downloads (-want +got), each with the tab that waited for it:\n%s", diff)
	}
}

// TestAWaitDownloadOfATabThatOpenedAWindowLeavesAnotherTabsFrameDownload:
// two holders share a session; one waits for a download and its trigger
// opens a window (whose page is slow), while a same-site frame of the
// other's tab downloads a file. The file is the other tab's, not the
// waiter's.
func TestAWaitDownloadOfATabThatOpenedAWindowLeavesAnotherTabsFrameDownload(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	release := make(chan struct{})
	mine, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dl":
			w.Header().Set("Content-Disposition", `attachment; filename="theirs.txt"`)
			w.Write([]byte("content"))
		case "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/framed":
			w.Write([]byte(`<title>framed</title><iframe src="/inner"></iframe>`))
		default:
			w.Write([]byte(`<title>mine</title><a href="/slow" target="_blank">Slow page</a>`))
		}
	})
	defer close(release)
	s := mine.Session()
	theirs, err := s.OpenTab(ctx, srv.URL+"/framed")
	if err != nil {
		t.Fatal(err)
	}
	link := ref(t, snap(t, mine, browserpool.SnapshotOptions{}), "link", "Slow page")
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	dl, err := mine.WaitDownload(wctx, func(ctx context.Context) error {
		if err := mine.Click(ctx, link); err != nil {
			return err
		}
		return theirs.Evaluate(ctx, `document.querySelector("iframe").src = "/dl"`, nil)
	})
	if err == nil {
		t.Errorf("WaitDownload of the tab that opened a window took %s, a download of another tab's frame", dl.Path)
	}
	waitFor(t, "the other tab's download in Session.Downloads", func() bool {
		for _, d := range s.Downloads() {
			if filepath.Base(d.Path) == "theirs.txt" {
				return true
			}
		}
		return false
	})
}

// TestAWaitDownloadInAWindowTheTabOpensDoesNotWaitOnABusyOtherTab: the
// check that another tab of the session does not hold the download's frame
// asks each other tab for its frames; one whose page loops in a script
// answers nothing, and the download must not wait on it.
func TestAWaitDownloadInAWindowTheTabOpensDoesNotWaitOnABusyOtherTab(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	var other string
	tab, srv := servedTab(t, ctx, windowsAndFramesSite(&other))
	other = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	busy, err := tab.Session().OpenTab(ctx, other+"/frame")
	if err != nil {
		t.Fatal(err)
	}
	if err := busy.Evaluate(ctx, `setTimeout(() => { for (;;) {} }, 0)`, nil); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	dl, err := tab.WaitDownload(wctx, func(ctx context.Context) error {
		return tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Blank file"))
	})
	if err != nil || filepath.Base(dl.Path) != "blank.txt" {
		t.Errorf("WaitDownload of a window's download with another tab busy: %+v, %v; want blank.txt", dl, err)
	}
}
