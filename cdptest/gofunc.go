// Room: running a fake page's Go funcs (Element.Does, Element.OnChange,
// dialog answers, Page.Script) for the built-in methods, with Browser.mu
// held. A panic in one is the test's bug: it is recovered here, so the lock
// is never left held, and reported at once.

package cdptest

import (
	"fmt"
	"runtime/debug"
)

// callGo runs a page's Go func f, which what names ("Element.Does of
// button \"Go\""). If f panics, the panic is recovered: the test fails
// with the panic value and its stack (tb.Errorf), and callGo returns the
// CDP error that fails the call that ran f, naming the panic. Without a
// tb the stack goes in the error's Data.
func (b *Browser) callGo(what string, f func()) (e *Error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stack := string(debug.Stack())
		msg := fmt.Sprintf("cdptest: %s panicked: %v", what, r)
		e = &Error{Code: -32000, Message: msg}
		if b.tb == nil {
			e.Data = stack
			return
		}
		e.Message += " (its stack is in the test log)"
		b.tb.Errorf("%s\n\n%s", msg, stack)
	}()
	f()
	return nil
}

// named names an element in a message: its role and name.
func (e *Element) named() string {
	if e.Name == "" {
		return e.Role
	}
	return fmt.Sprintf("%s %q", e.Role, e.Name)
}

// dialogNamed names a dialog spec in a message.
func (d *dialogSpec) named() string {
	return fmt.Sprintf("the %s %q (Element.%s)", d.typ, cutText(d.message, 40), map[string]string{
		"alert": "Alerts", "confirm": "Confirms", "prompt": "Prompts",
	}[d.typ])
}
