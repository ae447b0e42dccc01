// Room: tests of the tree walk. No locks.

package axtext

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/dom"
)

// node makes an accessibility node; props alternate names and JSON values.
func node(id, role, name string, backend int, children []string, props ...string) *Node {
	n := &Node{NodeID: id, ChildIDs: children, Backend: dom.BackendNodeID(backend)}
	if role != "" {
		n.Role = &Value{Value: json.RawMessage(fmt.Sprintf("%q", role))}
	}
	if name != "" {
		n.Name = &Value{Value: json.RawMessage(fmt.Sprintf("%q", name))}
	}
	for i := 0; i+1 < len(props); i += 2 {
		n.Props = append(n.Props, Prop{Name: props[i], Value: Value{Value: json.RawMessage(props[i+1])}})
	}
	return n
}

func TestAWalkPrintsMeaningfulNodesWithRefsAndFramesUnderTheirIframe(t *testing.T) {
	child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
	email := node("4", "textbox", "Email", 10, nil, "required", `true`)
	email.Value = &Value{Value: json.RawMessage(`"ann@example.com"`)}
	ignored := node("23", "generic", "", 0, []string{"24"})
	ignored.Ignored = true
	top := NewDoc[string]("T", []*Node{
		node("1", "RootWebArea", "Sign up", 1, []string{"2", "4", "5", "6", "7", "9", "14", "19", "21", "22", "23"}),
		child("1", node("2", "heading", "Sign up", 2, []string{"3"}, "level", `1`)),
		child("2", node("3", "StaticText", "Sign up", 0, nil)),
		child("1", email),
		child("1", node("5", "StaticText", "Email", 0, nil)),
		child("1", node("6", "checkbox", "I  agree\n", 11, nil, "checked", `"true"`, "focusable", `true`)),
		child("1", node("7", "generic", "", 0, []string{"8"})),
		child("7", node("8", "button", "Create account", 12, nil)),
		child("1", node("9", "link", "Help", 13, nil, "url", `"https://a.example/help?token=abc"`)),
		child("1", node("14", "combobox", "Country", 15, []string{"16"}, "expanded", `false`)),
		child("14", node("16", "MenuListPopup", "", 0, []string{"17", "18"})),
		child("16", node("17", "MenuListOption", "France", 0, nil)),
		child("16", node("18", "MenuListOption", "Spain", 0, nil)),
		child("1", node("19", "Iframe", "Payment", 20, nil)),
		child("1", node("21", "Iframe", "", 0, nil)),
		child("1", node("22", "InlineTextBox", "skipped", 0, nil)),
		child("1", ignored),
		child("23", node("24", "StaticText", "Hello   world", 0, nil)),
	})
	frame := NewDoc[string]("F", []*Node{
		node("1", "RootWebArea", "Card form", 1, []string{"2"}),
		child("1", node("2", "textbox", "Card number", 5, nil)),
	})
	var frameDepths []int
	ref := func(target string) func(n *Node, role, name string) string {
		return func(n *Node, role, name string) string {
			return fmt.Sprintf("%s/%d %s %s", target, n.Backend, role, name)
		}
	}
	top.Ref, frame.Ref = ref("T"), ref("F")
	top.Frame = func(n *Node, depth int) (*Doc[string], string) {
		frameDepths = append(frameDepths, depth)
		if n.Backend == 0 {
			return nil, "(not expanded: frame limit)"
		}
		return frame, ""
	}
	w := Walker[string]{Origin: "https://a.example"}
	w.Walk(top)
	lines := DedupeText(w.Lines)
	var r Refs[string]
	text, refs, shown, omitted := r.Print("L", lines, false, -1)
	want := `- heading "Sign up" [level=1]
- textbox "Email" @e1 value="ann@example.com" [required]
- checkbox "I agree" @e2 [checked]
- button "Create account" @e3
- link "Help" @e4 url=/help?token=REDACTED
- combobox "Country" @e5 options=["France", "Spain"] [collapsed]
- iframe "Payment"
  - textbox "Card number" @e6
- iframe (not expanded: frame limit)
- text "Hello world"
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	if shown != 10 || omitted != 0 || len(refs) != 6 {
		t.Errorf("shown, omitted, refs = %d, %d, %d; want 10, 0, 6", shown, omitted, len(refs))
	}
	if diff := cmp.Diff([]int{0, 0}, frameDepths); diff != "" {
		t.Errorf("frame depths asked (-want +got):\n%s", diff)
	}
	var targets []string
	for n := 1; n <= 6; n++ {
		tg, ok := r.Lookup(n)
		if !ok {
			t.Errorf("@e%d is not live", n)
		}
		targets = append(targets, tg)
	}
	wantTargets := []string{"T/10 textbox Email", "T/11 checkbox I agree", "T/12 button Create account",
		"T/13 link Help", "T/15 combobox Country", "F/5 textbox Card number"}
	if diff := cmp.Diff(wantTargets, targets); diff != "" {
		t.Errorf("ref targets (-want +got):\n%s", diff)
	}
	if got := r.Name(NodeKey{"F", 5}); got != "@e6" {
		t.Errorf("Name of the frame's textbox = %q, want @e6", got)
	}
	flat, _, _, _ := r.Print("L", lines, true, -1)
	wantFlat := `- textbox "Email" @e1 value="ann@example.com" [required]
- checkbox "I agree" @e2 [checked]
- button "Create account" @e3
- link "Help" @e4 url=/help?token=REDACTED
- combobox "Country" @e5 options=["France", "Spain"] [collapsed]
- textbox "Card number" @e6
`
	if diff := cmp.Diff(wantFlat, flat); diff != "" {
		t.Errorf("interactive text (-want +got):\n%s", diff)
	}
}

func TestParseRefTakesTheAtSignOrNot(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		isOK bool
	}{
		{"@e12", 12, true}, {"e3", 3, true}, {" @e1 ", 1, true},
		{"@e0", 0, false}, {"@e", 0, false}, {"@e+1", 0, false}, {"@x1", 0, false}, {"12", 0, false}, {"@e-1", 0, false},
	} {
		n, ok := ParseRef(c.in)
		if n != c.n || ok != c.isOK {
			t.Errorf("ParseRef(%q) = %d, %v; want %d, %v", c.in, n, ok, c.n, c.isOK)
		}
	}
}

func TestAnInvalidatedDocumentHasNoLiveRefsButNumbersGoOn(t *testing.T) {
	var r Refs[int]
	l := Line[int]{Role: "button", Name: "a", Interactive: true, Key: NodeKey{"T", 1}, Target: 7}
	r.Print("L1", []Line[int]{l}, false, -1)
	if got, ok := r.Lookup(1); !ok || got != 7 || r.Doc() != "L1" {
		t.Fatalf("after a print: Lookup(1) = %d, %v; Doc = %q", got, ok, r.Doc())
	}
	r.Invalidate()
	if _, ok := r.Lookup(1); ok || r.Doc() != "" || !r.Issued(1) || r.Issued(2) {
		t.Errorf("after Invalidate: Lookup(1) ok = %v, Doc = %q, Issued(1) = %v, Issued(2) = %v", ok, r.Doc(), r.Issued(1), r.Issued(2))
	}
	_, refs, _, _ := r.Print("L1", []Line[int]{l}, false, -1)
	if diff := cmp.Diff([]Ref{{"@e2", "button", "a"}}, refs); diff != "" {
		t.Errorf("refs after Invalidate (-want +got):\n%s", diff)
	}
}

// TestARecordedTreeOfTheGoldenPagePrintsItsGoldens walks the tree Chromium
// gave for testdata/golden.html of the root package (recorded, with the
// name sources left out) and compares the text with that page's goldens,
// copied here: the formatter is pinned without a browser.
func TestARecordedTreeOfTheGoldenPagePrintsItsGoldens(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "golden.axtree.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Origin string  `json:"origin"`
		Nodes  []*Node `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		golden      string
		interactive bool
	}{{"golden.snapshot.txt", false}, {"golden.interactive.txt", true}} {
		want, err := os.ReadFile(filepath.Join("testdata", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		doc := NewDoc[int]("T", rec.Nodes)
		if got := String(doc.Root.Name); got != "Golden page" {
			t.Errorf("root name = %q, want the page's title", got)
		}
		w := Walker[int]{Origin: rec.Origin}
		w.Walk(doc)
		var r Refs[int]
		text, _, _, _ := r.Print("L", DedupeText(w.Lines), c.interactive, 30000)
		if diff := cmp.Diff(string(want), text); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.golden, diff)
		}
	}
}

// auditPage walks the tree Chromium gave for one of the snapshot audit's
// pages (recorded by the root package's TestRecordAuditTrees into
// testdata/audit.axtrees.json, with what the page made clickable) and
// prints it whole. clickable adds to, or replaces, what is known of a
// clickable element; names are Doc.Names, with the recorded fallback name
// of each clickable element (its title or test id) beside them.
func auditPage(t *testing.T, page string, interactive bool, clickable map[dom.BackendNodeID]Clickable, names map[dom.BackendNodeID]string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "audit.axtrees.json"))
	if err != nil {
		t.Fatal(err)
	}
	type recorded struct {
		Clickable
		Fallback string `json:"fallback"`
	}
	var rec map[string]struct {
		Origin    string                         `json:"origin"`
		Clickable map[dom.BackendNodeID]recorded `json:"clickable"`
		Nodes     []*Node                        `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	p, ok := rec[page]
	if !ok {
		t.Fatalf("no page %q recorded", page)
	}
	doc := NewDoc[int]("T", p.Nodes)
	doc.Clickable = map[dom.BackendNodeID]Clickable{}
	doc.Names = map[dom.BackendNodeID]string{}
	for b, c := range p.Clickable {
		doc.Clickable[b] = c.Clickable
		if c.Fallback != "" {
			doc.Names[b] = c.Fallback
		}
	}
	for b, c := range clickable {
		doc.Clickable[b] = c
	}
	for b, n := range names {
		doc.Names[b] = n
	}
	w := Walker[int]{Origin: p.Origin}
	w.Walk(doc)
	var r Refs[int]
	text, _, _, _ := r.Print("L", DedupeText(w.Lines), interactive, -1)
	return text
}

// auditWant compares the text of a recorded audit page with want.
func auditWant(t *testing.T, page, want string, clickable map[dom.BackendNodeID]Clickable, names map[dom.BackendNodeID]string) {
	t.Helper()
	if diff := cmp.Diff(want, auditPage(t, page, false, clickable, names)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", page, diff)
	}
}

// A row of text prints on one line, its cells in order and an empty one
// as "": read in order, each value stays under its header. A row holding
// a control prints its cells under it, an empty one as cell "".
func TestATablesEmptyCellsKeepTheirColumns(t *testing.T) {
	child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
	doc := NewDoc[int]("T", []*Node{
		node("1", "RootWebArea", "T", 1, []string{"2"}),
		child("1", node("2", "table", "", 2, []string{"3"})),
		child("2", node("3", "row", "", 3, []string{"4", "7", "8"})),
		child("3", node("4", "cell", "Edit", 4, []string{"5"})),
		child("4", node("5", "link", "Edit", 5, []string{"6"})),
		child("5", node("6", "StaticText", "Edit", 0, nil)),
		child("3", node("7", "cell", "", 7, nil)),
		child("3", node("8", "cell", "Ann", 8, []string{"9"})),
		child("8", node("9", "StaticText", "Ann", 0, nil)),
	})
	w := Walker[int]{}
	w.Walk(doc)
	var r Refs[int]
	text, _, _, _ := r.Print("L", DedupeText(w.Lines), false, -1)
	want := `- table
  - row
    - cell
      - link "Edit" @e1
    - cell ""
    - cell "Ann"
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("a row with a link (-want +got):\n%s", diff)
	}
	auditWant(t, "table", `- table
  - row headers=["Name", "Email", "Phone"]
  - row cells=["Ann", "", "555-1"]
  - row cells=["Bob", "bob@x", ""]
`, nil, nil)
}

// What the tree leaves out under aria-hidden is dropped, unless the page
// draws it and made it clickable and its DOM says what it is: then it
// prints by its element's role and text, never as a nameless clickable.
func TestAriaHiddenContentPrintsByItsDOMOrNotAtAll(t *testing.T) {
	// The recorded Buy button (74) has a click handler, Sell (75) none;
	// the tree says nothing of either.
	auditWant(t, "hidden2", "- button \"Visible\" @e1\n", nil, nil)
	auditWant(t, "hidden2", "- button \"Buy\" @e1\n- button \"Visible\" @e2\n",
		map[dom.BackendNodeID]Clickable{74: {Role: "button", Text: " Buy "}}, nil)
	// A link (61) under a root marked aria-hidden, the page's only
	// content; without its DOM's text the page has nothing to show.
	auditWant(t, "hidden", "- link \"Cart\" @e1\n", map[dom.BackendNodeID]Clickable{61: {Role: "link", Text: "Cart"}}, nil)
	auditWant(t, "hidden", "["+emptyNote+"]\n", nil, nil)
	// One without a role of its own prints as clickable, named by its test id.
	auditWant(t, "hidden", "- clickable \"cart link\" @e1\n", map[dom.BackendNodeID]Clickable{61: {}}, map[dom.BackendNodeID]string{61: "cart link"})
}

// Texts that inline tags split (a <b>, a <span>, a <sup>, a <mark>) print
// as one line, joined as the page spaces them; a line break, a block, a
// link or a list item ends a line.
func TestAdjacentTextRunsJoinIntoOneLine(t *testing.T) {
	auditWant(t, "inline", `- text "Hello bold world"
- text "Price: $19.99 per month"
- text "Results for samsung phones"
- text "Line one"
- text "Line two"
- text "Hello bold world & <tag> spaced"
- text "Change how your account works."
- link "Read the help" @e1 url=/inline#help
- text "first."
- text "One"
- text "Two"
- link "link" @e2 url=/x
- text "First"
- text "Second"
- text "Block one"
- text "Block two"
`, nil, nil)
}

// A cell whose name only repeats its control's name or value prints as
// cell without a name; one with text of its own keeps it.
func TestACellThatRepeatsItsControlPrintsNoName(t *testing.T) {
	auditWant(t, "cells", `- heading "Catalog" [level=1]
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
`, nil, nil)
}

// Progress bars, meters and sliders say their value (a meter's float32
// as the page wrote it, with its maximum when not 100); a select says
// which options are disabled and the groups they are in.
func TestRangeValuesDisabledOptionsAndOptionGroupsArePrinted(t *testing.T) {
	auditWant(t, "values", `- progressbar "Upload" value="30"
- progressbar "Aria progress" value="70"
- meter "Disk" value="0.6/1"
- slider "Volume" @e1 value="30"
- combobox "Size" @e2 value="L" options=["S", "M (sold out)" (disabled), "L"] [collapsed]
- combobox "Grouped" @e3 value="One" options=[group "G1": "One", group "G2": "Two", "Three"] [collapsed]
`, nil, nil)
}

// A page without accessible content (a canvas) prints one bracketed line
// saying so and what to use instead.
func TestAPageWithNothingAccessibleSaysSo(t *testing.T) {
	auditWant(t, "canvas", "[no accessible content: the page may draw into a canvas, hide itself with aria-hidden, or still be loading; see it with Tab.Screenshot and click a point of it with Tab.ClickAt]\n", nil, nil)
}

// A control showing only an icon is named by its title or test id
// (Doc.Names), as a clickable <div> is.
func TestAnIconControlIsNamedByItsTestIDLikeAClickableDiv(t *testing.T) {
	auditWant(t, "icons", `- button "close dialog" @e1
- button "delete row" @e2
- button "Settings" @e3
- clickable "close dialog" @e4
`, nil, map[dom.BackendNodeID]string{7: "close dialog", 10: "delete row", 11: "Settings"})
	// With a name for the one whose click handler put it in Clickable
	// only, only that one is named.
	auditWant(t, "icons", `- button "close dialog" @e1
- button @e2
- button "Settings" @e3
- clickable "close dialog" @e4
`, map[dom.BackendNodeID]Clickable{7: {}}, map[dom.BackendNodeID]string{7: "close dialog"})
}
