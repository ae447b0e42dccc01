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
	// Names holds a name for DOM elements that may have none of their
	// own: an element's title, else its test id in words (data-testid
	// "close-dialog" is "close dialog"). A control, link or clickable
	// element with neither a name nor text (an icon) prints it. Nil: none
	// is named so.
	Names map[dom.BackendNodeID]string
	// DOMIndex returns a DOM node's place in its document (its index in
	// the document's nodes, in page order): an element the tree leaves out
	// (see graft) goes among its ancestor's children where the page has
	// it. Nil, or false for a node it does not know: such an element goes
	// after them.
	DOMIndex func(dom.BackendNodeID) (int, bool)

	holds   map[*Node]int // memo of controls
	grafted bool          // graft has run
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
	Quoted      bool    // the name is printed even when empty: a table's empty cell (cell "")
	Note        bool    // not a node: a note on the snapshot, its Name printed in brackets
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
		"ListMarker", "rowgroup", "term", "definition", "DescriptionList", "DescriptionListTerm",
		"DescriptionListDetail", "figure", "Canvas", "Unknown", "document", "article", "RootWebArea",
		"WebArea", "MenuListPopup", "emphasis", "caption", "Details", "Summary")
	// Printed even without a name.
	structuralRoles = set("heading", "banner", "navigation", "main", "contentinfo", "complementary",
		"form", "search", "dialog", "alertdialog", "alert", "table", "Iframe", "separator", "row")
	// Roles whose line says their value as a number (or its text): how
	// far a bar or a slider is.
	rangeRoles = set("progressbar", "meter", "slider", "scrollbar")
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

// Walk adds the lines of doc's tree at depth 0. A page that gives no
// line at all (it draws into a canvas, or has not drawn anything yet)
// gets one line saying so, in brackets (emptyNote), with what an agent
// can do instead.
func (w *Walker[T]) Walk(doc *Doc[T]) {
	w.walkChildren(doc, doc.Root, 0, "", 0)
	if len(w.Lines) == 0 {
		w.Lines = append(w.Lines, Line[T]{Role: "note", Name: emptyNote, Note: true})
	}
}

// emptyNote is the line of a snapshot of a page without accessible
// content.
const emptyNote = "no accessible content: the page may draw into a canvas, hide itself with aria-hidden, or still be loading; see it with Tab.Screenshot and click a point of it with Tab.ClickAt"

// walkChildren walks n's children at depth. ctxName is the name of the
// nearest printed ancestor (text it already says is not repeated).
// Adjacent texts among them (a paragraph's runs split by <b>, <mark> or
// <sup>) are one text line (see walkRun).
func (w *Walker[T]) walkChildren(doc *Doc[T], n *Node, depth int, ctxName string, frameDepth int) {
	if n == nil {
		return
	}
	if n == doc.Root {
		doc.graft()
	}
	var run strings.Builder
	w.walkRun(doc, n, depth, ctxName, frameDepth, &run)
	w.flushText(&run, depth, ctxName)
}

// walkRun walks n's children at depth, gathering adjacent text into run:
// a static text, an inline element holding only text (inlineText), and
// what an element the tree leaves out (an ignored <span>) holds, join it;
// anything else (a block, a control, a line break, a list item) ends it
// (flushText) before it is walked.
func (w *Walker[T]) walkRun(doc *Doc[T], n *Node, depth int, ctxName string, frameDepth int, run *strings.Builder) {
	for _, id := range n.ChildIDs {
		c := doc.Nodes[id]
		if c == nil {
			continue
		}
		if String(c.Role) == "StaticText" && listBullets[Squash(String(c.Name))] {
			continue // a list item's own bullet (listBullets), not joined to its text
		}
		if doc.inlineText(c, run) {
			continue
		}
		if (c.Ignored || String(c.Role) == "") && !doc.hiddenTarget(c) {
			w.walkRun(doc, c, depth, ctxName, frameDepth, run)
			continue
		}
		w.flushText(run, depth, ctxName)
		w.walk(doc, c, depth, ctxName, frameDepth)
	}
}

func (w *Walker[T]) walk(doc *Doc[T], n *Node, depth int, ctxName string, frameDepth int) {
	role := String(n.Role)
	if (n.Ignored || role == "") && !doc.hiddenTarget(n) {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	clickable := doc.Clickable != nil && doc.clickable(n)
	if skippedRoles[role] {
		return
	}
	name := Squash(String(n.Name))
	if role == "StaticText" {
		var run strings.Builder
		run.WriteString(String(n.Name))
		w.flushText(&run, depth, ctxName)
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
	left := n.Ignored || role == "" // in Clickable, and saying what it is (hiddenTarget)
	if clickable && (left || plainRoles[role] || printed == "generic") {
		role, printed = ClickableRole, ClickableRole
		if left && click.Role != "" {
			role, printed = click.Role, click.Role // a link or a button under aria-hidden
		}
	}
	interactive := clickable || interactive(n)
	derived := false
	if interactive && name == "" && (left || !valueRoles[role] && (clickable || !doc.holdsChildTarget(n))) {
		// A ref'd line says what it is: an option drawn as a <div>, a
		// card, a mail's row (by its own text, beside its controls).
		name, derived = doc.text(n, clickable), true
		if clickable {
			name = drawnText(name, click.Text)
		}
		if name == "" && left {
			name = Squash(click.Text) // the tree says nothing of it: its DOM's text
		}
		if name == "" {
			name = doc.fallbackName(n) // an icon: its title or test id
		}
	}
	l := Line[T]{Depth: depth, Role: printed, Name: Cut(name, NameLimit)}
	if derived {
		name = strings.TrimSuffix(l.Name, "…") // texts past the cut are printed under it
	}
	l.Interactive = interactive
	if rangeRoles[role] {
		l.Value = rangeValue(n, role)
	}
	if !l.Interactive && !structuralRoles[role] && !cellRoles[role] && (name == "" && l.Value == "" || transparentRoles[role]) {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	if role == "row" && !l.Interactive && name == "" {
		if cells := doc.rowCells(n); cells != "" {
			l.Extra = cells // a row of text only, on one line
			w.Lines = append(w.Lines, l)
			return
		}
	}
	kind := doc.fieldType(n, role)
	if valueRoles[role] && !rangeRoles[role] || kind == "file" {
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
	if clickable && role != ClickableRole && !left && !click.DragOnly {
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
		var opts []Option
		collectOptions(doc, n, "", &opts)
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
	at := len(w.Lines) - 1
	w.walkChildren(doc, n, depth+1, name, frameDepth)
	if cellRoles[role] {
		w.cellName(at)
	}
}

// inlineRoles are the text-level elements whose text reads as part of the
// text around them (Hello <b>bo</b>ld, $19<sup>.99</sup>): walkRun joins it.
var inlineRoles = set("strong", "emphasis", "mark", "code", "time", "Abbr", "subscript", "superscript",
	"insertion", "deletion")

// inlineText appends the text of c to run when c is a static text, or an
// inline element (inlineRoles) holding only text and inline elements that
// no ref is for, and reports whether it did.
func (d *Doc[T]) inlineText(c *Node, run *strings.Builder) bool {
	if c.Ignored {
		return false
	}
	role := String(c.Role)
	if role == "StaticText" {
		appendRun(run, String(c.Name))
		return true
	}
	if !inlineRoles[role] || d.target(c) {
		return false
	}
	var sub strings.Builder
	if !d.onlyText(c, &sub, 0) {
		return false
	}
	appendRun(run, sub.String())
	return true
}

// onlyText writes the text under n to b and reports whether n holds only
// text and inline elements no ref is for (looked at up to a few levels
// deep).
func (d *Doc[T]) onlyText(n *Node, b *strings.Builder, depth int) bool {
	if depth > 4 {
		return false
	}
	for _, id := range n.ChildIDs {
		c := d.Nodes[id]
		switch {
		case c == nil:
		case c.Ignored:
			if len(c.ChildIDs) > 0 && !d.onlyText(c, b, depth+1) {
				return false
			}
		case String(c.Role) == "StaticText":
			appendRun(b, String(c.Name))
		case inlineRoles[String(c.Role)] && !d.target(c):
			if !d.onlyText(c, b, depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// appendRun adds a text's raw name (its spaces as the page has them) to a
// run, up to a few times what a text line keeps.
func appendRun(run *strings.Builder, s string) {
	if run.Len() < 4*TextLimit {
		run.WriteString(s)
	}
}

// flushText prints the text gathered in run as one text line (squashed,
// cut to TextLimit), unless the printed ancestor's name (ctxName) already
// says it or it is only a list's bullet, and empties run. A text that
// starts with what ctxName says (a clickable row named by its text, cut)
// prints the rest.
func (w *Walker[T]) flushText(run *strings.Builder, depth int, ctxName string) {
	if run.Len() == 0 {
		return
	}
	name := Squash(run.String())
	run.Reset()
	if name == "" || strings.Contains(ctxName, name) || listBullets[name] {
		return
	}
	if rest, ok := strings.CutPrefix(name, ctxName); ok && ctxName != "" {
		name = strings.TrimSpace(rest)
	}
	w.Lines = append(w.Lines, Line[T]{Depth: depth, Role: "text", Name: Cut(name, TextLimit)})
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

// collectOptions gathers the options of the <select> n, each with the
// label of its <optgroup> (group), and whether it is disabled.
func collectOptions[T any](doc *Doc[T], n *Node, group string, out *[]Option) {
	for _, id := range n.ChildIDs {
		c := doc.Nodes[id]
		if c == nil {
			continue
		}
		r := String(c.Role)
		if (r == "option" || r == "MenuListOption") && !c.Ignored {
			*out = append(*out, Option{Label: Squash(String(c.Name)), Group: group, Disabled: hasTrue(c.Props, "disabled")})
			continue
		}
		g := group
		if r == "group" && !c.Ignored {
			g = Squash(String(c.Name))
		}
		collectOptions(doc, c, g, out)
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
