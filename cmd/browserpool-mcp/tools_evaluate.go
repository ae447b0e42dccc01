// Room: browser_evaluate's page code: how a model's code becomes an
// expression, how its value becomes JSON in the page (jsonable) and reads
// as text here (readableJSON). No state and no locks.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/browserpool/browserpool"
)

// expression turns browser_evaluate's code into an expression: code that
// starts as a function does is called with no arguments, anything else is
// evaluated as it is.
func expression(code string) string {
	c := strings.TrimSpace(code)
	if isFunction.MatchString(c) {
		return settle("(" + c + ")()")
	}
	return c
}

// onElement wraps browser_evaluate's function for Tab.EvaluateOn so that
// its result goes through jsonable, as without a ref. The function comes
// first, after one character (an error's line is the code's, and its
// column one more on the first line); a value that is no function is
// passed on as it is, for EvaluateOn to refuse.
func onElement(fn string) string {
	return "[" + strings.TrimSpace(fn) + "\n].map(f => typeof f !== \"function\" ? f : function (...a) { return " + settle("f.apply(this, a)") + " })[0]"
}

// settle wraps the expression expr so that its value (once resolved, when
// it is a promise) goes through jsonable. expr comes first, after one
// character, so that an error's line is the code's, and its column one
// more than the code's on expr's first line.
func settle(expr string) string {
	return "[" + expr + "\n].map(r => r instanceof Promise ? r.then(" + jsonableLine + ") : " + jsonableLine + "(r))[0]"
}

// evaluateCode evaluates browser_evaluate's code on t into out. Code that
// starts as a function does is called (expression). Other code that
// parses as an expression has its value called when that is a function: a
// function after a comment, with parentheses in its parameters, in
// parentheses, or held by a name. Statements are evaluated as they are.
// Whether the code is an expression is asked of the page by evaluating a
// function that holds it and is never called: the code runs once.
func evaluateCode(ctx context.Context, t *browserpool.Tab, code string, out *json.RawMessage) error {
	expr := expression(code)
	if expr == strings.TrimSpace(code) {
		err := t.Evaluate(ctx, "(() => ((\n"+expr+"\n)), 0)", nil)
		if !errors.Is(err, browserpool.ErrJavaScript) {
			if err != nil {
				return err
			}
			expr = callIfFunction(expr)
		}
	}
	return t.Evaluate(ctx, expr, out)
}

// callIfFunction wraps the expression expr so that its value is called
// with no arguments when it is a function, the result settled. The
// newlines keep a comment at expr's end from swallowing the closing
// parentheses.
func callIfFunction(expr string) string {
	return settle("(v => typeof v === \"function\" ? v() : v)((\n" + expr + "\n))")
}

// jsonable is page code: a function that gives a value its JSON form as
// JSON.stringify writes it (a Date as its ISO time, which the browser's
// own by-value copy makes {}), with what JSON has no form for described
// instead of emptied or refused: an element as its tag with its id and
// class and the start of its text ("<button id=\"go\">Send"), a node
// list as an array, a Map as an object of its entries, a Set as an array,
// a BigInt as its digits and n. A value JSON cannot write (a cyclic
// object, the window) is left as it is, for the browser to refuse. It is
// sent as one line (jsonableLine), so that it adds no line to an error's.
const jsonable = `(v => {
	const node = n => n.nodeType === 1
		? "<" + n.localName + (n.id ? " id=\"" + n.id + "\"" : "") + (typeof n.className === "string" && n.className ? " class=\"" + n.className + "\"" : "") + ">" + (n.textContent || "").trim().replace(/\s+/g, " ").slice(0, 80)
		: n.nodeName;
	try {
		const s = JSON.stringify(v, function (k, x) {
			if (typeof x === "bigint") return x + "n";
			if (typeof Node === "function" && x instanceof Node) return node(x);
			if (typeof NodeList === "function" && (x instanceof NodeList || x instanceof HTMLCollection)) return Array.from(x);
			if (x instanceof Map) return Object.fromEntries(x);
			if (x instanceof Set) return Array.from(x);
			return x;
		});
		return s === undefined ? v : JSON.parse(s);
	} catch (e) {
		return v;
	}
})`

// jsonableLine is jsonable on one line: its code has no string or regular
// expression with more than one space in a row.
var jsonableLine = strings.Join(strings.Fields(jsonable), " ")

// readableJSON returns the JSON value raw as JSON with every character
// written as itself (the browser writes any non-ASCII character as a
// \uXXXX escape, six bytes where the character takes two or three) and no
// HTML escaping: an object's keys stay in their order. An error means raw
// is no JSON.
func readableJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// The containers open at this point: whether each is an object, and
	// how many tokens (keys and values) it has had.
	type level struct {
		object bool
		n      int
	}
	var open []level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			b.WriteByte(byte(d))
			continue
		}
		if n := len(open); n > 0 {
			l := &open[n-1]
			switch {
			case l.object && l.n%2 == 1:
				b.WriteByte(':')
			case l.n > 0:
				b.WriteByte(',')
			}
			l.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			b.WriteByte(byte(v))
			open = append(open, level{object: v == '{'})
		case string:
			if err := enc.Encode(v); err != nil {
				return nil, err
			}
			b.Truncate(b.Len() - 1) // Encode's newline
		case json.Number:
			b.WriteString(v.String())
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case nil:
			b.WriteString("null")
		}
	}
	return b.Bytes(), nil
}

// isFunction matches the start of a function: function f() {}, async () =>,
// (a, b) =>, x =>.
var isFunction = regexp.MustCompile(`^(async\s*)?(function\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)`)
