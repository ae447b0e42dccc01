package browserpool_test

import (
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/domsnapshot"

	"github.com/browserpool/browserpool"
)

var recordAXTrees = flag.Bool("record-axtrees", false, "rewrite internal/axtext/testdata/audit.axtrees.json from real Chromium")

// auditPages are the pages of the snapshot audit, recorded (with
// -record-axtrees) for internal/axtext's unit tests and shown to real
// Chromium by the tests below.
var auditPages = map[string]string{
	"table": `<title>T</title><table><tr><th>Name</th><th>Email</th><th>Phone</th></tr>
<tr><td>Ann</td><td></td><td>555-1</td></tr>
<tr><td>Bob</td><td>bob@x</td><td></td></tr></table>`,
	"hidden":  `<title>Shop</title><div id="root" aria-hidden="true"><h1>Welcome</h1><button>Buy</button><a href="/x">Cart</a></div>`,
	"hidden2": `<title>Shop</title><div id="root" aria-hidden="true"><h1>Welcome</h1><button onclick="document.title='bought'">Buy</button><button>Sell</button></div><button>Visible</button>`,
	"inline": `<title>I</title>
<p>Hello <b>bo</b>ld world</p>
<p>Price: $<span>19</span><sup>.99</sup> per month</p>
<p>Results for <mark>sam</mark>sung phones</p>
<p>Line one<br>Line two</p>
<p>Hello <b>bo</b><i>ld</i> wor<span>ld</span> &amp; &lt;tag&gt; &nbsp; spaced</p>
<p>Change how   your account
     works. <a href="#help">Read the help</a> first.</p>
<ul><li>One</li><li>Two <a href="/x">link</a></li></ul>
<ol><li>First</li><li>Second</li></ol>
<div>Block one</div><div>Block two</div>`,
	"cells": `<title>Big</title><h1>Catalog</h1><table><thead><tr><th>Name</th><th>Price</th><th>Qty</th><th>Action</th></tr></thead><tbody>
<tr><td><a href="/item/0">Item number 0</a></td><td>$0.99</td><td><input aria-label="Qty 0" value="1"></td><td><button>Add to cart</button></td></tr>
<tr><td><a href="/item/1">Item number 1</a></td><td>$1.99</td><td><input aria-label="Qty 1" value="1"></td><td><button>Add to cart</button></td></tr>
</tbody></table>`,
	"values": `<title>V</title>
<progress value="30" max="100" aria-label="Upload"></progress>
<div role="progressbar" aria-valuenow="70" aria-label="Aria progress"></div>
<meter value="0.6" aria-label="Disk"></meter>
<input type="range" aria-label="Volume" value="30">
<select aria-label="Size"><option>S</option><option disabled>M (sold out)</option><option selected>L</option></select>
<select aria-label="Grouped"><optgroup label="G1"><option>One</option></optgroup><optgroup label="G2"><option>Two</option><option>Three</option></optgroup></select>`,
	"canvas": `<title>Game</title><canvas width="300" height="200"></canvas><script>document.querySelector('canvas').getContext('2d').fillText('Play',10,10)</script>`,
	"icons": `<title>I</title>
<button data-testid="close-dialog"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></button>
<button data-testid="delete-row" class="icon-trash"></button>
<button title="Settings"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></button>
<div data-testid="close-dialog" onclick="1" style="width:10px;height:10px"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></div>`,
}

// TestRecordAuditTrees records the accessibility tree Chromium gives for
// each of auditPages (name sources left out), with the page's origin and
// its elements with an onclick attribute (what a snapshot finds
// clickable on these pages, with their title or test id as fallback
// name), into internal/axtext/testdata/audit.axtrees.json. Only with
// -record-axtrees.
func TestRecordAuditTrees(t *testing.T) {
	if !*recordAXTrees {
		t.Skip("only with -record-axtrees")
	}
	ctx := ctxT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html>" + auditPages[strings.TrimPrefix(r.URL.Path, "/")]))
	}))
	t.Cleanup(srv.Close)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	type clickable struct {
		Tag      string `json:"tag"`
		Fallback string `json:"fallback,omitempty"`
	}
	type page struct {
		Origin    string                          `json:"origin"`
		Clickable map[dom.BackendNodeID]clickable `json:"clickable,omitempty"`
		Nodes     []accessibility.AXNode          `json:"nodes"`
	}
	out := map[string]page{}
	for name := range auditPages {
		if _, err := tab.Navigate(ctx, srv.URL+"/"+name); err != nil {
			t.Fatal(err)
		}
		snap(t, tab, browserpool.SnapshotOptions{}) // the page parsed and laid out
		c := tab.Client()
		tree, err := c.Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs())
		if err != nil {
			t.Fatal(err)
		}
		for i := range tree.Nodes {
			if n := tree.Nodes[i].Name; n != nil {
				n.Sources = nil
			}
		}
		p := page{Origin: srv.URL, Nodes: tree.Nodes, Clickable: map[dom.BackendNodeID]clickable{}}
		// What DOMSnapshot.captureSnapshot says is clickable, drawn with
		// an area (the snapshot's own test, less its pointer cursors and
		// hidden controls' labels, which these pages have none of).
		ds, err := c.DOMSnapshot.CaptureSnapshot(ctx, domsnapshot.NewCaptureSnapshotArgs([]string{"cursor"}))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds.Documents {
			drawn := map[int]bool{}
			for li, ni := range d.Layout.NodeIndex {
				if b := d.Layout.Bounds[li]; len(b) == 4 && b[2] > 0 && b[3] > 0 {
					drawn[ni] = true
				}
			}
			for _, i := range d.Nodes.IsClickable.Index {
				name := ds.Strings[d.Nodes.NodeName[i]]
				if !drawn[i] || name == "HTML" || name == "BODY" || name == "LABEL" {
					continue
				}
				attrs := map[string]string{}
				a := d.Nodes.Attributes[i]
				for j := 0; j+1 < len(a); j += 2 {
					attrs[ds.Strings[a[j]]] = ds.Strings[a[j+1]]
				}
				fb := strings.TrimSpace(attrs["title"])
				if fb == "" {
					fb = strings.Join(strings.FieldsFunc(attrs["data-testid"], func(r rune) bool { return r == '-' || r == '_' || r == '.' }), " ")
				}
				p.Clickable[d.Nodes.BackendNodeID[i]] = clickable{Tag: strings.ToLower(name), Fallback: fb}
			}
		}
		out[name] = p
	}
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("internal", "axtext", "testdata", "audit.axtrees.json"), append(raw, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// auditSnap serves one of auditPages in a tab of its own and returns its
// snapshot.
func auditSnap(t *testing.T, page string, opts browserpool.SnapshotOptions) browserpool.Snapshot {
	t.Helper()
	_, tab, _ := htmlTab(t, "<!doctype html>"+auditPages[page])
	return snap(t, tab, opts)
}

// A table's empty cells print (""), each row on a line of its own: read
// in order, Ann's email is empty, not 555-1.
func TestATablesEmptyCellsKeepTheirColumns(t *testing.T) {
	s := auditSnap(t, "table", browserpool.SnapshotOptions{})
	want := `- table
  - row headers=["Name", "Email", "Phone"]
  - row cells=["Ann", "", "555-1"]
  - row cells=["Bob", "bob@x", ""]
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// What a page puts under aria-hidden never prints as a nameless
// "clickable": it is dropped, or, drawn and clickable, it says what it
// is; what the tree shows beside it prints as ever.
func TestAriaHiddenContentNeverLeaksAsANamelessClickable(t *testing.T) {
	for _, page := range []string{"hidden", "hidden2"} {
		t.Run(page, func(t *testing.T) {
			s := auditSnap(t, page, browserpool.SnapshotOptions{})
			for _, r := range s.Refs {
				if r.Name == "" {
					t.Errorf("%s %s has no name:\n%s", r.Ref, r.Role, s.Text)
				}
			}
			if page == "hidden2" && s.Find("button", "Visible") == "" {
				t.Errorf("no button \"Visible\":\n%s", s.Text)
			}
		})
	}
}

// Text that inline tags break up reads as one line, its words whole and
// its spaces as the page has them; list items stay lines of their own.
func TestTextSplitByInlineTagsReadsAsOneLine(t *testing.T) {
	_, tab, _ := htmlTab(t, `<!doctype html><title>I</title>
<p>Hello <b>bo</b>ld world</p>
<p>Price: $<span>19</span><sup>.99</sup> per month</p>
<p>Results for <mark>sam</mark>sung phones</p>
<ul><li>One</li><li>Two</li></ul>`)
	want := `- text "Hello bold world"
- text "Price: $19.99 per month"
- text "Results for samsung phones"
- text "One"
- text "Two"
`
	if diff := cmp.Diff(want, snap(t, tab, browserpool.SnapshotOptions{}).Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// A cell that only says its link's name, its field's value or its
// button's name prints as cell without it: a catalog's rows are said
// once.
func TestTableCellsDoNotRepeatTheirControlsName(t *testing.T) {
	s := auditSnap(t, "cells", browserpool.SnapshotOptions{})
	want := `- heading "Catalog" [level=1]
- table
  - row headers=["Name", "Price", "Qty", "Action"]
  - row
    - cell
      - link "Item number 0" @e1 url=/item/0
    - cell "$0.99"
    - cell
      - textbox "Qty 0" @e2 value="1"
    - cell
      - button "Add to cart" @e3
  - row
    - cell
      - link "Item number 1" @e4 url=/item/1
    - cell "$1.99"
    - cell
      - textbox "Qty 1" @e5 value="1"
    - cell
      - button "Add to cart" @e6
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// A progress bar and a meter say their value; a select says which of its
// options are disabled and the groups they are in.
func TestProgressAndMeterSayTheirValueAndOptionsTheirStateAndGroup(t *testing.T) {
	s := auditSnap(t, "values", browserpool.SnapshotOptions{})
	want := `- progressbar "Upload" value="30"
- progressbar "Aria progress" value="70"
- meter "Disk" value="0.6/1"
- slider "Volume" @e1 value="30"
- combobox "Size" @e2 value="L" options=["S", "M (sold out)" (disabled), "L"] [collapsed]
- combobox "Grouped" @e3 value="One" options=[group "G1": "One", group "G2": "Two", "Three"] [collapsed]
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

// A page with nothing accessible (a game drawn into a canvas) says so,
// and how to see and click it, instead of an empty text.
func TestAPageWithNothingAccessibleSaysSoAndHowToActOnIt(t *testing.T) {
	s := auditSnap(t, "canvas", browserpool.SnapshotOptions{})
	want := "[no accessible content: the page may draw into a canvas, hide itself with aria-hidden, or still be loading; see it with Tab.Screenshot and click a point of it with Tab.ClickAt]\n"
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if s.Title != "Game" {
		t.Errorf("Title = %q, want Game", s.Title)
	}
}

// A button that shows only an icon is named by its test id, as a
// clickable <div> with the same icon is.
func TestAnIconButtonIsNamedByItsTestIDLikeAClickableDiv(t *testing.T) {
	_, tab, _ := htmlTab(t, `<!doctype html><title>I</title>
<button data-testid="close-dialog" onclick="void 0"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></button>
<a href="/settings" title="Settings" onclick="void 0"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></a>
<div data-testid="close-dialog" onclick="void 0" style="width:10px;height:10px"><svg width="10" height="10"><path d="M0 0L10 10"/></svg></div>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := `- button "close dialog" @e1
- link "Settings" @e2 url=/settings
- clickable "close dialog" @e3
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}
