// Room: elements a page makes clickable without a role that says so (a
// <div> or <span> with a click handler or a pointer cursor): which of them
// a snapshot gives a ref, and the name it prints for them. No locks (a
// Doc is used by one goroutine).

package axtext

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mafredri/cdp/protocol/dom"
)

// ClickableRole is the role a snapshot prints for an element the page made
// clickable (Doc.Clickable) whose own role says nothing (a generic <div>
// or <span>). A clickable element with a role of its own (a list item, an
// image, a heading) keeps it, with the state "clickable".
const ClickableRole = "clickable"

// Clickable is what a snapshot knows of an element the page made
// clickable beyond its accessibility node: a note for its line ("the label
// of a hidden checkbox"); the name to fall back on when it has no name and
// no text (its title, or its test id: an icon) is Doc.Names'. Role and Text are
// what its DOM says it is, for an element the accessibility tree leaves
// out (see hiddenTarget).
type Clickable struct {
	Note      string
	Role      string // the role its element has by its tag: "link" for <a href>, "button" for <button>; "" for none
	Text      string // the text of the element's DOM (its text nodes, joined)
	Pointer   bool   // drawn with a pointer cursor
	Draggable bool   // draggable="true": a person can drag it (Tab.Drag); its line has the state "draggable"
	DragOnly  bool   // Draggable, and nothing says a click does anything: no state "clickable"
	// Ancestors are the backend node ids of the element's DOM ancestors,
	// nearest first: an element the tree leaves out altogether (a page's
	// aria-hidden dropdown) is put under the nearest of them the tree has,
	// in page order (see graft).
	Ancestors []dom.BackendNodeID
}

// plainRoles are the roles that say nothing of what an element does: a
// clickable one prints as ClickableRole.
var plainRoles = set("generic", "none", "presentation", "div", "Section", "SectionWithoutName", "Unknown", "LabelText", "label")

// clickable reports whether n is an element the page made clickable that
// should get a ref: in doc.Clickable, not interactive by its role, not
// inside a control (a button's or a link's inner parts are the control's)
// or an editable element (whose blocks an editor listens to), and either
// with nothing under it that is interactive, or, like a mail's row around
// its checkbox or a product's card around its button, drawn with a pointer
// cursor around a few such controls (up to maxHeldControls, none of them a
// text field) with text of its own beside them. A card holding only a
// link, a modal's backdrop around its buttons, or an app's root that
// listens for every click, leaves the ref to what is inside.
func (d *Doc[T]) clickable(n *Node) bool {
	c, ok := d.Clickable[n.Backend]
	if !ok || n.Backend == 0 || interactive(n) || d.insideControl(n) {
		return false
	}
	held := d.heldControls(n)
	return held == 0 || (c.Pointer || c.Draggable) && held <= maxHeldControls && !d.holdsField(n) && d.text(n, true) != ""
}

// hiddenTarget reports whether n, a node the accessibility tree leaves
// out (ignored), gets a line and a ref all the same: it is an element the
// page draws and made clickable (Doc.Clickable), and it says what it is
// (its text, the text of its DOM, its title or test id). Many sites put
// aria-hidden on UI they show (a whole app's root, a header's cart
// link): an agent sees it on screen and must be able to use it, so it
// prints with the role its element has (Clickable.Role, else
// ClickableRole) and its own text, never as a nameless "clickable". What
// the page hides from the tree and does not make clickable (a heading, a
// paragraph under aria-hidden) is dropped, as the tree means, and so is a
// clickable element that says nothing.
func (d *Doc[T]) hiddenTarget(n *Node) bool {
	c, ok := d.Clickable[n.Backend]
	if !ok || n.Backend == 0 || !d.clickable(n) {
		return false
	}
	return Squash(c.Text) != "" || d.fallbackName(n) != "" || d.text(n, true) != ""
}

// fallbackName is the name of n when it has neither a name nor text (an
// icon): its title or test id (Doc.Names), or "".
func (d *Doc[T]) fallbackName(n *Node) string {
	if n.Backend == 0 {
		return ""
	}
	return d.Names[n.Backend]
}

// drawnText returns the text of a clickable element as the page draws it
// (dom, Clickable.Text) where it says what the tree's text (tree, from
// Doc.text) says but for its spaces: the tree gives the pieces an inline
// tag splits ("bo", "ld") as words of their own, the DOM joins them
// ("bold"). Where they differ otherwise (an image's name, a control's
// text left out), tree stays.
func drawnText(tree, dom string) string {
	dom = Squash(strings.Map(dropPrivate, dom))
	if dom == tree || dom == "" || tree == "" {
		return tree
	}
	if strings.Join(strings.Fields(dom), "") == strings.Join(strings.Fields(tree), "") {
		return dom
	}
	return tree
}

// holdsField reports whether a text field is under n.
func (d *Doc[T]) holdsField(n *Node) bool {
	for _, id := range n.ChildIDs {
		c := d.Nodes[id]
		if c == nil {
			continue
		}
		if !c.Ignored && valueRoles[String(c.Role)] || d.holdsField(c) {
			return true
		}
	}
	return false
}

// maxHeldControls is how many controls a clickable row or card may hold
// and keep a ref of its own.
const maxHeldControls = 3

// leafControls are the roles whose inner parts belong to them: a click on
// any part is the control's. A tab, a tree item, an option or a menu item
// may hold targets of their own (a tab's close ×, a tree item's arrow).
var leafControls = set("button", "link", "checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio",
	"textbox", "searchbox", "slider", "spinbutton")

// insideControl reports whether an ancestor of n is a leaf control or is
// editable (contenteditable, a text field).
func (d *Doc[T]) insideControl(n *Node) bool {
	for p := d.Nodes[n.ParentID]; p != nil; p = d.Nodes[p.ParentID] {
		if !p.Ignored && leafControls[String(p.Role)] {
			return true
		}
		for _, pr := range p.Props {
			if pr.Name == "editable" {
				return true
			}
		}
	}
	return false
}

// heldControls counts the interactive nodes under n (not those inside
// them), up to maxHeldControls+1.
func (d *Doc[T]) heldControls(n *Node) int {
	count := 0
	for _, id := range n.ChildIDs {
		if c := d.Nodes[id]; c != nil && count <= maxHeldControls {
			count += d.controls(c)
		}
	}
	return min(count, maxHeldControls+1)
}

// holdsChildTarget reports whether something under n is interactive.
func (d *Doc[T]) holdsChildTarget(n *Node) bool { return d.heldControls(n) > 0 }

// nativeSelect reports whether the combobox n is a <select> (its options
// in a MenuListPopup), whose options a snapshot summarizes on its line,
// rather than an ARIA combobox, whose field and list it walks.
func (d *Doc[T]) nativeSelect(n *Node) bool {
	for _, id := range n.ChildIDs {
		if c := d.Nodes[id]; c != nil && String(c.Role) == "MenuListPopup" {
			return true
		}
	}
	return false
}

// controls counts n if it is interactive, else the interactive nodes
// under it (memoized, capped at maxHeldControls+1: a page with many
// clickable rows walks each subtree once).
func (d *Doc[T]) controls(n *Node) int {
	if v, ok := d.holds[n]; ok {
		return v
	}
	v := 0
	if interactive(n) {
		v = 1
	} else {
		for _, id := range n.ChildIDs {
			if c := d.Nodes[id]; c != nil && v <= maxHeldControls {
				v += d.controls(c)
			}
		}
		v = min(v, maxHeldControls+1)
	}
	if d.holds == nil {
		d.holds = make(map[*Node]int)
	}
	d.holds[n] = v
	return v
}

// target reports whether n is interactive or one the page made clickable.
func (d *Doc[T]) target(n *Node) bool {
	_, listed := d.Clickable[n.Backend]
	return interactive(n) || n.Backend != 0 && listed
}

// interactive reports whether n gets a ref by its own role or focus.
func interactive(n *Node) bool {
	if n.Ignored {
		return false
	}
	role := String(n.Role)
	if interactiveRoles[role] {
		return true
	}
	for _, p := range n.Props {
		if p.Name == "focusable" && RawString(p.Value.Value) == "true" {
			return role != "RootWebArea"
		}
	}
	return false
}

// text returns the text under n (its static texts and named images, in
// order), squashed, without a list's bullets, and with own set, without
// what the interactive or clickable nodes under it hold: the name of a
// clickable element that has none.
func (d *Doc[T]) text(n *Node, own bool) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		if b.Len() > 4*NameLimit {
			return
		}
		switch role := String(n.Role); {
		case skippedRoles[role]:
			return // a list's bullets
		case role == "StaticText" || role == "image" || role == "img":
			if s := Squash(String(n.Name)); s != "" && !n.Ignored {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(s)
			}
			return
		}
		for _, id := range n.ChildIDs {
			if c := d.Nodes[id]; c != nil && !(own && d.target(c)) {
				walk(c)
			}
		}
	}
	walk(n)
	return trimBullet(Squash(strings.Map(dropPrivate, b.String())))
}

// trimBullet drops a list's bullet and its space from the start of s ("•
// item"); a minus sign or an asterisk stays ("-45.00").
func trimBullet(s string) string {
	for _, b := range []string{"• ", "◦ ", "▪ ", "‣ ", "· "} {
		if rest, ok := strings.CutPrefix(s, b); ok {
			return rest
		}
	}
	return s
}

// dropPrivate drops the characters of Unicode's private use area: an icon
// font's glyphs (a trash can drawn as U+F1F8) say nothing as text.
func dropPrivate(r rune) rune {
	if r >= 0xE000 && r <= 0xF8FF || r >= 0xF0000 {
		return -1
	}
	return r
}

// graft puts under the tree each element of Clickable the tree leaves out
// altogether (Chromium drops an aria-hidden subtree's plain elements from
// it) that says what it is (its DOM's text, title or test id), as an
// ignored node under its nearest DOM ancestor the tree has (or one grafted
// before it), among that ancestor's children in page order (DOMIndex; after
// them when it cannot say): hiddenTarget then prints it with its text, as
// the page draws it. What the page hides and nothing listens to stays out.
func (d *Doc[T]) graft() {
	if len(d.Clickable) == 0 || d.grafted {
		return
	}
	d.grafted = true
	byBackend := make(map[dom.BackendNodeID]*Node, len(d.Nodes))
	for _, n := range d.Nodes {
		if n.Backend != 0 {
			byBackend[n.Backend] = n
		}
	}
	var missing []dom.BackendNodeID
	for b, c := range d.Clickable {
		if _, ok := byBackend[b]; !ok && b != 0 && len(c.Ancestors) > 0 && (Squash(c.Text) != "" || d.Names[b] != "") {
			missing = append(missing, b)
		}
	}
	// In page order (ties, and a tree without DOMIndex, by backend id), so
	// that one grafted before another under the same ancestor stays first.
	sort.Slice(missing, func(i, j int) bool {
		a, b := d.domIndex(missing[i]), d.domIndex(missing[j])
		return a < b || a == b && missing[i] < missing[j]
	})
	for _, b := range missing {
		for _, a := range d.Clickable[b].Ancestors {
			p, ok := byBackend[a]
			if !ok {
				continue
			}
			n := &Node{NodeID: fmt.Sprintf("dom-%d", b), Ignored: true, ParentID: p.NodeID, Backend: b}
			d.Nodes[n.NodeID] = n
			p.ChildIDs = slices.Insert(p.ChildIDs, d.placeAmong(p.ChildIDs, b), n.NodeID)
			byBackend[b] = n
			break
		}
	}
}

// placeAmong returns where among children (node ids) the element b goes:
// before the first child the page has after it (DOMIndex), else at the
// end.
func (d *Doc[T]) placeAmong(children []string, b dom.BackendNodeID) int {
	at := d.domIndex(b)
	if at < 0 {
		return len(children)
	}
	for i, id := range children {
		if c := d.Nodes[id]; c != nil && c.Backend != 0 && d.domIndex(c.Backend) > at {
			return i
		}
	}
	return len(children)
}

// domIndex is b's place in its document (DOMIndex), or -1 when not known.
func (d *Doc[T]) domIndex(b dom.BackendNodeID) int {
	if d.DOMIndex != nil {
		if i, ok := d.DOMIndex(b); ok {
			return i
		}
	}
	return -1
}
