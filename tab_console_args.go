// Room: the console log's text: how a console call's arguments read, as
// the browser's own console prints them (format directives applied,
// objects by the preview the browser sends with them, or that
// previewReplayed asks for). consoleState.mu guards the entries
// previewReplayed updates; it is never held during a call.

package browserpool

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/browserpool/browserpool/internal/axtext"
)

// remoteArg is the part of a console argument (a Runtime.RemoteObject)
// the text is made of.
type remoteArg struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	Value       json.RawMessage `json:"value"`
	Unserial    string          `json:"unserializableValue"`
	Description string          `json:"description"`
	ClassName   string          `json:"className"`
	ObjectID    string          `json:"objectId"`
	Preview     *objectPreview  `json:"preview"`
}

// awaitsPreview says whether a is an object whose text is its preview
// but came without one: an argument of a message the page logged before
// the console was watched, which the browser hands over without previews.
func (a remoteArg) awaitsPreview() bool {
	if a.Type != "object" || a.Preview != nil || a.ObjectID == "" {
		return false
	}
	switch a.Subtype {
	case "", "array", "typedarray", "map", "set", "weakmap", "weakset":
		return true
	}
	return false
}

// replayPreviews bounds how many objects previewReplayed asks the browser
// about, one call each, at a tab's first Console call: the rest keep their
// description ("Object", "Array(2)").
const replayPreviews = 50

// previewReplayed gives the objects of the messages (and the thrown
// values of the page errors) the browser handed over at Runtime.enable
// their previews (Runtime.callFunctionOn with
// generatePreview, on the object itself), and remakes those messages'
// text. An object the page has dropped since (a navigation) keeps its
// description. It runs on the caller's goroutine, with no lock held
// during the calls.
func (x *tabExt) previewReplayed(ctx context.Context) {
	c := &x.console
	c.mu.Lock()
	type job struct {
		args      []remoteArg
		exception bool
		lead      string
	}
	var todo []job
	for _, e := range c.entries {
		if e.args != nil {
			todo = append(todo, job{e.args, e.exc != 0, e.lead})
		}
	}
	c.mu.Unlock()
	budget := replayPreviews
	for _, j := range todo {
		args := j.args
		fresh := slices.Clone(args)
		for i, a := range fresh {
			if !a.awaitsPreview() || budget == 0 {
				continue
			}
			budget--
			var res struct {
				Result remoteArg `json:"result"`
			}
			err := x.t.direct.Invoke(ctx, "Runtime.callFunctionOn", struct {
				Function string `json:"functionDeclaration"`
				Object   string `json:"objectId"`
				Preview  bool   `json:"generatePreview"`
				Group    string `json:"objectGroup"`
			}{"function() { return this }", a.ObjectID, true, "console"}, &res)
			if err == nil && res.Result.Preview != nil {
				fresh[i].Preview = res.Result.Preview
			}
		}
		text := consoleText(fresh)
		if j.exception {
			text = pageErrorText(j.lead, fresh[0]) // an exception's args are its value
		}
		text = axtext.Cut(text, ConsoleTextLimit)
		c.mu.Lock()
		for i := range c.entries {
			if e := &c.entries[i]; len(e.args) > 0 && &e.args[0] == &args[0] {
				e.msg.Text, e.args = text, nil
			}
		}
		c.mu.Unlock()
	}
}

// pageErrorText is an exception as the browser's console prints it: its
// text ("Uncaught", "Uncaught (in promise)") and the thrown value. An
// Error, and any value the browser describes but gave no preview of (a
// function, a node), reads by its description's first line, without the
// stack it repeats ("Uncaught TypeError: x is not a function"); any other
// value as a console argument does ("Uncaught {code: 42}", "Uncaught
// undefined", a string as it is).
func pageErrorText(text string, e remoteArg) string {
	v := e.text()
	if e.Description != "" && (e.Subtype == "error" || e.Type != "object" || e.Preview == nil) {
		v = strings.SplitN(e.Description, "\n", 2)[0]
	}
	s := strings.TrimSpace(text + " " + v)
	return strings.Replace(s, "Uncaught Uncaught", "Uncaught", 1)
}

// objectPreview is a Runtime.ObjectPreview: the first few properties (or
// entries, for a Map or Set) of an object, each value already abbreviated
// by the browser ("Array(3)", "Object").
type objectPreview struct {
	Type        string            `json:"type"`
	Subtype     string            `json:"subtype"`
	Description string            `json:"description"`
	Overflow    bool              `json:"overflow"`
	Properties  []propertyPreview `json:"properties"`
	Entries     []entryPreview    `json:"entries"`
}

// propertyPreview is a Runtime.PropertyPreview.
type propertyPreview struct {
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Value        string         `json:"value"`
	Subtype      string         `json:"subtype"`
	ValuePreview *objectPreview `json:"valuePreview"` // a nested object's own preview, when the browser sends one (console.table)
}

// entryPreview is a Runtime.EntryPreview: a Map's key and value, or a
// Set's value.
type entryPreview struct {
	Key   *objectPreview `json:"key"`
	Value objectPreview  `json:"value"`
}

// text is the argument as the console prints it: a string as it is, a
// primitive by its value, an object by its preview ({a: 1, b: "x"},
// [1, 2, 3], Map(1) {"k" => 1}) and otherwise by its description (a
// node's "div#app", an error's message and stack, a function's source).
func (a remoteArg) text() string {
	switch {
	case a.Type == "undefined":
		return "undefined"
	case a.Unserial != "":
		return a.Unserial
	case a.Type == "string":
		var s string
		if json.Unmarshal(a.Value, &s) == nil {
			return s
		}
	case len(a.Value) > 0:
		return string(a.Value)
	case a.Type == "object" && a.Preview != nil:
		if s, ok := a.Preview.text(); ok {
			return s
		}
	}
	if a.Description != "" {
		return a.Description
	}
	return a.Type
}

// text renders a preview of a plain object, an instance of a class, an
// array, a Map or a Set; ok is false for the other kinds (nodes, errors,
// dates, regexps, promises, …), whose description says more.
func (p *objectPreview) text() (s string, ok bool) {
	var b strings.Builder
	switch p.Subtype {
	case "":
		if p.Description != "Object" {
			b.WriteString(p.Description) // a class's name: "Point {x: 1, y: 2}"
			b.WriteByte(' ')
		}
		b.WriteByte('{')
		for i, pr := range p.Properties {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(propertyName(pr.Name))
			b.WriteString(": ")
			b.WriteString(pr.text())
		}
		p.more(&b, len(p.Properties) > 0)
		b.WriteByte('}')
	case "array", "typedarray":
		if p.Overflow || p.Description != "Array("+strconv.Itoa(len(p.Properties))+")" {
			// The length says how much the "…" leaves out, or that the
			// array is sparse or has properties of its own.
			b.WriteString(p.Description)
			b.WriteByte(' ')
		}
		b.WriteByte('[')
		next, n := 0, 0 // the index the next element would have; items written
		item := func(s string) {
			if n > 0 {
				b.WriteString(", ")
			}
			b.WriteString(s)
			n++
		}
		for _, pr := range p.Properties {
			i, err := strconv.Atoi(pr.Name)
			switch {
			case err != nil && p.Subtype == "typedarray":
				continue // its buffer, length and the like: the description has the length
			case err != nil:
				item(propertyName(pr.Name) + ": " + pr.text())
				continue
			case i == next+1:
				item("empty") // a hole of a sparse array
			case i > next:
				item("empty × " + strconv.Itoa(i-next))
			}
			item(pr.text())
			next = i + 1
		}
		p.more(&b, n > 0)
		b.WriteByte(']')
	case "map", "set", "weakmap", "weakset":
		b.WriteString(p.Description) // "Map(2)"
		b.WriteString(" {")
		for i, e := range p.Entries {
			if i > 0 {
				b.WriteString(", ")
			}
			if e.Key != nil {
				b.WriteString(e.Key.valueText())
				b.WriteString(" => ")
			}
			b.WriteString(e.Value.valueText())
		}
		p.more(&b, len(p.Entries) > 0)
		b.WriteByte('}')
	default:
		return "", false
	}
	return b.String(), true
}

// more writes the "…" of a preview that leaves properties out.
func (p *objectPreview) more(b *strings.Builder, after bool) {
	if !p.Overflow {
		return
	}
	if after {
		b.WriteString(", ")
	}
	b.WriteString("…")
}

// valueText is an entry's key or value: a string quoted, the rest by the
// browser's description.
func (p *objectPreview) valueText() string {
	if p.Type == "string" {
		return strconv.Quote(p.Description)
	}
	return p.Description
}

// text is a property's value inside a preview: a string quoted, a
// function as "function", the rest as the browser abbreviated it.
func (pr propertyPreview) text() string {
	switch pr.Type {
	case "string":
		return strconv.Quote(pr.Value)
	case "function":
		return "function"
	case "accessor":
		return "(getter)"
	case "object":
		if p := pr.ValuePreview; p != nil {
			if s, ok := p.text(); ok {
				return s
			}
		}
	}
	return pr.Value
}

// propertyName is a property's name as an object literal would write it:
// bare when it is an identifier, quoted otherwise.
func propertyName(name string) string {
	for i, r := range name {
		if r != '_' && r != '$' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && (i == 0 || !(r >= '0' && r <= '9')) {
			return strconv.Quote(name)
		}
	}
	if name == "" {
		return `""`
	}
	return name
}

// consoleText joins a console call's arguments as the browser's console
// prints them. When the first is a string with format directives, they
// take the next arguments: %s a string, %d and %i an integer, %f a
// number, %o and %O an object, %c a style (dropped, with its argument),
// %% a percent sign; the arguments left over follow, space separated.
func consoleText(args []remoteArg) string {
	parts := make([]string, 0, len(args))
	rest := args
	if len(args) > 0 && args[0].Type == "string" {
		var format string
		if json.Unmarshal(args[0].Value, &format) == nil && strings.IndexByte(format, '%') >= 0 {
			var b strings.Builder
			rest = args[1:]
			for i := 0; i < len(format); i++ {
				c := format[i]
				if c != '%' || i+1 == len(format) {
					b.WriteByte(c)
					continue
				}
				switch verb := format[i+1]; {
				case verb == '%':
					b.WriteByte('%')
				case strings.IndexByte("sdifoOc", verb) < 0 || len(rest) == 0:
					b.WriteByte('%') // not a directive, or no argument left for it: as it is
					continue
				default:
					b.WriteString(directive(verb, rest[0]))
					rest = rest[1:]
				}
				i++
			}
			parts = append(parts, b.String())
		}
	}
	n := 0
	for _, a := range rest {
		if n > ConsoleTextLimit*4 {
			break // the text is cut at ConsoleTextLimit anyway
		}
		t := a.text()
		parts = append(parts, t)
		n += len(t)
	}
	return strings.Join(parts, " ")
}

// directive renders one argument for a format directive (%s, %d, %i, %f,
// %o, %O or %c).
func directive(verb byte, a remoteArg) string {
	switch verb {
	case 'c':
		return ""
	case 'd', 'i', 'f':
		var f float64
		switch {
		case a.Type == "number" && json.Unmarshal(a.Value, &f) == nil:
		case a.Type == "string":
			var s string
			json.Unmarshal(a.Value, &s)
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
				return "NaN"
			}
		case a.Unserial != "" && a.Type == "number":
			return a.Unserial // NaN, Infinity, -0
		case a.Type == "bigint":
			return strings.TrimSuffix(a.Unserial, "n")
		default:
			return "NaN"
		}
		if verb != 'f' {
			f = math.Trunc(f)
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return a.text()
}
