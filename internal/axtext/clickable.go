// Room: elements a page makes clickable without a role that says so (a
// <div> or <span> with a click handler or a pointer cursor): which of them
// a snapshot gives a ref, and the name it prints for them. No locks (a
// Doc is used by one goroutine).

package axtext

import "strings"

// ClickableRole is the role a snapshot prints for an element the page made
// clickable (Doc.Clickable) whose own role says nothing (a generic <div>
// or <span>). A clickable element with a role of its own (a list item, an
// image, a heading) keeps it, with the state "clickable".
const ClickableRole = "clickable"

// plainRoles are the roles that say nothing of what an element does: a
// clickable one prints as ClickableRole.
var plainRoles = set("generic", "none", "presentation", "div", "Section", "SectionWithoutName", "Unknown", "LabelText", "label")

// clickable reports whether n is an element the page made clickable that
// should get a ref: in doc.Clickable, not interactive by its role, with
// nothing under it that is interactive (a card holding a link, or an
// app's root that listens for every click, leaves the ref to what is
// inside), and not inside an editable element (whose blocks an editor
// listens to).
func (d *Doc[T]) clickable(n *Node) bool {
	_, ok := d.Clickable[n.Backend]
	return n.Backend != 0 && ok && !interactive(n) && !d.holdsChildTarget(n) && !d.inEditable(n)
}

// inEditable reports whether an ancestor of n is editable (contenteditable,
// a text field).
func (d *Doc[T]) inEditable(n *Node) bool {
	for p := d.Nodes[n.ParentID]; p != nil; p = d.Nodes[p.ParentID] {
		for _, pr := range p.Props {
			if pr.Name == "editable" {
				return true
			}
		}
	}
	return false
}

// holdsChildTarget reports whether something under n is interactive.
func (d *Doc[T]) holdsChildTarget(n *Node) bool {
	for _, id := range n.ChildIDs {
		if c := d.Nodes[id]; c != nil && d.holdsTarget(c) {
			return true
		}
	}
	return false
}

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

// holdsTarget reports whether n or a node under it is interactive
// (memoized: a page with many clickable rows walks each subtree once).
func (d *Doc[T]) holdsTarget(n *Node) bool {
	if v, ok := d.holds[n]; ok {
		return v
	}
	v := interactive(n)
	for _, id := range n.ChildIDs {
		if v {
			break
		}
		if c := d.Nodes[id]; c != nil {
			v = d.holdsTarget(c)
		}
	}
	if d.holds == nil {
		d.holds = make(map[*Node]bool)
	}
	d.holds[n] = v
	return v
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
// order), squashed: the name of a clickable element that has none.
func (d *Doc[T]) text(n *Node) string {
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
			if c := d.Nodes[id]; c != nil {
				walk(c)
			}
		}
	}
	walk(n)
	return Squash(b.String())
}
