// Room: a tab whose page stopped answering after an action ran out of
// time (a script that never returns). Tab.unsticking is its only state, an
// atomic; no locks.

package browserpool

import (
	"context"
	"errors"
	"time"
)

// givenUp follows an action of the tab that failed because its caller's
// context ended: unless a dialog holds the page or the tab is gone, it
// starts an unstick check, and then says so in err's hint.
// A tab whose page is navigating is not checked: the browser holds calls
// into the page until the new document commits, and a stop sent meanwhile
// would reach the new page; the error says instead which page the tab is
// waiting for (a server that never answers holds every read of the tab
// until the navigation times out). The error is changed only for a call
// the page did not answer (a wait that ran out keeps its own).
func (t *Tab) givenUp(x *tabExt, err error) {
	if t.direct.Err() != nil {
		return
	}
	var e *Error
	unanswered := errors.As(err, &e) && (e.Class == context.DeadlineExceeded || e.Class == context.Canceled) && e.noAnswer
	if pending, u := t.lifecycle.pendingRequest(); pending {
		if unanswered && u != "" {
			e.Detail += ": the tab is waiting for " + redactURL(u) + " to answer (a navigation its page started), and the browser holds calls into the page until that navigation commits or fails"
			e.Hint = heldHint
		}
		return
	}
	if _, open := x.dialog.current(); open || !t.unstick() {
		return
	}
	if unanswered {
		e.Hint = "retry, with a longer deadline if the page is only slow; " + busyPageHint
		if !t.s.ours {
			e.Hint += "; " + userDialogHint
		}
	}
}

// userDialogHint ends givenUp's hint in a browser the pool attached to: a
// dialog that opened before the pool's connection to the tab holds the
// page too, and DevTools neither reports it to a connection made after it
// opened nor lets that connection answer it.
const userDialogHint = "if the browser's user has a dialog open on the page (an alert or confirm that opened before the pool attached, which DevTools neither reports to the pool nor lets it answer), the tab takes commands once they answer it"

// heldHint is givenUp's hint for a call the browser held while the tab's
// page waited for a server.
const heldHint = "to go on without that page, call Tab.Navigate to another URL (it is not held); " +
	"to wait for it, call Tab.WaitLoad with a longer deadline: a read of the tab (a snapshot, an evaluate) waits for the same server"

// busyPageHint ends givenUp's hint: what becomes of a page a script keeps
// busy (partlyTyped keeps it).
const busyPageHint = "if a script of the page's keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes commands again"

// unstickProbe bounds the evaluate that tells a busy page from an idle one
// after an action ran out of time: a page still busy after it has its
// script stopped. Long enough that a page's own long task on a host short
// of CPU (a framework starting up) is not taken for a loop.
const unstickProbe = 3 * time.Second

// unstick starts, in the background, a check that the page still answers
// after an action on it ran out of time, once at a time per tab: a script
// that never returns (a loop, an alert storm the pool keeps dismissing)
// holds the page's main thread, and every later call of the tab would wait
// for ever. If a trivial evaluate gets no answer within unstickProbe, it
// stops the script running (Runtime.terminateExecution). Neither call
// counts as use. It reports whether the check started.
func (t *Tab) unstick() bool {
	if !t.unsticking.CompareAndSwap(false, true) {
		return false
	}
	started := t.s.background(func(base context.Context) {
		defer t.unsticking.Store(false)
		q := t.direct.Quiet()
		ctx, cancel := context.WithTimeout(base, unstickProbe)
		_, err := q.Call(ctx, "Runtime.evaluate", []byte(`{"expression":"1"}`))
		busy := err != nil && ctx.Err() != nil && base.Err() == nil
		cancel()
		if !busy {
			return
		}
		ctx, cancel = context.WithTimeout(base, 2*time.Second)
		defer cancel()
		q.Call(ctx, "Runtime.terminateExecution", nil)
	})
	if !started {
		t.unsticking.Store(false)
	}
	return started
}
