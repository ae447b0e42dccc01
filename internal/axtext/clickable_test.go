// Room: tests of which clickable elements a walk gives refs, and their
// names. No locks.

package axtext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/dom"
)

func TestAWalkGivesRefsToClickablesByTheRules(t *testing.T) {
	child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
	doc := NewDoc[string]("T", []*Node{
		node("1", "RootWebArea", "page", 1, []string{"2", "6", "9", "12", "15", "18"}),
		// A row drawn with a pointer, around a checkbox, with text of its own.
		child("1", node("2", "generic", "", 2, []string{"3", "4", "5"})),
		child("2", node("3", "checkbox", "Select", 3, nil)),
		child("2", node("4", "StaticText", "Acme Billing", 0, nil)),
		child("2", node("5", "StaticText", "Jun 14", 0, nil)),
		// A backdrop listening for clicks around two buttons: no pointer.
		child("1", node("6", "generic", "", 6, []string{"7", "8"})),
		child("6", node("7", "button", "Cancel", 7, nil)),
		child("6", node("8", "StaticText", "Delete this file?", 0, nil)),
		// A span inside a button: the button's.
		child("1", node("9", "button", "Save", 9, []string{"10"})),
		child("9", node("10", "generic", "", 10, []string{"11"})),
		child("10", node("11", "StaticText", "Save", 0, nil)),
		// A tab's close × is a target of its own.
		child("1", node("12", "tab", "main.go ×", 12, []string{"13"}, "focusable", `true`)),
		child("12", node("13", "generic", "", 13, []string{"14"})),
		child("13", node("14", "StaticText", "×", 0, nil)),
		// An icon: no text, a title; an icon-font glyph.
		child("1", node("15", "generic", "", 15, []string{"16"})),
		child("15", node("16", "StaticText", "\uf1f8", 0, nil)),
		// A pointer row around a text field: not the row's.
		child("1", node("18", "generic", "", 18, []string{"19", "20"})),
		child("18", node("19", "textbox", "Note", 19, nil)),
		child("18", node("20", "StaticText", "Leave a note", 0, nil)),
	})
	doc.Clickable = map[dom.BackendNodeID]Clickable{
		2: {Pointer: true}, 6: {}, 10: {Pointer: true}, 13: {}, 15: {Pointer: true}, 18: {Pointer: true},
	}
	doc.Names = map[dom.BackendNodeID]string{15: "Edit row"}
	doc.Ref = func(n *Node, role, name string) string { return role + " " + name }
	w := Walker[string]{}
	w.Walk(doc)
	var got []string
	for _, l := range w.Lines {
		if l.Interactive {
			got = append(got, l.Target)
		}
	}
	want := []string{"clickable Acme Billing Jun 14", "checkbox Select", "button Cancel", "button Save", "tab main.go ×", "clickable ×", "clickable Edit row", "textbox Note"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
}

func TestAClickableNameLosesABulletAndIconGlyphsButKeepsASign(t *testing.T) {
	got := map[string]string{}
	for _, in := range []string{"• Presentation item one", "◦ nested", "-45.00 Coffee shop", "* Starred", "\uf1f8 Delete", "\uf1f8"} {
		got[in] = trimBullet(Squash(strings.Map(dropPrivate, in)))
	}
	want := map[string]string{
		"• Presentation item one": "Presentation item one",
		"◦ nested":                "nested",
		"-45.00 Coffee shop":      "-45.00 Coffee shop",
		"* Starred":               "* Starred",
		"\uf1f8 Delete":           "Delete",
		"\uf1f8":                  "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// A clickable element the tree leaves out (under aria-hidden) prints where
// the page has it among its nearest ancestor's children, and after them
// when the DOM's order is not known.
func TestAnElementTheTreeLeavesOutPrintsInPageOrder(t *testing.T) {
	walk := func(index map[dom.BackendNodeID]int) []string {
		child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
		doc := NewDoc[string]("T", []*Node{
			node("1", "RootWebArea", "page", 1, []string{"2", "4", "5"}),
			child("1", node("2", "button", "Before", 2, nil)),
			child("1", node("4", "button", "After", 4, nil)),
			child("1", node("5", "main", "", 5, []string{"6", "8"})),
			child("5", node("6", "StaticText", "Para", 6, nil)),
			child("5", node("8", "link", "Link", 8, nil)),
		})
		// 10 is under an aria-hidden div (3) between Before and After,
		// 11 under one (7) inside main between its text and its link.
		doc.Clickable = map[dom.BackendNodeID]Clickable{
			10: {Text: "Hidden one", Ancestors: []dom.BackendNodeID{3, 1}},
			11: {Text: "Icon two", Ancestors: []dom.BackendNodeID{7, 5, 1}},
		}
		if index != nil {
			doc.DOMIndex = func(b dom.BackendNodeID) (int, bool) { i, ok := index[b]; return i, ok }
		}
		doc.Ref = func(n *Node, role, name string) string { return role + " " + name }
		w := Walker[string]{}
		w.Walk(doc)
		var got []string
		for _, l := range w.Lines {
			got = append(got, strings.TrimSpace(l.Role+" "+l.Name))
		}
		return got
	}
	inPage := []string{"button Before", "clickable Hidden one", "button After", "main", "text Para", "clickable Icon two", "link Link"}
	order := map[dom.BackendNodeID]int{1: 0, 2: 1, 3: 2, 10: 3, 4: 4, 5: 5, 6: 6, 7: 7, 11: 8, 8: 9}
	if diff := cmp.Diff(inPage, walk(order)); diff != "" {
		t.Errorf("lines with the DOM's order (-want +got):\n%s", diff)
	}
	after := []string{"button Before", "button After", "main", "text Para", "link Link", "clickable Icon two", "clickable Hidden one"}
	if diff := cmp.Diff(after, walk(nil)); diff != "" {
		t.Errorf("lines without it (-want +got):\n%s", diff)
	}
}
