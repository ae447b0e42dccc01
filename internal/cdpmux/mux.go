// Package cdpmux carries many flattened CDP sessions over one connection to a
// browser.
//
// Room: the mux. Mux.mu guards the routing tables (pending calls and
// sessions) and the read role (role.go); Mux.wmu guards the write queue
// (call.go: concurrent requests are coalesced into one write on a pipe;
// read.go routes what is read);
// session.mu guards one session's inbound queue. No lock is held while
// writing to the transport except wmu on a transport that cannot batch,
// none while reading it, and no lock is held while a caller's code runs.
//
// Who reads: one goroutine at a time, the holder of the read role. The
// mux's reader goroutine (readLoop) holds it by default. On a transport a
// read deadline can interrupt (ReadDeadliner: the pipe to a local browser),
// a direct call that finds the role free takes it and reads until its own
// reply comes, dispatching everything else it reads exactly as the reader
// would; the reply then never crosses goroutines. The reader gives the
// role up after handing a direct caller its reply with nothing else
// pending, and takes it back ReaderResumeDelay after the last direct caller
// released it (longer while direct calls keep following one another), or
// at once when anything else needs reading: a call that is not direct, or
// a caller waiting for events (Listen).
//
// Every target (and the browser itself) gets its own *rpcc.Conn, built with
// rpcc.WithDialer and rpcc.WithCodec, so cdp.NewClient works unchanged on it.
// A conn runs a goroutine, so it is dialed on first use: the browser's by
// Browser, a session attached by AttachDirect by Direct.Conn (Attach dials
// at once). Until then the session's events go to its tap (Tap) only, and
// its calls are direct calls (Direct).
// Each rpcc.Conn numbers its requests from 1; the mux rewrites them to ids
// unique across the connection and routes replies back by id first, because
// Chrome's error replies for a detached or unknown session carry no sessionId.
// Events are routed by sessionId, in order, into a bounded queue per session.
//
// Overflow policy: replies are never dropped (there can be no more of them
// than calls in flight). When a session's queue holds EventQueueLimit events
// that its reader has not taken yet, further events for that session are
// dropped and counted in Stats.EventsDropped; the transport reader never
// blocks on one slow session, so one stuck tab cannot stall its browser. An
// rpcc.Conn drains its queue continuously, so this only happens to a session
// nobody reads.
package cdpmux

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp/rpcc"
)

// Transport carries whole CDP messages (one JSON object each) to and from a
// browser. The mux calls ReadMessage from one goroutine at a time (the
// holder of its read role, see ReadDeadliner) and WriteMessage from one
// goroutine at a time. WriteMessage may use b's spare capacity but
// must not keep b after it returns: the mux reuses the buffer. Close must
// unblock a ReadMessage in progress.
type Transport interface {
	ReadMessage() ([]byte, error)
	WriteMessage([]byte) error
	Close() error
}

// Classes of session end, for errors.Is.
var (
	// ErrDetached: the target's session was detached (tab closed, or
	// Target.detachFromTarget).
	ErrDetached = errors.New("cdp session detached")
	// ErrTargetCrashed: the target's renderer crashed.
	ErrTargetCrashed = errors.New("target crashed")
	// ErrConnClosed: the connection to the browser ended; Cause says why.
	ErrConnClosed = errors.New("connection to the browser closed")
	// ErrNotSent marks a call that provably never reached the browser
	// (the connection was already closed when it was written). Such a call
	// may be retried on a fresh connection.
	ErrNotSent = errors.New("request was not sent")
	// ErrUnknownSession: Dial was given a session id the mux does not know.
	ErrUnknownSession = errors.New("unknown cdp session")
)

// NotSent marks err as the error of a request that never reached the
// browser: errors.Is finds both ErrNotSent and err in it, and it reads as
// err alone. That a request was not sent is a class for the caller to test
// (a retry is safe), not text: errors.Join would put "request was not
// sent" and a line break in front of every such message.
func NotSent(err error) error { return &notSentError{err} }

type notSentError struct{ err error }

func (e *notSentError) Error() string   { return e.err.Error() }
func (e *notSentError) Unwrap() []error { return []error{ErrNotSent, e.err} }

// EndError is the error every pending and later call of a session fails with
// once the session has ended. It unwraps to its Reason (one of the classes
// above) and to its Cause.
type EndError struct {
	SessionID string // "" for the browser's own session
	Reason    error  // ErrDetached, ErrTargetCrashed or ErrConnClosed
	Cause     error  // why the connection closed, when known; may be nil
}

// Error says which session ended, why, and the cause when known.
func (e *EndError) Error() string {
	who := "browser connection"
	if e.SessionID != "" {
		who = "cdp session " + e.SessionID
	}
	if e.Cause != nil {
		return fmt.Sprintf("%s ended: %v: %v", who, e.Reason, e.Cause)
	}
	return fmt.Sprintf("%s ended: %v", who, e.Reason)
}

// Unwrap returns the reason and the cause.
func (e *EndError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Reason, e.Cause}
	}
	return []error{e.Reason}
}

// DefaultEventQueueLimit is the number of undelivered events a session may
// hold before further events for it are dropped.
const DefaultEventQueueLimit = 4096

// Options configures a Mux. The zero value is usable.
type Options struct {
	// EventQueueLimit bounds each session's undelivered events. Zero means
	// DefaultEventQueueLimit.
	EventQueueLimit int
	// Cause, if set, turns the transport's read or write error into a
	// better cause (for a local browser: its exit status). It runs once
	// when the transport fails and may block (waiting for the exit). If it
	// answers within CauseGrace, pending calls fail with its cause;
	// otherwise they fail then with the transport's own error, and its
	// cause, once known, is what Err reports. Its wait delays Done, never a
	// caller by more than CauseGrace.
	Cause func(readErr error) error
	// ResumeDelay is how long the reader goroutine stays parked after a
	// direct caller read its own reply with no call left pending (see
	// ReaderResumeDelay). Zero means ReaderResumeDelay.
	ResumeDelay time.Duration
}

// CauseGrace bounds how long pending calls wait for Options.Cause when the
// transport fails: a browser that crashed has exited within milliseconds
// of its connection's end, so its calls name the exit; a connection lost to
// a browser that keeps running is reported after CauseGrace at most.
const CauseGrace = 250 * time.Millisecond

// Stats are counters since the mux started.
type Stats struct {
	EventsDropped uint64 // events dropped because a session's queue was full
	Unroutable    uint64 // messages for no known session or call
	Malformed     uint64 // messages that were not valid JSON
}

// Mux multiplexes flattened CDP sessions over one Transport. It is safe for
// concurrent use. The owner must call Close.
type Mux struct {
	t     Transport
	limit int
	cause func(error) error

	// The write path (call.go, writeFrame). On a FrameWriter transport a
	// caller that finds another writing queues its message in wq and
	// returns; the writer writes the queue in one go before it stops.
	wmu     sync.Mutex  // guards wq, wspare, writing; held around t.WriteMessage when fw is nil
	fw      FrameWriter // t as a FrameWriter, or nil; set by New
	wq      []byte      // guarded by wmu; framed messages waiting for the writer
	wspare  []byte      // guarded by wmu; the last written batch's buffer, for reuse
	writing bool        // guarded by wmu; a caller is writing (on a FrameWriter)
	nextID  atomic.Uint64

	// replies holds the reply channels of direct calls (Call) whose reply
	// came; a channel whose call was abandoned may still receive one and
	// is not put back. Per mux, not global: a channel made in a synctest
	// bubble must stay in it.
	replies sync.Pool
	// wbufs holds request buffers (call.go) between writes; a mux's own,
	// so no buffer state is shared between connections.
	wbufs sync.Pool

	dropped, unroutable, malformed atomic.Uint64
	queued, batches                atomic.Uint64 // requests queued for another's write; writes of queued requests (for tests)

	// Use: calls of counted sessions (all but quiet) in flight, and when
	// one last started or ended (unix nanos). Updated with mu held, read
	// without it.
	inflight atomic.Int64
	lastUse  atomic.Int64

	mu       sync.Mutex
	pending  map[uint64]route    // guarded by mu; global id -> caller
	sessions map[string]*session // guarded by mu; by CDP session id, "" = browser
	closed   bool                // guarded by mu
	byUs     bool                // guarded by mu; closed by Close, not by a transport error
	err      *EndError           // guarded by mu; set when closed

	// The read role (role.go). deadline, wake, idle and interruptF are
	// set by New and read-only after; deadline is nil when callers never
	// read (the transport cannot interrupt a read).
	deadline   ReadDeadliner
	role       int           // guarded by mu; roleFree, roleReader or roleCaller
	readErr    error         // guarded by mu; a caller's read failed: the reader ends the mux with it
	wake       chan struct{} // capacity 1: the reader should look at the role
	idle       *time.Timer   // runs idleFired; armed while idleArmed
	resume     time.Duration // Options.ResumeDelay or its default
	idleArmed  bool          // guarded by mu; idle is set to fire
	idleWait   time.Duration // guarded by mu; how long after the last release the reader resumes: resume, longer while calls follow one another (idleFired)
	released   time.Time     // guarded by mu; when the role was last given up with nothing to read for
	listeners  int           // guarded by mu; callers waiting for events (Listen): the reader takes the role back after every direct call while any do
	interruptF func()        // m.interrupt, made once
	idleFires  atomic.Int64  // times idle fired (for tests)

	quiet       *session // the browser's uncounted session (see Quiet); set by New
	browserSess *session // the browser's own session (sessions[""]); set by New
	readerDone  chan struct{}
	ended       context.Context // cancelled once readerDone is closed (AfterEnd)
	endNow      context.CancelFunc
}

type route struct {
	s       *session
	localID uint64
	attach  bool          // a Target.attachToTarget: its reply registers a session
	reply   chan *message // a direct call (Mux.Call): its reply goes here, not to s's conn
	batch   *batch        // a request of Direct.Go: its reply settles batch's request idx
	idx     int
	quiet   bool // not counted in Use although its session is (Direct.Quiet)
	// abandoned: its direct caller gave up (ctx ended) before the reply;
	// no longer counted in Use, though the browser may still answer.
	abandoned bool
}

// New starts a mux on t and returns it with the browser's own session dialed
// (see Browser). The mux owns t from now on.
func New(t Transport, opts Options) (*Mux, error) {
	m := &Mux{
		t:          t,
		limit:      opts.EventQueueLimit,
		cause:      opts.Cause,
		pending:    make(map[uint64]route),
		sessions:   make(map[string]*session),
		readerDone: make(chan struct{}),
		wake:       make(chan struct{}, 1),
		role:       roleReader, // readLoop's from the start
	}
	m.ended, m.endNow = context.WithCancel(context.Background())
	m.fw, _ = t.(FrameWriter)
	if d, ok := t.(ReadDeadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		m.deadline = d
		m.interruptF = m.interrupt
	}
	m.resume = cmp.Or(opts.ResumeDelay, ReaderResumeDelay)
	m.idleWait = m.resume
	m.idle = time.AfterFunc(time.Hour, m.idleFired)
	m.idle.Stop()
	if m.limit <= 0 {
		m.limit = DefaultEventQueueLimit
	}
	m.browserSess = newSession(m, "", "")
	m.browserSess.lazy = true
	m.sessions[""] = m.browserSess
	m.quiet = newSession(m, "", "")
	m.quiet.counted, m.quiet.dialed = false, true
	m.lastUse.Store(time.Now().UnixNano())
	go m.readLoop()
	return m, nil
}

// Quiet returns a direct-call handle on the browser's own target whose
// calls do not count in Use: for monitoring that must not look like use.
// It has no rpcc.Conn (and so no goroutine): replies come straight from
// the reader.
func (m *Mux) Quiet() *Direct { return &Direct{m: m, s: m.quiet} }

// BrowserDirect returns a direct-call handle on the browser's own target,
// counted in Use like the calls of its Browser conn, for callers that need
// no rpcc.Conn.
func (m *Mux) BrowserDirect() *Direct { return &Direct{m: m, s: m.browserSess} }

// Use returns the calls in flight on every connection but Quiet, and when
// one last started or ended (the mux's start before any call). Raw calls
// through a dialed conn count like any other: a program that only uses the
// raw CDP client is still using its browser.
func (m *Mux) Use() (inFlight int, last time.Time) {
	return int(m.inflight.Load()), time.Unix(0, m.lastUse.Load())
}

// Browser returns the connection to the browser's own (sessionless) target,
// for Browser.* and Target.* calls.
// It is dialed on first use, with the goroutine every rpcc.Conn runs; until
// then the browser session's events are not kept (nobody could read them),
// and the mux's own browser-level calls go through direct calls
// (BrowserDirect). On a mux that has ended, its calls fail with the end.
func (m *Mux) Browser() *rpcc.Conn { return m.browserSess.rpcConn() }

// Done is closed when the mux has ended (transport closed or Close called).
func (m *Mux) Done() <-chan struct{} { return m.readerDone }

// AfterEnd arranges for f to run in its own goroutine once the mux has
// ended (Done is closed), holding no goroutine until then. stop, as
// context.AfterFunc's, reports whether it kept f from running.
func (m *Mux) AfterEnd(f func()) (stop func() bool) { return context.AfterFunc(m.ended, f) }

// Err returns why the mux ended, or nil while it runs.
func (m *Mux) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err == nil {
		return nil
	}
	return m.err
}

// Stats returns the mux's counters.
func (m *Mux) Stats() Stats {
	return Stats{
		EventsDropped: m.dropped.Load(),
		Unroutable:    m.unroutable.Load(),
		Malformed:     m.malformed.Load(),
	}
}

// Close closes the transport, fails every pending call and waits for the
// reader to stop. It is idempotent.
func (m *Mux) Close() error {
	m.mu.Lock()
	if !m.closed {
		m.byUs = true
	}
	m.mu.Unlock()
	m.fail(nil)
	<-m.readerDone
	return nil
}

// Attach attaches to targetID as a flattened session and dials it.
func (m *Mux) Attach(ctx context.Context, targetID string) (*rpcc.Conn, string, error) {
	d, err := m.AttachDirect(ctx, targetID)
	if err != nil {
		return nil, "", err
	}
	return d.Conn(), d.s.id, nil
}

// AttachDirect attaches to targetID as a flattened session and returns its
// direct-call handle, without an rpcc.Conn: the session costs no goroutine
// until Direct.Conn dials one, and until then its events are seen by its
// tap (Tap) only, not kept for a conn nobody could read yet.
func (m *Mux) AttachDirect(ctx context.Context, targetID string) (*Direct, error) {
	var reply struct {
		SessionID string `json:"sessionId"`
	}
	args := struct {
		TargetID string `json:"targetId"`
		Flatten  bool   `json:"flatten"`
	}{targetID, true}
	if err := m.BrowserDirect().Invoke(ctx, "Target.attachToTarget", args, &reply); err != nil {
		return nil, err
	}
	return m.Direct(reply.SessionID)
}

// Dial returns a new *rpcc.Conn for an attached session (one attached by
// Attach, or announced by a Target.attachedToTarget event). A session can be
// dialed once; closing the returned conn forgets the session locally (it does
// not detach it in the browser).
func (m *Mux) Dial(ctx context.Context, sessionID string) (*rpcc.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	s := m.sessions[sessionID]
	var err error
	switch {
	case m.closed:
		err = m.err
	case s == nil:
		err = fmt.Errorf("cdpmux: dial %q: %w", sessionID, ErrUnknownSession)
	case s.dialed:
		err = fmt.Errorf("cdpmux: session %q is already dialed", sessionID)
	default:
		s.dialed = true
	}
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.rpcConn(), nil
}

// Tap makes f see every event of the session, in order, on the goroutine
// reading for the mux (its reader, or a direct caller holding the read
// role: one at a time, so never two calls of f at once), before the event is queued for the session's conn; once
// the session has ended, f is called one last time with method "". f must
// return quickly, must not block and must not wait on the mux (it may call
// it). Tapping lets a consumer follow events without a stream goroutine. A
// nil f removes the tap.
func (m *Mux) Tap(sessionID string, f func(method string, params json.RawMessage)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionID]
	if s == nil {
		if m.closed {
			return m.err
		}
		return fmt.Errorf("cdpmux: tap %q: %w", sessionID, ErrUnknownSession)
	}
	s.tap = f
	return nil
}

// fail ends the mux with cause (nil: closed by us). Idempotent.
func (m *Mux) fail(cause error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.err = &EndError{Reason: ErrConnClosed, Cause: cause}
	sessions := m.sessions
	m.sessions = map[string]*session{}
	for _, r := range m.pending {
		if r.batch != nil {
			r.s.unsettled = append(r.s.unsettled, r) // settled by r.s.end below
		}
	}
	m.pending = map[uint64]route{}
	m.inflight.Store(0)
	m.lastUse.Store(time.Now().UnixNano())
	m.mu.Unlock()
	for id, s := range sessions {
		s.end(&EndError{SessionID: id, Reason: ErrConnClosed, Cause: cause})
	}
	if m.quiet != nil {
		m.quiet.end(&EndError{Reason: ErrConnClosed, Cause: cause})
	}
	m.t.Close()
	m.wakeReader() // a parked reader must meet the closed transport
}

// end ends the mux after the transport failed with err (on the reader,
// once the transport is done). Pending calls fail within CauseGrace: with
// Options.Cause's answer if it comes by then, else with err, and Err
// reports Cause's answer once it is known.
func (m *Mux) end(err error) {
	m.mu.Lock()
	if m.closed && m.err.Cause != nil {
		err = m.err.Cause // a write failed first: the calls already know
	}
	byUs := m.byUs
	m.mu.Unlock()
	if byUs || m.cause == nil {
		m.fail(err)
		return
	}
	rich := make(chan error, 1)
	go func() { rich <- m.cause(err) }()
	timer := time.NewTimer(CauseGrace)
	defer timer.Stop()
	var c error
	select {
	case c = <-rich:
		m.fail(c)
	case <-timer.C:
		m.fail(err) // do not keep callers waiting for the exit
		c = <-rich
	}
	if c != nil {
		m.mu.Lock()
		m.err = &EndError{Reason: ErrConnClosed, Cause: c}
		m.mu.Unlock()
	}
}
