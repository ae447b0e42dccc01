// Room: the elements a page makes clickable without a role that says so,
// read for a snapshot from DOMSnapshot.captureSnapshot: those with a click
// listener (isClickable), the outermost of those drawn with a pointer
// cursor, and those it made draggable; and, from the same reply, the
// types of its inputs (a file input, a month field). No locks: a
// snapshot's walker is used by one goroutine.

package browserpool

import (
	"encoding/json"
	"strings"

	"github.com/mafredri/cdp/protocol/dom"

	"github.com/browserpool/browserpool/internal/axtext"
)

// domSnapshot is the part of DOMSnapshot.captureSnapshot's reply read here
// (asked for the computed cursor and display only).
type domSnapshot struct {
	Documents []struct {
		Nodes struct {
			Parent    []int               `json:"parentIndex"`
			Type      []int               `json:"nodeType"`
			Name      []int               `json:"nodeName"`
			Backend   []dom.BackendNodeID `json:"backendNodeId"`
			Attrs     [][]int             `json:"attributes"` // name, value, name, value…
			Value     []int               `json:"nodeValue"`  // a text node's text; -1 for none
			Clickable struct {
				Index []int `json:"index"`
			} `json:"isClickable"`
			Checked struct {
				Index []int `json:"index"`
			} `json:"inputChecked"`
		} `json:"nodes"`
		Layout struct {
			Node   []int       `json:"nodeIndex"`
			Styles [][]int     `json:"styles"` // cursor, display
			Bounds [][]float64 `json:"bounds"` // x, y, width, height in the document
		} `json:"layout"`
	} `json:"documents"`
	Strings []string `json:"strings"`
}

// domFacts is what a snapshot reads of a session's documents (its page
// and its same-process iframes) from DOMSnapshot.captureSnapshot.
type domFacts struct {
	clickable map[dom.BackendNodeID]axtext.Clickable // axtext.Doc.Clickable
	inputs    map[dom.BackendNodeID]string           // axtext.Doc.Inputs
	names     map[dom.BackendNodeID]string           // axtext.Doc.Names
	index     func(dom.BackendNodeID) (int, bool)    // axtext.Doc.DOMIndex
}

// domFacts returns the DOM nodes of session f's documents that the page
// makes clickable without a role (axtext.Doc.Clickable), the types of its
// inputs a snapshot prints (axtext.Doc.Inputs) and the names of elements
// that may have none of their own (axtext.Doc.Names), read once per session
// and snapshot. A browser that cannot say (an older Chromium, a fake
// without the call) gives none: the snapshot goes on without them.
func (w *snapWalker) domFacts(f *frameSess) domFacts {
	if facts, ok := w.dom[f]; ok {
		return facts
	}
	if w.dom == nil {
		w.dom = make(map[*frameSess]domFacts)
	}
	args := struct {
		Styles []string `json:"computedStyles"`
	}{[]string{"cursor", "display"}}
	var facts domFacts
	if raw, err := f.d.InvokeRaw(w.ctx, "DOMSnapshot.captureSnapshot", &args); err == nil {
		var snap domSnapshot
		if json.Unmarshal(raw, &snap) == nil {
			str := snap.stringIndex()
			facts = domFacts{clickable: snap.clickables(str), inputs: snap.inputs(str), names: snap.names(str), index: snap.index()}
		}
	}
	w.dom[f] = facts
	return facts
}

// index returns each node's index in its document of the reply (its place
// in page order: axtext.Doc.DOMIndex), for the snapshot's documents' trees
// to share: the map is made on the first call, which only a tree with an
// element it leaves out makes (axtext.Doc.DOMIndex).
func (s *domSnapshot) index() func(dom.BackendNodeID) (int, bool) {
	docs := make([][]dom.BackendNodeID, len(s.Documents))
	for i, d := range s.Documents {
		docs[i] = d.Nodes.Backend
	}
	var at map[dom.BackendNodeID]int // made on the first call (the walker's goroutine)
	return func(b dom.BackendNodeID) (int, bool) {
		if at == nil {
			at = make(map[dom.BackendNodeID]int)
			for _, backend := range docs {
				for i, node := range backend {
					at[node] = i
				}
			}
		}
		i, ok := at[b]
		return i, ok
	}
}

// stringIndex maps each string of the reply's table to its (first) index,
// which the reply's nodes use in its place.
func (s *domSnapshot) stringIndex() map[string]int {
	str := make(map[string]int, len(s.Strings))
	for i, v := range s.Strings {
		if _, ok := str[v]; !ok {
			str[v] = i
		}
	}
	return str
}

// inputs reads the reply (str: its stringIndex): the type of each <input>
// whose type a snapshot prints (axtext.InputTypes), lowercase, by its
// backend node id.
func (s *domSnapshot) inputs(str map[string]int) map[dom.BackendNodeID]string {
	input, ok := str["INPUT"]
	typeKey, ok2 := str["type"]
	if !ok || !ok2 {
		return nil
	}
	var out map[dom.BackendNodeID]string
	for _, d := range s.Documents {
		n := d.Nodes
		if len(n.Name) != len(n.Backend) || n.Attrs == nil || len(n.Attrs) != len(n.Backend) {
			continue // not the reply's documented shape
		}
		for i, name := range n.Name {
			if name != input {
				continue
			}
			t, _ := s.attr(n.Attrs, i, typeKey)
			if t = strings.ToLower(strings.TrimSpace(t)); axtext.InputTypes[t] {
				if out == nil {
					out = make(map[dom.BackendNodeID]string)
				}
				out[n.Backend[i]] = t
			}
		}
	}
	return out
}

// clickables reads the reply: in each document, the elements with a click
// listener (but a list or a table not drawn with a pointer cursor: it
// delegates its items' clicks), and the elements drawn with a pointer
// cursor whose nearest drawn ancestor is not (the cursor is inherited:
// the outermost is the one the page made clickable); all of them drawn
// with an area and not parked far off the page (offPage); labels, the
// document's root and its body aside (a label clicks its control, which
// has a ref; a page may listen for clicks everywhere). Besides them, the
// labels drawn for a form control that is not (a checkbox or file input
// the page hides and draws its label instead), each with a note naming
// the control, such as "(the label of a hidden checkbox, checked)". And
// the elements drawn with an area that the page made draggable
// (draggable="true"), marked Draggable. str is the reply's stringIndex.
func (s *domSnapshot) clickables(str map[string]int) map[dom.BackendNodeID]axtext.Clickable {
	pointer, html, body, label := indexOf(str, "pointer"), indexOf(str, "HTML"), indexOf(str, "BODY"), indexOf(str, "LABEL")
	lists := map[int]bool{}
	for _, l := range []string{"UL", "OL", "DL", "MENU", "TABLE", "TBODY"} {
		if i := indexOf(str, l); i >= 0 {
			lists[i] = true
		}
	}
	set := map[dom.BackendNodeID]axtext.Clickable{}
	draggable := indexOf(str, "draggable")
	for _, d := range s.Documents {
		n := d.Nodes
		if len(n.Parent) != len(n.Backend) || len(n.Type) != len(n.Backend) || len(n.Name) != len(n.Backend) || len(d.Layout.Node) != len(d.Layout.Styles) || n.Attrs != nil && len(n.Attrs) != len(n.Backend) {
			continue // not the reply's documented shape
		}
		cursor := make([]int, len(n.Backend))
		for i := range cursor {
			cursor[i] = undrawn
		}
		seen := make([]bool, len(n.Backend)) // drawn with an area, not parked off the page
		for li, ni := range d.Layout.Node {
			if ni >= 0 && ni < len(cursor) {
				cursor[ni] = -1
				if st := d.Layout.Styles[li]; len(st) > 0 {
					cursor[ni] = st[0]
				}
				if li < len(d.Layout.Bounds) {
					// Parked far off the page (left: -9999px), not merely
					// scrolled out of an inner pane's view.
					if b := d.Layout.Bounds[li]; len(b) == 4 && b[2] > 0 && b[3] > 0 && b[0]+b[2] > -offPage && b[1]+b[3] > -offPage {
						seen[ni] = true
					}
				}
			}
		}
		var added []int // the nodes add put in set, for their text and role
		add := func(i int, note string) {
			if i >= 0 && i < len(cursor) && seen[i] && n.Type[i] == 1 && n.Name[i] != html && n.Name[i] != body {
				set[n.Backend[i]] = axtext.Clickable{Note: note, Pointer: pointer >= 0 && cursor[i] == pointer}
				added = append(added, i)
			}
		}
		// A label is clickable for its control, which has a ref of its
		// own; only the label of a hidden control is added (below).
		// A list listening for its items' clicks (delegation), not drawn
		// as clickable itself, is not what an agent clicks: its items
		// are.
		for _, i := range n.Clickable.Index {
			if i >= 0 && i < len(cursor) && n.Name[i] != label && (pointer >= 0 && cursor[i] == pointer || !lists[n.Name[i]]) {
				add(i, "")
			}
		}
		if pointer >= 0 {
			for i, c := range cursor {
				if c != pointer {
					continue
				}
				p := n.Parent[i]
				for p >= 0 && p < len(cursor) && cursor[p] == undrawn {
					p = n.Parent[p]
				}
				if (p < 0 || p >= len(cursor) || cursor[p] != pointer) && n.Name[i] != label {
					add(i, "")
				}
			}
		}
		s.hiddenControlLabels(n.Parent, n.Name, n.Attrs, n.Checked.Index, cursor, str, add)
		// Elements the page lets a person drag (draggable="true": a card,
		// a sortable list's item): Drag needs a ref for them even where
		// nothing is listening for a click.
		for i := range n.Backend {
			if v, ok := s.attr(n.Attrs, i, draggable); !ok || !strings.EqualFold(v, "true") {
				continue
			}
			if c, ok := set[n.Backend[i]]; ok {
				c.Draggable = true
				set[n.Backend[i]] = c
				continue
			}
			add(i, "")
			if c, ok := set[n.Backend[i]]; ok {
				c.Draggable, c.DragOnly = true, true
				set[n.Backend[i]] = c
			}
		}
		if len(added) > 0 {
			t := s.texter(n.Parent, n.Type, n.Name, n.Value, d.Layout.Node, d.Layout.Styles, str)
			for _, i := range added {
				c := set[n.Backend[i]]
				c.Text, c.Role = t.text(i), s.tagRole(n.Name[i], n.Attrs, i, str)
				c.Ancestors = nil
				for p, k := n.Parent[i], 0; p >= 0 && p < len(n.Backend) && k < maxAncestors; p, k = n.Parent[p], k+1 {
					c.Ancestors = append(c.Ancestors, n.Backend[p])
				}
				set[n.Backend[i]] = c
			}
		}
	}
	return set
}

// hiddenControlLabels calls add for each label of a document's form
// controls that are not drawn (cursor undrawn): the label naming it (for=)
// or around it. The note names the control's type, and whether it is
// checked.
func (s *domSnapshot) hiddenControlLabels(parent, name []int, attrs [][]int, checked []int, cursor []int, str map[string]int, add func(label int, note string)) {
	get := func(i int, key string) (string, bool) {
		k, ok := str[key]
		if !ok {
			return "", false
		}
		return s.attr(attrs, i, k)
	}
	is := func(i int, v string) bool {
		k, ok := str[v]
		return ok && name[i] == k
	}
	isChecked := map[int]bool{}
	for _, i := range checked {
		isChecked[i] = true
	}
	// The hidden controls, by id, and the label each is inside.
	hidden := map[string]int{}
	inside := map[int]int{} // label → control
	for i := range name {
		if cursor[i] != undrawn || !(is(i, "INPUT") || is(i, "SELECT") || is(i, "TEXTAREA")) {
			continue
		}
		if t, _ := get(i, "type"); strings.EqualFold(t, "hidden") {
			continue
		}
		if id, ok := get(i, "id"); ok && id != "" {
			hidden[id] = i
		}
		for p := parent[i]; p >= 0 && p < len(name); p = parent[p] {
			if is(p, "LABEL") {
				if _, named := get(p, "for"); !named {
					inside[p] = i
				}
				break
			}
		}
	}
	if len(hidden) == 0 && len(inside) == 0 {
		return
	}
	note := func(c int) string {
		kind := strings.ToLower(s.Strings[name[c]])
		if t, ok := get(c, "type"); ok && is(c, "INPUT") && t != "" {
			kind = strings.ToLower(t)
		}
		if kind == "file" {
			kind = "file input"
		}
		if isChecked[c] {
			return "(the label of a hidden " + kind + ", checked)"
		}
		return "(the label of a hidden " + kind + ")"
	}
	for i := range name {
		if !is(i, "LABEL") || cursor[i] == undrawn {
			continue
		}
		if id, ok := get(i, "for"); ok {
			if c, ok := hidden[id]; ok {
				add(i, note(c))
			}
		} else if c, ok := inside[i]; ok {
			add(i, note(c))
		}
	}
}

// undrawn marks, in clickables' cursors, a node the page does not draw
// (no layout object); -1 is one drawn without a computed cursor.
const undrawn = -2

// attr returns the value of the attribute named by string index key of
// node i of a document, if it has it.
func (s *domSnapshot) attr(attrs [][]int, i, key int) (string, bool) {
	if i >= len(attrs) || key < 0 {
		return "", false
	}
	a := attrs[i]
	for j := 0; j+1 < len(a); j += 2 {
		if a[j] == key && a[j+1] >= 0 && a[j+1] < len(s.Strings) {
			return s.Strings[a[j+1]], true
		}
	}
	return "", false
}

// offPage is how far left of or above the document an element must lie
// to count as parked off the page (left: -9999px): a row scrolled out of
// an inner pane lies less far.
const offPage = 5000

// nameAttrs are the attributes that name an element with neither a name
// nor text (an icon), in the order they are tried: its title, the
// attributes that label it, then its test id (in words).
var nameAttrs = []string{"title", "aria-label", "data-testid", "data-test", "data-qa"}

// testIDs are the nameAttrs that hold a test id, whose words are split
// ("close-dialog" is "close dialog").
var testIDs = map[string]bool{"data-testid": true, "data-test": true, "data-qa": true}

// nameKeys returns the string indexes of nameAttrs in the reply (-1 for
// those it does not hold), in their order.
func (s *domSnapshot) nameKeys(str map[string]int) []int {
	keys := make([]int, len(nameAttrs))
	for j, a := range nameAttrs {
		keys[j] = indexOf(str, a)
	}
	return keys
}

// fallbackName is the name of node i of a document for a line that has
// neither a name nor text (an icon): the first of nameAttrs it has (keys:
// nameKeys), a test id in words ("close-dialog" is "close dialog").
func (s *domSnapshot) fallbackName(attrs [][]int, i int, keys []int) string {
	for j, k := range keys {
		v, _ := s.attr(attrs, i, k)
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if testIDs[nameAttrs[j]] {
			v = strings.Join(strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' }), " ")
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// names reads the reply (str: its stringIndex): the fallbackName of each
// element that has one, by its backend node id (axtext.Doc.Names): a
// control that shows only an icon, with no listener the DOM shows, is
// named by it all the same.
func (s *domSnapshot) names(str map[string]int) map[dom.BackendNodeID]string {
	keys := s.nameKeys(str)
	var out map[dom.BackendNodeID]string
	for _, d := range s.Documents {
		n := d.Nodes
		if n.Attrs == nil || len(n.Attrs) != len(n.Backend) || len(n.Type) != len(n.Backend) {
			continue // not the reply's documented shape
		}
		for i := range n.Backend {
			if n.Type[i] != 1 || len(n.Attrs[i]) == 0 {
				continue
			}
			if v := s.fallbackName(n.Attrs, i, keys); v != "" {
				if out == nil {
					out = make(map[dom.BackendNodeID]string)
				}
				out[n.Backend[i]] = v
			}
		}
	}
	return out
}

// texter reads the text of a document's elements as the page draws it,
// for axtext.Clickable.Text: its drawn text nodes in order, their spaces
// as the page has them, a space at the edge of a block (anything not
// displayed inline) and for a <br>, so that text an inline tag splits
// ("bo<b>ld</b>") reads as one word.
type texter struct {
	s        *domSnapshot
	kids     [][]int // each node's children, in order
	value    []int   // each node's nodeValue
	isText   []bool  // a text node
	drawn    []bool  // has a layout object
	inline   []bool  // drawn and displayed inline (or with no display said)
	br       int     // the string index of "BR", or -1
	nodeName []int
}

// texter indexes a document's nodes (the reply's arrays; str its
// stringIndex) for text.
func (s *domSnapshot) texter(parent, typ, name, value, layoutNode []int, styles [][]int, str map[string]int) *texter {
	n := len(parent)
	t := &texter{s: s, kids: make([][]int, n), value: value, isText: make([]bool, n), drawn: make([]bool, n), inline: make([]bool, n), br: -1, nodeName: name}
	if i, ok := str["BR"]; ok {
		t.br = i
	}
	for i, p := range parent {
		if p >= 0 && p < n {
			t.kids[p] = append(t.kids[p], i)
		}
		t.isText[i] = i < len(typ) && typ[i] == 3
	}
	inlines := map[int]bool{}
	for _, d := range []string{"inline", "contents"} {
		if i, ok := str[d]; ok {
			inlines[i] = true
		}
	}
	for li, ni := range layoutNode {
		if ni < 0 || ni >= n {
			continue
		}
		t.drawn[ni] = true
		st := styles[li]
		t.inline[ni] = len(st) < 2 || st[1] < 0 || inlines[st[1]]
	}
	return t
}

// maxAncestors is how many of a clickable's DOM ancestors it lists
// (axtext.Clickable.Ancestors).
const maxAncestors = 64

// clickTextLimit is how much of an element's text texter reads: a line
// keeps less (axtext.NameLimit).
const clickTextLimit = 4 * axtext.NameLimit

// text returns the drawn text of node i, squashed, up to about
// clickTextLimit.
func (t *texter) text(i int) string {
	var b strings.Builder
	var walk func(i int)
	walk = func(i int) {
		if b.Len() > clickTextLimit {
			return
		}
		if t.isText[i] {
			if t.drawn[i] && i < len(t.value) && t.value[i] >= 0 && t.value[i] < len(t.s.Strings) {
				b.WriteString(t.s.Strings[t.value[i]])
			}
			return
		}
		block := t.drawn[i] && !t.inline[i] || i < len(t.nodeName) && t.nodeName[i] == t.br
		if block {
			b.WriteByte(' ')
		}
		for _, k := range t.kids[i] {
			walk(k)
		}
		if block {
			b.WriteByte(' ')
		}
	}
	for _, k := range t.kids[i] {
		walk(k)
	}
	return axtext.Squash(b.String())
}

// tagRole is the role node i's tag gives it (axtext.Clickable.Role):
// "link" for an <a href>, "button" for a <button>, else "".
func (s *domSnapshot) tagRole(name int, attrs [][]int, i int, str map[string]int) string {
	if name < 0 || name >= len(s.Strings) {
		return ""
	}
	switch s.Strings[name] {
	case "A":
		if _, ok := s.attr(attrs, i, indexOf(str, "href")); ok {
			return "link"
		}
	case "BUTTON":
		return "button"
	}
	return ""
}

// indexOf is the string index of v in the reply (str: its stringIndex),
// or -1.
func indexOf(str map[string]int, v string) int {
	if i, ok := str[v]; ok {
		return i
	}
	return -1
}
