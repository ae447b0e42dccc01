// Room: the keyboard of a fake page (Input.dispatchKeyEvent): the keys
// Chromium acts on, per kind of focused control, and an error naming any
// other key pressed on a focused control, so that a test never passes on a
// key the fake silently ignored. Built-in methods: they run with
// Browser.mu held.

package cdptest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Modifier bits of Input.dispatchKeyEvent.
const (
	modAlt   = 1
	modCtrl  = 2
	modMeta  = 4
	modShift = 8
)

// modifierKeys are keys that only hold a modifier down.
var modifierKeys = map[string]bool{"Shift": true, "Control": true, "Alt": true, "Meta": true, "AltGraph": true, "CapsLock": true}

// keyModels says, per kind of control (see controlKind), which keys the
// fake acts on there; any other key there is an error.
var keyModels = map[string]string{
	"text":     "Tab, Enter (submits its form), Backspace, Delete, Escape (clears a search field), Control/Meta+A and typed characters",
	"checkbox": "Tab, Space (toggles it), Enter (submits its form), and Backspace, Delete, Escape and typed characters (which do nothing)",
	"radio":    "Tab, Space (checks it), ArrowDown, ArrowUp, ArrowLeft and ArrowRight (move the choice through its group), Enter (submits its form), and Backspace, Delete, Escape and typed characters (which do nothing)",
	"button":   "Tab, Space and Enter (click it), and Backspace, Delete, Escape and typed characters (which do nothing)",
	"link":     "Tab, Enter (follows it), and Backspace, Delete, Escape and typed characters other than Space (which do nothing)",
	"select":   "Tab, ArrowDown, ArrowUp, Home and End (move its choice), and Backspace, Delete and Escape (which do nothing)",
	"file":     "Tab, and Backspace, Delete, Escape and typed characters other than Space (which do nothing)",
}

// controlKind is the kind of control e is, for the keyboard: a key of
// keyModels, or "" for an element that takes no keys.
func controlKind(e *Element) string {
	switch k := e.kind(); k {
	case "text", "search", "password", "email":
		return "text"
	case "checkbox", "radio", "select", "file":
		return k
	case "button", "submit":
		return "button"
	}
	if e.Role == "link" {
		return "link"
	}
	return ""
}

func (b *Browser) dispatchKeyEvent(s *session, params json.RawMessage) outcome {
	var p struct {
		Type      string `json:"type"`
		Key       string `json:"key"`
		Text      string `json:"text"`
		Modifiers int    `json:"modifiers"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	pg := t.page
	f := pg.focus
	switch p.Type {
	case "keyUp":
		// A button, checkbox or radio acts on Space's keyUp, as in
		// Chromium: a dialog it opens holds the keyUp.
		if down := t.spaceDown; p.Key == " " && down != nil {
			t.spaceDown = nil
			if down == f {
				return b.clickLocked(s, down)
			}
		}
		return outcome{}
	case "keyDown", "rawKeyDown":
		if w := pg.typing; w != nil && f == w.el {
			w.keys++ // pagejs.TypeWatchArm counts the presses its element gets
		}
	default: // "char": the keyDown with its text typed already
		return outcome{}
	}
	mods := p.Modifiers
	switch {
	case modifierKeys[p.Key]:
		return outcome{}
	case p.Key == "Tab" && mods&^modShift == 0:
		b.tabLocked(t, mods&modShift != 0)
		return outcome{}
	case strings.EqualFold(p.Key, "a") && mods&(modCtrl|modMeta) != 0 && mods&modAlt == 0:
		t.selectAll = f != nil && editable(f)
		return outcome{}
	case f == nil:
		// Nothing focused: the keys act on no control. (Chromium scrolls
		// the page on Space, PageDown, the arrows, Home and End; the fake
		// does not, as the doc says.)
		return outcome{}
	case mods&(modAlt|modCtrl|modMeta) != 0:
		return unmodeledKey(p.Key, mods, f)
	}
	kind := controlKind(f)
	typed := p.Text != "" && p.Type == "keyDown" && p.Key != "Enter"
	switch {
	case p.Key == "Enter":
		switch kind {
		case "button", "link":
			return b.clickLocked(s, f)
		case "text", "checkbox", "radio":
			// Implicit submission: the form's first submit button.
			if submit := pg.defaultButton(formOf(f)); submit != nil {
				return b.clickLocked(s, submit)
			}
			return outcome{}
		}
	case p.Key == " " && (kind == "button" || kind == "checkbox" || kind == "radio"):
		t.spaceDown = f
		return outcome{}
	case p.Key == "Escape":
		if kind == "text" && f.kind() == "search" && editable(f) {
			f.Value, t.selectAll = "", false
		}
		if kind != "" {
			return outcome{}
		}
	case p.Key == "Backspace" || p.Key == "Delete":
		if kind == "text" && editable(f) {
			if t.selectAll {
				f.Value = ""
			} else if p.Key == "Backspace" && f.Value != "" {
				r := []rune(f.Value)
				f.Value = string(r[:len(r)-1])
			}
			t.selectAll = false
		}
		if kind != "" {
			return outcome{}
		}
	case kind == "select" && !f.Multiple && slices.Contains([]string{"ArrowDown", "ArrowUp", "Home", "End"}, p.Key):
		return outcome{err: b.moveChoiceLocked(t, f, p.Key)}
	case kind == "radio" && slices.Contains([]string{"ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight"}, p.Key):
		if o, ok := b.moveRadioLocked(t, f, p.Key); ok {
			return o
		}
	case typed && kind == "text":
		b.typeLocked(t, p.Text)
		return outcome{}
	case typed && (kind == "button" || kind == "checkbox" || kind == "radio"),
		typed && (kind == "link" || kind == "file") && p.Key != " ":
		return outcome{} // Chromium does nothing with them there
	}
	return unmodeledKey(p.Key, mods, f)
}

// tabLocked moves the focus to the next control in tab order (the
// previous with Shift); past the end (the start) to nothing, the page
// left; with nothing focused, to the first (with Shift the last), as
// Chromium does.
func (b *Browser) tabLocked(t *target, back bool) {
	pg := t.page
	boxes := pg.layout()
	var order []*Element
	walkElements(pg.Body, func(e *Element) bool {
		if _, shown := boxes[e]; shown && e.focusable() && (e.kind() != "radio" || pg.radioTabStop(e)) {
			order = append(order, e)
		}
		return true
	})
	if len(order) == 0 {
		return
	}
	i := slices.Index(order, pg.focus)
	switch {
	case i < 0 && back:
		i = len(order) - 1
	case i < 0:
		i = 0
	case back:
		i--
	default:
		i++
	}
	t.selectAll = false
	if i < 0 || i == len(order) {
		// Past either end focus leaves the page (for the browser's own
		// controls), as in Chromium: keys reach no control until the
		// next Tab comes back in at the other end.
		pg.focus = nil
		return
	}
	pg.focus = order[i]
}

// radioTabStop reports whether the radio r is its group's stop in the tab
// order: the group's checked radio, else its first, as in Chromium, where
// Tab leaves a radio group at once.
func (p *Page) radioTabStop(r *Element) bool {
	group := p.radioGroup(r)
	for _, e := range group {
		if e.Checked {
			return e == r
		}
	}
	return group[0] == r
}

// moveChoiceLocked moves a closed select's choice by a key, stopping at
// either end, as Chromium on Linux does, and runs its OnChange if the
// choice changed.
func (b *Browser) moveChoiceLocked(t *target, sel *Element, key string) *Error {
	n := len(sel.Options)
	if n == 0 {
		return nil
	}
	i := slices.Index(sel.Options, sel.Value)
	switch key {
	case "ArrowDown":
		i = min(i+1, n-1)
	case "ArrowUp":
		i = max(i-1, 0)
	case "Home":
		i = 0
	case "End":
		i = n - 1
	}
	if sel.Options[i] == sel.Value {
		return nil
	}
	sel.Value = sel.Options[i]
	return b.changedLocked(t, sel)
}

// moveRadioLocked checks and focuses the next radio of r's group
// (ArrowDown, ArrowRight) or the previous (ArrowUp, ArrowLeft), round
// from end to start, skipping those that cannot take the focus, and runs
// its OnChange. ok is false when the group has no other radio to move to
// (Chromium then scrolls the page, which the fake does not model).
func (b *Browser) moveRadioLocked(t *target, r *Element, key string) (o outcome, ok bool) {
	pg := t.page
	var group []*Element
	for _, e := range pg.radioGroup(r) {
		if e == r || e.focusable() && rendered(e) {
			group = append(group, e)
		}
	}
	if len(group) < 2 {
		return outcome{}, false
	}
	i := slices.Index(group, r)
	if key == "ArrowDown" || key == "ArrowRight" {
		i = (i + 1) % len(group)
	} else {
		i = (i - 1 + len(group)) % len(group)
	}
	next := group[i]
	pg.checkRadio(next)
	pg.focus, t.selectAll = next, false
	return outcome{err: b.changedLocked(t, next)}, true
}

// unmodeledKey is the error for a key pressed on a focused control that
// the fake does not model there.
func unmodeledKey(key string, mods int, f *Element) outcome {
	k := fmt.Sprintf("%q", key)
	var held []string
	for _, m := range []struct {
		bit  int
		name string
	}{{modAlt, "Alt"}, {modCtrl, "Control"}, {modMeta, "Meta"}, {modShift, "Shift"}} {
		if mods&m.bit != 0 {
			held = append(held, m.name)
		}
	}
	if len(held) > 0 {
		k += " (with " + strings.Join(held, "+") + ")"
	}
	what := f.named()
	if f.kind() == "file" {
		what = fmt.Sprintf("file input %q", f.Name)
	}
	models := keyModels[controlKind(f)]
	if models == "" {
		models = "Tab"
	}
	return outcome{err: &Error{Code: -32000, Message: fmt.Sprintf(
		"cdptest does not model the key %s on the focused %s, where Chromium may act on it; "+
			"there the fake models %s: press one of those, act with Click, Fill or Select instead, "+
			"or answer Input.dispatchKeyEvent with Browser.Handle", k, what, models)}}
}

func editable(e *Element) bool {
	return (e.Role == "textbox" || e.Role == "searchbox") && !e.Disabled && !e.ReadOnly
}

// typeWatch is pagejs.TypeWatchArm's count on a fake page: the key
// presses the element that had the focus got.
type typeWatch struct {
	el   *Element
	keys int
}
