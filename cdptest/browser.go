// Room: one fake browser process and its state. Browser.mu guards every
// piece of state in this package: the browser's targets and sessions, the
// outbound queue read by Transport.ReadMessage, the scripting tables, the
// gates, the recorded calls and the loaded fake pages. No handler runs and
// nothing blocks while it is held; file writes and image encoding wait for
// its release (afterUnlock). A fake page's own Go funcs do run under it:
// they get only the *Page (see page.go).

package cdptest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Browser is one fake browser process with one CDP connection to it (see
// [Browser.Transport]). Create it with [NewBrowser]; the zero value is not
// usable. It is safe for concurrent use.
//
// The browser ends when its client closes the transport or calls
// Browser.close, or when a test calls [Browser.Exit] or
// [Browser.DropConnection]. After that the transport reports the end and
// every method of Browser still works (recording and state stay readable).
// The code under test is expected to end it, as it would end a real
// browser; see [NewBrowser] for the check that it did.
type Browser struct {
	tb        testing.TB // nil: no cleanup check
	launched  bool       // started by a Launcher: a pool drives it
	sessionID string     // the pool's session it was launched for (LaunchSpec.SessionID); set before it is published, then read-only
	conf      config
	tr        *Transport
	start     time.Time     // for event timestamps
	exited    chan struct{} // closed when the process exits
	connDone  chan struct{} // closed when the connection ends (connErr is set)

	mu sync.Mutex
	// The connection. out holds messages for ReadMessage in order;
	// changed is closed and replaced whenever out, connErr or closed
	// change, so a blocked ReadMessage wakes up.
	out     [][]byte      // guarded by mu
	changed chan struct{} // guarded by mu
	connErr error         // guarded by mu; nil while connected, else what ReadMessage returns once out is drained
	closed  bool          // guarded by mu; the client closed the transport (connErr is set too)
	status  int           // guarded by mu; exit status, set when exited is closed
	gone    bool          // guarded by mu; the process has exited

	// The browser's state.
	root     *session            // guarded by mu; the browser's own session ("")
	targets  []*target           // guarded by mu; open targets in creation order
	sessions map[string]*session // guarded by mu; attached sessions by id, root included
	seq      map[string]int      // guarded by mu; last number used, per kind of id

	// Scripting and faults (script.go).
	handlers    map[string]func(*Call) (any, error) // guarded by mu
	delays      map[string]time.Duration            // guarded by mu
	gates       map[string]*Gate                    // guarded by mu; the gate new messages of a name go to
	sessionless map[string]bool                     // guarded by mu
	timers      map[*delayed]struct{}               // guarded by mu; timers not yet fired: delayed messages, polls, Page.After

	calls []Call // guarded by mu

	// Fake pages (page.go).
	pages       map[string]*Page // guarded by mu; templates by URL (WithPages)
	downloads   downloadBehavior // guarded by mu; Browser.setDownloadBehavior
	cookies     []jarCookie      // guarded by mu; the cookie jar, oldest first (cookies.go)
	afterUnlock []func()         // guarded by mu; work for receive to run once it releases mu
	callID      int64            // guarded by mu; the id of the call a built-in method is answering
}

// target is one page. Its fields are guarded by Browser.mu.
type target struct {
	id       string
	url      string // the document's URL (the error page's after a failed load)
	loaderID string
	history  []historyEntry // the session history, oldest first
	current  int            // the index of the current entry in history
	context  int            // execution context id of the main world
	worlds   map[int]bool   // the current document's isolated worlds, by execution context id (world.go)
	crashed  bool
	sessions []*session // attached, oldest first

	// The loaded page (page.go, pageinput.go).
	page      *Page
	vw, vh    float64            // Emulation.setDeviceMetricsOverride; every page loaded here gets it
	dsf       float64            // its deviceScaleFactor: screenshots have dsf device pixels per CSS pixel (0: 1)
	nodeIDs   int                // last backend node id given (the first ones are the document's: reservedNodeIDs)
	objects   map[string]*object // JavaScript objects held by the client, by id
	pressed   *Element           // where the mouse button went down
	spaceDown *Element           // the button, checkbox or radio Space went down on: its keyUp clicks it
	selectAll bool               // the focused field's content is selected
	dialog    *openDialog        // the open JavaScript dialog, if any
	polls     []*pendingPoll     // pagejs.Poll calls waiting for their check
}

// session is one flattened CDP session (or the browser's own, id ""). Its
// fields are guarded by Browser.mu.
type session struct {
	id     string
	target *target  // nil for the browser's own session
	parent *session // the session that attached it; receives its Target.detachedFromTarget
	ended  bool     // detached, or its target closed

	discover  bool // Target.setDiscoverTargets
	page      bool // Page.enable
	lifecycle bool // Page.setLifecycleEventsEnabled
	runtime   bool // Runtime.enable

	performance   bool              // Performance.enable
	newDocScripts map[string]string // Page.addScriptToEvaluateOnNewDocument: source by identifier
}

// Target describes one page target, as [Browser.Targets] reports it. It is
// a plain value, comparable with cmp.Diff.
type Target struct {
	ID       string   // the target id, as Target.createTarget returned it
	Type     string   // always "page"
	URL      string   // the page's URL
	Title    string   // the page's title
	Sessions []string // ids of the attached flattened sessions, oldest first; nil when none
	Crashed  bool     // its renderer crashed (see Browser.CrashTarget)
}

// Call is one request the browser received, as [Browser.Calls] records it
// and as a handler set with [Browser.Handle] sees it.
type Call struct {
	Method    string          // the CDP method, e.g. "Page.navigate"
	SessionID string          // "" for the browser's own session
	TargetID  string          // the target SessionID is attached to; "" for the browser's own session or an unknown session
	Params    json.RawMessage // as sent; nil when the request had none
}

// Option configures a [Browser] made by [NewBrowser].
type Option func(*config)

type config struct {
	noLeakCheck bool
	pages       []string
	site        []*Page
}

// WithPages gives the browser fake pages: a target that loads one of
// their URLs (at creation, by Page.navigate, a link or a button) gets a
// fresh copy of that page. It may be given more than once. The pages are
// templates: the browser never changes them.
func WithPages(pages ...*Page) Option {
	return func(c *config) { c.site = append(c.site, pages...) }
}

// WithoutLeakCheck turns off the cleanup check of [NewBrowser], for tests
// that deliberately leave the browser running (for example a test of what
// a client does when it is abandoned mid-crash).
func WithoutLeakCheck() Option {
	return func(c *config) { c.noLeakCheck = true }
}

// WithPage makes the browser start with a page target at url, as Chrome
// starts with one tab unless it is given --no-startup-window. It may be
// given more than once; the pages are created in order.
func WithPage(url string) Option {
	return func(c *config) { c.pages = append(c.pages, url) }
}

// NewBrowser starts a fake browser. Its client connects through
// [Browser.Transport].
//
// When tb is not nil, NewBrowser registers a tb.Cleanup that fails the test
// if the browser is still running with its transport open when the test
// ends (the code under test closed neither the connection nor the browser),
// naming the sessions still attached, and then kills the browser (its exit
// status is -1) so that a client still reading sees EOF. [WithoutLeakCheck]
// keeps the kill and drops the check. With a nil tb (as in an example) the
// caller must end the browser itself.
func NewBrowser(tb testing.TB, opts ...Option) *Browser {
	if tb != nil {
		tb.Helper()
	}
	b := &Browser{
		tb:          tb,
		start:       time.Now(),
		exited:      make(chan struct{}),
		connDone:    make(chan struct{}),
		changed:     make(chan struct{}),
		sessions:    make(map[string]*session),
		seq:         make(map[string]int),
		handlers:    make(map[string]func(*Call) (any, error)),
		delays:      make(map[string]time.Duration),
		gates:       make(map[string]*Gate),
		sessionless: make(map[string]bool),
		timers:      make(map[*delayed]struct{}),
		pages:       make(map[string]*Page),
	}
	for _, o := range opts {
		o(&b.conf)
	}
	for _, p := range b.conf.site {
		b.pages[pageKey(p.URL)] = p
	}
	b.tr = &Transport{b: b}
	b.root = &session{}
	b.sessions[""] = b.root
	b.mu.Lock()
	for _, u := range b.conf.pages {
		b.newTargetLocked(u) // no one is discovering yet: no events
	}
	b.mu.Unlock()
	if tb != nil {
		tb.Cleanup(b.cleanup)
	}
	return b
}

// Transport returns the client's end of the browser's one connection. Every
// call returns the same *Transport.
func (b *Browser) Transport() *Transport { return b.tr }

// Exited returns a channel that is closed when the browser process exits:
// after Browser.close, after its client closes the transport (a browser
// driven over --remote-debugging-pipe exits when the pipe closes), after
// [Browser.Exit], or when the test's cleanup kills it.
func (b *Browser) Exited() <-chan struct{} { return b.exited }

// ExitStatus reports the status the process exited with: 0 after
// Browser.close or a closed transport, the status given to [Browser.Exit],
// -1 when the test's cleanup killed it. exited is false while it runs.
func (b *Browser) ExitStatus() (status int, exited bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status, b.gone
}

// Calls returns every request the browser received, in order, including
// those it never answered.
func (b *Browser) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// Targets returns the open page targets in creation order, or nil when
// there are none. After the process exits it returns the targets it had
// when it exited.
func (b *Browser) Targets() []Target {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ts []Target
	for _, t := range b.targets {
		v := Target{ID: t.id, Type: "page", URL: t.url, Title: t.title(), Crashed: t.crashed}
		for _, s := range t.sessions {
			v.Sessions = append(v.Sessions, s.id)
		}
		ts = append(ts, v)
	}
	return ts
}

// Exit makes the browser process exit with status: messages already
// written stay readable, then ReadMessage returns io.EOF; replies not yet
// written (held, delayed) are lost; [Browser.Exited] is closed. It does
// nothing if the process has already exited.
func (b *Browser) Exit(status int) {
	b.mu.Lock()
	b.exitLocked(status)
	b.mu.Unlock()
}

// DropConnection breaks the connection as a network failure would:
// messages not yet read are lost, ReadMessage returns io.ErrUnexpectedEOF,
// WriteMessage fails, and pending calls never get replies. The browser
// detaches the connection's sessions (without events: no one is listening)
// and keeps running with its targets; call [Browser.Exit] to end the
// process. It does nothing if the connection has already ended.
func (b *Browser) DropConnection() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.connErr != nil {
		return
	}
	b.out = nil
	b.disconnectLocked(io.ErrUnexpectedEOF)
	for id, s := range b.sessions {
		if id != "" {
			b.endSessionLocked(s)
		}
	}
}

// CrashTarget crashes the renderer of the target targetID. Every session
// on it gets Inspector.targetCrashed, and every session that turned on
// Target.setDiscoverTargets gets Target.targetCrashed, as in Chrome. The
// sessions stay attached. Calls in flight on the target never get replies,
// and later calls on its sessions get none either, except those the
// browser process answers itself (Browser.*, Target.*, Inspector.*). It
// panics if there is no such target.
func (b *Browser) CrashTarget(targetID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.targetLocked(targetID)
	if t == nil {
		panic(fmt.Sprintf("cdptest: CrashTarget(%q): no such target", targetID))
	}
	if t.crashed {
		return
	}
	t.crashed = true
	for _, s := range t.sessions {
		b.emitLocked(s, "Inspector.targetCrashed", struct{}{})
	}
	b.discoveryLocked("Target.targetCrashed", targetCrashed{TargetID: t.id, Status: "crashed", ErrorCode: 139})
}

// DetachTarget detaches every session attached to targetID, as when
// another client or the browser itself takes the target away: each
// session's parent gets Target.detachedFromTarget, calls in flight on the
// sessions never get replies, and later calls on them get Chrome's
// sessionless error reply ({"id":N,"error":{"code":-32001,"message":"Session
// with given id not found."}} with no sessionId). The target stays open. It
// panics if there is no such target.
func (b *Browser) DetachTarget(targetID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.targetLocked(targetID)
	if t == nil {
		panic(fmt.Sprintf("cdptest: DetachTarget(%q): no such target", targetID))
	}
	for _, s := range slices.Clone(t.sessions) {
		b.detachLocked(s)
	}
}

// cleanup is registered with tb.Cleanup by NewBrowser (by NewLauncher for
// the browsers it launches). It is a helper, so the test's log points at
// the test's own NewBrowser or NewLauncher call.
func (b *Browser) cleanup() {
	b.tb.Helper()
	b.mu.Lock()
	running := b.connErr == nil
	var attached []string
	if running {
		for _, t := range b.targets {
			for _, s := range t.sessions {
				attached = append(attached, fmt.Sprintf("session %s is still attached to target %s (%s)", s.id, t.id, t.url))
			}
		}
	}
	b.exitLocked(-1)
	b.mu.Unlock()
	switch {
	case !running || b.conf.noLeakCheck:
	case b.launched:
		// The pool is what the test drives: say what to close there.
		msg := "cdptest: the test ended with a browser of its pool still running: close the Pool (Pool.Close) " +
			"or the Session (Session.Close) before the test ends, e.g. with t.Cleanup(func() { pool.Close() }) right after NewPool"
		if len(attached) > 0 {
			msg += "; " + strings.Join(attached, "; ")
		}
		b.tb.Errorf("%s", msg)
	default:
		leaks := append([]string{"the transport is still open (the client neither closed it nor called Browser.close)"}, attached...)
		b.tb.Errorf("cdptest: the browser was left running: %s", strings.Join(leaks, "; "))
	}
}

// exitLocked ends the process: the connection reports EOF after the
// messages already queued.
func (b *Browser) exitLocked(status int) {
	if b.gone {
		return
	}
	b.gone = true
	b.status = status
	close(b.exited)
	b.disconnectLocked(io.EOF)
}

// disconnectLocked ends the connection: ReadMessage returns err once out is
// drained, later writes fail, and messages not yet queued are dropped.
func (b *Browser) disconnectLocked(err error) {
	if b.connErr != nil {
		return
	}
	b.connErr = err
	for d := range b.timers {
		d.timer.Stop()
	}
	clear(b.timers)
	for _, g := range b.gates {
		g.held = nil
	}
	close(b.connDone)
	b.wakeLocked()
}

// wakeLocked wakes every goroutine waiting in ReadMessage.
func (b *Browser) wakeLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// sinceStart is an event's timestamp: seconds since the browser started.
func (b *Browser) sinceStart() float64 { return time.Since(b.start).Seconds() }

// nextIDLocked returns a fresh id of a kind, like "TARGET_3".
func (b *Browser) nextIDLocked(kind string) string {
	return fmt.Sprintf("%s_%d", kind, b.nextLocked(kind))
}

// nextLocked returns the next number of a kind, from 1.
func (b *Browser) nextLocked(kind string) int {
	b.seq[kind]++
	return b.seq[kind]
}

func (b *Browser) targetLocked(id string) *target {
	for _, t := range b.targets {
		if t.id == id {
			return t
		}
	}
	return nil
}

// newTargetLocked opens a page at url and tells the discovering sessions.
func (b *Browser) newTargetLocked(url string) *target {
	if url == "" {
		url = "about:blank"
	}
	url = normURL(url)
	t := &target{id: b.nextIDLocked("TARGET"), history: []historyEntry{{id: b.nextLocked("entry"), url: url}},
		objects: make(map[string]*object), nodeIDs: reservedNodeIDs}
	b.adoptLocked(t, b.pageForLocked(url))
	t.loaderID = b.nextIDLocked("LOADER")
	t.context = b.nextLocked("context")
	b.targets = append(b.targets, t)
	b.discoveryLocked("Target.targetCreated", targetEvent{TargetInfo: b.infoLocked(t)})
	return t
}

// closeTargetLocked closes t: its sessions are detached and the
// discovering sessions learn that it is gone.
func (b *Browser) closeTargetLocked(t *target) {
	for _, s := range slices.Clone(t.sessions) {
		b.detachLocked(s)
	}
	b.targets = slices.DeleteFunc(b.targets, func(x *target) bool { return x == t })
	b.discoveryLocked("Target.targetDestroyed", targetIDParams{TargetID: t.id})
}

// attachLocked attaches a new session to t on behalf of parent and tells
// parent with Target.attachedToTarget.
func (b *Browser) attachLocked(parent *session, t *target) *session {
	s := &session{id: b.nextIDLocked("SESSION"), target: t, parent: parent}
	b.sessions[s.id] = s
	t.sessions = append(t.sessions, s)
	b.emitLocked(parent, "Target.attachedToTarget", attachedToTarget{
		SessionID:  s.id,
		TargetInfo: b.infoLocked(t),
	})
	return s
}

// detachLocked ends s and tells its parent with Target.detachedFromTarget.
func (b *Browser) detachLocked(s *session) {
	if s.ended {
		return
	}
	b.endSessionLocked(s)
	if !s.parent.ended {
		b.emitLocked(s.parent, "Target.detachedFromTarget", detachedFromTarget{SessionID: s.id, TargetID: s.target.id})
	}
}

// endSessionLocked forgets s without telling anyone.
func (b *Browser) endSessionLocked(s *session) {
	s.ended = true
	delete(b.sessions, s.id)
	s.target.sessions = slices.DeleteFunc(s.target.sessions, func(x *session) bool { return x == s })
}

// discoveryLocked sends a Target.target* event to every session that
// turned on target discovery.
func (b *Browser) discoveryLocked(method string, params any) {
	for _, s := range b.liveSessionsLocked() {
		if s.discover {
			b.emitLocked(s, method, params)
		}
	}
}

// liveSessionsLocked returns the attached sessions, the browser's own first,
// then in order of attachment, so events go out in a stable order.
func (b *Browser) liveSessionsLocked() []*session {
	ss := []*session{b.root}
	for _, t := range b.targets {
		ss = append(ss, t.sessions...)
	}
	return ss
}

func (b *Browser) infoLocked(t *target) targetInfo {
	return targetInfo{
		TargetID:         t.id,
		Type:             "page",
		Title:            t.title(),
		URL:              t.url,
		Attached:         len(t.sessions) > 0,
		BrowserContextID: "CONTEXT_DEFAULT",
	}
}
