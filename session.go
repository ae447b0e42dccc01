// Room: the session. Session.mu guards its state, its tab table and its
// active tab; lastUsed and inflight are atomics so that touching a session
// costs no lock. No CDP call is made with Session.mu held.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

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
	ID         string
	Channel    string // always "cdp" for sessions the pool launched
	PID        int    // browser pid (0 for in-memory or remote browsers)
	PGID       int
	Port       int    // DevTools port on 127.0.0.1; 0 with LocalLauncher.NoDevToolsPort
	ProfileDir string // the session dir (profile inside it)
	OutputDir  string // where the session's artifacts land
	Version    string
	Created    time.Time
	LastUsed   time.Time
	InFlight   int
	State      SessionState
	Ours       bool // launched by this pool (false for attached browsers)
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
	p       *Pool
	id      string
	b       LaunchedBrowser
	mux     *cdpmux.Mux
	browser *cdp.Client
	quiet   *cdp.Client // on mux.Quiet: calls that are not use (monitoring)
	info    SpawnInfo
	created time.Time
	output  string
	ours    bool          // launched by this pool; false for an attached browser (never killed)
	done    chan struct{} // closed when the close path has finished

	closeErr error // set by the close path before done is closed; read after done

	profile *profileHold // the named profile it holds (profile.go), nil if none; set at launch, released by the close path

	downloads sessDownloads             // whether downloads are routed into DownloadDir (tab_download.go)
	rec       atomic.Pointer[Recording] // the running recording, nil if none (recording.go)

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
	// closing holds tabs closed by CloseTab that the browser may still
	// list for a moment; guarded by mu. Entries leave once it stops.
	closing map[string]bool
}

func newSession(p *Pool, id string, b LaunchedBrowser, mux *cdpmux.Mux, info SpawnInfo) *Session {
	s := &Session{
		p:       p,
		id:      id,
		b:       b,
		mux:     mux,
		browser: cdp.NewClient(mux.Browser()),
		quiet:   cdp.NewClient(mux.Quiet()),
		info:    info,
		created: time.Now(),
		output:  filepath.Join(p.cfg.OutputDir, id),
		ours:    true,
		done:    make(chan struct{}),
		state:   StateLive,
		tabs:    make(map[string]*Tab),
		closing: make(map[string]bool),
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
// like the package's own calls.
func (s *Session) Browser() *cdp.Client { return s.browser }

// Done is closed when the session has been closed (for any reason).
func (s *Session) Done() <-chan struct{} { return s.done }

// Info describes the session.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	return SessionInfo{
		ID: s.id, Channel: ChannelCDP, PID: s.info.PID, PGID: s.info.PGID, Port: s.info.Port,
		ProfileDir: s.info.Dir, OutputDir: s.output, Version: s.info.Version,
		Created: s.created, LastUsed: time.Unix(0, s.lastUsed.Load()),
		InFlight: int(s.inflight.Load()), State: state, Ours: s.ours,
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
		if !s.ours {
			e.Hint = "the user's browser quit or stopped remote debugging; check it with CheckCDP, then attach again with Pool.Attach"
		}
		return e
	}
	e := newError(op, ErrSessionClosed, fmt.Sprintf("closed (reason %s)", s.reason))
	e.Session, e.Tab = s.id, tab
	return e
}

// Touch marks the session used now, as a call would.
func (s *Session) Touch() { s.lastUsed.Store(time.Now().UnixNano()) }

// idleSince returns when the session was last used and whether a call is
// in flight: the package's calls (begin) and every CDP call on the
// session's connection, raw ones through Tab.Client and Session.Browser
// included (cdpmux.Mux.Use).
func (s *Session) idleSince() (time.Time, bool) {
	last := time.Unix(0, s.lastUsed.Load())
	busy := s.inflight.Load() > 0
	if s.mux != nil { // nil only for the seam's bare test sessions
		n, rawLast := s.mux.Use()
		if rawLast.After(last) {
			last = rawLast
		}
		busy = busy || n > 0
	}
	return last, busy
}

// begin starts a call: it fails if the session is no longer live, else it
// counts the call in flight and touches the session. The returned func ends
// the call.
func (s *Session) begin(op, tab string) (func(), error) {
	s.inflight.Add(1)
	s.Touch()
	s.mu.Lock()
	err := s.endErrLocked(op, tab)
	s.mu.Unlock()
	if err != nil {
		s.inflight.Add(-1)
		err.(*Error).notSent = true // refused before anything was written
		return nil, err
	}
	return func() {
		s.Touch()
		s.inflight.Add(-1)
	}, nil
}

// closeReason returns why s ended (empty while it is live). Session.mu is
// a leaf lock: callers may hold their own.
func (s *Session) closeReason() CloseReason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// beginClose moves the session to closing; false if it already was.
func (s *Session) beginClose(reason CloseReason, cause error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateLive {
		return false
	}
	s.state, s.reason, s.cause = StateClosing, reason, cause
	return true
}

func (s *Session) finishClose() {
	s.mu.Lock()
	s.state = StateClosed
	s.tabs = map[string]*Tab{}
	clear(s.closing)
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

// TabInfo describes one tab.
type TabInfo struct {
	SessionID string
	TabID     string // the CDP target id
	Channel   string
	URL       string // without its query string and fragment
	Title     string
	Active    bool
}

// Tabs lists the session's page tabs, with which one is active.
func (s *Session) Tabs(ctx context.Context) ([]TabInfo, error) {
	const op = "Session.Tabs"
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return nil, s.wrap(op, "", err)
	}
	s.mu.Lock()
	active := s.activeLocked(infos)
	s.mu.Unlock()
	out := make([]TabInfo, 0, len(infos))
	for _, t := range infos {
		out = append(out, TabInfo{SessionID: s.id, TabID: string(t.TargetID), Channel: ChannelCDP,
			URL: redactURL(t.URL), Title: t.Title, Active: string(t.TargetID) == active})
	}
	return out, nil
}

// pageTargets returns the browser's page targets, less those CloseTab has
// closed.
func (s *Session) pageTargets(ctx context.Context) ([]target.Info, error) {
	reply, err := s.quiet.Target.GetTargets(ctx, target.NewGetTargetsArgs()) // not use: tabCount monitors with it
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := make(map[string]bool, len(reply.TargetInfos))
	out := reply.TargetInfos[:0]
	for _, t := range reply.TargetInfos {
		listed[string(t.TargetID)] = true
		if t.Type == "page" && !s.closing[string(t.TargetID)] {
			out = append(out, t)
		}
	}
	for id := range s.closing {
		if !listed[id] {
			delete(s.closing, id)
		}
	}
	return out, nil
}

// activeLocked returns the active tab id given the current page targets:
// the tracked one if it still exists, else the most recently activated one
// that exists, else the first page target.
func (s *Session) activeLocked(infos []target.Info) string {
	exists := func(id string) bool {
		return slices.ContainsFunc(infos, func(t target.Info) bool { return string(t.TargetID) == id })
	}
	if s.active != "" && exists(s.active) {
		return s.active
	}
	for i := len(s.order) - 1; i >= 0; i-- {
		if exists(s.order[i]) {
			s.active = s.order[i]
			return s.active
		}
	}
	if len(infos) > 0 {
		s.active = string(infos[0].TargetID)
		return s.active
	}
	s.active = ""
	return ""
}

// OpenTab opens a new tab, makes it the active tab and, unless url is
// about:blank or empty, navigates it and waits for the load. Only http,
// https and about:blank are allowed.
//
// The first OpenTab on a session the pool launched uses the browser's
// start-up tab instead of opening a second one, when that tab is the only
// one, is still on about:blank and nothing has attached to it yet: Open
// followed by OpenTab(ctx, url) leaves exactly one tab.
//
// OpenTab returns as soon as the tab is attached; the tab's page events
// are switched on meanwhile, and the first navigation or wait waits for
// them (no dialog or load event in between is lost). After a failed attach
// the new target is closed in the background (bounded), so OpenTab returns
// at the caller's deadline.
func (s *Session) OpenTab(ctx context.Context, url string) (*Tab, error) {
	const op = "Session.OpenTab"
	if url == "" {
		url = "about:blank"
	}
	if err := checkOpenURL(op, url); err != nil {
		err.Session = s.id
		return nil, err
	}
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	id, reused, err := s.startTab(ctx)
	if err != nil {
		return nil, s.wrap(op, "", err)
	}
	if id == "" {
		created, err := s.browser.Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
		if err != nil {
			return nil, s.wrap(op, "", err)
		}
		id = string(created.TargetID)
	}
	t, err := s.attach(ctx, id, !reused)
	if err != nil {
		if !reused {
			s.closeTarget(id)
		}
		return nil, s.wrap(op, id, err)
	}
	s.setActive(id)
	if url != "about:blank" {
		if _, err := t.navigate(ctx, op, url); err != nil {
			return t, err
		}
	}
	return t, nil
}

// startTab returns the id of the browser's start-up tab when the first
// OpenTab may use it (see OpenTab), else "". Only the first OpenTab or
// attach of a session the pool launched looks.
func (s *Session) startTab(ctx context.Context) (id string, ok bool, err error) {
	s.mu.Lock()
	first := !s.tabsTouched && s.ours
	s.tabsTouched = true
	s.mu.Unlock()
	if !first {
		return "", false, nil
	}
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return "", false, err
	}
	if len(infos) != 1 || infos[0].URL != "about:blank" || infos[0].Attached {
		return "", false, nil
	}
	return string(infos[0].TargetID), true, nil
}

// closeTarget closes a target we failed to attach, in the background on
// the pool's context, bounded (2 s), ignoring errors: the caller, whose
// deadline may be what failed the attach, does not wait for it. It is not
// a use of the session.
func (s *Session) closeTarget(id string) {
	p := s.p
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return // the session's browser is going away with the pool
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
		defer cancel()
		s.quiet.Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(id)))
	}()
}

// Tab returns the tab with the given id, attaching to it on first use; an
// empty id means the active tab. A tab id that is not one of this
// session's page targets does not resolve (ErrTabNotInSession when another
// session of the pool owns it, else ErrTabNotFound).
func (s *Session) Tab(ctx context.Context, id string) (*Tab, error) {
	const op = "Session.Tab"
	end, err := s.begin(op, id)
	if err != nil {
		return nil, err
	}
	defer end()
	return s.resolveTab(ctx, op, id)
}

func (s *Session) resolveTab(ctx context.Context, op, id string) (*Tab, error) {
	if id == "" && !s.ours {
		e := newError(op, ErrTabRequired, "an attached browser is shared: name the tab")
		e.Session = s.id
		e.Hint = "use Session.ForWorkflow(workflow) and name the tab by id or label; AttachedView.Tabs lists them"
		return nil, e
	}
	s.mu.Lock()
	known := s.tabs[id]
	if id == "" && s.active != "" {
		known = s.tabs[s.active]
	}
	s.mu.Unlock()
	if known != nil {
		// It may still be connecting (another caller's first use).
		select {
		case <-known.ready:
		case <-ctx.Done():
			return nil, s.wrap(op, known.id, ctx.Err())
		}
		if known.readyErr == nil {
			return known, nil
		}
	}

	infos, err := s.pageTargets(ctx)
	if err != nil {
		return nil, s.wrap(op, id, err)
	}
	if id == "" {
		s.mu.Lock()
		id = s.activeLocked(infos)
		s.mu.Unlock()
		if id == "" {
			e := newError(op, ErrTabNotFound, "the session has no open tab")
			e.Session, e.Hint = s.id, "open a tab with Session.OpenTab first"
			return nil, e
		}
	} else if !slices.ContainsFunc(infos, func(t target.Info) bool { return string(t.TargetID) == id }) {
		return nil, s.p.notInSession(op, s, id, infos)
	}
	t, err := s.attach(ctx, id, false)
	if err != nil {
		return nil, s.wrap(op, id, err)
	}
	return t, nil
}

// notInSession builds the error for a tab id that is not among s's tabs.
func (p *Pool) notInSession(op string, s *Session, id string, infos []target.Info) error {
	owner := ""
	p.mu.Lock()
	for _, other := range p.sessions {
		if other == s {
			continue
		}
		other.mu.Lock()
		_, ok := other.tabs[id]
		other.mu.Unlock()
		if ok {
			owner = other.id
			break
		}
	}
	p.mu.Unlock()
	ids := make([]string, 0, len(infos))
	for _, t := range infos {
		ids = append(ids, string(t.TargetID))
	}
	var e *Error
	if owner != "" {
		e = newError(op, ErrTabNotInSession, fmt.Sprintf("tab %s belongs to session %s, not to this one", echo(id), owner))
		e.Hint = fmt.Sprintf("act on it through session %s, or use one of this session's tabs: %s", owner, fmtIDs(ids))
	} else {
		e = newError(op, ErrTabNotFound, fmt.Sprintf("no tab %s in this session; its tabs: %s", echo(id), fmtIDs(ids)))
		e.Hint = "tab ids never carry over between sessions; list this session's tabs and use one of their ids"
	}
	e.Session, e.Tab = s.id, id
	return e
}

// attach returns the Tab for target id, attaching a flattened session
// once. Concurrent first uses attach once. fresh says the target was just
// created on about:blank by us (no dialog can be open on it).
func (s *Session) attach(ctx context.Context, id string, fresh bool) (*Tab, error) {
	s.mu.Lock()
	if t := s.tabs[id]; t != nil {
		s.mu.Unlock()
		<-t.ready
		if t.readyErr != nil {
			return nil, t.readyErr
		}
		return t, nil
	}
	t := newTab(s, id, tabDeps{navigationTimeout: s.p.cfg.NavigationTimeout, log: s.p.log, events: s.p.events})
	if s.ours {
		t.deps.viewport = s.p.cfg.Viewport // never resize the tabs of a browser we attached to
	}
	s.tabs[id] = t
	s.tabsTouched = true
	s.mu.Unlock()

	err := t.connect(ctx, fresh)
	if err != nil {
		s.mu.Lock()
		if s.tabs[id] == t {
			delete(s.tabs, id)
		}
		s.mu.Unlock()
	}
	t.readyErr = err
	close(t.ready)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Session) setActive(id string) {
	s.mu.Lock()
	s.active = id
	s.order = append(slices.DeleteFunc(s.order, func(x string) bool { return x == id }), id)
	s.mu.Unlock()
}

// forget drops a tab from the tables (closed, crashed or detached).
func (s *Session) forget(t *Tab) {
	s.mu.Lock()
	if s.tabs[t.id] == t {
		delete(s.tabs, t.id)
	}
	s.order = slices.DeleteFunc(s.order, func(x string) bool { return x == t.id })
	if s.active == t.id {
		s.active = ""
		if n := len(s.order); n > 0 {
			s.active = s.order[n-1]
		}
	}
	s.mu.Unlock()
}

// ActivateTab makes the tab active (and brings it to the front in a
// headed browser). The tab must belong to this session.
func (s *Session) ActivateTab(ctx context.Context, id string) (*Tab, error) {
	const op = "Session.ActivateTab"
	end, err := s.begin(op, id)
	if err != nil {
		return nil, err
	}
	defer end()
	if id == "" {
		e := newError(op, ErrTabNotFound, "no tab id given")
		e.Session = s.id
		return nil, e
	}
	t, err := s.resolveTab(ctx, op, id)
	if err != nil {
		return nil, err
	}
	if err := s.browser.Target.ActivateTarget(ctx, target.NewActivateTargetArgs(target.ID(id))); err != nil {
		return nil, s.wrap(op, id, err)
	}
	s.setActive(id)
	return t, nil
}

// CloseTab closes the tab's target. The tab must belong to this session.
// If it was the active tab, the previously active one becomes active.
func (s *Session) CloseTab(ctx context.Context, id string) error {
	const op = "Session.CloseTab"
	end, err := s.begin(op, id)
	if err != nil {
		return err
	}
	defer end()
	if id == "" {
		e := newError(op, ErrTabNotFound, "no tab id given")
		e.Session = s.id
		return e
	}
	t, err := s.resolveTab(ctx, op, id)
	if err != nil {
		return err
	}
	if _, err := s.browser.Target.CloseTarget(ctx, target.NewCloseTargetArgs(target.ID(id))); err != nil {
		return s.wrap(op, id, err)
	}
	// Target.closeTarget answers before the target is gone: until the
	// browser stops listing it, Tabs leaves it out (see closing).
	s.mu.Lock()
	s.closing[id] = true
	s.mu.Unlock()
	s.forget(t)
	t.conn.Close()
	return nil
}

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
		e.Detail = "the caller's context ended before the browser answered"
		e.Hint = "retry with a longer deadline; the call may still take effect in the browser"
	case ended != nil:
		if be, ok := ended.(*Error); ok && e.notSent {
			be.notSent = true
		}
		return ended
	case errors.Is(err, cdpmux.ErrConnClosed):
		// The browser is going away; the watcher is about to reclaim it.
		e.Class, e.Hint = ErrBrowserExited, hints[ErrBrowserExited]
		if exit := s.b.ExitErr(); exit != nil {
			e.Err = exit
		} else {
			// Reported at once, before the browser's exit (if any) is
			// known: Session.Err names it once the pool has closed it.
			e.Detail = "the connection to the browser was lost"
		}
	case errors.Is(err, cdpmux.ErrTargetCrashed):
		e.Class, e.Detail = ErrTabClosed, "the tab's renderer crashed"
		e.Hint = "close the tab and open a new one; the page may be too heavy or buggy"
	case errors.Is(err, cdpmux.ErrDetached):
		e.Class, e.Detail, e.Hint = ErrTabClosed, "the tab was closed or detached", hints[ErrTabClosed]
	case errors.As(err, &re):
		e.Class, e.Hint = ErrProtocol, hints[ErrProtocol]
		if strings.Contains(re.Message, "No target with given id") || strings.Contains(re.Message, "Session with given id not found") {
			e.Class, e.Hint = ErrTabClosed, hints[ErrTabClosed]
		}
	default:
		e.Class, e.Hint = ErrProtocol, hints[ErrProtocol]
	}
	return e
}
