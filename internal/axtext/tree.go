// Package axtext turns a page's accessibility tree (as the browser's
// Accessibility.getFullAXTree returns it) into compact text for an LLM, one
// line per meaningful node, and numbers the interactive ones with refs
// (@e1, @e2, …) that stay stable across snapshots of one document. It
// makes no browser call: a caller fetches the documents and hands them in.
// Its role tables are read-only; it starts no goroutine.
//
// Room: the accessibility tree and its walk. No locks (a Walker is used by
// one goroutine).
package axtext

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/dom"

	"github.com/browserpool/browserpool/internal/redact"
)

// NameLimit is how many characters of a name or value a line keeps.
const NameLimit = 100

// TextLimit is how many characters a text line keeps: a paragraph is
// read whole in most pages, a page-long one is cut.
const TextLimit = 500

// Node is one node of an accessibility tree, decoded leanly (the
// protocol's types carry name sources never read here).
type Node struct {
	NodeID   string            `json:"nodeId"`
	Ignored  bool              `json:"ignored"`
	Role     *Value            `json:"role"`
	Name     *Value            `json:"name"`
	Value    *Value            `json:"value"`
	Props    []Prop            `json:"properties"`
	ParentID string            `json:"parentId"`
	ChildIDs []string          `json:"childIds"`
	Backend  dom.BackendNodeID `json:"backendDOMNodeId"`
}

// Value is an accessibility value; its JSON is kept raw.
type Value struct {
	Value json.RawMessage `json:"value"`
}

// Prop is a named property of a node.
type Prop struct {
	Name  string `json:"name"`
	Value Value  `json:"value"`
}

// String returns v as text: a JSON string unquoted, anything else as its
// JSON, nil as "".
func String(v *Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	return RawString(v.Value)
}

// RawString returns raw JSON as text: a string unquoted, anything else as
// is.
func RawString(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// Doc is one document's accessibility tree (the page, or an iframe's
// document), with what the walk needs of its caller.
type Doc[T any] struct {
	Target string           // the target the document's DOM nodes belong to (NodeKey.Target)
	Nodes  map[string]*Node // by NodeID
	Root   *Node            // the first node without a parent; nil for an empty tree

	// Ref returns what a ref to the interactive node n (with the role its
	// line prints and its cut name) points at. Nil gives the zero T.
	Ref func(n *Node, role, name string) T
	// Frame returns the document of the iframe node n, frameDepth iframes
	// deep, or instead a note for its line ("(not loaded)"). Nil leaves
	// every iframe unexpanded ("(not loaded)").
	Frame func(n *Node, frameDepth int) (*Doc[T], string)
	// Clickable holds the DOM nodes the page makes clickable without a
	// role that says so (a click handler, a pointer cursor, the label of a
	// hidden checkbox), with what else is known of each: such a node gets
	// a ref (see clickable for which). Nil: none.
	Clickable map[dom.BackendNodeID]Clickable
	// Inputs holds the type of the DOM's <input> elements whose type a
	// snapshot prints (one of InputTypes, lowercase): a file input, which
	// Chromium calls a button, prints type=file; a DateTime field its
	// type (datetime-local, month or week). Nil: a field's type is what
	// its role says (a DateTime is a datetime-local), and a file input
	// is a button.
	Inputs map[dom.BackendNodeID]string

	holds map[*Node]int // memo of controls
}

// NewDoc indexes the nodes of one document's tree.
func NewDoc[T any](target string, nodes []*Node) *Doc[T] {
	d := &Doc[T]{Target: target, Nodes: make(map[string]*Node, len(nodes))}
	for _, n := range nodes {
		d.Nodes[n.NodeID] = n
		if d.Root == nil && n.ParentID == "" {
			d.Root = n
		}
	}
	return d
}

// Line is one node a snapshot may print.
type Line[T any] struct {
	Depth       int
	Role        string
	Name        string
	Value       string
	Extra       string // url=…, options=…, type=…, or a note on an iframe or a clickable
	States      []string
	Interactive bool    // gets a ref
	Key         NodeKey // the node, for stable numbering; set when Interactive
	Target      T       // what its ref points at; set when Interactive
}

// NodeKey names a DOM node across a page's targets.
type NodeKey struct {
	Target string
	Node   dom.BackendNodeID
}

// Roles by how a snapshot prints them.
var (
	interactiveRoles = set("button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox",
		"listbox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
		"spinbutton", "treeitem", "DisclosureTriangle", "ColorWell", "Date", "DateTime", "InputTime")
	// Printed only when named; their children are printed either way.
	transparentRoles = set("generic", "none", "presentation", "paragraph", "list", "listitem", "group",
		"Section", "SectionWithoutName", "div", "LayoutTable", "LayoutTableRow", "LayoutTableCell",
		"strong", "emphasis", "mark", "code", "time", "Abbr", "subscript", "superscript", "insertion",
		"deletion", "blockquote", "Pre", "Ruby", "RubyAnnotation", "LabelText", "label", "Legend",
		"ListMarker", "row", "rowgroup", "term", "definition", "DescriptionList", "DescriptionListTerm",
		"DescriptionListDetail", "figure", "Canvas", "Unknown", "document", "article", "RootWebArea",
		"WebArea", "MenuListPopup", "emphasis", "caption", "Details", "Summary")
	// Printed even without a name.
	structuralRoles = set("heading", "banner", "navigation", "main", "contentinfo", "complementary",
		"form", "search", "dialog", "alertdialog", "alert", "table", "Iframe", "separator")
	// Skipped with their subtrees.
	skippedRoles = set("InlineTextBox", "LineBreak", "ListMarker")
	// Texts that are only a list item's bullet: Chromium gives an <li>
	// whose role is another (role=option, menuitem, tab) its marker as a
	// text of its own instead of a ListMarker; a lone bullet says nothing.
	// The bullets trimBullet drops from a derived name.
	listBullets = set("•", "◦", "▪", "‣", "·")
	valueRoles  = set("textbox", "searchbox", "combobox", "spinbutton", "slider", "ColorWell", "Date", "DateTime", "InputTime")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Walker turns the trees of a page's documents into lines, in document
// order, each iframe's content right under its iframe.
type Walker[T any] struct {
	// Origin is scheme://host of the page: links on it show their path only.
	Origin string
	// Lines are the lines walked so far.
	Lines []Line[T]
}

// Walk adds the lines of doc's tree at depth 0.
func (w *Walker[T]) Walk(doc *Doc[T]) {
	w.walkChildren(doc, doc.Root, 0, "", 0)
}

// walkChildren walks n's children at depth. ctxName is the name of the
// nearest printed ancestor (text it already says is not repeated).
func (w *Walker[T]) walkChildren(doc *Doc[T], n *Node, depth int, ctxName string, frameDepth int) {
	if n == nil {
		return
	}
	for _, id := range n.ChildIDs {
		if c := doc.Nodes[id]; c != nil {
			w.walk(doc, c, depth, ctxName, frameDepth)
		}
	}
}

func (w *Walker[T]) walk(doc *Doc[T], n *Node, depth int, ctxName string, frameDepth int) {
	role := String(n.Role)
	clickable := doc.Clickable != nil && doc.clickable(n)
	if (n.Ignored || role == "") && !clickable {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	if skippedRoles[role] {
		return
	}
	name := Squash(String(n.Name))
	if role == "StaticText" {
		if name != "" && !strings.Contains(ctxName, name) && !listBullets[name] {
			w.Lines = append(w.Lines, Line[T]{Depth: depth, Role: "text", Name: Cut(name, TextLimit)})
		}
		return
	}
	if role == "Iframe" {
		w.iframe(doc, n, depth, name, frameDepth)
		return
	}
	var click Clickable
	if clickable {
		click = doc.Clickable[n.Backend]
	}
	printed := printedRole(role)
	if clickable && (n.Ignored || role == "" || plainRoles[role] || printed == "generic") {
		role, printed = ClickableRole, ClickableRole
	}
	interactive := clickable || interactive(n)
	derived := false
	if interactive && name == "" && !valueRoles[role] && (clickable || !doc.holdsChildTarget(n)) {
		// A ref'd line says what it is: an option drawn as a <div>, a
		// card, a mail's row (by its own text, beside its controls).
		name, derived = doc.text(n, clickable), true
		if name == "" && clickable {
			name = doc.Clickable[n.Backend].Fallback
		}
	}
	l := Line[T]{Depth: depth, Role: printed, Name: Cut(name, NameLimit)}
	if derived {
		name = strings.TrimSuffix(l.Name, "…") // texts past the cut are printed under it
	}
	l.Interactive = interactive
	if !l.Interactive && !structuralRoles[role] && (name == "" || transparentRoles[role]) {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	kind := doc.fieldType(n, role)
	if valueRoles[role] || kind == "file" {
		// A file input's value says which files it holds ("No file
		// chosen", "photo.png", "2 files").
		l.Value = Cut(Squash(String(n.Value)), NameLimit)
	}
	if kind != "" {
		l.Extra = "type=" + kind
	}
	l.States = States(role, n.Props)
	if doc.editableRoot(n, role) {
		l.States = append(l.States, "editable") // contenteditable: Tab.Fill and Tab.Type take text
	}
	if clickable && role != ClickableRole && !click.DragOnly {
		l.States = append(l.States, "clickable")
	}
	if click.Draggable {
		l.States = append(l.States, "draggable") // Chromium's role for it is group, or its own
	}
	if clickable && click.Note != "" {
		l.Extra = click.Note
	}
	if role == "link" {
		for _, p := range n.Props {
			if p.Name == "url" {
				l.Extra = "url=" + Cut(w.linkURL(RawString(p.Value.Value)), NameLimit)
			}
		}
	}
	if l.Interactive && n.Backend != 0 {
		l.Key = NodeKey{doc.Target, n.Backend}
		if doc.Ref != nil {
			l.Target = doc.Ref(n, printed, l.Name)
		}
	} else {
		l.Interactive = false
	}
	if role == "combobox" && doc.nativeSelect(n) {
		// A select's options are summarized on its line (use Tab.Select).
		var opts []string
		collectOptions(doc, n, &opts)
		if len(opts) > 0 {
			l.Extra = OptionSummary(opts)
			w.Lines = append(w.Lines, l)
			return
		}
	}
	w.Lines = append(w.Lines, l)
	if valueRoles[role] && !(role == "combobox" && doc.holdsChildTarget(n)) {
		return // a field's content is its value; an ARIA 1.1 combobox holds its field and list
	}
	w.walkChildren(doc, n, depth+1, name, frameDepth)
}

// iframe prints an iframe and, under it, its document, if doc.Frame gives
// it.
func (w *Walker[T]) iframe(doc *Doc[T], n *Node, depth int, name string, frameDepth int) {
	idx := len(w.Lines)
	w.Lines = append(w.Lines, Line[T]{Depth: depth, Role: "iframe", Name: Cut(name, NameLimit)})
	child, note := (*Doc[T])(nil), "(not loaded)"
	if doc.Frame != nil {
		child, note = doc.Frame(n, frameDepth)
	}
	if child == nil || child.Root == nil {
		if note == "" {
			note = "(not loaded)"
		}
		w.Lines[idx].Extra = note
		return
	}
	if name == "" {
		w.Lines[idx].Name = Cut(Squash(String(child.Root.Name)), NameLimit)
	}
	w.walkChildren(child, child.Root, depth+1, "", frameDepth+1)
}

func collectOptions[T any](doc *Doc[T], n *Node, out *[]string) {
	for _, id := range n.ChildIDs {
		c := doc.Nodes[id]
		if c == nil {
			continue
		}
		if r := String(c.Role); (r == "option" || r == "MenuListOption") && !c.Ignored {
			*out = append(*out, Squash(String(c.Name)))
			continue
		}
		collectOptions(doc, c, out)
	}
}

// linkURL shortens a link's URL to its path on the page's own origin and
// redacts token-like values.
func (w *Walker[T]) linkURL(raw string) string {
	s := redact.Scrub(raw)
	if w.Origin != "" && strings.HasPrefix(s, w.Origin+"/") {
		return s[len(w.Origin):]
	}
	return s
}

// Cut shortens s to at most n characters, ending in "…" when cut.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n-1 {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
