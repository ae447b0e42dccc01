// Package keys turns key names and chords ("Enter", "Control+Shift+K") into
// the Input.dispatchKeyEvent events a US keyboard would send. Its tables
// are literals, read-only; it holds no other state and starts no goroutine.
// (chromedp's kb package is the precedent.)
//
// Room: key chords. No locks.
package keys

import (
	"fmt"
	"strings"

	"github.com/mafredri/cdp/protocol/input"
)

// Def is one key of the US layout.
type Def struct {
	Key      string // KeyboardEvent.key
	Code     string // KeyboardEvent.code
	KeyCode  int    // windowsVirtualKeyCode
	Text     string // what it types; "" for none
	Shifted  string // its key with Shift held, if different
	Shift    bool   // typing Key needs Shift (an upper-case letter, "!", …)
	Location int    // 1 left, 2 right, 3 numpad
}

// Modifier bits of Input.dispatchKeyEvent.
const (
	ModAlt   = 1
	ModCtrl  = 2
	ModMeta  = 4
	ModShift = 8
)

// modifier is a chord modifier: its key's name and its bit.
type modifier struct {
	name string
	bit  int
}

// Lookup finds a key by its KeyboardEvent.key name (case-insensitive for
// names longer than one character) or alias. Any other single character is
// a key that types itself, without a key code.
func Lookup(name string) (Def, bool) {
	if d, ok := us[name]; ok {
		return d, true
	}
	if len([]rune(name)) == 1 {
		return Def{Key: name, Text: name}, true // typed as is, no key code
	}
	if a, ok := aliases[strings.ToLower(name)]; ok {
		return us[a], true
	}
	for k, d := range us {
		if len(k) > 1 && strings.EqualFold(k, name) {
			return d, true
		}
	}
	return Def{}, false
}

// Events returns the key events of a key or chord, modifiers pressed in
// order and released in reverse, or, when keys names no key or chord, why
// (a sentence for an error's detail) and no events.
func Events(keys string) ([]*input.DispatchKeyEventArgs, string) {
	if keys == "" {
		return nil, "no key given"
	}
	var parts []string
	rest := keys
	for {
		i := strings.Index(rest[min(1, len(rest)):], "+")
		if i < 0 {
			parts = append(parts, rest)
			break
		}
		i += min(1, len(rest))
		parts = append(parts, rest[:i])
		rest = rest[i+1:]
		if rest == "" {
			return nil, fmt.Sprintf("%q ends with '+'", keys)
		}
	}
	var events []*input.DispatchKeyEventArgs
	mask := 0
	var held []Def
	for _, p := range parts[:len(parts)-1] {
		m, ok := modifiers[strings.ToLower(p)]
		if !ok {
			return nil, fmt.Sprintf("%q in %q is not a modifier (Control, Shift, Alt, Meta)", p, keys)
		}
		d := us[m.name]
		mask |= m.bit
		held = append(held, d)
		events = append(events, event("rawKeyDown", d, mask, ""))
	}
	main := parts[len(parts)-1]
	d, ok := Lookup(main)
	if !ok {
		return nil, fmt.Sprintf("%q is not a key name", main)
	}
	switch {
	case mask&ModShift != 0 && d.Shifted != "":
		// Shift+a is "A".
		if s, ok := us[d.Shifted]; ok {
			d = s
		}
	case mask&(ModAlt|ModCtrl|ModMeta) != 0 && d.Shift && strings.HasPrefix(d.Code, "Key"):
		// Control+A means the A key, not Control+Shift+A.
		for _, u := range us {
			if u.Code == d.Code && !u.Shift && u.Code != "" {
				d = u
				break
			}
		}
	}
	m := mask
	if d.Shift {
		m |= ModShift
	}
	text := d.Text
	if m&(ModAlt|ModCtrl|ModMeta) != 0 {
		text = ""
	}
	typ := "rawKeyDown"
	if text != "" {
		typ = "keyDown"
	}
	events = append(events, event(typ, d, m, text), event("keyUp", d, m, ""))
	for i := len(held) - 1; i >= 0; i-- {
		mask &^= modifiers[strings.ToLower(held[i].Key)].bit
		events = append(events, event("keyUp", held[i], mask, ""))
	}
	return events, ""
}

func event(typ string, d Def, mods int, text string) *input.DispatchKeyEventArgs {
	ev := input.NewDispatchKeyEventArgs(typ).SetKey(d.Key).SetModifiers(mods)
	if d.Code != "" {
		ev.SetCode(d.Code)
	}
	if d.KeyCode != 0 {
		ev.SetWindowsVirtualKeyCode(d.KeyCode).SetNativeVirtualKeyCode(d.KeyCode)
	}
	if text != "" {
		ev.SetText(text).SetUnmodifiedText(text)
	}
	if d.Location != 0 {
		ev.SetLocation(d.Location)
	}
	return ev
}
