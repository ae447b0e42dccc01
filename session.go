// Room: the session. Session.mu guards its state, its tab table and its
// active tab; lastUsed and inflight are atomics so that touching a session
// costs no lock. No CDP call is made with Session.mu held.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// ChannelCDP is the channel of sessions driven over the DevTools protocol.
// Every result names its channel so callers can tell surfaces apart.
const ChannelCDP = "cdp"

// SessionState is the life stage of a session.
type SessionState string

// Session states.
const (
	StateLive    SessionState = "live"
	StateClosing SessionState = "closing"
	StateClosed  SessionState = "closed"
)

// SessionInfo describes a session.
type SessionInfo struct {
	ID         string       // the session's id ("s-" and 12 hex digits for a launch)
	Channel    string       // always "cdp" for sessions the pool launched
	PID        int          // browser pid (0 for in-memory or remote browsers)
	PGID       int          // the browser's process group, which the pool kills at close (0 when PID is)
	Port       int          // DevTools port on 127.0.0.1; 0 with LocalLauncher.NoDevToolsPort
	ProfileDir string       // the session dir (profile inside it)
	OutputDir  string       // where the session's artifacts land
	Version    string       // the browser's product (Browser.getVersion), e.g. "HeadlessChrome/156.0.0.0"
	Created    time.Time    // when the session was made, its browser up
	LastUsed   time.Time    // when a call on it last started or ended, raw CDP calls included (idle reclaim reads it)
	InFlight   int          // calls under way now: the larger of the package's calls and the CDP calls on its connection (raw ones included)
	State      SessionState // live, closing or closed
	Ours       bool         // launched by this pool (false for attached browsers)
	// Fleet is the kind of fleet a leased browser comes from
	// ("browserless", "selenium-grid"); empty for local and attached ones.
	Fleet string
	// Endpoint is the fleet's URL, without credentials or query (no token).
	Endpoint string
	// Profile is the named persistent profile it holds (Pool.OpenProfile),
	// "" for a fresh one.
	Profile string
}

// Session is one isolated browser: its own process (process group), profile
// dir and DevTools port. It is safe for concurrent use. Sessions come from
// Pool.Open or Pool.Session; close one with Close (the Pool closes the rest).
type Session struct {
	p   *Pool
	id  string
	b   LaunchedBrowser
	mux *cdpmux.Mux
	// direct is the browser's own target for the package's own
	// browser-level calls (browserCall): no rpcc.Conn, no goroutine.
	direct *cdpmux.Direct
	quiet  *cdpmux.Direct // mux.Quiet: calls that are not use (monitoring)

	// popups is set once a page of the session opened a window (a
	// target=_blank link, window.open: Page.windowOpen); from then on
	// front is the tab last brought to the front (Tab.toFront), nil when
	// a window opened since.
	popups atomic.Bool
	front  atomic.Pointer[Tab]
	// browser is the user's raw browser-level client (Browser), made on
	// first use with the connection and goroutine it needs.
	browserOnce sync.Once
	browser     *cdp.Client // set once under browserOnce
	info        SpawnInfo
	created     time.Time
	output      string
	ours        bool          // launched by this pool; false for an attached browser (never killed)
	filesRemote bool          // files move over CDP (tab_remotefiles.go): an attached browser not on this machine's loopback; set before the session is shared
	leased      bool          // b is a fleet's browser (fleetKind): its files move over CDP too; set by newSession
	done        chan struct{} // closed when the close path has finished

	closeErr error // set by the close path before done is closed; read after done

	profile *profileHold // the named profile it holds (profile.go), nil if none; set at launch, released by the close path

	downloads sessDownloads             // whether downloads are routed into DownloadDir (tab_download.go), and the downloads (session_downloads.go)
	rec       atomic.Pointer[Recording] // the running recording, nil if none (recording.go)

	// refNums issues the snapshot ref numbers of all the session's tabs,
	// so a ref shown for one tab never names an element of another. It
	// has its own lock.
	refNums axtext.Counter

	lastUsed atomic.Int64 // unix nanos of the last call's start or end
	inflight atomic.Int32 // calls in flight

	mu     sync.Mutex
	state  SessionState    // guarded by mu
	reason CloseReason     // guarded by mu; set when closing starts
	cause  error           // guarded by mu; why the browser ended, for crashes
	tabs   map[string]*Tab // guarded by mu; attached tabs by target id
	order  []string        // guarded by mu; target ids, most recently activated last
	active string          // guarded by mu; the active tab's id, "" if none known
	// tabsTouched is set at the first attach or OpenTab: from then on the
	// browser's start-up tab is no longer "untouched" (see OpenTab);
	// guarded by mu.
	tabsTouched bool
	// closing holds tabs closed by CloseTab, and when, that the browser may
	// still list for a moment; guarded by mu. Entries leave once it stops
	// listing them, or closingMemory after the close.
	closing map[string]time.Time
	// crashed holds tabs whose renderer crashed: the browser keeps listing
	// them, but they answer no call until closed; guarded by mu. Entries
	// leave when CloseTab closes them or the browser stops listing them
	// (pageTargets).
	crashed map[string]bool
	// gone holds the latest goneMemory tabs the session forgot (closed by
	// CloseTab, by their page or on the raw client), oldest first, so a
	// later call naming one can say it was closed; guarded by mu.
	gone []goneTab
}

// goneTab is a tab the session forgot (Session.gone).
type goneTab struct {
	id     string
	byCall bool // Session.CloseTab closed it
}

// goneMemory is how many closed tabs a session remembers (Session.gone).
const goneMemory = 64

func newSession(p *Pool, id string, b LaunchedBrowser, mux *cdpmux.Mux, info SpawnInfo) *Session {
	s := &Session{
		p:       p,
		id:      id,
		b:       b,
		mux:     mux,
		direct:  mux.BrowserDirect(),
		quiet:   mux.Quiet(),
		info:    info,
		created: time.Now(),
		output:  filepath.Join(p.cfg.OutputDir, id),
		ours:    true,
		done:    make(chan struct{}),
		state:   StateLive,
		tabs:    make(map[string]*Tab),
		closing: make(map[string]time.Time),
		crashed: make(map[string]bool),
		leased:  fleetKind(b) != "",
	}
	s.lastUsed.Store(s.created.UnixNano())
	return s
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Channel returns "cdp".
func (s *Session) Channel() string { return ChannelCDP }

// Browser returns the browser-level CDP client, for anything the package
// does not wrap (Browser.*, Target.*, Storage.*). Calls made through it
// count as use of the session for idle reclaim (in flight and last use),
// like the package's own calls. The client's connection (and the one
// goroutine it runs) is made at the first call of Browser; browser-level
// events before that are not kept, so subscribe after it. As with
// Tab.Client, a stream keeps its events until read, without bound: close
// one you stop reading.
func (s *Session) Browser() *cdp.Client {
	s.browserOnce.Do(func() { s.browser = cdp.NewClient(s.mux.Browser()) })
	return s.browser
}

// browserCall makes one browser-level call (Target.*, Browser.*) for the
// package itself, as through Browser() and counted the same way, without
// the rpcc.Conn (and its goroutine) Browser() needs (see
// cdpmux.Direct.Invoke). Errors are those of a Browser() call.
func (s *Session) browserCall(ctx context.Context, method string, params, reply any) error {
	return s.direct.Invoke(ctx, method, params, reply)
}

// Done is closed when the session has been closed (for any reason).
func (s *Session) Done() <-chan struct{} { return s.done }

// Info describes the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	last, inFlight := s.use()
	return SessionInfo{
		ID: s.id, Channel: ChannelCDP, PID: s.info.PID, PGID: s.info.PGID, Port: s.info.Port,
		ProfileDir: s.info.Dir, OutputDir: s.output, Version: s.info.Version,
		Created: s.created, LastUsed: last,
		InFlight: inFlight, State: state, Ours: s.ours,
		Fleet: fleetKind(s.b), Endpoint: fleetEndpointOf(s.b),
		Profile: s.profileName(),
	}
}

// Err returns why the session ended: nil while it is live, an error of
// class ErrBrowserExited (naming the exit status) after a crash, or one of
// class ErrSessionClosed otherwise.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endErrLocked("Session.Err", "")
}

func (s *Session) endErrLocked(op, tab string) error {
	if s.state == StateLive {
		return nil
	}
	if s.reason == ReasonCrashed {
		e := newError(op, ErrBrowserExited, "")
		e.Session, e.Tab, e.Err = s.id, tab, s.cause
		e.Hint = s.exitHint()
		return e
	}
	e := newError(op, ErrSessionClosed, fmt.Sprintf("closed (reason %s)", s.reason))
	e.Session, e.Tab = s.id, tab
	if s.reason == ReasonShutdown {
		e.Hint = "it was closed by Allocator.Close, with the task that held it: acquire sessions from an allocator that is still open"
		if s.p == nil || s.p.isShut() {
			e.Hint = "its pool was closed (Pool.Close), so no session can be opened in it: create a new Pool to go on"
		}
	}
	return e
}

// exitHint is the hint of ErrBrowserExited for s: what ends a browser
// depends on where it runs.
func (s *Session) exitHint() string {
	switch {
	case s.info.Fleet != "":
		return "the fleet ended the lease: its per-lease time limit (browserless's TIMEOUT or Browserless.LeaseTimeout, Grid's session-timeout), a restart of the fleet, or the network; open a new session and retry the step, with a higher limit if the work needs longer"
	case !s.ours:
		return "the user's browser quit or stopped remote debugging; check it with CheckCDP, then attach again with Pool.Attach"
	}
	return hints[ErrBrowserExited]
}

// Touch marks the session used now, as a call would.
func (s *Session) Touch() { s.lastUsed.Store(time.Now().UnixNano()) }

// idleSince returns when the session was last used and whether a call is
// in flight (see use).
func (s *Session) idleSince() (time.Time, bool) {
	last, n := s.use()
	return last, n > 0
}

// use returns when the session was last used and how many calls are in
// flight: the package's calls (begin) and every CDP call on the session's
// connection, raw ones through Tab.Client and Session.Browser included
// (cdpmux.Mux.Use). A package call is mostly CDP calls, counted by both,
// so the count is the larger of the two, not their sum.
func (s *Session) use() (time.Time, int) {
	last := time.Unix(0, s.lastUsed.Load())
	n := int(s.inflight.Load())
	if s.mux != nil { // nil only for the seam's bare test sessions
		raw, rawLast := s.mux.Use()
		if rawLast.After(last) {
			last = rawLast
		}
		n = max(n, raw)
	}
	return last, n
}

// begin starts a call: it fails if the session is no longer live, else it
// counts the call in flight and touches the session. The returned func ends
// the call.
func (s *Session) begin(op, tab string) (func(), error) {
	if err := s.beginAt(op, tab, time.Now()); err != nil {
		return nil, err
	}
	return func() { s.endAt(time.Now()) }, nil
}

// beginAt is begin for a call that started at now, ended by endAt: the
// agent actions' prologue (Tab.act), which reads the clock once for its
// trace and the session's use, and makes no func to end the call.
func (s *Session) beginAt(op, tab string, now time.Time) error {
	s.inflight.Add(1)
	s.lastUsed.Store(now.UnixNano())
	s.mu.Lock()
	err := s.endErrLocked(op, tab)
	s.mu.Unlock()
	if err != nil {
		s.inflight.Add(-1)
		err.(*Error).notSent = true // refused before anything was written
		return err
	}
	return nil
}

// endAt ends a call beginAt started; now is when it ended.
func (s *Session) endAt(now time.Time) {
	s.lastUsed.Store(now.UnixNano())
	s.inflight.Add(-1)
}

// closeReason returns why s ended (empty while it is live). Session.mu is
// a leaf lock: callers may hold their own.
func (s *Session) closeReason() CloseReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// beginClose moves the session to closing: began is false if it already
// was, or if keep (nil for none), asked under s.mu, says a call keeps the
// session live (kept). A call begins (beginAt) by counting itself in
// flight, then checking the state under s.mu: either keep sees it in
// flight, or it sees the session closing and is refused unsent, so a
// conditional close (idle reclaim) never cuts a call that began.
func (s *Session) beginClose(reason CloseReason, cause error, keep func() bool) (began, kept bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateLive {
		return false, false
	}
	if keep != nil && keep() {
		return false, true
	}
	s.state, s.reason, s.cause = StateClosing, reason, cause
	return true, false
}

func (s *Session) finishClose() {
	s.mu.Lock()
	s.state = StateClosed
	s.tabs = map[string]*Tab{}
	clear(s.closing)
	clear(s.crashed)
	s.order = nil
	s.active = ""
	s.mu.Unlock()
	close(s.done)
}

// Close closes the session through the pool's one close path (reason
// explicit): the browser is shut down (bounded), its process group killed
// and reaped, and its profile dir deleted. For an attached session
// (Info().Ours false) it only disconnects: the user's browser and tabs stay.
// ctx bounds the wait; the close itself completes regardless. Closing a
// closed session returns nil.
func (s *Session) Close(ctx context.Context) error {
	return s.closeWith(ctx, ReasonExplicit)
}

// methodNotFound is the JSON-RPC code of a call to a method the browser
// does not have.
const methodNotFound = -32601

// wrap turns an error from a CDP call into an *Error of the right class.
func (s *Session) wrap(op, tab string, err error) error {
	if err == nil {
		return nil
	}
	var be *Error
	if errors.As(err, &be) {
		return err
	}
	e := &Error{Op: op, Session: s.id, Tab: tab, Err: err, notSent: errors.Is(err, cdpmux.ErrNotSent)}
	s.mu.Lock()
	ended := s.endErrLocked(op, tab)
	s.mu.Unlock()
	var re *rpcc.ResponseError
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		e.Class = context.Canceled
		if errors.Is(err, context.DeadlineExceeded) {
			e.Class = context.DeadlineExceeded
		}
		e.Err = nil
		e.Detail, e.noAnswer = "the caller's context ended before the browser answered", true
		e.Hint = "retry with a longer deadline; the call may still take effect in the browser"
	case ended != nil:
		if be, ok := ended.(*Error); ok && e.notSent {
			be.notSent = true
		}
		return ended
	case errors.Is(err, cdpmux.ErrConnClosed):
		// The browser is going away; the watcher is about to reclaim it.
		e.Class, e.Hint = ErrBrowserExited, s.exitHint()
		if exit := s.b.ExitErr(); exit != nil {
			e.Err = exit
		} else {
			// Reported at once, before the browser's exit (if any) is
			// known: Session.Err names it once the pool has closed it.
			e.Detail = "the connection to the browser was lost"
		}
	case errors.Is(err, cdpmux.ErrTargetCrashed):
		e.Class, e.Detail = ErrTabClosed, "the tab's renderer crashed"
		e.Hint = fmt.Sprintf("close it with CloseTab(%s) and open a new tab; the page may be too heavy or buggy", echo(tab))
	case errors.Is(err, cdpmux.ErrDetached):
		e.Class, e.Detail, e.Hint = ErrTabClosed, "the tab was closed or detached", hints[ErrTabClosed]
	case errors.As(err, &re):
		e.Class, e.Hint = ErrProtocol, hints[ErrProtocol]
		switch {
		case strings.Contains(re.Message, "No target with given id") || strings.Contains(re.Message, "Session with given id not found"):
			e.Class, e.Hint = ErrTabClosed, hints[ErrTabClosed]
		case re.Code == methodNotFound:
			// No argument makes it work: the browser lacks the method.
			e.Hint = "this browser does not implement the call (a browser older than the package needs, or a fake that leaves it out); it cannot work there"
			if strings.HasPrefix(re.Data, "cdptest") {
				e.Hint = re.Data // the fake says what to do
			}
		}
	default:
		e.Class, e.Hint = ErrProtocol, hints[ErrProtocol]
	}
	return e
}
