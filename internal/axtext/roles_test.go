// Room: tests of the roles a snapshot prints for Chromium's own roles, of
// fields' types and of editable elements. No locks.

package axtext

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/dom"
)

// TestAWalkPrintsARIARolesForChromiumsInternalOnes walks a tree with
// Chromium's internal roles in it (as getFullAXTree names them): each
// line prints the role an agent knows, a field says its type, a
// contenteditable element says it is editable, and an element the page
// made clickable whose internal role says nothing prints as clickable.
func TestAWalkPrintsARIARolesForChromiumsInternalOnes(t *testing.T) {
	child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
	withValue := func(n *Node, v string) *Node {
		n.Value = &Value{Value: json.RawMessage(v)}
		return n
	}
	doc := NewDoc[string]("T", []*Node{
		node("1", "RootWebArea", "Form", 1, []string{"2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "13"}),
		child("1", withValue(node("2", "Date", "Birthday", 2, nil, "focusable", `true`), `"2024-02-29"`)),
		child("1", withValue(node("3", "InputTime", "Start", 3, nil, "focusable", `true`), `"14:05"`)),
		child("1", node("4", "DateTime", "Arrival", 4, nil, "focusable", `true`)),
		child("1", withValue(node("5", "ColorWell", "Colour", 5, nil, "focusable", `true`), `"#1e90ff"`)),
		child("1", node("6", "DisclosureTriangle", "Extras", 6, nil, "focusable", `true`, "expanded", `false`)),
		child("1", node("7", "Video", "Trailer", 7, nil, "focusable", `true`)),
		child("1", node("8", "Canvas", "Map", 8, nil)),
		child("1", node("9", "LayoutTableCell", "", 9, []string{"12"})),
		child("1", node("10", "Abbr", "WHO", 10, nil, "focusable", `true`)),
		child("1", node("11", "generic", "Notes", 11, []string{"14"}, "focusable", `true`, "editable", `"richtext"`)),
		child("9", node("12", "StaticText", "Pay later", 0, nil)),
		child("1", node("13", "paragraph", "", 13, []string{"15"}, "focusable", `true`, "editable", `"plaintext"`)),
		child("11", node("14", "paragraph", "", 14, []string{"16"}, "editable", `"richtext"`)),
		child("13", node("15", "StaticText", "Plain text", 0, nil)),
		child("14", node("16", "StaticText", "Window seat", 0, nil, "editable", `"richtext"`)),
	})
	doc.Clickable = map[dom.BackendNodeID]Clickable{8: {}, 9: {}}
	var roles []string
	doc.Ref = func(n *Node, role, name string) string {
		roles = append(roles, role)
		return role
	}
	w := Walker[string]{}
	w.Walk(doc)
	var r Refs[string]
	text, _, _, _ := r.Print("L", DedupeText(w.Lines), false, -1)
	want := `- textbox "Birthday" @e1 value="2024-02-29" type=date
- textbox "Start" @e2 value="14:05" type=time
- textbox "Arrival" @e3 type=datetime-local
- textbox "Colour" @e4 value="#1e90ff" type=color
- button "Extras" @e5 [collapsed]
- video "Trailer" @e6
- canvas "Map" @e7 [clickable]
- clickable "Pay later" @e8
- generic "WHO" @e9
- generic "Notes" @e10 [editable]
  - text "Window seat"
- paragraph "Plain text" @e11 [editable]
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	// What a ref points at carries the printed role: Upload, Fill and the
	// errors that name an element speak of a textbox, not of a Date.
	wantRoles := []string{"textbox", "textbox", "textbox", "textbox", "button", "video", "canvas", "clickable", "generic", "generic", "paragraph"}
	if diff := cmp.Diff(wantRoles, roles); diff != "" {
		t.Errorf("roles handed to Doc.Ref (-want +got):\n%s", diff)
	}
}

// TestAWalkTakesAFieldsTypeFromTheDOM: Chromium calls a file input a
// button and a month or week field a DateTime; the input types the page's
// DOM gives (Doc.Inputs) say what each is.
func TestAWalkTakesAFieldsTypeFromTheDOM(t *testing.T) {
	child := func(parent string, n *Node) *Node { n.ParentID = parent; return n }
	file := node("4", "button", "Passport scan", 4, nil, "focusable", `true`)
	file.Value = &Value{Value: json.RawMessage(`"No file chosen"`)}
	doc := NewDoc[int]("T", []*Node{
		node("1", "RootWebArea", "Form", 1, []string{"2", "3", "4", "5"}),
		child("1", node("2", "DateTime", "Card expiry", 2, nil, "focusable", `true`)),
		child("1", node("3", "DateTime", "Week", 3, nil, "focusable", `true`)),
		child("1", file),
		child("1", node("5", "button", "Send", 5, nil, "focusable", `true`)),
	})
	// An unknown type, or a type on an element whose role is no field's,
	// is not printed.
	doc.Inputs = map[dom.BackendNodeID]string{2: "month", 3: "week", 4: "file", 5: "date"}
	w := Walker[int]{}
	w.Walk(doc)
	var r Refs[int]
	text, _, _, _ := r.Print("L", w.Lines, false, -1)
	want := `- textbox "Card expiry" @e1 type=month
- textbox "Week" @e2 type=week
- button "Passport scan" @e3 value="No file chosen" type=file
- button "Send" @e4
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// TestARecordedTreeOfFieldsPrintsTheirGoldens walks the tree Chromium gave
// for testdata/fields.html (recorded with the page's input types and
// clickable elements, name sources left out) and compares the text with
// the goldens beside it: no internal role, each field's type, the file
// input's type, the contenteditable element's state.
func TestARecordedTreeOfFieldsPrintsTheirGoldens(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "fields.axtree.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Origin    string                       `json:"origin"`
		Inputs    map[dom.BackendNodeID]string `json:"inputs"`
		Clickable []dom.BackendNodeID          `json:"clickable"`
		Nodes     []*Node                      `json:"nodes"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		golden      string
		interactive bool
	}{{"fields.snapshot.txt", false}, {"fields.interactive.txt", true}} {
		want, err := os.ReadFile(filepath.Join("testdata", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		doc := NewDoc[int]("T", rec.Nodes)
		doc.Inputs = rec.Inputs
		doc.Clickable = map[dom.BackendNodeID]Clickable{}
		for _, b := range rec.Clickable {
			doc.Clickable[b] = Clickable{}
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

// TestNoInternalRoleNameIsPrinted: every role of Chromium's
// ax::mojom::Role that getFullAXTree gives by an internal name prints as
// a lowercase role.
func TestNoInternalRoleNameIsPrinted(t *testing.T) {
	for _, raw := range []string{
		"Abbr", "Audio", "Canvas", "Caret", "Client", "ColorWell", "ComboBoxMenuButton", "ComboBoxSelect",
		"Date", "DateTime", "DescriptionList", "DescriptionListDetail", "DescriptionListTerm", "Desktop", "Details",
		"DisclosureTriangle", "DisclosureTriangleGrouped", "EmbeddedObject", "Figcaption", "FooterAsNonLandmark",
		"HeaderAsNonLandmark", "Iframe", "IframePresentational", "ImeCandidate", "InlineTextBox", "InputTime",
		"Keyboard", "LabelText", "LayoutTable", "LayoutTableCell", "LayoutTableRow", "Legend", "LineBreak",
		"ListGrid", "ListMarker", "MathMLFraction", "MathMLIdentifier", "MathMLMath", "MathMLRow", "MenuListOption",
		"MenuListPopup", "Pane", "PdfActionableHighlight", "PdfRoot", "PluginObject", "PopUpButton", "Portal", "Pre",
		"RootWebArea", "Ruby", "RubyAnnotation", "ScrollView", "Section", "SectionWithoutName", "StaticText",
		"TableHeaderContainer", "TextField", "TextFieldWithComboBox", "TitleBar", "ToggleButton", "Unknown", "Video",
		"WebView", "Window",
	} {
		if got := printedRole(raw); got == "" || strings.ToLower(got) != got {
			t.Errorf("printedRole(%q) = %q, want a lowercase role", raw, got)
		}
	}
	for _, aria := range []string{"button", "textbox", "graphics-document", "sectionheader"} {
		if got := printedRole(aria); got != aria {
			t.Errorf("printedRole(%q) = %q, want it unchanged", aria, got)
		}
	}
}
