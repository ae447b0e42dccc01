// Room: tests of the key chords. No locks.

package keys

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChordsBecomeUSKeyEventsWithModifiers(t *testing.T) {
	show := func(keys string) []string {
		evs, why := Events(keys)
		if why != "" {
			return []string{"error: " + why}
		}
		var out []string
		for _, e := range evs {
			s := fmt.Sprintf("%s key=%q", e.Type, *e.Key)
			if e.Code != nil {
				s += " code=" + *e.Code
			}
			if e.WindowsVirtualKeyCode != nil {
				s += fmt.Sprintf(" vk=%d", *e.WindowsVirtualKeyCode)
			}
			if e.Text != nil {
				s += fmt.Sprintf(" text=%q", *e.Text)
			}
			s += fmt.Sprintf(" mods=%d", *e.Modifiers)
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		keys string
		want []string
	}{
		{"a", []string{`keyDown key="a" code=KeyA vk=65 text="a" mods=0`, `keyUp key="a" code=KeyA vk=65 mods=0`}},
		{"A", []string{`keyDown key="A" code=KeyA vk=65 text="A" mods=8`, `keyUp key="A" code=KeyA vk=65 mods=8`}},
		{"Enter", []string{`keyDown key="Enter" code=Enter vk=13 text="\r" mods=0`, `keyUp key="Enter" code=Enter vk=13 mods=0`}},
		{"esc", []string{`rawKeyDown key="Escape" code=Escape vk=27 mods=0`, `keyUp key="Escape" code=Escape vk=27 mods=0`}},
		{"Control+A", []string{
			`rawKeyDown key="Control" code=ControlLeft vk=17 mods=2`,
			`rawKeyDown key="a" code=KeyA vk=65 mods=2`, `keyUp key="a" code=KeyA vk=65 mods=2`,
			`keyUp key="Control" code=ControlLeft vk=17 mods=0`}},
		{"Shift+Tab", []string{
			`rawKeyDown key="Shift" code=ShiftLeft vk=16 mods=8`,
			`rawKeyDown key="Tab" code=Tab vk=9 mods=8`, `keyUp key="Tab" code=Tab vk=9 mods=8`,
			`keyUp key="Shift" code=ShiftLeft vk=16 mods=0`}},
		{"Shift+1", []string{
			`rawKeyDown key="Shift" code=ShiftLeft vk=16 mods=8`,
			`keyDown key="!" code=Digit1 vk=49 text="!" mods=8`, `keyUp key="!" code=Digit1 vk=49 mods=8`,
			`keyUp key="Shift" code=ShiftLeft vk=16 mods=0`}},
		{"Control++", []string{
			`rawKeyDown key="Control" code=ControlLeft vk=17 mods=2`,
			`rawKeyDown key="+" code=Equal vk=187 mods=10`, `keyUp key="+" code=Equal vk=187 mods=10`,
			`keyUp key="Control" code=ControlLeft vk=17 mods=0`}},
		{"Meta+Alt+F5", []string{
			`rawKeyDown key="Meta" code=MetaLeft vk=91 mods=4`, `rawKeyDown key="Alt" code=AltLeft vk=18 mods=5`,
			`rawKeyDown key="F5" code=F5 vk=116 mods=5`, `keyUp key="F5" code=F5 vk=116 mods=5`,
			`keyUp key="Alt" code=AltLeft vk=18 mods=4`, `keyUp key="Meta" code=MetaLeft vk=91 mods=0`}},
		{"é", []string{`keyDown key="é" text="é" mods=0`, `keyUp key="é" mods=0`}},
		{"Hyper+a", []string{`error: "Hyper" in "Hyper+a" is not a modifier (Control, Shift, Alt, Meta)`}},
		{"Bogus", []string{`error: "Bogus" is not a key name`}},
		{"a+", []string{`error: "a+" ends with '+'`}},
	} {
		if diff := cmp.Diff(c.want, show(c.keys)); diff != "" {
			t.Errorf("Press(%q) events (-want +got):\n%s", c.keys, diff)
		}
	}
}

// TestTheLiteralTableIsTheUSLayoutTheLoopsBuilt rebuilds the key table
// the way the package's init once did and compares it with the literal
// table, so the move to a literal lost or changed no key.
func TestTheLiteralTableIsTheUSLayoutTheLoopsBuilt(t *testing.T) {
	type keyDef struct {
		key, code string
		keyCode   int
		text      string
		shifted   string
		shift     bool
		location  int
	}
	want := map[string]Def{}
	add := func(d keyDef) {
		want[d.key] = Def{Key: d.key, Code: d.code, KeyCode: d.keyCode, Text: d.text, Shifted: d.shifted, Shift: d.shift, Location: d.location}
	}
	for c := 'a'; c <= 'z'; c++ {
		lower, upper := string(c), strings.ToUpper(string(c))
		add(keyDef{key: lower, code: "Key" + upper, keyCode: int(c - 'a' + 'A'), text: lower, shifted: upper})
		add(keyDef{key: upper, code: "Key" + upper, keyCode: int(c - 'a' + 'A'), text: upper, shift: true})
	}
	shiftedDigits := ")!@#$%^&*("
	for d := '0'; d <= '9'; d++ {
		s := string(shiftedDigits[d-'0'])
		add(keyDef{key: string(d), code: "Digit" + string(d), keyCode: int(d), text: string(d), shifted: s})
		add(keyDef{key: s, code: "Digit" + string(d), keyCode: int(d), text: s, shift: true})
	}
	for _, p := range []struct {
		plain, shifted, code string
		keyCode              int
	}{
		{"-", "_", "Minus", 189}, {"=", "+", "Equal", 187}, {"[", "{", "BracketLeft", 219},
		{"]", "}", "BracketRight", 221}, {`\`, "|", "Backslash", 220}, {";", ":", "Semicolon", 186},
		{"'", `"`, "Quote", 222}, {",", "<", "Comma", 188}, {".", ">", "Period", 190},
		{"/", "?", "Slash", 191}, {"`", "~", "Backquote", 192},
	} {
		add(keyDef{key: p.plain, code: p.code, keyCode: p.keyCode, text: p.plain, shifted: p.shifted})
		add(keyDef{key: p.shifted, code: p.code, keyCode: p.keyCode, text: p.shifted, shift: true})
	}
	add(keyDef{key: " ", code: "Space", keyCode: 32, text: " "})
	add(keyDef{key: "Enter", code: "Enter", keyCode: 13, text: "\r"})
	for _, k := range []keyDef{
		{key: "Tab", code: "Tab", keyCode: 9}, {key: "Backspace", code: "Backspace", keyCode: 8},
		{key: "Delete", code: "Delete", keyCode: 46}, {key: "Escape", code: "Escape", keyCode: 27},
		{key: "ArrowLeft", code: "ArrowLeft", keyCode: 37}, {key: "ArrowUp", code: "ArrowUp", keyCode: 38},
		{key: "ArrowRight", code: "ArrowRight", keyCode: 39}, {key: "ArrowDown", code: "ArrowDown", keyCode: 40},
		{key: "Home", code: "Home", keyCode: 36}, {key: "End", code: "End", keyCode: 35},
		{key: "PageUp", code: "PageUp", keyCode: 33}, {key: "PageDown", code: "PageDown", keyCode: 34},
		{key: "Insert", code: "Insert", keyCode: 45}, {key: "CapsLock", code: "CapsLock", keyCode: 20},
		{key: "ContextMenu", code: "ContextMenu", keyCode: 93},
		{key: "Shift", code: "ShiftLeft", keyCode: 16, location: 1}, {key: "Control", code: "ControlLeft", keyCode: 17, location: 1},
		{key: "Alt", code: "AltLeft", keyCode: 18, location: 1}, {key: "Meta", code: "MetaLeft", keyCode: 91, location: 1},
	} {
		add(k)
	}
	for i := 1; i <= 12; i++ {
		n := "F" + strconv.Itoa(i)
		add(keyDef{key: n, code: n, keyCode: 111 + i})
	}
	if diff := cmp.Diff(want, us); diff != "" {
		t.Errorf("US key table (-want +got):\n%s", diff)
	}
}

func TestLookupKnowsAliasesAndIgnoresTheCaseOfNames(t *testing.T) {
	for _, c := range []struct {
		name string
		want string // the key found; "" for none
	}{
		{"esc", "Escape"}, {"RETURN", "Enter"}, {"pgdn", "PageDown"}, {"arrowdown", "ArrowDown"},
		{"f5", "F5"}, {"a", "a"}, {"A", "A"}, {"é", "é"}, {"Bogus", ""},
	} {
		d, ok := Lookup(c.name)
		if got := d.Key; !ok && got != "" || ok && c.want == "" || got != c.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
}
