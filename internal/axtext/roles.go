// Room: the roles a snapshot prints for Chromium's own roles, and what it
// says of a field's kind. No locks: the tables are read-only.

package axtext

import (
	"unicode"
	"unicode/utf8"
)

// internalRoles maps the roles Chromium gives with a name of its own (an
// ax::mojom::Role without an ARIA role, which Accessibility.getFullAXTree
// reports as an "internalRole": "Date", "ColorWell", "DisclosureTriangle")
// to the role a snapshot prints: ARIA's where a field, a control or a
// container has one (a date field is a textbox, as Playwright's aria
// snapshots name it, and its line says the field's type), else the HTML
// element's name an agent knows (video, canvas). Those that are layout or
// text-level only (Abbr, LayoutTableCell, Legend, Ruby, the parts of a
// MathML formula) are generic, as is any other name that starts with a
// capital letter: no internal name reaches a snapshot. The list is
// Chromium's ax::mojom::Role, its web roles without an ARIA name.
var internalRoles = map[string]string{
	// Fields and controls.
	"ColorWell":                 "textbox",
	"Date":                      "textbox",
	"DateTime":                  "textbox",
	"InputTime":                 "textbox",
	"TextField":                 "textbox",
	"DisclosureTriangle":        "button", // a <details>' <summary>
	"DisclosureTriangleGrouped": "button",
	"ToggleButton":              "button",
	"PopUpButton":               "combobox", // a <select> of older Chromiums
	"ComboBoxSelect":            "combobox",
	"ComboBoxMenuButton":        "combobox",
	"TextFieldWithComboBox":     "combobox",
	"MenuListPopup":             "listbox",
	"MenuListOption":            "option",
	"ListBoxOption":             "option",
	// Media and embedded content.
	"Audio":                 "audio",
	"Video":                 "video",
	"Canvas":                "canvas",
	"EmbeddedObject":        "embed",
	"PluginObject":          "embed",
	"PdfRoot":               "document",
	"Iframe":                "iframe",
	"IframePresentational":  "iframe",
	"RootWebArea":           "document",
	"WebArea":               "document",
	"MathMLMath":            "math",
	"Details":               "group",
	"Figcaption":            "caption",
	"DescriptionList":       "list",
	"DescriptionListTerm":   "term",
	"DescriptionListDetail": "definition",
	"HeaderAsNonLandmark":   "sectionheader",
	"FooterAsNonLandmark":   "sectionfooter",
	"ListGrid":              "grid",
	"TableHeaderContainer":  "rowgroup",
}

// fieldTypes are the HTML input types a snapshot names on a field's line
// (type=date): fields whose value takes a form of its own (Tab.Fill takes
// 2024-02-29 for a date, whatever the page displays), and the file input,
// which takes files (Tab.Upload), not clicks. By Chromium's role for the
// field; a DateTime is a datetime-local, month or week field, which
// Doc.Inputs tells apart.
var fieldTypes = map[string]string{
	"Date":      "date",
	"DateTime":  "datetime-local",
	"InputTime": "time",
	"ColorWell": "color",
}

// InputTypes are the input types Doc.Inputs takes: the others say nothing
// a snapshot prints.
var InputTypes = set("date", "time", "datetime-local", "month", "week", "color", "file")

// printedRole returns the role a snapshot prints for the accessibility
// role raw (see internalRoles).
func printedRole(raw string) string {
	if r, ok := internalRoles[raw]; ok {
		return r
	}
	if first, _ := utf8.DecodeRuneInString(raw); unicode.IsUpper(first) {
		return "generic"
	}
	return raw
}

// fieldType returns the input type a snapshot prints for node n of doc
// with Chromium's role raw ("" for none): what the page's DOM says
// (Doc.Inputs), else what the role does.
func (d *Doc[T]) fieldType(n *Node, raw string) string {
	if t, ok := d.Inputs[n.Backend]; ok && n.Backend != 0 && InputTypes[t] {
		if t == "file" || fieldTypes[raw] != "" {
			return t
		}
	}
	return fieldTypes[raw]
}

// editableRoot reports whether n is the root of an editable region that
// its role does not say is a field: a contenteditable element (Chromium
// gives it and what it holds the property "editable"; its root is the one
// whose parent has none).
func (d *Doc[T]) editableRoot(n *Node, raw string) bool {
	if valueRoles[raw] || !editable(n) {
		return false
	}
	p := d.Nodes[n.ParentID]
	return p == nil || !editable(p)
}

// editable reports whether n has the property "editable" (plaintext or
// richtext).
func editable(n *Node) bool {
	for _, p := range n.Props {
		if p.Name == "editable" {
			v := RawString(p.Value.Value)
			return v != "" && v != "false"
		}
	}
	return false
}
