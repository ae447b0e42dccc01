// Room: the connection's two directions. Transport holds no state of its
// own: the outbound queue and the connection state live in Browser and are
// guarded by Browser.mu.

package cdptest

import (
	"encoding/json"
	"io"
)

// Transport is the client's end of a fake browser's connection: whole CDP
// messages, one JSON object each, as over --remote-debugging-pipe or a
// websocket. Its method set is the one internal transports of browserpool
// and most CDP clients need (ReadMessage, WriteMessage, Close).
//
// ReadMessage may be called from one goroutine and WriteMessage from another
// at the same time; Close may be called at any time.
type Transport struct {
	b *Browser
}

// ReadMessage returns the next message from the browser: a reply
// ({"id":N,"result":{...},"sessionId":"..."} or {"id":N,"error":{...}}) or
// an event ({"method":"...","params":{...},"sessionId":"..."}). It blocks
// until there is one or the connection ends. When the browser process has
// exited it returns the messages written before it exited, then io.EOF;
// after [Browser.DropConnection] it returns io.ErrUnexpectedEOF; after
// Close it returns io.ErrClosedPipe.
func (tr *Transport) ReadMessage() ([]byte, error) {
	b := tr.b
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		switch {
		case b.closed:
			return nil, io.ErrClosedPipe
		case len(b.out) > 0:
			msg := b.out[0]
			b.out[0] = nil
			b.out = b.out[1:]
			return msg, nil
		case b.connErr != nil:
			return nil, b.connErr
		}
		ch := b.changed
		b.mu.Unlock()
		<-ch
		b.mu.Lock()
	}
}

// WriteMessage sends one request to the browser. The browser handles it
// before WriteMessage returns (a handler set with [Browser.Handle] runs on
// the calling goroutine); its reply may be queued, delayed or held. It
// returns io.ErrClosedPipe once the connection has ended. msg is not
// retained.
func (tr *Transport) WriteMessage(msg []byte) error {
	return tr.b.receive(msg)
}

// Close closes the client's end. A browser driven over a pipe exits when
// the pipe closes, so if the connection was up the fake process exits too,
// with status 0. Close
// unblocks a ReadMessage in progress and is idempotent; it always returns
// nil.
func (tr *Transport) Close() error {
	b := tr.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	if b.connErr == nil {
		b.exitLocked(0)
	}
	b.closed = true
	b.out = nil
	b.wakeLocked()
	return nil
}

// envelope is the outer shape of every message in either direction. Field
// order follows Chrome's.
type envelope struct {
	ID        *int64          `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

// batch is a reply and the events that travel with it (or one event on its
// own): the unit that Delay and Hold act on.
type batch struct {
	name string   // the method replied to, or the event's method
	on   *session // its delivery is dropped if on has ended by then; nil: always delivered
	// dropOnCrash: a reply from the renderer, lost if on's target
	// crashes before it is delivered.
	dropOnCrash bool
	msgs        [][]byte
	after       func() // runs (with mu held) once the batch is queued or lost with its session
}

// emitLocked sends event method with params on session s, shaped by Delay
// and Hold like any message.
func (b *Browser) emitLocked(s *session, method string, params any) {
	b.shapeLocked(&batch{name: method, on: s, msgs: [][]byte{encodeEvent(s.id, method, params)}})
}

// shapeLocked applies the delay and the gate for bt.name to bt, then
// delivers it.
func (b *Browser) shapeLocked(bt *batch) {
	if b.connErr != nil {
		return
	}
	g := b.gates[bt.name]
	if d := b.delays[bt.name]; d > 0 {
		b.delayLocked(d, bt, g)
		return
	}
	b.gateLocked(g, bt)
}

// deliverLocked queues bt for ReadMessage unless the connection is gone,
// its session has ended, or its target crashed under it. bt.after runs
// unless the connection is gone.
func (b *Browser) deliverLocked(bt *batch) {
	if b.connErr != nil {
		return
	}
	lost := bt.on != nil && (bt.on.ended ||
		bt.dropOnCrash && bt.on.target != nil && bt.on.target.crashed)
	if !lost {
		b.out = append(b.out, bt.msgs...)
		b.wakeLocked()
	}
	if bt.after != nil {
		bt.after()
	}
}

func encodeEvent(sessionID, method string, params any) []byte {
	raw := mustMarshal(method, params)
	data, err := json.Marshal(envelope{Method: method, Params: raw, SessionID: sessionID})
	if err != nil {
		panic("cdptest: encoding event " + method + ": " + err.Error())
	}
	return data
}

func encodeReply(id int64, sessionID string, result json.RawMessage, e *Error) []byte {
	env := envelope{ID: &id, SessionID: sessionID, Error: e}
	if e == nil {
		env.Result = result
	}
	data, err := json.Marshal(env)
	if err != nil {
		panic("cdptest: encoding reply: " + err.Error())
	}
	return data
}

// mustMarshal encodes the params of a built-in event or a test's Emit; a
// failure is a programming error.
func mustMarshal(what string, v any) json.RawMessage {
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		panic("cdptest: encoding " + what + " params: " + err.Error())
	}
	return raw
}
