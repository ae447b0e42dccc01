// Room: files in a browser the user runs (an attached session): its file
// choosers left to the user after an Upload, and downloads and uploads
// over CDP when the browser is on another machine.

package browserpool_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// attachUserChrome starts a user's Chrome and returns a new pool's session
// attached to it.
func attachUserChrome(t *testing.T) (*browserpool.Session, *userChrome) {
	t.Helper()
	chrome := startUserChrome(t, "about:blank")
	s, err := newAttachPool(t).Attach(ctxT(t), chrome.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	return s, chrome
}

// TestAnUploadInTheUsersBrowserLeavesItsFileChoosersToTheUser: in a
// browser the user runs, the pool intercepts file choosers only for its
// Upload's click; after it, a click on the same button opens a chooser the
// pool does not hold (the user's own, in a browser with a screen).
func TestAnUploadInTheUsersBrowserLeavesItsFileChoosersToTheUser(t *testing.T) {
	t.Parallel()
	site := startSite(t)
	ctx := ctxT(t)
	s, _ := attachUserChrome(t)
	tab, err := s.OpenTab(ctx, site.URL+"/upload.html")
	if err != nil {
		t.Fatal(err)
	}
	photos := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Choose photos")
	file := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, photos, file); err != nil {
		t.Fatal(err)
	}
	waitJS(t, tab, "document.getElementById('out').textContent === 'hidden: a.txt/5'")
	if err := tab.Click(ctx, photos); err != nil {
		t.Fatal(err)
	}
	if got := traced(tab, "click"); len(got) == 0 || strings.Contains(got[len(got)-1], "file chooser") {
		t.Errorf("the click after Upload traced %q; want a click whose file chooser the pool left to the user's browser", got)
	}
}

// An attached browser on another machine (host.docker.internal:9222)
// does not share this machine's files: downloads and uploads go over CDP,
// as with a fleet lease. A test binds loopback only, so it forces that mode
// on a local browser and checks the files arrive whole both ways.
func TestAnAttachedBrowserOnAnotherMachineMovesFilesOverCDP(t *testing.T) {
	t.Parallel()
	site := startFilesSite(t)
	ctx := ctxT(t)
	s, chrome := attachUserChrome(t)
	if browserpool.FilesRemote(s) {
		t.Fatalf("a browser attached on %s moves files over CDP; want the local paths", chrome.endpoint())
	}
	browserpool.SetFilesRemote(s)
	tab, err := s.OpenTab(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("link", "Report")) })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dl.Path); err != nil || !bytes.Equal(got, filesBodies["/attachment"]) || filepath.Dir(dl.Path) != s.DownloadDir() {
		t.Errorf("download %+v holds %q, %v; want report.csv in DownloadDir holding %q", dl, got, err, filesBodies["/attachment"])
	}
	local := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(local, []byte("from this machine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, snap.Find("button", "Pick files"), local); err != nil {
		t.Fatal(err)
	}
	var got []uploadedFile
	if err := tab.Evaluate(ctx, "window.__files", &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "notes.txt" || got[0].Size != len("from this machine\n") {
		t.Errorf("the page holds %+v; want notes.txt, %d bytes", got, len("from this machine\n"))
	}
}
