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
