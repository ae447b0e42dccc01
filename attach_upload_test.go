package browserpool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// TestAnUploadInTheUsersBrowserLeavesItsFileChoosersToTheUser: in a
// browser the user runs, the pool intercepts file choosers only for its
// Upload's click; after it, a click on the same button opens a chooser the
// pool does not hold (the user's own, in a browser with a screen).
func TestAnUploadInTheUsersBrowserLeavesItsFileChoosersToTheUser(t *testing.T) {
	t.Parallel()
	site := startSite(t)
	chrome := startUserChrome(t, "about:blank")
	p := newAttachPool(t)
	ctx := ctxT(t)
	s, err := p.Attach(ctx, chrome.endpoint())
	if err != nil {
		t.Fatal(err)
	}
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
