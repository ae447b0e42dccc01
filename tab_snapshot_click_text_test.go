package browserpool_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// refLines lists a snapshot's refs as "role name".
func refLines(s browserpool.Snapshot) []string {
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+r.Name)
	}
	return got
}

// A clickable element named by its text reads it as the page draws it:
// text an inline tag splits joins without a space, a space or a block's
// edge between pieces gives one.
func TestAClickablesNameJoinsItsTextAsThePageDrawsIt(t *testing.T) {
	_, tab, _ := htmlTab(t, `<!doctype html><title>J</title>
<div onclick="void 0">bo<b>ld</b></div>
<div onclick="void 0">Price: <b>$19.99</b></div>
<div onclick="void 0"><div>Title</div><div>Sub</div></div>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := []string{"clickable bold", "clickable Price: $19.99", "clickable Title Sub"}
	if diff := cmp.Diff(want, refLines(s)); diff != "" {
		t.Errorf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
}

// A control that shows only an icon, with no listener the page's DOM
// shows, is named by its title, else its aria-label-like attribute, else
// its test id.
func TestAnIconControlWithoutAListenerIsNamedByItsTitleOrTestID(t *testing.T) {
	_, tab, _ := htmlTab(t, `<!doctype html><title>I</title>
<div role="button" tabindex="0" title="Close"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></div>
<button data-qa="open-menu"><img src="x.svg" width="10" height="10"></button>
<button data-test="next_page"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></button>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := []string{"button Close", "button open menu", "button next page"}
	if diff := cmp.Diff(want, refLines(s)); diff != "" {
		t.Errorf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
}

// A custom dropdown drawn inside an aria-hidden container offers its
// clickable options with their text; what under it nothing listens to
// stays hidden.
func TestAClickableDrawnUnderAriaHiddenIsOfferedWithItsText(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<!doctype html><title>D</title>
<button>Visible</button>
<div aria-hidden="true"><p>Decoration</p><div id="a">Option A</div><div id="b">Option <b>B</b></div></div>
<p id="log"></p>
<script>a.onclick = () => log.textContent += 'a '; b.onclick = () => log.textContent += 'b ';</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := []string{"button Visible", "clickable Option A", "clickable Option B"}
	if diff := cmp.Diff(want, refLines(s)); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if err := tab.Click(ctx, s.Find(browserpool.ClickableRole, "Option B")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the page to see the click on Option B", func() bool { return eval[string](t, tab, "log.textContent") == "b " })
}

// A clickable element drawn under aria-hidden prints where the page has
// it, between its neighbours, and its ref's number follows that order.
func TestAClickableDrawnUnderAriaHiddenPrintsInPageOrder(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<!doctype html><title>O</title>
<button>Before</button>
<div aria-hidden="true"><div id="one">Hidden one</div></div>
<button>After</button>
<main><p>Para</p><div aria-hidden="true"><span id="two">Icon two</span></div><a href="/x">Link</a></main>
<p id="log"></p>
<script>one.onclick = () => log.textContent += '1 '; two.onclick = () => log.textContent += '2 ';</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := []string{"button Before", "clickable Hidden one", "button After", "clickable Icon two", "link Link"}
	if diff := cmp.Diff(want, refLines(s)); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if ref := s.Find(browserpool.ClickableRole, "Hidden one"); ref != "@e2" {
		t.Errorf("Hidden one's ref is %s, want @e2 (the second in page order):\n%s", ref, s.Text)
	}
	if err := tab.Click(ctx, s.Find(browserpool.ClickableRole, "Icon two")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the page to see the click on Icon two", func() bool { return eval[string](t, tab, "log.textContent") == "2 " })
}
