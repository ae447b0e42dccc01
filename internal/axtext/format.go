// Room: the text of one line. No locks.

package axtext

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// States lists a node's states in a fixed order: checked, pressed,
// selected, expanded or collapsed, disabled, focused, required, readonly,
// modal, invalid, and a heading's level=N.
func States(role string, props []Prop) []string {
	get := func(name string) (string, bool) {
		for _, p := range props {
			if p.Name == name {
				return RawString(p.Value.Value), true
			}
		}
		return "", false
	}
	var out []string
	for _, name := range []string{"checked", "pressed"} {
		switch v, _ := get(name); v {
		case "true":
			out = append(out, name)
		case "mixed":
			out = append(out, name+"=mixed")
		}
	}
	if v, _ := get("selected"); v == "true" {
		out = append(out, "selected")
	}
	switch v, _ := get("expanded"); v {
	case "true":
		out = append(out, "expanded")
	case "false":
		out = append(out, "collapsed")
	}
	for _, name := range []string{"disabled", "focused", "required", "readonly", "modal"} {
		if v, _ := get(name); v == "true" {
			out = append(out, name)
		}
	}
	if v, ok := get("invalid"); ok && v != "false" && v != "" {
		out = append(out, "invalid")
	}
	if v, ok := get("level"); ok && role == "heading" {
		out = append(out, "level="+v)
	}
	return out
}

// Option is one option of a <select>, as its line summarizes it.
type Option struct {
	Label    string
	Group    string // the label of its <optgroup>, or ""
	Disabled bool
}

// OptionSummary shows a select's options on its line: the first ten,
// quoted and cut to 40 characters, a disabled one followed by
// "(disabled)", the first of an <optgroup> preceded by its label
// (group "Fruit": "Apple"), then how many more:
//
//	options=["S", "M" (disabled), group "Kids": "XS", "XXS", +3 more]
func OptionSummary(opts []Option) string {
	const show = 10
	var b strings.Builder
	b.WriteString("options=[")
	group := ""
	for i, o := range opts {
		if i == show {
			fmt.Fprintf(&b, ", +%d more", len(opts)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if o.Group != group && o.Group != "" {
			b.WriteString("group " + Quote(Cut(o.Group, 40)) + ": ")
		}
		group = o.Group
		b.WriteString(Quote(Cut(o.Label, 40)))
		if o.Disabled {
			b.WriteString(" (disabled)")
		}
	}
	b.WriteString("]")
	return b.String()
}

// rangeValue is the value a progress bar, meter, slider or scroll bar's
// line prints: its value text when the page gives one, else its number,
// and for a bar or a meter whose maximum is not 100, "of" it (0.6/1).
func rangeValue(n *Node, role string) string {
	if t, _ := prop(n.Props, "valuetext"); Squash(t) != "" {
		return Cut(Squash(t), NameLimit)
	}
	raw := String(n.Value)
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return Cut(Squash(raw), NameLimit)
	}
	s := number(v)
	if role == "progressbar" || role == "meter" {
		if m, ok := prop(n.Props, "valuemax"); ok {
			if top, err := strconv.ParseFloat(m, 64); err == nil && top != 100 {
				s += "/" + number(top)
			}
		}
	}
	return s
}

// number prints a value as the page would: 30, 0.6 (Chromium gives a
// meter's value as a float32: 0.6000000238418579).
func number(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 32)
}

// prop returns the value of n's property name as text, if it has it.
func prop(props []Prop, name string) (string, bool) {
	for _, p := range props {
		if p.Name == name {
			return RawString(p.Value.Value), true
		}
	}
	return "", false
}

// hasTrue reports whether the property name is true.
func hasTrue(props []Prop, name string) bool {
	v, _ := prop(props, name)
	return v == "true"
}

// Squash collapses runs of white space and trims.
func Squash(s string) string {
	if !strings.ContainsAny(s, "\n\t\r\u00a0  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// Quote quotes s for a snapshot line, a trace's args or an error: double
// quotes and backslashes escaped, and line breaks and tabs written as \n,
// \r and \t (a typed or filled value may hold them; a snapshot's names
// and values are squashed first), so the quoted text stays on one line.
// Nothing else is escaped.
func Quote(s string) string {
	return `"` + quoteReplacer.Replace(s) + `"`
}

var quoteReplacer = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`)

// DedupeText drops a text line that only repeats the name of the line
// before or after it (a label next to its field), in place, and returns
// the shortened slice. The name is cut at NameLimit and the text at
// TextLimit, so they are compared as cut at NameLimit.
func DedupeText[T any](ls []Line[T]) []Line[T] {
	out := ls[:0]
	for i, l := range ls {
		name := Cut(l.Name, NameLimit)
		if l.Role == "text" && (i > 0 && ls[i-1].Role != "text" && ls[i-1].Name == name ||
			i+1 < len(ls) && ls[i+1].Role != "text" && ls[i+1].Name == name) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// Format prints one line: indented by depth unless flat, then role,
// quoted name, ref, value, extra and states.
func (l *Line[T]) Format(ref string, flat bool) string {
	var b strings.Builder
	if l.Note {
		return "[" + l.Name + "]"
	}
	if !flat {
		for range l.Depth {
			b.WriteString("  ")
		}
	}
	b.WriteString("- ")
	b.WriteString(l.Role)
	if l.Name != "" || l.Quoted {
		b.WriteByte(' ')
		b.WriteString(Quote(l.Name))
	}
	if ref != "" {
		b.WriteByte(' ')
		b.WriteString(ref)
	}
	if l.Value != "" {
		b.WriteString(" value=")
		b.WriteString(Quote(l.Value))
	}
	if l.Extra != "" {
		b.WriteByte(' ')
		b.WriteString(l.Extra)
	}
	if len(l.States) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(l.States, ", "))
		b.WriteByte(']')
	}
	return b.String()
}
