// Room: one flattened session of the mux: its inbound queue (session.mu)
// and the rpcc codec its conn talks to. Mux.mu guards targetID, dialed,
// lazy and tap; session.mu is a leaf lock.

package cdpmux

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/mafredri/cdp/rpcc"
)

// session is one flattened CDP session: the io.ReadWriteCloser and the
// rpcc.Codec of its rpcc.Conn.
type session struct {
	m      *Mux
	id     string
	notify chan struct{} // capacity 1: "the queue changed"
	done   chan struct{} // closed when the session ends (end), after err is set

	counted bool // calls count in Mux.Use (all but the quiet session); set at creation

	// targetID, dialed, lazy, tap and unsettled are guarded by m.mu.
	targetID  string
	dialed    bool // its rpcc.Conn is dialed (or it has none: the quiet session)
	lazy      bool // its events are kept only once dialed: the browser's, and those AttachDirect attached
	tap       func(method string, params json.RawMessage)
	unsettled []route // requests of Direct.Go taken off the pending calls as it ended: end settles them

	dial sync.Once
	conn *rpcc.Conn // dialed on first use (rpcConn); set once under dial

	mu     sync.Mutex
	queue  []*message // guarded by mu; undelivered, in order
	events int        // guarded by mu; events in queue
	err    error      // guarded by mu; set when ended, returned after queue drains
}

func newSession(m *Mux, id, targetID string) *session {
	return &session{m: m, id: id, targetID: targetID, counted: true, notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// rpcConn returns the session's rpcc.Conn, dialing it on first use: the
// conn's goroutine reads the session's queue, and from then on its events
// are kept for it. A session that has ended gives a conn that closes
// itself at once, its calls failing with the end.
func (s *session) rpcConn() *rpcc.Conn {
	s.dial.Do(func() {
		s.m.mu.Lock()
		s.dialed = true
		s.m.mu.Unlock()
		// The dialer and codec cannot fail: this never returns an error.
		s.conn, _ = rpcc.DialContext(context.Background(), "cdpmux:"+s.id,
			rpcc.WithDialer(func(context.Context, string) (io.ReadWriteCloser, error) { return s, nil }),
			rpcc.WithCodec(func(io.ReadWriter) rpcc.Codec { return s }),
		)
	})
	return s.conn
}

func (s *session) deliver(msg *message, reply bool) {
	s.mu.Lock()
	switch {
	case s.err != nil:
		s.mu.Unlock()
		return
	case !reply && s.events >= s.m.limit:
		s.mu.Unlock()
		s.m.dropped.Add(1)
		return
	}
	if !reply {
		s.events++
	}
	s.queue = append(s.queue, msg)
	s.mu.Unlock()
	s.wake()
}

func (s *session) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// end marks the session ended: messages already queued are still read, then
// ReadResponse returns err. It settles the session's unsettled requests
// of Direct.Go with its end (the first end's err).
func (s *session) end(err error) {
	s.mu.Lock()
	first := s.err == nil
	if first {
		s.err = err
		close(s.done)
	}
	err = s.err
	s.mu.Unlock()
	s.wake()
	s.m.mu.Lock()
	var tap func(string, json.RawMessage)
	if first {
		tap, s.tap = s.tap, nil
	}
	unsettled := s.unsettled
	s.unsettled = nil
	s.m.mu.Unlock()
	if tap != nil {
		tap("", nil)
	}
	for _, r := range unsettled {
		r.batch.settle(r.idx, nil, err)
	}
}

func (s *session) endErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return &EndError{SessionID: s.id, Reason: ErrDetached}
	}
	return s.err
}

// WriteRequest implements rpcc.Codec.
func (s *session) WriteRequest(req *rpcc.Request) error { return s.m.send(s, req) }

// ReadResponse implements rpcc.Codec. It blocks until a message for this
// session arrives or the session ends.
func (s *session) ReadResponse(resp *rpcc.Response) error {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			msg := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if msg.Method != "" {
				s.events--
			}
			s.mu.Unlock()
			resp.ID = msg.ID
			resp.Result = msg.Result
			resp.Error = msg.Error
			resp.Method = msg.Method
			resp.Args = msg.Params
			return nil
		}
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return err
		}
		<-s.notify
	}
}

// Read and Write are never called: rpcc talks to the codec directly.
func (s *session) Read([]byte) (int, error) {
	return 0, errors.New("cdpmux: session is not a byte stream")
}
func (s *session) Write([]byte) (int, error) {
	return 0, errors.New("cdpmux: session is not a byte stream")
}

// Close is called by rpcc.Conn.Close: it forgets the session locally and ends
// its reader. It does no I/O (rpcc calls it with its own lock held).
func (s *session) Close() error {
	s.m.mu.Lock()
	if s.id != "" && s.m.sessions[s.id] == s {
		s.m.unregisterLocked(s.id)
	}
	s.m.mu.Unlock()
	s.end(&EndError{SessionID: s.id, Reason: ErrDetached})
	return nil
}
