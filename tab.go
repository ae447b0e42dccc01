// Room: the tab, and the per-tab state every agent action uses (tabExt,
// Tab.x) with the one traced-action prologue (act, onRef). A Tab's fields
// are set once in newTab and connect and read-only after ready is closed;
// lifecycleWatch.mu guards the lifecycle events and their waiters, and each
// part of tabExt has its own lock (see its type). No CDP call is made with
// a lock held.

package browserpool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/redact"
)

// Tab is one page target of a session. It is safe for concurrent use; the
// actions that move the mouse, press keys, scroll or type (Click, ClickAt,
// Hover, Drag, Scroll, Press, Type, Fill) take turns, since a page has one
// pointer and one focused element. A Tab
// stays usable until it or its session is closed; get one from
// Session.OpenTab, Session.Tab or Pool.ResolveTab.
type Tab struct {
	s     *Session
	id    string
	deps  tabDeps       // set by newTab; read-only
	ready chan struct{} // closed when connect has finished

	// Set by connect before ready is closed; read-only after.
	direct   *cdpmux.Direct // calls on the tab's flattened CDP session (its id: direct.ID()); its rpcc.Conn is dialed on first use (rpc)
	readyErr error

	// pageReady is closed when Page.enable and lifecycle events are on
	// (connect sends them without waiting); pageErr is set before.
	pageReady chan struct{}
	pageErr   error

	lifecycle *lifecycleWatch
	x         *tabExt // the agent actions' state (refs, dialogs, trace): see tabExt

	clientOnce sync.Once
	client     *cdp.Client // built by cdpClient on first use, then read-only

	navMu   sync.Mutex
	lastNav NavigateResult // guarded by navMu; the last navigation's result (LastNavigation)

	docs            docWatch      // the main frame's latest documents (tab_docs.go); locks itself
	statusFallbacks atomic.Int64  // navigations whose status was read after their load event (tests)
	unsticking      atomic.Bool   // an unstick check of the page runs (see unstick)
	navigates       atomic.Uint64 // Navigate calls begun: one that begins during another's replaces it
	closedByCall    atomic.Int32  // Session.CloseTab calls closing it (a failed one takes its count back): a click then did not see its page close it
	vpSize          atomic.Uint64 // width<<32 | height of the viewport the package gave the tab (connect, SetViewport); 0: none (an attached browser's own)
}

// tabDeps is what a Tab needs of its pool, handed over when its session
// makes it (Session.attach), so that the tab's rooms never reach into the
// pool.
type tabDeps struct {
	navigationTimeout time.Duration // Config.NavigationTimeout: bounds Tab.Navigate
	log               *slog.Logger  // the pool's logger; never nil (silent by default)
	events            *eventQueue   // the pool's hook queue: trace recorders run on it
	viewport          Viewport      // Config.Viewport, set at connect; zero leaves the browser's size (attached browsers)
}

func newTab(s *Session, id string, deps tabDeps) *Tab {
	return &Tab{s: s, id: id, deps: deps, ready: make(chan struct{})}
}

// ID returns the tab's id (its CDP target id).
func (t *Tab) ID() string { return t.id }

// SessionID returns the id of the tab's session.
func (t *Tab) SessionID() string { return t.s.id }

// Channel returns "cdp".
func (t *Tab) Channel() string { return ChannelCDP }

// Session returns the tab's session.
func (t *Tab) Session() *Session { return t.s }

// Client returns the page-level CDP client for anything the package does
// not wrap. Calls made through it count as use of the session for idle
// reclaim (in flight and last use), like the package's own calls. The tab
// keeps the Page and Performance domains on, lifecycle events on and one
// script to evaluate on new documents (the status report Navigate reads):
// turning them off through the client leaves the tab working, but costs
// each Navigate a round trip after the load event. The Accessibility
// domain's calls that return nodes (GetFullAXTree and its siblings) decode
// their replies, megabytes on a large page, in one pass rather than
// through encoding/json, into the same types and with the same errors.
// An event stream opened through it (Runtime.ConsoleAPICalled, ...) keeps
// every event until read, without bound, as any rpcc stream does: close a
// stream you stop reading. A call whose context ends stays counted as in
// flight until the browser answers it.
func (t *Tab) Client() *cdp.Client { return t.cdpClient() }

// cdpClient returns the tab's generated CDP client, built on first use: a
// tab that nothing has asked for one never builds it (cdp.NewClient makes
// a client for every CDP domain, and each domain's code then takes a page
// of the program's memory).
func (t *Tab) cdpClient() *cdp.Client {
	t.clientOnce.Do(func() {
		c := cdp.NewClient(t.rpc())
		c.Accessibility = axClient{Accessibility: c.Accessibility, d: t.direct}
		t.client = c
	})
	return t.client
}

// invoke sends method with args (nil for none) through d and decodes its
// reply into a new R: a generated client's call without the tab's
// rpcc.Conn, so that the actions agents use most cost the tab no
// goroutine.
func invoke[R any](ctx context.Context, d *cdpmux.Direct, method string, args any) (*R, error) {
	var r R
	if err := d.Invoke(ctx, method, args, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// rpc returns the tab's rpcc.Conn, dialed on first use (the generated
// client, event streams): until then the tab has no goroutine of its own,
// its calls going through t.direct and its events through onEvent.
func (t *Tab) rpc() *rpcc.Conn { return t.direct.Conn() }

// connect attaches a flattened session to the target and asks for what
// the tab's own actions rely on (the Page domain, lifecycle events, the
// status report of pagejs.Status) without
// waiting for the renderer to answer: the tab is usable once attached, and
// whatever needs page events waits for pageReady (Tab.pageEvents). Nothing
// is lost meanwhile: the events are tapped before the enables are sent,
// and a session's commands run in order, so every later call's dialogs
// and lifecycle events arrive.
func (t *Tab) connect(ctx context.Context, fresh bool) error {
	// The calls go through the session's own handle, so that once the
	// tab is gone they fail with its end.
	direct, err := t.s.mux.AttachDirect(ctx, t.id)
	if err != nil {
		return err
	}
	t.direct = direct
	t.pageReady = make(chan struct{})
	t.lifecycle = newLifecycleWatch(direct, t.pageEvents, t.id)
	t.x = newTabExt(t)
	// Follow lifecycle events and dialogs on the mux's reader: the tab then
	// costs no goroutine of its own (none per stream, and no rpcc.Conn
	// until something asks for one: rpc).
	if err := t.s.mux.Tap(direct.ID(), t.onEvent); err != nil {
		direct.Close()
		return err
	}
	// A dialog already open would stall Page.enable: dismiss it first,
	// unless we just created the target on about:blank.
	if !fresh {
		if err := t.x.start(ctx); err != nil {
			direct.Close()
			return err
		}
	}
	// All in flight at once, and not waited for here: the tab's commands
	// run in order, so the first action after them sees the viewport, and
	// navigations and waits wait for pageReady. Bounded by the session
	// (its end fails them), not by the caller's ctx. Nothing waits for
	// them (cdpmux.Direct.Go): the last reply closes pageReady.
	reqs := []cdpmux.Request{
		{Method: "Page.enable"},
		{Method: "Page.setLifecycleEventsEnabled", Params: []byte(`{"enabled":true}`)},
	}
	if vp, ok := t.viewportParams(); ok {
		reqs = append(reqs, cdpmux.Request{Method: "Emulation.setDeviceMetricsOverride", Params: vp})
		t.setViewportSize(t.deps.viewport)
	}
	required := len(reqs) // the ones after may be refused:
	reqs = append(reqs,
		// the status report (pagejs.Status); when refused, Navigate asks
		// the page after the load event.
		cdpmux.Request{Method: "Performance.enable"},
		cdpmux.Request{Method: "Page.addScriptToEvaluateOnNewDocument", Params: statusScriptParams},
	)
	if t.s.ours {
		// File choosers stay open for Upload instead of being cancelled
		// at once (the headless default): Click's trace says one opened.
		// Not in a browser the user runs (attached): the user's own
		// choosers must open.
		reqs = append(reqs, cdpmux.Request{Method: "Page.setInterceptFileChooserDialog", Params: []byte(`{"enabled":true}`)})
	}
	direct.Go(reqs, func(_ []json.RawMessage, errs []error) {
		t.pageErr = cmp.Or(errs[:required]...)
		close(t.pageReady)
	})
	return nil
}

// pageEvents waits until the tab's page events are on (see connect): the
// first navigation or wait on a fresh tab waits for its renderer here.
func (t *Tab) pageEvents(ctx context.Context) error {
	select {
	case <-t.pageReady:
		return t.pageErr
	default:
	}
	select {
	case <-t.pageReady:
		return t.pageErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onEvent sees every event of the tab's session on the mux's reader: the
// goroutine reading the browser's connection, which is the mux's own or a
// direct caller reading its own reply (cdpmux's read role), one at a time
// and in order. It must not block. Method "" means the session ended.
func (t *Tab) onEvent(method string, params json.RawMessage) {
	switch method {
	case "Page.lifecycleEvent":
		t.lifecycle.note(params)
	case "Page.javascriptDialogOpening":
		t.x.dialogOpened(params)
	case "Page.windowOpen":
		t.s.popups.Store(true) // the new window hides this page (toFront)
		t.s.front.Store(nil)
		t.x.windowOpened(params)
	case "":
		t.x.ended()
		if errors.Is(t.direct.Err(), cdpmux.ErrTargetCrashed) {
			t.s.noteCrashed(t)
		}
	case "Page.frameNavigated":
		t.noteDoc(method, params)
		t.x.onToolEvent(method, params)
	case "Page.frameRequestedNavigation", "Page.frameStoppedLoading", "Page.javascriptDialogClosed":
		t.lifecycle.noteNavigation(method, params)
	case "Performance.metrics":
		t.noteDoc(method, params) // the status script's report (tab_docs.go)
	case "Network.responseReceived", "Page.navigatedWithinDocument":
		t.noteDoc(method, params)
		t.x.onToolEvent(method, params) // the network log reads it too
		if method == "Page.navigatedWithinDocument" {
			t.lifecycle.noteNavigation(method, params)
		}
	default:
		t.x.onToolEvent(method, params) // console, network log, drag (tab_console.go)
	}
}

// begin starts a call on the tab: its session must be live and the tab not
// closed.
func (t *Tab) begin(op string) (func(), error) {
	if err := t.beginAt(op, time.Now()); err != nil {
		return nil, err
	}
	return func() { t.s.endAt(time.Now()) }, nil
}

// beginAt is begin for a call that started at now, ended by the session's
// endAt (see Session.beginAt).
func (t *Tab) beginAt(op string, now time.Time) error {
	if err := t.s.beginAt(op, t.id, now); err != nil {
		return err
	}
	select {
	case <-t.direct.Done():
		t.s.endAt(now)
		t.s.forget(t)
		// Why it ended (closed or detached, or its renderer crashed), as
		// a call in flight then was told; this one was not sent.
		return t.s.wrap(op, t.id, cdpmux.NotSent(t.direct.Err()))
	default:
	}
	return nil
}

// tabExt is the per-tab state of the agent actions: refs, dialogs, input,
// trace. Each part has its own lock (see its type). Tab.connect makes it.
type tabExt struct {
	t      *Tab
	refs   refTable
	worlds worlds // the isolated worlds of the tab's frames (tab_world.go)
	dialog dialogState
	input  inputState
	trace  traceRing
	net    netState
	// The tools' state (tab_console.go, tab_network.go, tab_drag.go).
	console consoleState
	netlog  netLog
	drag    dragState

	// dialogs carries opened dialogs from the mux's reader to the watch
	// goroutine, which starts at the first dialog (watching) and ends
	// with the tab's connection.
	dialogs  chan *page.JavascriptDialogOpeningReply
	watching atomic.Bool

	// choosers carries Page.fileChooserOpened from the mux's reader to the
	// Upload waiting for it (tab_form.go); capacity 1. chooserCount counts
	// those events and lastChooser holds the latest; pending is the
	// chooser the tab's latest input action opened (a Click), which
	// Upload on the same ref answers, cleared by the next input action.
	choosers     chan *fileChooser
	chooserCount atomic.Uint64
	lastChooser  atomic.Pointer[fileChooser]
	pending      atomic.Pointer[pendingChooser]

	// parseWaited is the main-frame document whose parse a snapshot waited
	// for until its bound: later snapshots of it do not wait again.
	parseWaited atomic.Pointer[string]

	// openedWaited: a wait for the first page of a tab a page opened was
	// done (openedPage); later snapshots do not wait again (awaitOpenedPage),
	// while WaitLoad always checks.
	openedWaited atomic.Bool

	// actDocs is the main frame's count of new documents
	// (lifecycleWatch.commits) when the tab's latest action began, or a
	// wait last saw a document load (docsSeen): a WaitNavigation without
	// an action waits for a navigation after it, which may have committed
	// already.
	actDocs atomic.Uint64

	// opened is the URL of the latest window the page opened (a
	// target=_blank link, window.open), redacted, and opens how many it
	// has: Click's trace names the tab a click opened.
	opened atomic.Pointer[string]
	opens  atomic.Uint64
}

// windowOpened notes a Page.windowOpen event (on the mux's reader).
func (x *tabExt) windowOpened(params json.RawMessage) {
	var ev struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(params, &ev) == nil {
		u := shownURL(ev.URL)
		x.opened.Store(&u)
	}
	x.opens.Add(1)
}

// docsSeen marks the main frame's documents so far as not to be waited
// for by a WaitNavigation without an action (see actDocs): an action
// begins, or a wait saw a document load.
func (x *tabExt) docsSeen() {
	if w := x.t.lifecycle; w != nil {
		x.actDocs.Store(w.commits.Load())
	}
}

// ext returns the tab's action state (made by connect).
func (t *Tab) ext() *tabExt { return t.x }

func newTabExt(t *Tab) *tabExt {
	x := &tabExt{t: t, dialogs: make(chan *page.JavascriptDialogOpeningReply, 16)}
	x.refs.top = &frameSess{targetID: t.id, d: t.direct}
	x.refs.setup()
	if t.s != nil {
		x.refs.nums.Shared = &t.s.refNums // numbers unique across the session's tabs
	}
	x.dialog.setup()
	x.input.turn = make(chan struct{}, 1)
	x.choosers = make(chan *fileChooser, 1)
	return x
}

// start runs once the tab's events are tapped (Tab.onEvent hands dialogs
// to dialogOpened). A dialog that opened before anyone watched would wedge
// every later call (even Page.enable waits for it), so start dismisses such
// a dialog blindly and reports it.
func (x *tabExt) start(ctx context.Context) error {
	t := x.t
	start := time.Now()
	if _, err := t.direct.Call(ctx, "Page.handleJavaScriptDialog", []byte(`{"accept":false}`)); err == nil {
		d := Dialog{Type: "unknown", Opened: start, Closed: time.Now(), By: DialogDismissedUnseen}
		x.dialog.remember(d)
		x.record("dialog", "unknown dialog open before the tab was watched: dismissed", start, nil)
	}
	return nil
}

// act runs one traced action, the prologue every agent action shares: it
// counts the call as use of the session, traces it (args is what the trace
// shows; fn may change it), runs check if not nil (an invalid argument is
// reported before a dialog refusal), refuses while a dialog waits for an
// answer, and guards ctx against a dialog opening meanwhile.
func (t *Tab) act(ctx context.Context, op, action, args string, check func() error, fn func(ctx context.Context, x *tabExt, args *string) error) error {
	return t.run(ctx, op, action, args, check, false, fn)
}

// inputAct is act for an action that uses the page's one mouse and
// keyboard focus: fn runs holding the tab's input turn (tabExt.take).
func (t *Tab) inputAct(ctx context.Context, op, action, args string, check func() error, fn func(ctx context.Context, x *tabExt, args *string) error) error {
	return t.run(ctx, op, action, args, check, true, fn)
}

// run is act, and inputAct when input is set.
func (t *Tab) run(ctx context.Context, op, action, args string, check func() error, input bool, fn func(ctx context.Context, x *tabExt, args *string) error) (err error) {
	start := time.Now()
	if err := t.beginAt(op, start); err != nil {
		return err
	}
	x := t.ext()
	x.docsSeen()
	// The trace's end is the call's: the clock is read once more, not
	// twice. The call ends even if recording the entry panics.
	var took time.Duration
	defer func() { t.s.endAt(start.Add(took)) }()
	defer func() { took = x.record(action, args, start, &err) }()
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := x.dialogErr(op); err != nil {
		return err
	}
	ctx, done := x.guard(ctx)
	defer done()
	if input {
		give, err := x.take(ctx, op)
		if err != nil {
			return err
		}
		defer give()
		x.pending.Store(nil) // a chooser left open is the page's now
		if err := t.toFront(ctx); err != nil {
			return t.s.wrap(op, t.id, err)
		}
	}
	var nav navMark
	if input {
		nav = t.lifecycle.mark()
	}
	err = fn(ctx, x, &args)
	if err != nil && ctx.Err() != nil {
		t.givenUp(x, err)
	}
	// The browser replies to the call whose page opened a dialog only
	// once the dialog is answered, and may do so before the answer's own
	// reply: the action returns with the dialog in Tab.Dialogs.
	x.dialog.settle(ctx)
	if input && err == nil {
		x.follow(ctx, nav, &args)
	}
	return err
}

// toFront brings t to the front before an action that needs its page drawn
// (input, a screenshot). A page that opened a window (a target=_blank link,
// window.open) is hidden behind the new one, and a hidden page draws no
// frames: Chromium holds its clicks and screenshots until it shows again.
// Until a page of the session opens a window it costs an atomic load.
func (t *Tab) toFront(ctx context.Context) error {
	s := t.s
	if !s.popups.Load() || s.front.Load() == t {
		return nil
	}
	if err := t.direct.Invoke(ctx, "Page.bringToFront", nil, nil); err != nil {
		return err
	}
	s.front.Store(t)
	return nil
}

// onRef runs one traced action on the element ref names (see act); it
// resolves the ref first. The trace shows the ref, the element's role and
// name, then extra; fn may change that.
func (t *Tab) onRef(ctx context.Context, op, action, ref, extra string, fn func(ctx context.Context, x *tabExt, tg refTarget, args *string) error) error {
	return t.onRefRun(ctx, op, action, ref, extra, false, fn)
}

// inputOnRef is onRef for an action that uses the page's one mouse and
// keyboard focus (see inputAct).
func (t *Tab) inputOnRef(ctx context.Context, op, action, ref, extra string, fn func(ctx context.Context, x *tabExt, tg refTarget, args *string) error) error {
	return t.onRefRun(ctx, op, action, ref, extra, true, fn)
}

func (t *Tab) onRefRun(ctx context.Context, op, action, ref, extra string, input bool, fn func(ctx context.Context, x *tabExt, tg refTarget, args *string) error) error {
	return t.run(ctx, op, action, strings.TrimSpace(ref+" "+extra), nil, input, func(ctx context.Context, x *tabExt, args *string) error {
		tg, err := x.resolve(ctx, op, ref)
		if err != nil {
			return err
		}
		*args = strings.TrimSpace(ref + " " + tg.role + " " + axtext.Quote(tg.name) + " " + extra)
		return fn(ctx, x, tg, args)
	})
}

// checkOpenURL allows http, https and about:blank.
func checkOpenURL(op, raw string) *Error {
	if raw == "about:blank" {
		return nil
	}
	return checkNavigateURL(op, raw)
}

// checkNavigateURL allows absolute http and https URLs with a host and, if
// they name a port, one from 1 to 65535.
func checkNavigateURL(op, raw string) *Error {
	u, err := url.Parse(raw)
	var detail string
	switch {
	case err != nil:
		detail = "the URL is malformed"
	case u.Scheme == "":
		detail = "the URL has no scheme"
	case u.Scheme != "http" && u.Scheme != "https":
		detail = fmt.Sprintf("scheme %q is not allowed", echo(strings.ToLower(u.Scheme)))
	case u.Host == "" || u.Hostname() == "":
		detail = "the URL has no host"
	case u.User != nil:
		detail = "credentials in the URL are not allowed"
	case !validPort(u.Port()):
		e := newError(op, ErrInvalidURL, fmt.Sprintf("port %s is out of range: a port is a number from 1 to 65535", echo(u.Port())))
		e.Hint = portHint
		return e
	default:
		return nil
	}
	return newError(op, ErrInvalidURL, detail)
}

// portHint is the hint of a URL whose port is out of range.
const portHint = "fix the URL's port (a number from 1 to 65535), or leave it out for the scheme's own (80 for http, 443 for https)"

// validPort reports whether port, a URL's (digits or "", as url.Parse
// leaves it), is none or one from 1 to 65535.
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

// shownURL is a URL as the package's results show it (a navigation's, a
// tab's): token-like query values redacted and credentials dropped, the
// rest kept, since a page's query (a search, a page number) is part of
// where the tab is.
func shownURL(raw string) string { return redact.Scrub(raw) }

// redactURL drops the query string, the fragment and any credentials, which
// may carry tokens (redact.URL; attach, cdpcheck and session use it too).
func redactURL(raw string) string { return redact.URL(raw) }
