// Room: scripting a browser's answers (Handle, Delay, Hold, Emit,
// SessionlessErrorFor). Everything here is guarded by Browser.mu; handlers
// run without it.

package cdptest

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Error is a CDP error reply. A handler set with [Browser.Handle] returns
// one (as *Error) to make the browser reply {"id":N,"error":{"code":Code,
// "message":Message}}. Codes Chrome uses: -32601 method not found, -32602
// invalid params, -32000 server error, -32001 session not found.
type Error struct {
	Code    int    `json:"code"`           // the JSON-RPC error code
	Message string `json:"message"`        // the error's text
	Data    string `json:"data,omitempty"` // more detail, as Chrome sends for some errors
}

// Error returns the reply's text as rpcc formats it.
func (e *Error) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("rpc error: %s (code = %d, data = %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("rpc error: %s (code = %d)", e.Message, e.Code)
}

// ErrNotHandled is returned by a handler set with [Browser.Handle] to leave
// a call to the built-in behaviour, for example to script only one target:
//
//	b.Handle("Runtime.evaluate", func(c *cdptest.Call) (any, error) {
//		if c.TargetID != tab {
//			return nil, cdptest.ErrNotHandled
//		}
//		return nil, &cdptest.Error{Code: -32000, Message: "Execution context was destroyed."}
//	})
var ErrNotHandled = errors.New("cdptest: call not handled")

// Handle makes h answer every later call of method, on every session, in
// place of the built-in behaviour (which h may fall back to by returning
// [ErrNotHandled]; h may read the call's SessionID and TargetID to scope
// itself). A nil h removes the handler.
//
// h's result is encoded as the reply's result (nil means {}); an error
// that is or wraps an *[Error] becomes that CDP error reply, any other
// error becomes code -32000 with the error's text. Delay, Hold and
// SessionlessErrorFor apply to the reply as to a built-in one. A handler
// replaces the built-in behaviour whole: a scripted Page.navigate neither
// changes the target's URL nor emits events unless h calls [Browser.Emit].
//
// h runs on the goroutine that wrote the request, without the browser's
// lock, so it may call any method of the browser. It should return
// promptly: like a hung browser, a blocked handler stalls the connection's
// writer. To keep a call in flight, use [Browser.Hold] instead.
func (b *Browser) Handle(method string, h func(c *Call) (result any, err error)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h == nil {
		delete(b.handlers, method)
		return
	}
	b.handlers[method] = h
}

// Delay delays by d every later reply to method, and every later event
// named method, with the events that follow such a reply (as Page.navigate's
// load events do). Other messages are not held back by it, so a delayed
// reply arrives after replies to later calls. Timers use the time package,
// so inside testing/synctest the bubble's fake clock decides. A d of zero
// or less removes the delay.
func (b *Browser) Delay(method string, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d <= 0 {
		delete(b.delays, method)
		return
	}
	b.delays[method] = d
}

// SessionlessErrorFor makes the browser answer every later call of method
// with Chrome's reply for a session it does not know:
// {"id":N,"error":{"code":-32001,"message":"Session with given id not
// found."}}, with no sessionId, whatever session the call came on. The
// call has no other effect.
func (b *Browser) SessionlessErrorFor(method string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessionless[method] = true
}

// Emit sends the event method with params (encoded with encoding/json; nil
// means no params) on session sessionID ("" for the browser's own
// session). It changes no state of the browser: emitting
// Target.detachedFromTarget tells the client a session ended without
// ending it. Delay and Hold apply. It does nothing once the connection has
// ended. It panics if params cannot be encoded.
func (b *Browser) Emit(sessionID, method string, params any) {
	msg := encodeEvent(sessionID, method, params)
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.sessions[sessionID] // nil for a session the browser does not know: always sent
	b.shapeLocked(&batch{name: method, on: s, msgs: [][]byte{msg}})
}

// Hold closes a gate on method: later replies to method, and later events
// named method, are held (in order) until [Gate.Release]. That includes
// events sent together with a reply (the Page.lifecycleEvent events that
// follow Page.navigate's reply): the reply and the events before the first
// held one are sent; the held one and the ones after it go through their
// own gates. While a call's
// reply is held the call is in flight, which is what a test of a
// cancellation, a crash or a detach during a call needs. Held messages are
// dropped if the connection ends, and a held reply is dropped if its
// session ends or its target crashes before release, as Chrome would never
// send it. A later Hold on the same method replaces the gate for messages
// that come after it.
func (b *Browser) Hold(method string) *Gate {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := &Gate{b: b, method: method, changed: make(chan struct{})}
	b.gates[method] = g
	return g
}

// Gate holds messages for one method until it is released. Make one with
// [Browser.Hold]; the zero value is not usable. It is safe for concurrent
// use.
type Gate struct {
	b      *Browser
	method string

	held     []*batch      // guarded by b.mu; in arrival order
	count    int           // guarded by b.mu; messages that have reached the gate
	released bool          // guarded by b.mu
	changed  chan struct{} // guarded by b.mu; closed and replaced when count changes
}

// Wait blocks until n messages have reached the gate (held or, after
// Release, passed through), and returns nil. It returns ctx.Err() if ctx
// ends first, and an error if the connection ends first.
func (g *Gate) Wait(ctx context.Context, n int) error {
	b := g.b
	for {
		b.mu.Lock()
		count, ch := g.count, g.changed
		b.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-ch:
		case <-b.connDone:
			return fmt.Errorf("cdptest: Gate(%s).Wait: the connection ended after %d of %d messages", g.method, count, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release opens the gate: the messages it holds are sent in order (those
// whose session has ended are dropped) and later ones pass. It is
// idempotent.
func (g *Gate) Release() {
	b := g.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if g.released {
		return
	}
	g.released = true
	if b.gates[g.method] == g {
		delete(b.gates, g.method)
	}
	held := g.held
	g.held = nil
	for _, bt := range held {
		b.deliverLocked(bt)
	}
	g.wakeLocked()
}

// gateLocked holds bt at g if g is still closed, else delivers it.
func (b *Browser) gateLocked(g *Gate, bt *batch) {
	if g == nil {
		b.deliverLocked(bt)
		return
	}
	g.count++
	g.wakeLocked()
	if g.released {
		b.deliverLocked(bt)
		return
	}
	g.held = append(g.held, bt)
}

func (g *Gate) wakeLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// delayed is one timer of the browser's: a delayed batch, a poll's next
// check or deadline, a page's Page.After func.
type delayed struct {
	timer *time.Timer
}

// delayLocked sends bt through gate g (nil: none) after d.
func (b *Browser) delayLocked(d time.Duration, bt *batch, g *Gate) {
	b.timerLocked(d, func() { b.gateLocked(g, bt) })
}

// timerLocked runs f with b.mu held after d (on the bubble's fake clock
// inside testing/synctest), unless the timer is stopped or the connection
// ends first (disconnectLocked stops every timer); work f leaves for after
// the lock (afterUnlock) runs once it is released. Once the connection has
// ended it does nothing and returns nil. The timer starts no goroutine
// until it fires.
func (b *Browser) timerLocked(d time.Duration, f func()) *delayed {
	if b.connErr != nil {
		return nil
	}
	dl := new(delayed)
	// The callback takes mu, which we hold until dl.timer is set.
	dl.timer = time.AfterFunc(d, func() {
		defer b.runAfterUnlock()
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.timers[dl]; !ok {
			return // stopped, or the connection ended, too late for Stop
		}
		delete(b.timers, dl)
		f()
	})
	b.timers[dl] = struct{}{}
	return dl
}

// stopTimerLocked stops dl (nil: none) if it has not fired.
func (b *Browser) stopTimerLocked(dl *delayed) {
	if dl == nil {
		return
	}
	dl.timer.Stop()
	delete(b.timers, dl)
}
