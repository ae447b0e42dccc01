package browserpool_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// hiddenControlPages are the ways pages hide a checkbox or radio behind a
// label of their own drawing, each as sites write them.
var hiddenControlPages = map[string]string{
	// Tailwind's toggle: the input is sr-only inside a positioned label.
	"tailwind toggle": `<label style="position:relative;display:inline-flex;align-items:center;cursor:pointer">
		<input type="checkbox" id="c" style="position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border-width:0">
		<span style="width:44px;height:24px;background:#ccc;border-radius:12px;display:inline-block"></span>
		<span style="margin-left:8px">Dark mode</span></label>`,
	// An sr-only input before its label (for=), in a padded card.
	"sr-only before its label": `<div style="padding:40px;position:relative"><p>Settings</p>
		<input type="checkbox" id="c" style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0);top:0;left:0">
		<label for="c" style="display:inline-block;padding:8px;border:1px solid #999">Dark mode</label></div>`,
	// Bootstrap 5's btn-check: clipped, and without pointer events.
	"bootstrap btn-check": `<input type="checkbox" id="c" autocomplete="off" style="position:absolute;clip:rect(0,0,0,0);pointer-events:none">
		<label for="c" style="display:inline-block;padding:6px 12px;border:1px solid #0d6efd">Dark mode</label>`,
	// The classic custom checkbox: the input has no size at all.
	"zero-size input in its label": `<label style="display:block;position:relative;padding-left:35px;cursor:pointer">Dark mode
		<input type="checkbox" id="c" style="position:absolute;opacity:0;cursor:pointer;height:0;width:0">
		<span style="position:absolute;top:0;left:0;height:25px;width:25px;background:#eee"></span></label>`,
	// A control the page draws over with its own box, the input under it.
	"input under a drawn box": `<label style="position:relative;display:inline-block;padding:4px">
		<input type="checkbox" id="c" style="margin:0">
		<span style="position:absolute;inset:0;background:#fff;border:1px solid #333"></span>
		<span style="position:relative">Dark mode</span></label>`,
}

func TestAClickOnACheckboxThePageHidesBehindItsLabelTogglesIt(t *testing.T) {
	for name, page := range hiddenControlPages {
		t.Run(name, func(t *testing.T) {
			ctx, tab, _ := htmlTab(t, `<title>label</title>`+page+`<p id="log"></p><script>c.addEventListener('change', () => log.textContent += 'change ')</script>`)
			box := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "checkbox", "Dark mode")
			if err := tab.Click(ctx, box); err != nil {
				t.Fatalf("Click(%s): %v", box, err)
			}
			if got := eval[bool](t, tab, "c.checked"); !got {
				t.Errorf("after one click the checkbox is not checked")
			}
			if err := tab.Click(ctx, box); err != nil {
				t.Fatalf("second Click(%s): %v", box, err)
			}
			if got := eval[string](t, tab, "c.checked + ' ' + log.textContent"); got != "false change change " {
				t.Errorf("after two clicks: %q, want it unchecked after two change events", got)
			}
			if name == "input under a drawn box" || name == "bootstrap btn-check" {
				return // the control's centre is on its label: no detour
			}
			clicks := traced(tab, "click")
			via := box + ` checkbox "Dark mode" (through its label: the page draws the control there)`
			want := []string{via, via}
			if diff := cmp.Diff(want, clicks); diff != "" {
				t.Errorf("the clicks' trace (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAHiddenCheckboxWhoseLabelCannotBeClickedEitherSaysWhy(t *testing.T) {
	for name, c := range map[string]struct {
		page string
		want error
		says []string
	}{
		"disabled": {`<label style="position:relative"><input type="checkbox" id="c" disabled style="position:absolute;opacity:0;width:0;height:0"><span>Dark mode</span></label>`,
			browserpool.ErrInvalidArgument, []string{"disabled"}},
		"label under a backdrop": {`<label style="position:relative"><input type="checkbox" id="c" style="position:absolute;opacity:0;width:0;height:0"><span>Dark mode</span></label>
			<div id="backdrop" style="position:fixed;inset:0;background:rgba(0,0,0,.5)">Subscribe?</div>`,
			browserpool.ErrCovered, []string{`(label of the checkbox "Dark mode") is covered at`, `by div#backdrop "Subscribe?" (a fixed overlay over most of the page)`}},
		"no label at all": {`<input type="checkbox" id="c" aria-label="Dark mode" style="position:absolute;opacity:0;width:0;height:0">`,
			browserpool.ErrNotVisible, []string{"no size"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, tab, _ := htmlTab(t, `<title>label</title>`+c.page)
			err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "checkbox", "Dark mode"))
			if !errors.Is(err, c.want) {
				t.Fatalf("Click: %v, want %v", err, c.want)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("Click: %v, want it to say %q", err, s)
				}
			}
			if eval[bool](t, tab, "c.checked") {
				t.Errorf("the checkbox got checked")
			}
		})
	}
}

func TestAClickOnAnElementUnderAStickyHeaderScrollsItOutFromUnderIt(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>sticky</title><style>body{margin:0}</style>
<header style="position:sticky;top:0;height:80px;background:#eee">Home Products</header>
<div style="height:1000px"></div><button onclick="this.textContent='Saved'">Save</button><div style="height:2000px"></div>`)
	save := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Save")
	// The button's top 20 px below the viewport's: under the header, and
	// in view as far as the browser's scrolling into view is concerned.
	eval[float64](t, tab, "window.scrollTo(0, document.querySelector('button').offsetTop - 20), scrollY")
	if err := tab.Click(ctx, save); err != nil {
		t.Fatalf("Click on a button under a sticky header: %v", err)
	}
	if got := eval[string](t, tab, "document.querySelector('button').textContent"); got != "Saved" {
		t.Errorf("the button says %q after the click, want Saved", got)
	}
}

func TestAClickThatOpensANewTabSaysSoInItsTrace(t *testing.T) {
	ctx, tab, srv := htmlTab(t, `<title>links</title><a href="/terms" target="_blank">Terms</a><button>Stay</button>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	for _, name := range []string{"Terms", "Stay"} {
		role := map[string]string{"Terms": "link", "Stay": "button"}[name]
		if err := tab.Click(ctx, ref(t, s, role, name)); err != nil {
			t.Fatalf("Click on %s: %v", name, err)
		}
	}
	clicks := traced(tab, "click")
	want := []string{
		`@e1 link "Terms" (opened a new tab at ` + srv.URL + `/terms: Session.Tabs lists it; this tab stays the one acted on)`,
		`@e2 button "Stay"`,
	}
	if diff := cmp.Diff(want, clicks); diff != "" {
		t.Errorf("the clicks' trace (-want +got):\n%s", diff)
	}
}

func TestACoveredTextFieldOrButtonIsNotClickedThroughItsLabel(t *testing.T) {
	// The widget covers the field and the button, not their labels.
	ctx, tab, _ := htmlTab(t, `<title>chat widget</title><style>*{position:absolute;margin:0}</style>
<label for="q" style="left:10px;top:10px">Search</label><input id="q" style="left:200px;top:10px">
<label for="b" style="left:10px;top:60px">Send</label><button id="b" style="left:200px;top:60px" onclick="document.title = 'button clicked'">Send it</button>
<div id="widget" style="position:fixed;left:150px;top:0;width:400px;height:120px;background:#eee"></div>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	for _, r := range []string{ref(t, s, "textbox", "Search"), ref(t, s, "button", "Send")} {
		if err := tab.Click(ctx, r); !errors.Is(err, browserpool.ErrCovered) || !strings.Contains(err.Error(), "div#widget") {
			t.Errorf("Click(%s) under a widget: %v, want ErrCovered naming the widget", r, err)
		}
	}
	if got := eval[string](t, tab, "document.title"); got != "chat widget" {
		t.Errorf("the page's title is %q: the covered button was clicked", got)
	}
}

func TestHoverAtMovesTheMouseOverWhateverIsAtThePoint(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>rows</title><style>body{margin:0} .row button{visibility:hidden} .row:hover button{visibility:visible}</style>
<div class="row" style="height:40px">Row 1 <button>Edit</button></div>`)
	for _, p := range [][2]float64{{-1, 5}, {math.NaN(), 5}, {5, math.Inf(1)}} {
		if err := tab.HoverAt(ctx, p[0], p[1]); !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("HoverAt(%g, %g): %v, want ErrInvalidArgument", p[0], p[1], err)
		}
	}
	if s := snap(t, tab, browserpool.SnapshotOptions{}); s.Find("button", "Edit") != "" {
		t.Fatalf("the Edit button shows before any hover:\n%s", s.Text)
	}
	if err := tab.HoverAt(ctx, 20, 20); err != nil {
		t.Fatal(err)
	}
	if s := snap(t, tab, browserpool.SnapshotOptions{}); s.Find("button", "Edit") == "" {
		t.Errorf("after HoverAt over the row, its Edit button does not show:\n%s", s.Text)
	}
}
