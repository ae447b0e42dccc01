// Room: the write path (requests from rpcc.Conns and direct calls). Mux.mu
// is held only to register a call's route (and take or look at the read
// role); Mux.wmu guards the write queue, and is held around the transport
// write only on a transport that cannot batch (no FrameWriter); a direct
// caller waits, or reads for its reply (role.go), holding no lock.

package cdpmux

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mafredri/cdp/rpcc"
)

// wbuf is a reusable request buffer with its JSON encoder, so that a
// request costs no buffer and no encoder of its own: the transport does
// not keep the bytes (Transport.WriteMessage), so the buffer goes back to
// the mux's wbufs once written.
type wbuf struct {
	b   bytes.Buffer
	enc *json.Encoder
}

// wbufKeep is the largest buffer put back in wbufs: a 5 MB request (a big
// file upload) is not kept alive by the pool.
const wbufKeep = 64 << 10

func (m *Mux) getWbuf() *wbuf {
	if w, _ := m.wbufs.Get().(*wbuf); w != nil {
		return w
	}
	w := new(wbuf)
	w.enc = json.NewEncoder(&w.b)
	return w
}

func (m *Mux) putWbuf(w *wbuf) {
	if w.b.Cap() > wbufKeep {
		return
	}
	w.b.Reset()
	m.wbufs.Put(w)
}

// head writes a request's id, session id and method.
func (w *wbuf) head(gid uint64, sessionID, method string) {
	b := w.b.AvailableBuffer()
	b = append(b, `{"id":`...)
	b = strconv.AppendUint(b, gid, 10)
	if sessionID != "" {
		b = append(b, `,"sessionId":`...)
		b = appendJSONString(b, sessionID)
	}
	b = append(b, `,"method":`...)
	b = appendJSONString(b, method)
	w.b.Write(b)
}

// request frames a direct call: its id, session id, method and params
// (one JSON object; nil for none).
func (w *wbuf) request(gid uint64, sessionID, method string, params []byte) {
	w.head(gid, sessionID, method)
	if params != nil {
		w.b.WriteString(`,"params":`)
		w.b.Write(params)
	}
	w.b.WriteByte('}')
}

// send writes one request of session s (from its rpcc.Conn). The params
// are encoded by encoding/json straight into the pooled buffer (its
// Encoder adds a newline after them, which JSON allows there).
func (m *Mux) send(s *session, req *rpcc.Request) error {
	w := m.getWbuf()
	defer m.putWbuf(w)
	gid := m.nextID.Add(1)
	w.head(gid, s.id, req.Method)
	if req.Args != nil {
		w.b.WriteString(`,"params":`)
		if err := w.enc.Encode(req.Args); err != nil {
			return fmt.Errorf("cdpmux: encoding %s params: %w", req.Method, err)
		}
	}
	w.b.WriteByte('}')
	_, _, err := m.write(s, "", gid, req.Method, w.b.Bytes(), route{s: s, localID: req.ID, attach: req.Method == "Target.attachToTarget"})
	return err
}

// write registers r under gid and writes buf. s is the calling session; if
// nil, the session is looked up by sessionID (a direct call) and returned.
// A call that provably never reached the browser fails with ErrNotSent.
// led reports that a direct call (r.reply set) took the free read role:
// its caller must read for its reply (lead), also when err is not nil
// (the role is then released here). A call that finds the role free and
// cannot take it (an rpcc call) wakes the reader.
func (m *Mux) write(s *session, sessionID string, gid uint64, method string, buf []byte, r route) (_ *session, led bool, _ error) {
	m.mu.Lock()
	if m.closed {
		err := m.err
		m.mu.Unlock()
		return nil, false, NotSent(err)
	}
	if s == nil {
		if s = m.sessions[sessionID]; s == nil {
			m.mu.Unlock()
			return nil, false, NotSent(fmt.Errorf("cdpmux: call on %q: %w", sessionID, ErrUnknownSession))
		}
	} else if m.sessions[s.id] != s && s != m.quiet {
		m.mu.Unlock()
		return nil, false, NotSent(s.endErr())
	}
	r.s = s
	m.pending[gid] = r
	if s.counted && !r.quiet {
		m.inflight.Add(1)
		m.lastUse.Store(time.Now().UnixNano())
	}
	wake := false
	if m.deadline != nil && m.role == roleFree {
		if r.reply != nil {
			m.role, led = roleCaller, true
		} else {
			wake = true
		}
	}
	m.mu.Unlock()
	if wake {
		m.wakeReader() // before the write: the reader may be reading when the reply comes
	}

	if err := m.writeFrame(buf); err != nil {
		m.mu.Lock()
		delete(m.pending, gid) // never sent: its caller gets ErrNotSent, not the end
		m.mu.Unlock()
		// A message transport that fails a write is dead (a broken pipe;
		// gorilla/websocket after any write error), and the message was
		// never processed: end the mux now rather than when the reader
		// notices, so this and every later call report ErrConnClosed.
		// The reader then sees the transport closed and enriches the
		// cause (Options.Cause) without holding this caller up.
		m.fail(fmt.Errorf("cdpmux: writing %s: %w", method, err))
		if led {
			m.release()
		}
		return nil, false, NotSent(m.Err())
	}
	return s, led, nil
}

// Call sends method with params (one JSON object; nil for none) on the
// attached session sessionID ("" is the browser's own) and returns the
// reply's result, which aliases the message the transport returned. It is
// what a call through the session's rpcc.Conn does, counted the same way in
// Use, with the same errors (*rpcc.ResponseError for an error reply, the
// session's *EndError once it ended, marked NotSent when the request was
// never written, ctx.Err() when ctx ends first), without the conn's
// goroutines: the request is written on the caller's goroutine, and the
// reply is read there too when nobody else is reading (see the package
// doc), else handed straight to the caller by whoever reads. A call its
// caller gave up on (ctx ended) no longer counts in Use from then: nobody
// waits for it, though the browser may still answer (a call through the
// session's rpcc.Conn, which tells the mux nothing of its context, stays
// counted until the browser answers).
func (m *Mux) Call(ctx context.Context, sessionID, method string, params []byte) (json.RawMessage, error) {
	return m.call(ctx, nil, sessionID, method, params, false)
}

// Direct is one attached session's handle for direct calls. Unlike Call by
// session id, it keeps the session: once the session has ended (detached,
// crashed, closed) its calls fail with that session's *EndError (joined
// with ErrNotSent), exactly as calls through its rpcc.Conn do, rather than
// with ErrUnknownSession.
type Direct struct {
	m     *Mux
	s     *session
	quiet bool // its calls do not count in Use (Quiet)
}

// Quiet returns a handle on d's session whose calls do not count in Use:
// for calls the package makes in answer to the page (a dialog it closes
// on its own), which are not use of the browser.
func (d *Direct) Quiet() *Direct { return &Direct{m: d.m, s: d.s, quiet: true} }

// Direct returns the handle for direct calls on the attached session
// sessionID. Take it when the session is attached (Attach, Dial).
func (m *Mux) Direct(sessionID string) (*Direct, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, m.err
	}
	s := m.sessions[sessionID]
	if s == nil {
		return nil, fmt.Errorf("cdpmux: direct %q: %w", sessionID, ErrUnknownSession)
	}
	return &Direct{m: m, s: s}, nil
}

// Call is Mux.Call on d's session.
func (d *Direct) Call(ctx context.Context, method string, params []byte) (json.RawMessage, error) {
	return d.m.call(ctx, d.s, d.s.id, method, params, d.quiet)
}

// Conn returns the session's rpcc.Conn, dialing it on first use (Mux.Dial
// and Conn share one conn): a session attached by AttachDirect has none,
// and costs no goroutine, until something needs the generated client or a
// stream. Once the session has ended, the conn is closed, its calls
// failing with the end.
func (d *Direct) Conn() *rpcc.Conn { return d.s.rpcConn() }

// Dialed reports whether the session's rpcc.Conn has been dialed (Conn,
// Dial).
func (d *Direct) Dialed() bool {
	d.m.mu.Lock()
	defer d.m.mu.Unlock()
	return d.s.dialed
}

// ID returns the session's id ("" for the browser's own).
func (d *Direct) ID() string { return d.s.id }

// Listen is Mux.Listen, for a caller about to wait for events of this
// session (or any other: the mux has one reader).
func (d *Direct) Listen() (stop func()) { return d.m.Listen() }

// Done is closed when the session has ended (detached, crashed, closed
// here or with the mux).
func (d *Direct) Done() <-chan struct{} { return d.s.done }

// Err returns the session's end once Done is closed (an *EndError: it
// was detached or closed, its target crashed, or the connection ended),
// and nil before.
func (d *Direct) Err() error {
	select {
	case <-d.s.done:
		return d.s.endErr()
	default:
		return nil
	}
}

// Close forgets the session locally, as closing its conn does (it does
// not detach it in the browser): its calls and its conn's, if dialed, then
// fail with ErrDetached, and the conn's goroutine ends. On the browser's
// own session (BrowserDirect, Quiet) it does nothing: that one ends with
// the mux.
func (d *Direct) Close() {
	if d.s.id != "" {
		d.s.Close()
	}
}

// Invoke is Call with params encoded by encoding/json (nil for none) and
// the result decoded into reply unless reply is nil: what rpcc.Invoke does
// through a conn. Errors are Call's, or an encoding or decoding error
// naming the method.
func (d *Direct) Invoke(ctx context.Context, method string, params, reply any) error {
	res, err := d.InvokeRaw(ctx, method, params)
	if err != nil || reply == nil {
		return err
	}
	if err := json.Unmarshal(res, reply); err != nil {
		return DecodeError(method, err)
	}
	return nil
}

// InvokeRaw is Invoke without the decoding: it returns the result as Call
// does, for a caller that decodes it its own way (a reply of megabytes).
func (d *Direct) InvokeRaw(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var raw []byte
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("cdpmux: encoding %s params: %w", method, err)
		}
	}
	return d.Call(ctx, method, raw)
}

// DecodeError is Invoke's error for a reply of method that did not decode.
func DecodeError(method string, err error) error {
	return fmt.Errorf("cdpmux: decoding the reply of %s: %w", method, err)
}

// call is Call on s, or, with s nil, on the session sessionID looked up now.
func (m *Mux) call(ctx context.Context, s *session, sessionID, method string, params []byte, quiet bool) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := m.start(s, sessionID, method, params, quiet)
	if err != nil {
		return nil, err
	}
	return m.await(ctx, c)
}

// sent is a direct call written to the browser, its reply to come on ch.
type sent struct {
	s   *session
	gid uint64
	ch  chan *message
	led bool // its caller took the read role (see write) and must await it first
}

// start writes a direct call on s (with s nil, on the session sessionID
// looked up now); quiet, it does not count in Use.
func (m *Mux) start(s *session, sessionID, method string, params []byte, quiet bool) (sent, error) {
	w := m.getWbuf()
	gid := m.nextID.Add(1)
	w.request(gid, sessionID, method, params)
	ch, _ := m.replies.Get().(chan *message)
	if ch == nil {
		ch = make(chan *message, 1)
	}
	s, led, err := m.write(s, sessionID, gid, method, w.b.Bytes(), route{reply: ch, attach: method == "Target.attachToTarget", quiet: quiet})
	m.putWbuf(w)
	if err != nil {
		m.replies.Put(ch)
		return sent{}, err
	}
	return sent{s: s, gid: gid, ch: ch, led: led}, nil
}

// await waits for c's reply, reading for it when c.led.
func (m *Mux) await(ctx context.Context, c sent) (json.RawMessage, error) {
	var msg *message
	if c.led {
		var err error
		var ok bool
		if msg, err, ok = m.lead(ctx, c.s, c.ch); ok {
			if err != nil {
				if ctx.Err() != nil {
					m.abandon(c.gid)
				}
				return nil, err // ch is not reused: the reply may still come
			}
			return m.result(c.ch, msg)
		}
	}
	select {
	case msg = <-c.ch:
	case <-ctx.Done():
		m.abandon(c.gid)
		return nil, ctx.Err()
	case <-c.s.done:
		select {
		case msg = <-c.ch: // answered just before the end
		default:
			return nil, c.s.endErr()
		}
	}
	return m.result(c.ch, msg)
}

// abandon stops counting call gid in Use, if it is still pending: its
// caller gave up, so the session is not in use for it any more (it may be
// idle from now). The browser's reply, if it comes, is dropped as before.
func (m *Mux) abandon(gid uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.pending[gid]
	if !ok || r.abandoned || !r.s.counted || r.quiet {
		return
	}
	r.abandoned = true
	m.pending[gid] = r
	m.inflight.Add(-1)
	m.lastUse.Store(time.Now().UnixNano())
}

// Request is one call of Direct.Go.
type Request struct {
	Method string
	Params []byte // one JSON object; nil for none
}

// Go writes every request at once, in order, and returns without waiting
// for their replies: what len(reqs) concurrent Calls do, with no goroutine
// waiting for them. done runs once, when every request has its reply or
// its error: replies[i] and errs[i] are reqs[i]'s, with Call's meaning (an
// error reply is a *rpcc.ResponseError; a request that could not be
// written fails with ErrNotSent, and does not stop the others; the ones
// left when the session or the mux ends fail with its *EndError). It runs
// on the goroutine that settled the last request: the mux's reader, a
// direct caller reading for its own reply, or the one ending the session
// or calling Go; so it must be quick and must not call the mux. Go is not
// for Target.attachToTarget (AttachDirect).
func (d *Direct) Go(reqs []Request, done func(replies []json.RawMessage, errs []error)) {
	b := &batch{left: len(reqs), replies: make([]json.RawMessage, len(reqs)), errs: make([]error, len(reqs)), settled: make([]bool, len(reqs)), done: done}
	if len(reqs) == 0 {
		done(b.replies, b.errs)
		return
	}
	for i, r := range reqs {
		w := d.m.getWbuf()
		gid := d.m.nextID.Add(1)
		w.request(gid, d.s.id, r.Method, r.Params)
		_, _, err := d.m.write(d.s, d.s.id, gid, r.Method, w.b.Bytes(), route{batch: b, idx: i})
		d.m.putWbuf(w)
		if err != nil {
			b.settle(i, nil, err)
		}
	}
}

// batch is the requests of one Direct.Go, settled one by one: by their
// replies (dispatchReply), by a failed write (Go), or by the end of their
// session (session.end, which unregisterLocked and fail hand them to).
type batch struct {
	mu      sync.Mutex
	left    int               // guarded by mu; requests not settled yet
	replies []json.RawMessage // guarded by mu
	errs    []error           // guarded by mu
	settled []bool            // guarded by mu; a request is settled once, by whoever comes first
	done    func(replies []json.RawMessage, errs []error)
}

// settle gives request i its reply or error, unless it has one, and runs
// done when it was the last.
func (b *batch) settle(i int, reply json.RawMessage, err error) {
	b.mu.Lock()
	if b.settled[i] {
		b.mu.Unlock()
		return
	}
	b.settled[i] = true
	b.replies[i], b.errs[i] = reply, err
	b.left--
	last := b.left == 0
	b.mu.Unlock()
	if last {
		b.done(b.replies, b.errs)
	}
}

// result puts a direct call's reply channel back and returns its reply.
func (m *Mux) result(ch chan *message, msg *message) (json.RawMessage, error) {
	m.replies.Put(ch)
	if msg.Error != nil {
		return nil, msg.Error
	}
	return msg.Result, nil
}

// appendJSONString appends s as a JSON string. Method names and session ids
// are plain ASCII; anything else goes through encoding/json.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// FrameWriter is a Transport that can frame messages into one buffer and
// write many at once (PipeTransport). On one the mux coalesces the
// messages of concurrent callers: a caller that finds another writing
// queues its framed message and goes on to wait for its reply, and the
// writer writes everything queued in one write before it stops, so N
// concurrent calls cost the browser and us about one write, not N.
type FrameWriter interface {
	AppendFrame(dst, msg []byte) []byte
	WriteFrames(b []byte) error
}

// wqKeep is the largest batch buffer kept for reuse.
const wqKeep = 64 << 10

// writeFrame writes buf (one request) to the transport. On a FrameWriter a
// caller that finds another writing queues its framed request and returns
// at once; the writer, once its own request is out, writes what was
// queued meanwhile, in batches, until nothing is left. The error is that
// of buf's own write (the request was not sent). A batch that fails ends
// the mux, and its callers report that end like any call in flight when
// the connection dropped: a batch may have been written in part, so its
// requests are not known to be unsent (ErrNotSent).
func (m *Mux) writeFrame(buf []byte) error {
	m.wmu.Lock()
	if m.fw == nil {
		defer m.wmu.Unlock()
		return m.t.WriteMessage(buf)
	}
	if m.writing {
		m.wq = m.fw.AppendFrame(m.wq, buf)
		m.wmu.Unlock()
		m.queued.Add(1)
		return nil
	}
	m.writing = true
	m.wmu.Unlock()
	err := m.t.WriteMessage(buf)
	m.wmu.Lock()
	for err == nil && len(m.wq) > 0 {
		batch := m.wq
		m.wq, m.wspare = m.wspare[:0], nil
		m.wmu.Unlock()
		berr := m.fw.WriteFrames(batch)
		m.batches.Add(1)
		m.wmu.Lock()
		if cap(batch) <= wqKeep {
			m.wspare = batch[:0]
		}
		if berr != nil {
			m.wq, m.writing = m.wq[:0], false
			m.wmu.Unlock()
			m.fail(fmt.Errorf("cdpmux: writing queued requests: %w", berr))
			return nil
		}
	}
	m.wq, m.writing = m.wq[:0], false // dropped if buf's own write failed
	m.wmu.Unlock()
	return err
}
