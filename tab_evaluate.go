// Room: Tab.Evaluate, the agents' most frequent call, and the JavaScript
// exceptions it reports. No lock and no state of its own: the call goes
// straight through the mux (cdpmux.Mux.Call), which does the in-flight
// accounting, under the tab's act prologue (use, trace, dialog guard).

package browserpool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool/internal/jsonscan"
)

// Evaluate runs a JavaScript expression in the page, awaits it if it is a
// promise, and decodes its value (JSON) into out unless out is nil. A
// thrown exception is an ErrJavaScript error carrying the message and line.
// An await at the expression's top level works as in the browser's console
// ("const r = await fetch('/a'); r.status"). A value that does not fit out
// (a string into an *int, undefined into a *struct) is an ErrDecode error
// naming both types; undefined and null leave a pointer, interface, map or
// slice target nil.
func (t *Tab) Evaluate(ctx context.Context, expr string, out any) error {
	const op = "Tab.Evaluate"
	return t.act(ctx, op, "evaluate", expr, nil, func(ctx context.Context, x *tabExt, _ *string) error {
		// The request is built on the stack for short expressions and sent
		// on the caller's goroutine; the reply comes straight from the
		// mux's reader, which is this goroutine when nobody else is
		// reading the pipe (no rpcc.Conn goroutines on the way).
		var buf [256]byte
		params := appendEvaluateParams(buf[:0], expr)
	send:
		raw, err := t.direct.Call(ctx, "Runtime.evaluate", params)
		if err != nil {
			if e := t.unreturnable(op, err); e != nil {
				return e
			}
			return x.fail(op, ctx, "", err)
		}
		reply, ok := scanEvaluateReply(raw)
		if !ok {
			if err := json.Unmarshal(raw, &reply); err != nil {
				return x.fail(op, ctx, "", fmt.Errorf("decoding Runtime.evaluate: %w", err))
			}
		}
		if ex := reply.ExceptionDetails; ex != nil {
			t.releaseThrown(ctx, ex)
			if topLevelAwait(ex) && !bytes.HasSuffix(params, replModeParam) {
				// Nothing ran: the same code again, as the console runs it.
				params = append(params[:len(params)-1], replModeParam...)
				goto send
			}
			return t.jsError(op, ex)
		}
		r := reply.Result
		if e := decodeJS(op, r.Value, r.UnserializableValue, jsTypeOf(r.Type, r.Subtype), out); e != nil {
			e.Session, e.Tab = t.s.id, t.id
			return e
		}
		return nil
	})
}

// evaluateReply is the part of a Runtime.evaluate reply Evaluate reads.
type evaluateReply struct {
	Result           evaluateResult            `json:"result"`
	ExceptionDetails *runtime.ExceptionDetails `json:"exceptionDetails"`
}

// evaluateResult is the part of the reply's RemoteObject Evaluate reads.
type evaluateResult struct {
	Type                string          `json:"type"`
	Subtype             *string         `json:"subtype"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
}

// scanEvaluateReply reads a reply with no exception by scanning it
// (jsonscan), as json.Unmarshal into an evaluateReply would, except that
// Value aliases raw. ok is false, and json.Unmarshal must read the reply,
// when it has an exception (its details are a deep structure) or anything
// the scan does not expect: a malformed object, a string with escapes, a
// key that matches a field only when case is ignored (as encoding/json
// matches them), a repeated "result".
func scanEvaluateReply(raw []byte) (r evaluateReply, ok bool) {
	var result []byte
	o := jsonscan.Object(raw)
	for o.Next() {
		switch k := o.Key(); string(k) {
		case "result":
			if result != nil {
				return evaluateReply{}, false // json.Unmarshal merges a repeated object
			}
			result = o.Value()
		case "exceptionDetails":
			if !jsonscan.IsNull(o.Value()) {
				return evaluateReply{}, false
			}
		default:
			if oddKey(k, "result", "exceptionDetails") {
				return evaluateReply{}, false
			}
		}
	}
	if !o.Valid() || result == nil || jsonscan.IsNull(result) {
		return evaluateReply{}, false
	}
	o = jsonscan.Object(result)
	for o.Next() {
		v := o.Value()
		switch k := o.Key(); string(k) {
		case "type":
			if !jsonscan.IsNull(v) { // null leaves a string as it is
				if r.Result.Type, ok = jsonscan.String(v); !ok {
					return evaluateReply{}, false
				}
			}
		case "subtype":
			r.Result.Subtype = nil
			if !jsonscan.IsNull(v) {
				s, ok := jsonscan.String(v)
				if !ok {
					return evaluateReply{}, false
				}
				r.Result.Subtype = &s
			}
		case "value":
			r.Result.Value = v
		case "unserializableValue":
			if !jsonscan.IsNull(v) {
				if r.Result.UnserializableValue, ok = jsonscan.String(v); !ok {
					return evaluateReply{}, false
				}
			}
		default:
			if oddKey(k, "type", "subtype", "value", "unserializableValue") {
				return evaluateReply{}, false
			}
		}
	}
	return r, o.Valid()
}

// oddKey reports whether key, not one of names, matches one of them when
// case is ignored (Unicode folding included): encoding/json would decode
// it into that field.
func oddKey(key []byte, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// appendEvaluateParams appends the Runtime.evaluate params Evaluate sends:
// the expression, by value, awaited, and what it throws in evaluateGroup.
func appendEvaluateParams(buf []byte, expr string) []byte {
	buf = append(buf, `{"expression":`...)
	buf = appendJSString(buf, expr)
	return append(buf, `,"returnByValue":true,"awaitPromise":true,"objectGroup":"`+evaluateGroup+`"}`...)
}

// replModeParam ends the params of an expression sent again in the
// console's mode (Runtime.evaluate's replMode), which takes an await at its
// top level ("const r = await fetch('/a'); r.status"). Only such an
// expression is: the mode does not await a promise the expression returns
// without an await of its own, and its let and const may be declared again
// by a later expression.
var replModeParam = []byte(`,"replMode":true}`)

// topLevelAwait reports whether ex is the syntax error of an await outside
// an async function: the expression did not run.
func topLevelAwait(ex *runtime.ExceptionDetails) bool {
	o := ex.Exception
	return o != nil && o.ClassName != nil && *o.ClassName == "SyntaxError" && o.Description != nil &&
		strings.HasPrefix(*o.Description, "SyntaxError: await is only valid in async functions")
}

// evaluateGroup is the object group of the values Evaluate's expressions
// throw, which the browser hands over by reference (releaseThrown).
const evaluateGroup = "browserpool-evaluate"

// appendJSString appends s as a JSON string that decodes to s, escaping
// what encoding/json escapes (HTML characters included). Plain ASCII is
// escaped here without allocating; a string with other bytes goes through
// encoding/json, which also replaces invalid UTF-8 and escapes U+2028 and
// U+2029.
func appendJSString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			continue
		}
		buf = append(buf, s[start:i]...)
		switch c {
		case '"', '\\':
			buf = append(buf, '\\', c)
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// ErrJavaScript: evaluated JavaScript threw. The *JSError is reachable with
// errors.As.
var ErrJavaScript = errors.New("JavaScript threw an exception")

// JSError is the exception a page's JavaScript threw.
type JSError struct {
	Message string // the exception's text, e.g. "ReferenceError: x is not defined"
	Line    int    // 1-based line in the evaluated source, or in URL's script
	Column  int    // 1-based column
	// URL is the page's script the exception was thrown in (a function of
	// the page's that the evaluated code called), its query redacted; ""
	// when it was thrown in the evaluated code itself.
	URL string
}

// rebase gives e's position in src's own numbering, when src ran from
// line before+1 of a wrapper: a position past src's end (an error met at
// the wrapper's closing, as for a missing operand) is src's end. An
// exception thrown in one of the page's scripts keeps its position there.
func (e *JSError) rebase(before int, src string) {
	if e.URL != "" {
		return
	}
	lines := strings.Split(src, "\n")
	e.Line -= before
	switch {
	case e.Line < 1:
		e.Line, e.Column = 1, 1
	case e.Line > len(lines):
		e.Line, e.Column = len(lines), utf8.RuneCountInString(lines[len(lines)-1])+1
	}
}

// Error shows the exception's message with its line and column (and the
// page's script it was thrown in, if it was).
func (e *JSError) Error() string {
	if e.URL != "" {
		return fmt.Sprintf("%s (line %d, column %d of %s)", e.Message, e.Line, e.Column, e.URL)
	}
	return fmt.Sprintf("%s (line %d, column %d)", e.Message, e.Line, e.Column)
}

// releaseThrown lets the page free the value the caller's code threw: the
// browser hands it over by reference (object ids, in the reply's result
// and its exception), and until released it stays alive as long as the
// document, so that an agent whose script fails again and again on one
// page would grow the page's memory. The failure path only: a value
// returned is returned by value and holds nothing. Releasing the group
// frees what other failed Evaluates of the tab threw too, which nothing
// reads (their replies carry the text).
func (t *Tab) releaseThrown(ctx context.Context, ex *runtime.ExceptionDetails) {
	if ex.Exception == nil || ex.Exception.ObjectID == nil {
		return
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	t.direct.Invoke(rctx, "Runtime.releaseObjectGroup", struct {
		Group string `json:"objectGroup"`
	}{evaluateGroup}, nil)
}

// jsError is the ErrJavaScript error of the exception ex, thrown by the
// caller's code: its hint says to fix the expression.
func (t *Tab) jsError(op string, ex *runtime.ExceptionDetails) error {
	e := newError(op, ErrJavaScript, "")
	e.Session, e.Tab = t.s.id, t.id
	js := &JSError{Message: thrownMessage(ex), Line: ex.LineNumber + 1, Column: ex.ColumnNumber + 1}
	if ex.Exception != nil && ex.Exception.Description != nil {
		if u, line, col, ok := thrownAt(*ex.Exception.Description); ok && u != evaluatedCode {
			js.URL, js.Line, js.Column = redactURL(u), line, col
		}
	}
	e.Err = js
	e.Hint = hints[ErrJavaScript]
	return e
}

// ownJSError is the ErrJavaScript error of the exception ex, thrown by
// one of the package's own page scripts (pagejs): the caller wrote no
// expression, so its hint does not ask for one to be fixed.
func (t *Tab) ownJSError(op string, ex *runtime.ExceptionDetails) error {
	err := t.jsError(op, ex)
	if e, ok := err.(*Error); ok {
		e.Hint = ownScriptHint
	}
	return err
}

// ownScriptHint is the hint of an exception thrown by the package's own
// page script for an action (Tab.PageInfo, Tab.Click, Tab.Fill, ...).
const ownScriptHint = "the library's own script for this action failed in this page, not code of yours; the page is unchanged unless the action ran partly: retry once the page has settled, or reload it"

// thrownMessage is what an exception says, as the browser's console
// prints it: an Error by the first line of its description
// ("TypeError: x is not a function", the stack left out); any other thrown
// value after the exception's text, by its preview when it is an object
// ("Uncaught {code: 42, msg: \"quota\"}", "Uncaught (in promise) [1, 2]",
// "Uncaught undefined").
func thrownMessage(ex *runtime.ExceptionDetails) string {
	o := ex.Exception
	switch {
	case o == nil:
		return ex.Text
	case o.Subtype != nil && *o.Subtype == "error" && o.Description != nil:
		return strings.SplitN(*o.Description, "\n", 2)[0]
	}
	// The exception path only: a round trip through JSON into the
	// console's own reading of a value.
	var a remoteArg
	if b, err := json.Marshal(o); err != nil || json.Unmarshal(b, &a) != nil {
		return ex.Text
	}
	return pageErrorText(ex.Text, a)
}

// evaluatedCode is the URL V8 gives, in a stack, the code Runtime.evaluate
// ran (it has no sourceURL).
const evaluatedCode = "<anonymous>"

// thrownAt reads, from an exception's stack as V8 describes it ("Error:
// x\n    at boom (http://host/app.js:3:8)\n    at <anonymous>:2:7"),
// where the exception was thrown: the top frame's URL (evaluatedCode for
// the evaluated code itself), line and column. ok is false when there is
// no stack (a syntax error).
func thrownAt(description string) (url string, line, col int, ok bool) {
	for l := range strings.SplitSeq(description, "\n") {
		l = strings.TrimSpace(l)
		at, found := strings.CutPrefix(l, "at ")
		if !found {
			continue
		}
		if i := strings.LastIndexByte(at, '('); i >= 0 && strings.HasSuffix(at, ")") {
			at = at[i+1 : len(at)-1]
		}
		c := strings.LastIndexByte(at, ':')
		if c < 0 {
			return "", 0, 0, false
		}
		r := strings.LastIndexByte(at[:c], ':')
		if r < 0 {
			return "", 0, 0, false
		}
		url = at[:r]
		line, err1 := strconv.Atoi(at[r+1 : c])
		col, err2 := strconv.Atoi(at[c+1:])
		if err1 != nil || err2 != nil || url == "" {
			return "", 0, 0, false
		}
		return url, line, col, true
	}
	return "", 0, 0, false
}
