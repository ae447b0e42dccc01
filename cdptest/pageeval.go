// Room: Runtime.evaluate on a fake page and page loads. The library's own
// expressions (internal/pagejs) are recognised by identity; a caller's
// expression is answered by the page's scripts (Page.Script) or the tiny
// evaluator (eval.go), and anything else is an error saying how to script
// it. Built-in methods: they run with Browser.mu held.

package cdptest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/browserpool/browserpool/internal/pagejs"
)

func trimExpr(expr string) string {
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(expr), ";"))
}

// evaluateCall answers Runtime.evaluate.
func (b *Browser) evaluateCall(s *session, params json.RawMessage) outcome {
	var p struct {
		Expression string `json:"expression"`
		Context    int    `json:"contextId"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	if !t.liveContext(p.Context) {
		return outcome{err: &Error{Code: -32000, Message: "Cannot find context with specified id"}}
	}
	pg := t.page
	switch pagejs.Names[p.Expression] {
	case "ReadyState":
		return byValue("complete")
	case "PageInfo":
		w, h := pg.size()
		vw, vh := pg.viewport()
		return byValue(map[string]any{"url": pg.URL, "title": pg.docTitle(), "vw": vw, "vh": vh,
			"sx": 0, "sy": pg.scrollY, "pw": w, "ph": h})
	case "SecretFocus":
		return byValue(pg.focus != nil && pg.focus.Secret)
	case "TypeWatchArm":
		if pg.focus == nil {
			pg.typing = nil
			return byValue(map[string]any{"state": "none", "secret": false})
		}
		pg.typing = &typeWatch{el: pg.focus}
		return byValue(map[string]any{"state": "ok", "secret": pg.focus.Secret})
	case "TypeWatchRead":
		w := pg.typing
		if w == nil {
			return byValue(nil)
		}
		pg.typing = nil
		now := "body"
		if pg.focus != nil {
			now = strings.ToLower(pg.focus.kind())
		}
		return byValue(map[string]any{"keys": w.keys, "now": now})
	case "ScriptLinkFocus":
		return byValue(false) // a fake link's href is a URL, never javascript:
	case "LoadedStatus":
		return byValue(map[string]any{"status": pg.Status, "url": pg.URL})
	}
	if check, ms, ok := pagejs.ParsePollCall(p.Expression); ok {
		f, e := b.checkLocked(t, check)
		if e != nil {
			return outcome{err: e}
		}
		o, done := b.pollLocked(s, b.callID, f, ms)
		if !done {
			return outcome{noReply: true}
		}
		return o
	}
	v, thrown, e := b.valueLocked(t, p.Expression)
	switch {
	case e != nil:
		return outcome{err: e}
	case thrown != nil:
		return exception(thrown)
	}
	return outcome{result: map[string]any{"result": v}}
}

// valueLocked evaluates a caller's expression on t's page: by the page's
// scripts, else by the tiny evaluator. A script's error is thrown.
func (b *Browser) valueLocked(t *target, expr string) (remoteObject, error, *Error) {
	if f := t.page.scripts[trimExpr(expr)]; f != nil {
		var v any
		var err error
		pg := t.page
		if e := b.callGo(fmt.Sprintf("the Page.Script for %q", cutText(expr, 60)), func() { v, err = f(pg) }); e != nil {
			return remoteObject{}, nil, e
		}
		if err != nil {
			return remoteObject{}, err, nil
		}
		// By value, as JSON: what the page would return.
		raw, merr := json.Marshal(v)
		if merr != nil {
			return remoteObject{}, nil, &Error{Code: -32000, Message: fmt.Sprintf("cdptest: the script for %q returned a value that is not JSON: %v", cutText(expr, 60), merr)}
		}
		var plain any
		json.Unmarshal(raw, &plain)
		return valueObject(plain), nil, nil
	}
	if v, ok := evaluate(expr, t.page.docTitle(), t.page.URL); ok {
		return v, nil, nil
	}
	return remoteObject{}, nil, unknownExpression(expr)
}

// unknownExpression is the error for an expression the fake cannot
// evaluate. The library shows its message as it is ("browser returned a
// protocol error: rpc error: <message> (code = -32000)"), so the message
// says first what is missing and how to script it.
func unknownExpression(expr string) *Error {
	q := fmt.Sprintf("%q", cutText(expr, 80))
	// Page.Script matches the whole expression: it is quoted whole when
	// short enough to copy.
	var key string
	if e := trimExpr(expr); len(e) > 200 {
		key = "the whole expression, exactly as evaluated (less surrounding spaces and a final ;)"
	} else {
		key = fmt.Sprintf("%q", e)
	}
	return &Error{Code: -32000, Message: "cdptest: the fake page cannot evaluate " + q + ": it is not scripted; " +
		"script it on the page with Page.Script(" + key + ", func(*cdptest.Page) (any, error) {…}), " +
		"or answer Runtime.evaluate with Browser.Handle " +
		"(built in: the library's page JavaScript, literals, number arithmetic, string concatenation, .length, document.title and location.href)"}
}

// exception is Runtime.evaluate's reply for a thrown error.
func exception(err error) outcome {
	desc := "Error: " + err.Error()
	ex := map[string]any{"type": "object", "subtype": "error", "className": "Error", "description": desc}
	return outcome{result: map[string]any{
		"result": ex,
		"exceptionDetails": map[string]any{"exceptionId": 1, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0,
			"exception": ex},
	}}
}

// checkLocked turns a poll's check into a function of the page: the
// value of a WaitCondition's expression (truthy or not), or whether a
// WaitVisible selector's element is shown.
func (b *Browser) checkLocked(t *target, check string) (func() (any, bool, *Error), *Error) {
	if expr, ok := pagejs.ParseCondition(check); ok {
		if _, _, e := b.valueLocked(t, expr); e != nil {
			return nil, e
		}
		return func() (any, bool, *Error) {
			v, thrown, e := b.valueLocked(t, expr)
			if thrown != nil {
				return nil, false, &Error{Code: -32000, Message: "cdptest: the script for " + fmt.Sprintf("%q", cutText(expr, 60)) + " failed: " + thrown.Error()}
			}
			if e != nil {
				return nil, false, e
			}
			val := v.Value
			switch {
			case v.UnserializableValue != "":
				val = v.UnserializableValue != "NaN" && v.UnserializableValue != "-0" // ±Infinity are truthy
			case v.Subtype == "null":
				val = nil
			}
			return val, truthy(val), nil
		}, nil
	}
	if sel, ok := pagejs.ParseVisibleCheck(check); ok {
		id, isID := strings.CutPrefix(strings.TrimSpace(sel), "#")
		if !isID || id == "" || strings.ContainsAny(id, " .,[>:#") {
			return nil, &Error{Code: -32000, Message: fmt.Sprintf("cdptest: the fake page matches only #id selectors, not %q: give the element an ID with Element.WithID", sel)}
		}
		return func() (any, bool, *Error) {
			var found *Element
			walkElements(t.page.Body, func(e *Element) bool {
				if e.ID == id {
					found = e
				}
				return found == nil
			})
			if found == nil {
				return false, false, nil
			}
			_, shown := t.page.layout()[found]
			shown = shown && !hollow(found)
			return shown, shown, nil
		}, nil
	}
	return nil, &Error{Code: -32000, Message: fmt.Sprintf("cdptest: the fake page cannot poll the check %q: script it with Browser.Handle(\"Runtime.evaluate\", …)", cutText(check, 80))}
}

// hollow reports whether e has nothing to show: no control, no text and
// no child that shows anything. In Chromium such an element (an empty
// paragraph or heading, a results box not filled yet) has no size, and
// WaitVisible does not see it.
func hollow(e *Element) bool {
	if e.kind() != "" || e.Name != "" || e.Value != "" {
		return false
	}
	for _, c := range e.Children {
		if !c.Hidden && !hollow(c) {
			return false
		}
	}
	return true
}

// truthy is JavaScript's truthiness of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case int:
		return x != 0
	}
	return true
}
