package browserpool_test

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool"
)

var updateGolden = flag.Bool("update", false, "rewrite the snapshot goldens under testdata/")

// refNumber matches a ref in a snapshot's text.
var refNumber = regexp.MustCompile(`@e[0-9]+`)

// renumbered writes a snapshot's refs as @e1, @e2… in order of first
// appearance: ref numbers are unique across a session's tabs, so a tab's
// first ref is not @e1 when another tab of the session showed refs first.
func renumbered(text string) string {
	seen := map[string]string{}
	return refNumber.ReplaceAllStringFunc(text, func(r string) string {
		if n, ok := seen[r]; ok {
			return n
		}
		seen[r] = fmt.Sprintf("@e%d", len(seen)+1)
		return seen[r]
	})
}

// golden compares got, renumbered, with the file testdata/name (rewriting
// it with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = renumbered(got)
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestSnapshotsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("a fixed page prints the same text every time", func(t *testing.T) {
		tab := e.tab(t, "/golden.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		golden(t, "golden.snapshot.txt", s.Text)
		if s.Title != "Golden page" || s.URL != e.site.URL+"/golden.html" || s.Frames != 1 {
			t.Errorf("Title, URL, Frames = %q, %q, %d", s.Title, s.URL, s.Frames)
		}
		// The interactive view of a fresh tab: the same elements, flat.
		tab2 := e.tab(t, "/golden.html")
		golden(t, "golden.interactive.txt", snap(t, tab2, browserpool.SnapshotOptions{Interactive: true}).Text)
	})

	t.Run("refs are stable across snapshots and stale when not shown or after navigating", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		s1 := snap(t, tab, browserpool.SnapshotOptions{})
		s2 := snap(t, tab, browserpool.SnapshotOptions{})
		if diff := cmp.Diff(s1.Refs, s2.Refs); diff != "" {
			t.Errorf("refs changed between two snapshots of an unchanged page (-first +second):\n%s", diff)
		}
		buy := ref(t, s1, "button", "Buy now")
		if err := tab.Evaluate(ctx, `document.body.insertAdjacentHTML('afterbegin', '<button>New first</button>')`, nil); err != nil {
			t.Fatal(err)
		}
		s3 := snap(t, tab, browserpool.SnapshotOptions{})
		if got := ref(t, s3, "button", "Buy now"); got != buy {
			t.Errorf("Buy now was %s and is now %s: refs must stay with their element", buy, got)
		}
		if n := ref(t, s3, "button", "New first"); n == "@e1" || n == buy {
			t.Errorf("a new element got the used ref %s", n)
		}
		// A snapshot that leaves Buy now out (truncated) makes its ref stale.
		small := snap(t, tab, browserpool.SnapshotOptions{MaxChars: 150})
		if small.Find("button", "Buy now") != "" {
			t.Fatalf("a 150-character snapshot still shows Buy now:\n%s", small.Text)
		}
		if err := tab.Hover(ctx, buy); !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("a ref the latest snapshot left out: error = %v, want ErrStaleRef", err)
		}
		s4 := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Evaluate(ctx, "location.href = '/golden.html'", nil); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitLoad(ctx); err != nil {
			t.Fatal(err)
		}
		if err := tab.Hover(ctx, ref(t, s4, "button", "Buy now")); !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("a ref from before the page navigated: error = %v, want ErrStaleRef", err)
		}
	})

	t.Run("a cross-site navigation invalidates refs even though node ids restart", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		// Another site is another renderer process, whose backend node ids
		// start again from 1: only the navigation tells the refs apart.
		if _, err := tab.Navigate(ctx, e.site.Cross+"/covered.html"); err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Refs {
			if err := tab.Hover(ctx, r.Ref); !errors.Is(err, browserpool.ErrStaleRef) {
				t.Errorf("Hover(%s) after a cross-site navigation: error = %v, want ErrStaleRef", r.Ref, err)
			}
		}
	})

	t.Run("truncation keeps the bound, counts what it left out and gives it no refs", func(t *testing.T) {
		tab := e.tab(t, "/big?n=300")
		full := snap(t, tab, browserpool.SnapshotOptions{MaxChars: -1})
		s := snap(t, tab, browserpool.SnapshotOptions{MaxChars: 2000})
		if len(s.Text) > 2000 || s.Omitted == 0 || s.Lines+s.Omitted != full.Lines {
			t.Errorf("MaxChars 2000: %d characters, %d lines shown, %d omitted; the full snapshot has %d lines", len(s.Text), s.Lines, s.Omitted, full.Lines)
		}
		lines := strings.Split(strings.TrimSpace(s.Text), "\n")
		if last := lines[len(lines)-1]; !strings.HasPrefix(last, "[truncated: ") {
			t.Errorf("the last line %q does not say the snapshot was truncated", last)
		}
		if n := strings.Count(s.Text, "@e"); n != len(s.Refs) {
			t.Errorf("the text shows %d refs and Refs lists %d", n, len(s.Refs))
		}
		last := full.Refs[len(full.Refs)-1].Ref
		if err := tab.Click(ctxT(t), last); !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("clicking %s, left out by the truncated snapshot: error = %v, want ErrStaleRef", last, err)
		}
		i := snap(t, tab, browserpool.SnapshotOptions{Interactive: true, MaxChars: -1})
		if len(i.Refs) != 200 || strings.Contains(i.Text, "Text ") || strings.Contains(i.Text, "  -") {
			t.Errorf("interactive snapshot of 100 links and 100 buttons: %d refs, text:\n%s", len(i.Refs), cutLines(i.Text, 5))
		}
	})

	t.Run("a snapshot as long as its MaxChars in characters, not bytes, is printed whole", func(t *testing.T) {
		tab := e.tab(t, "/golden.html")
		if err := tab.Evaluate(ctxT(t), `document.body.innerHTML = '<h1>你好世界，欢迎光临</h1><p>Ünïcödé ✓ 🎉 价格：￥1,299</p><button>购买</button>'`, nil); err != nil {
			t.Fatal(err)
		}
		full := snap(t, tab, browserpool.SnapshotOptions{MaxChars: -1})
		n := utf8.RuneCountInString(full.Text)
		s := snap(t, tab, browserpool.SnapshotOptions{MaxChars: n})
		if diff := cmp.Diff(full.Text, s.Text); diff != "" || s.Omitted != 0 || len(s.Refs) != 1 {
			t.Errorf("MaxChars %d, the whole text's length in characters (%d bytes): %d omitted, %d refs (-whole +got):\n%s", n, len(full.Text), s.Omitted, len(s.Refs), diff)
		}
	})

	t.Run("iframes of another origin and another site are included", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/frames.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		want := `- heading "Frames" [level=1]
- text "log:"
- iframe "Same origin"
  - text "(scroll down)"
  - button "Press same" @e1
  - textbox "Field same" @e2
- iframe "Other origin"
  - text "(scroll down)"
  - button "Press other" @e3
  - textbox "Field other" @e4
- iframe "Cross site"
  - text "(scroll down)"
  - button "Press cross" @e5
  - textbox "Field cross" @e6
`
		if diff := cmp.Diff(want, renumbered(s.Text)); diff != "" {
			t.Errorf("snapshot (-want +got):\n%s", diff)
		}
		// The cross-site frame really is out of process: its own target.
		targets, err := e.sess.Browser().Target.GetTargets(ctx, target.NewGetTargetsArgs())
		if err != nil {
			t.Fatal(err)
		}
		oopif := 0
		for _, ti := range targets.TargetInfos {
			if ti.Type == "iframe" && strings.HasPrefix(ti.URL, e.site.Cross) {
				oopif++
			}
		}
		if oopif != 1 || s.Frames != 4 {
			t.Errorf("%d out-of-process iframe targets for %s, %d documents in the snapshot; want 1 and 4", oopif, e.site.Cross, s.Frames)
		}
	})
}

func cutLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// BenchmarkScreenshot measures a PNG of the viewport of a plain page.
func BenchmarkScreenshot(b *testing.B) {
	e := newAgentEnv(b)
	tab := e.tab(b, "/golden.html")
	ctx := ctxT(b)
	for b.Loop() {
		shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
		if err != nil {
			b.Fatal(err)
		}
		os.Remove(shot.Path)
	}
}

// TestASnapshotOfATabALinkJustOpenedReadsItsPageWhole: a target=_blank
// link's tab, read as soon as it is listed, while its server still sends
// the page: the snapshot waits for the document to be parsed, and its refs
// work at once.
func TestASnapshotOfATabALinkJustOpenedReadsItsPageWhole(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	opener, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/popup" {
			w.Write([]byte(`<!doctype html><title>Popup</title><h1>Popup</h1>`))
			w.(http.Flusher).Flush()
			time.Sleep(500 * time.Millisecond) // the rest of the page comes later
			w.Write([]byte(`<button onclick="document.title = 'clicked'">Close me</button>`))
			return
		}
		w.Write([]byte(`<title>opener</title><a href="/popup" target="_blank">Open popup</a>`))
	})
	s := opener.Session()
	if err := opener.Click(ctx, ref(t, snap(t, opener, browserpool.SnapshotOptions{}), "link", "Open popup")); err != nil {
		t.Fatal(err)
	}
	popup, err := s.Tab(ctx, popupID(t, ctx, opener))
	if err != nil {
		t.Fatal(err)
	}
	sn, err := popup.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	button := sn.Find("button", "Close me")
	if button == "" {
		t.Fatalf("the popup's first snapshot lacks its button: %q", sn.Text)
	}
	if err := popup.Click(ctx, button); err != nil {
		t.Errorf("Click on the popup's button from its first snapshot: %v", err)
	}
}

func TestListItemsWithARoleOfTheirOwnShowNoBullets(t *testing.T) {
	ctx := ctxT(t)
	site := serve(t, map[string]string{"/": `<!doctype html><title>Lists</title>
<ul role="listbox" aria-label="Size"><li role="option">Small</li><li role="option" aria-selected="true">Large</li></ul>
<ul role="menu" aria-label="File"><li role="menuitem">Open</li><li role="menuitem">Save</li></ul>
<ul><li>A plain item</li><li>• a bullet the page wrote</li></ul>`})
	p := newRealPool(t, browserpool.Config{})
	tab, err := mustOpen(t, ctx, p).OpenTab(ctx, site+"/")
	if err != nil {
		t.Fatal(err)
	}
	want := `- listbox "Size" @e1
  - option "Small" @e2
  - option "Large" @e3 [selected]
- menu "File"
  - menuitem "Open" @e4
  - menuitem "Save" @e5
- text "A plain item"
- text "• a bullet the page wrote"
`
	if diff := cmp.Diff(want, snap(t, tab, browserpool.SnapshotOptions{}).Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}
