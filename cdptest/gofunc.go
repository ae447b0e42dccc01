// Room: running a fake page's Go funcs (Element.Does, Element.OnChange,
// dialog answers, Page.Script, Page.After) for the built-in methods, with
// Browser.mu held. Each runs on a goroutine of its own that ends before
// callGo returns: a panic in one is the test's bug, recovered there and
// reported at once; a t.FailNow or t.Fatal in one (runtime.Goexit) ends
// only that goroutine, and the call that ran the func fails saying so.
// Either way the lock is never left held and the goroutine that wrote the
// request (the client's, often the test's own) goes on.

package cdptest

import (
	"fmt"
	"runtime/debug"
)

// callGo runs a page's Go func f, which what names ("Element.Does of
// button \"Go\""), and waits for it. If f panics, the panic is
// recovered: the test fails with the panic value and its stack
// (tb.Errorf), and callGo returns the CDP error that fails the call that
// ran f, naming the panic. Without a tb the stack goes in the error's
// Data. If f ends its goroutine (t.FailNow, t.Fatal, t.SkipNow or
// runtime.Goexit, which testing forbids off the test's goroutine), callGo
// returns an error saying so; the test has failed already.
func (b *Browser) callGo(what string, f func()) (e *Error) {
	var (
		returned bool
		value    any
		stack    string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if returned {
				return
			}
			// nil: runtime.Goexit; a panic(nil) recovers as a
			// *runtime.PanicNilError.
			if value = recover(); value != nil {
				stack = string(debug.Stack())
			}
		}()
		f()
		returned = true
	}()
	<-done
	switch {
	case returned:
		return nil
	case value == nil:
		return &Error{Code: -32000, Message: fmt.Sprintf("cdptest: %s did not return: "+
			"the page func called t.FailNow/t.Fatal; use t.Error in page funcs "+
			"(they run on a goroutine of the fake browser, where FailNow, Fatal, SkipNow and runtime.Goexit end only that goroutine)", what)}
	}
	msg := fmt.Sprintf("cdptest: %s panicked: %v", what, value)
	e = &Error{Code: -32000, Message: msg}
	if b.tb == nil {
		e.Data = stack
		return e
	}
	e.Message += " (its stack is in the test log)"
	b.tb.Errorf("%s\n\n%s", msg, stack)
	return e
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
