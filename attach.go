// Room: attached browsers (browsers the user runs, reached over their
// DevTools websocket). attachedBrowser.mu guards its workflows' labels and
// selected tabs; attachedBrowser.port (a semaphore, not a field guard) is the
// port lock that serializes page actions on the browser and is held across
// their CDP calls by design; Pool.mu guards Pool.attaching, the attaches under way. No
// mutex is held across a dial, a CDP call or a close, and none is taken while
// waiting for the port lock.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/target"
	"golang.org/x/sync/semaphore"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/devtools"
)

// AttachedTabListTimeout bounds AttachedView.Tabs' wait for the browser's
// tab list. When it runs out, the error carries the workflow's selected tab,
// so the caller can go on with it.
const AttachedTabListTimeout = 5 * time.Second

// ErrTabRequired: a page action on an attached session named no tab. The
// browser is shared by every workflow, so an action never falls back to a
// current tab; the error's hint names the workflow's selected tab. Returned
// by AttachedView.Do, SelectTab, Activate and CloseTab.
var ErrTabRequired = errors.New("page action on a shared browser must name its tab")

// Attach connects to a browser the user runs with remote debugging (see
// CheckCDP for the endpoint forms and what each failure means) and returns
// the pool's one shared session for its port, with id shared-cdp-<port>,
// channel "cdp" and Info().Ours false. Every caller and every workflow
// attaching to that port gets the same *Session; concurrent first calls make
// one connection. Use Session.ForWorkflow (or Pool.AttachFor) for the
// per-workflow tab API.
//
// The browser is not ours: closing the session (Session.Close, Pool.Close,
// or the browser going away) only disconnects. The browser is never killed,
// no tab is closed (neither the user's nor those a workflow created), and
// no profile dir or manifest entry is touched. An attached session is never
// reclaimed for idleness and is not among Pool.Sessions, so Pool.Session("")
// never picks the user's browser implicitly.
//
// ctx bounds the wait only. The connection is made on the pool's context: if
// the browser holds the handshake for its "Allow remote debugging?" prompt,
// Attach returns an ErrCDPPromptPending error when ctx ends and the
// connection keeps waiting for the user; calling Attach again (or CheckCDP)
// joins it and never raises a second prompt. Once the user allows it, the
// session is created even if nobody waits any more, and the next Attach
// returns it.
//
// Giving an endpoint whose port is already attached under another host is an
// ErrInvalidArgument error. Labels and selected tabs live as long as the
// session: after a close, a new Attach starts with none. Two pools attaching
// to one browser make two connections (two prompts, for a Chrome that asks):
// share one Pool per process.
func (p *Pool) Attach(ctx context.Context, endpoint string) (*Session, error) {
	const op = "Pool.Attach"
	ep, perr := parseCDPEndpoint(op, endpoint)
	if perr != nil {
		return nil, perr
	}
	id := attachedID(ep.Port)
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, newError(op, ErrPoolClosed, "")
		}
		s := p.attached[id]
		p.mu.Unlock()
		if s != nil {
			s.mu.Lock()
			live := s.state == StateLive
			s.mu.Unlock()
			if !live {
				// Closing: its close path removes it from the table.
				select {
				case <-s.done:
					continue
				case <-ctx.Done():
					e := newError(op, ctx.Err(), "gave up waiting for the previous attached session to close")
					e.Session = id
					return nil, e
				}
			}
			if err := p.sameBrowser(ctx, op, s, ep); err != nil {
				return nil, err
			}
			return s, nil
		}
		o, err := p.joinAttach(op, ep)
		if err != nil {
			return nil, err
		}
		select {
		case <-o.done:
			if o.err != nil {
				return nil, o.err
			}
			if err := p.sameBrowser(ctx, op, o.s, ep); err != nil {
				return nil, err
			}
			return o.s, nil
		case <-ctx.Done():
			return nil, o.leftError(op, ctx)
		}
	}
}

// AttachFor is Attach followed by Session.ForWorkflow: workflow's view of the
// shared session of endpoint's port.
func (p *Pool) AttachFor(ctx context.Context, endpoint, workflow string) (*AttachedView, error) {
	if err := validWorkflow("Pool.AttachFor", workflow); err != nil {
		return nil, err
	}
	s, err := p.Attach(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return s.ForWorkflow(workflow)
}

// sameBrowser fails if s is attached to another host than ep names.
func (p *Pool) sameBrowser(ctx context.Context, op string, s *Session, ep devtools.Endpoint) error {
	ab, ok := s.b.(*attachedBrowser)
	if !ok || ab.ep.Host == ep.Host {
		return nil
	}
	if ip, err := p.cdp.resolve(ctx, op, ep); err == nil && ip == ab.addr.Addr() {
		return nil
	}
	e := newError(op, ErrInvalidArgument, fmt.Sprintf("port %d is already attached to %s as session %s, not to %s", ep.Port, ab.ep.HostPort(), s.id, ep.HostPort()))
	e.Session = s.id
	e.Hint = fmt.Sprintf("use the same endpoint (%s), or close session %s first", ab.ep.HostPort(), s.id)
	return e
}

// attachOp is one attach under way. s and err are set before done is
// closed; tg is set once the endpoint has answered.
type attachOp struct {
	ep   devtools.Endpoint
	done chan struct{}
	tg   atomic.Pointer[devtools.Target]
	s    *Session
	err  error
}

// joinAttach returns the attach under way for ep's port, starting one on a
// goroutine of the pool's if there is none.
func (p *Pool) joinAttach(op string, ep devtools.Endpoint) (*attachOp, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, newError(op, ErrPoolClosed, "")
	}
	if o := p.attaching[ep.Port]; o != nil {
		return o, nil
	}
	o := &attachOp{ep: ep, done: make(chan struct{})}
	p.attaching[ep.Port] = o
	p.wg.Add(1)
	go p.runAttach(o)
	return o, nil
}

func (p *Pool) runAttach(o *attachOp) {
	defer p.wg.Done()
	s, err := p.attach(o)
	p.mu.Lock()
	delete(p.attaching, o.ep.Port)
	p.mu.Unlock()
	o.s, o.err = s, err
	close(o.done)
}

// attach probes o's endpoint, waits (on the pool's context) for the shared
// patient handshake, claims its connection and registers the session. The
// connection reaches the session as any launcher's browser does: a
// LaunchedBrowser whose Transport the pool builds its mux on.
func (p *Pool) attach(o *attachOp) (*Session, error) {
	const op = "Pool.Attach"
	id := attachedID(o.ep.Port)
	start := time.Now()
	closedErr := func() error {
		e := newError(op, ErrPoolClosed, "the pool was closed while attaching")
		e.Session = id
		return e
	}
	pctx, cancel := context.WithTimeout(p.ctx, CDPCheckTimeout)
	tg, perr := p.cdp.target(pctx, op, o.ep)
	cancel()
	if perr != nil {
		if p.ctx.Err() != nil {
			return nil, closedErr()
		}
		perr.Session = id
		return nil, perr
	}
	o.tg.Store(tg)
	var h *devtools.Handshake
	for {
		h = p.cdp.conns.ForAttach(tg.WSURL)
		select {
		case <-h.Done():
		case <-p.ctx.Done():
			return nil, closedErr()
		}
		if errors.Is(h.Err, devtools.ErrClosed) && p.ctx.Err() != nil {
			return nil, closedErr()
		}
		if h.Err != nil {
			e := dialError(tg, op, h.Err)
			e.Session = id
			return nil, e
		}
		if h.Claim() {
			break
		}
		// Another pool took it, or it died: make another.
	}
	ab := &attachedBrowser{ep: o.ep, addr: tg.Addr, h: h, conn: h.Conn, port: semaphore.NewWeighted(1), wfs: map[string]*workflowTabs{}}
	ab.info = SpawnInfo{Port: o.ep.Port, Version: h.Version.Product}
	mux, err := browserMux(ab)
	if err != nil {
		ab.Stop(context.Background())
		e := newError(op, ErrCDPRejected, "")
		e.Session, e.Err = id, err
		return nil, e
	}
	s := newSession(p, id, ab, mux, ab.info)
	s.ours = false
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ab.Stop(context.Background())
		mux.Close()
		return nil, closedErr()
	}
	p.attached[id] = s
	p.wg.Add(1)
	p.mu.Unlock()
	p.emitCreated(s, time.Since(start))
	go p.watch(s)
	return s, nil
}

// leftError is the error for a caller whose ctx ended before the attach
// finished; the attach goes on.
func (o *attachOp) leftError(op string, ctx context.Context) error {
	id := attachedID(o.ep.Port)
	if ctx.Err() == context.Canceled {
		e := newError(op, context.Canceled, "gave up waiting; the attach goes on and a later Attach returns its session")
		e.Session = id
		return e
	}
	if tg := o.tg.Load(); tg != nil {
		e := waitError(tg, op, ctx)
		e.Session = id
		return e
	}
	e := newError(op, ErrCDPTimeout, fmt.Sprintf("gave up before %s answered; the attempt goes on and Attach again joins it", o.ep.HostPort()))
	e.Session, e.Err = id, context.DeadlineExceeded
	e.Hint = "retry with a longer deadline, or run CheckCDP to see why the endpoint does not answer"
	return e
}

// attachedBrowser is the LaunchedBrowser of an attached session: a
// connection to a browser the user runs. Stop only disconnects.
type attachedBrowser struct {
	ep      devtools.Endpoint
	addr    netip.AddrPort // the resolved address
	h       *devtools.Handshake
	conn    *devtools.Conn
	info    SpawnInfo
	port    *semaphore.Weighted // the port lock: one page action at a time; not a field guard
	stopped atomic.Bool         // Stop was called

	mu  sync.Mutex
	wfs map[string]*workflowTabs // guarded by mu; by workflow
}

// workflowTabs is one workflow's labels and selected tab.
type workflowTabs struct {
	labels   map[string]string // label -> target id
	selected string            // target id, "" if none
	url      string            // the selected tab's URL (redacted) when last seen
	title    string            // its title when last seen
}

func (b *attachedBrowser) Transport() Transport    { return b.conn }
func (b *attachedBrowser) Info() SpawnInfo         { return b.info }
func (b *attachedBrowser) Exited() <-chan struct{} { return b.conn.Done() }

// ExitErr says why the connection ended, or nil while it is up.
func (b *attachedBrowser) ExitErr() error {
	select {
	case <-b.conn.Done():
	default:
		return nil
	}
	if b.stopped.Load() {
		return nil
	}
	end := &cdpmux.EndError{Reason: cdpmux.ErrConnClosed, Cause: b.conn.Err()}
	return fmt.Errorf("the browser at %s closed the DevTools connection (it quit, or its remote debugging was turned off): %w", b.ep.HostPort(), end)
}

// Stop disconnects. It never kills the browser and never closes a tab.
func (b *attachedBrowser) Stop(context.Context) error {
	b.stopped.Store(true)
	b.h.Release()
	b.conn.Close()
	return nil
}

// workflowLocked returns wf's record, creating it. b.mu must be held.
func (b *attachedBrowser) workflowLocked(wf string) *workflowTabs {
	w := b.wfs[wf]
	if w == nil {
		w = &workflowTabs{labels: map[string]string{}}
		b.wfs[wf] = w
	}
	return w
}

// lookup returns the target id and label idOrLabel names for wf: a label of
// wf's first, else a target id (with wf's label for it, if any).
func (b *attachedBrowser) lookup(wf, idOrLabel string) (id, label string, byLabel bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.workflowLocked(wf)
	if id := w.labels[idOrLabel]; id != "" {
		return id, idOrLabel, true
	}
	return idOrLabel, labelOfLocked(w, idOrLabel), false
}

func labelOfLocked(w *workflowTabs, id string) string {
	for l, t := range w.labels {
		if t == id {
			return l
		}
	}
	return ""
}

func (b *attachedBrowser) labelTarget(wf, label string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.workflowLocked(wf).labels[label]
}

// choose makes id wf's selected tab, labelling it when label is not empty.
func (b *attachedBrowser) choose(wf, id, label, url, title string) {
	b.mu.Lock()
	w := b.workflowLocked(wf)
	if label != "" {
		w.labels[label] = id
	}
	w.selected, w.url, w.title = id, redactURL(url), title
	b.mu.Unlock()
}

// selection returns wf's selected tab as last seen.
func (b *attachedBrowser) selection(wf string) (AttachedTab, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.wfs[wf]
	if w == nil || w.selected == "" {
		return AttachedTab{}, false
	}
	return AttachedTab{ID: w.selected, Label: labelOfLocked(w, w.selected), URL: w.url, Title: w.title, Selected: true}, true
}

// drop forgets a tab that is gone, for every workflow.
func (b *attachedBrowser) drop(id string) {
	b.mu.Lock()
	for _, w := range b.wfs {
		for l, t := range w.labels {
			if t == id {
				delete(w.labels, l)
			}
		}
		if w.selected == id {
			w.selected, w.url, w.title = "", "", ""
		}
	}
	b.mu.Unlock()
}

// AttachedTab is one tab of an attached browser as a workflow sees it.
type AttachedTab struct {
	ID       string // the CDP target id
	Label    string // this workflow's label for it, "" if none
	URL      string // without query string, fragment and credentials
	Title    string // cut to 100 characters
	Selected bool   // it is this workflow's selected tab
}

// AttachedView is one workflow's view of an attached session (a browser the
// user runs, shared by every workflow attached to its port). Each workflow
// has its own tab labels and its own selected tab; tab ids are the browser's
// and the same for all.
//
// Page actions must name their tab, by id or by this workflow's label: Do
// with an empty tab is an ErrTabRequired error whose hint names the
// workflow's selected tab. Open is the exception: it navigates the selected
// tab, creating one if there is none. Actions on one attached browser
// (Do, Open, NewTab, Activate, CloseTab) hold its port lock: "select the
// tab, then act" is atomic, and two actions on one port never interleave,
// whichever workflows they come from; different ports are independent.
//
// Focus: the browser is the user's own and may be visible. Acting on it may
// bring its window to the foreground and take keyboard focus from the user,
// and a new tab (NewTab, or Open with none selected) becomes its window's
// active tab; this is expected for a shared visible browser (run a separate
// headless Chrome for background-safe work). The view never calls
// Target.activateTarget except in Activate. A tab that is not its window's
// active tab is hidden: Chrome runs its timers about once a second and
// pauses its animation frames, so a page that needs to be visible may need
// Activate. User tabs are closed only by an explicit CloseTab.
//
// An AttachedView is safe for concurrent use; its zero value is not usable
// (get one from Session.ForWorkflow or Pool.AttachFor). It holds nothing to
// close: it ends with its session.
type AttachedView struct {
	s        *Session
	b        *attachedBrowser
	workflow string
}

// ForWorkflow returns workflow's view of an attached session. workflow must
// be 1 to 64 of [A-Za-z0-9_-] (an ErrInvalidID error otherwise). Calling it
// on a session the pool launched is a programming error and panics.
func (s *Session) ForWorkflow(workflow string) (*AttachedView, error) {
	b, ok := s.b.(*attachedBrowser)
	if !ok || s.ours {
		panic("browserpool: Session.ForWorkflow called on session " + s.id + ", which the pool launched; only sessions from Pool.Attach have workflow views")
	}
	if err := validWorkflow("Session.ForWorkflow", workflow); err != nil {
		return nil, err
	}
	return &AttachedView{s: s, b: b, workflow: workflow}, nil
}

func validWorkflow(op, workflow string) error {
	if err := ValidateID("workflow", workflow); err != nil {
		e := err.(*Error)
		e.Op = op
		return e
	}
	return nil
}

// Workflow returns the view's workflow.
func (v *AttachedView) Workflow() string { return v.workflow }

// Session returns the shared attached session.
func (v *AttachedView) Session() *Session { return v.s }

// Selected returns this workflow's selected tab as last seen, without asking
// the browser (it may have been closed since); false if none is selected.
func (v *AttachedView) Selected() (AttachedTab, bool) { return v.b.selection(v.workflow) }

// Forget drops this workflow's labels and selected tab (for example when the
// workflow ends). No tab is closed.
func (v *AttachedView) Forget() {
	v.b.mu.Lock()
	delete(v.b.wfs, v.workflow)
	v.b.mu.Unlock()
}

// tag adds the view's session and workflow to an *Error.
func (v *AttachedView) tag(err error) error {
	var e *Error
	if errors.As(err, &e) {
		if e.Session == "" {
			e.Session = v.s.id
		}
		if e.Workflow == "" {
			e.Workflow = v.workflow
		}
	}
	return err
}

func (v *AttachedView) newError(op string, class error, detail string) *Error {
	e := newError(op, class, detail)
	e.Session, e.Workflow = v.s.id, v.workflow
	return e
}

// selectedHint tells the caller which tab to name: the workflow's selected
// tab, or how to get one.
func (v *AttachedView) selectedHint() string {
	sel, ok := v.Selected()
	switch {
	case !ok:
		return `this workflow has no selected tab: create a labeled one with NewTab(ctx, "<label>", url), or choose one from Tabs with SelectTab, then name it in the call, e.g. Do(ctx, "<label>", fn)`
	case sel.Label != "":
		return fmt.Sprintf("use tab %q (id %s), this workflow's selected tab, by naming it in the call, e.g. Do(ctx, %q, fn); or pick another from Tabs, or create one with NewTab(ctx, \"<label>\", url)", sel.Label, sel.ID, sel.Label)
	default:
		return fmt.Sprintf("use tab %s, this workflow's selected tab, by naming it in the call, e.g. Do(ctx, %q, fn); or pick another from Tabs, or create one with NewTab(ctx, \"<label>\", url)", sel.ID, sel.ID)
	}
}

// listFallbackHint is the hint of a tab list that timed out: go on with
// the selected tab.
func (v *AttachedView) listFallbackHint() string {
	sel, ok := v.Selected()
	switch {
	case !ok:
		return `this workflow has no selected tab: create a labeled one with NewTab(ctx, "<label>", url) and name it in the call, e.g. Do(ctx, "<label>", fn); list the tabs again later`
	case sel.Label != "":
		return fmt.Sprintf("go on with tab %q (id %s), this workflow's selected tab, named in the call, e.g. Do(ctx, %q, fn); list the tabs again later", sel.Label, sel.ID, sel.Label)
	default:
		return fmt.Sprintf("go on with tab %s, this workflow's selected tab, named in the call, e.g. Do(ctx, %q, fn); list the tabs again later", sel.ID, sel.ID)
	}
}

func (v *AttachedView) tabRequired(op string) error {
	e := v.newError(op, ErrTabRequired, "an action never falls back to a current tab, which another workflow may have changed")
	e.Hint = v.selectedHint()
	return e
}

// begin starts a call on the session (live check, in-flight count).
func (v *AttachedView) begin(op string) (func(), error) {
	end, err := v.s.begin(op, "")
	return end, v.tag(err)
}

// lockPort takes the port lock, waiting for the action before to finish.
func (v *AttachedView) lockPort(ctx context.Context, op string) (func(), error) {
	if err := v.b.port.Acquire(ctx, 1); err != nil {
		e := v.newError(op, ctx.Err(), fmt.Sprintf("gave up waiting for the action before it on port %d to finish", v.b.ep.Port))
		e.Hint = "retry; actions on one attached browser run one at a time"
		return nil, e
	}
	return func() { v.b.port.Release(1) }, nil
}

// find returns the page target idOrLabel names for this workflow, and its
// label, checked against the browser's page targets.
func (v *AttachedView) find(ctx context.Context, op, idOrLabel string) (target.Info, string, error) {
	id, label, byLabel := v.b.lookup(v.workflow, idOrLabel)
	infos, err := v.s.pageTargets(ctx)
	if err != nil {
		return target.Info{}, "", v.tag(v.s.wrap(op, id, err))
	}
	for _, t := range infos {
		if string(t.TargetID) == id {
			return t, label, nil
		}
	}
	if byLabel || label != "" {
		v.b.drop(id)
		e := v.newError(op, ErrTabClosed, fmt.Sprintf("tab %q (id %s) is gone: it was closed in the browser", label, id))
		e.Tab = id
		e.Hint = fmt.Sprintf("create it again with NewTab(ctx, %q, url), or pick another tab from Tabs", label)
		return target.Info{}, "", e
	}
	e := v.newError(op, ErrTabNotFound, fmt.Sprintf("no tab has id or label %q in this workflow", idOrLabel))
	e.Hint = "list the tabs with Tabs and name one by id, or by a label this workflow gave it; " + v.selectedHint()
	return target.Info{}, "", e
}

// take resolves idOrLabel, attaches to the tab and selects it.
func (v *AttachedView) take(ctx context.Context, op, idOrLabel string) (*Tab, error) {
	info, label, err := v.find(ctx, op, idOrLabel)
	if err != nil {
		return nil, err
	}
	id := string(info.TargetID)
	t, err := v.s.attach(ctx, id, false)
	if err != nil {
		return nil, v.tag(v.s.wrap(op, id, err))
	}
	v.b.choose(v.workflow, id, label, info.URL, info.Title)
	return t, nil
}

// Tabs lists the browser's page tabs compactly, in the browser's order:
// id, this workflow's label, URL, title, and whether it is this workflow's
// selected tab. If the browser does not answer within
// AttachedTabListTimeout (or before ctx's deadline), the error (class
// ErrTimeout) carries the selected-tab hint instead.
func (v *AttachedView) Tabs(ctx context.Context) ([]AttachedTab, error) {
	const op = "AttachedView.Tabs"
	end, err := v.begin(op)
	if err != nil {
		return nil, err
	}
	defer end()
	lctx, cancel := context.WithTimeout(ctx, AttachedTabListTimeout)
	infos, err := v.s.pageTargets(lctx)
	listTimedOut := lctx.Err() == context.DeadlineExceeded
	cancel()
	if err != nil {
		if listTimedOut || errors.Is(err, context.DeadlineExceeded) {
			detail := fmt.Sprintf("the browser did not list its tabs within %v", AttachedTabListTimeout)
			if ctx.Err() != nil {
				detail = "the browser did not list its tabs before the deadline"
			}
			e := v.newError(op, ErrTimeout, detail)
			e.Err = context.DeadlineExceeded
			e.Hint = v.listFallbackHint()
			return nil, e
		}
		return nil, v.tag(v.s.wrap(op, "", err))
	}
	v.b.mu.Lock()
	w := v.b.workflowLocked(v.workflow)
	out := make([]AttachedTab, 0, len(infos))
	for _, t := range infos {
		id := string(t.TargetID)
		out = append(out, AttachedTab{ID: id, Label: labelOfLocked(w, id), URL: redactURL(t.URL), Title: cutTitle(t.Title, 100), Selected: id == w.selected})
	}
	v.b.mu.Unlock()
	return out, nil
}

func cutTitle(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// SelectTab makes the tab named by id or this workflow's label the
// workflow's selected tab (the one Open navigates and hints name). It only
// records the choice: the browser's own active tab and focus are unchanged.
func (v *AttachedView) SelectTab(ctx context.Context, idOrLabel string) (AttachedTab, error) {
	const op = "AttachedView.SelectTab"
	if idOrLabel == "" {
		return AttachedTab{}, v.tabRequired(op)
	}
	end, err := v.begin(op)
	if err != nil {
		return AttachedTab{}, err
	}
	defer end()
	info, label, err := v.find(ctx, op, idOrLabel)
	if err != nil {
		return AttachedTab{}, err
	}
	id := string(info.TargetID)
	v.b.choose(v.workflow, id, label, info.URL, info.Title)
	return AttachedTab{ID: id, Label: label, URL: redactURL(info.URL), Title: cutTitle(info.Title, 100), Selected: true}, nil
}

// NewTab opens a new tab, labels it for this workflow,
// selects it, and loads url (http, https, or about:blank when empty),
// waiting for the load. label must be 1 to 64 of [A-Za-z0-9_-] and not name
// another open tab of this workflow. If the page fails to load, the tab
// stays open and selected, and is returned with the error.
func (v *AttachedView) NewTab(ctx context.Context, label, url string) (AttachedTab, error) {
	const op = "AttachedView.NewTab"
	if err := ValidateID("tab label", label); err != nil {
		e := err.(*Error)
		e.Op = op
		return AttachedTab{}, v.tag(e)
	}
	if url == "" {
		url = "about:blank"
	}
	if err := checkOpenURL(op, url); err != nil {
		return AttachedTab{}, v.tag(err)
	}
	end, err := v.begin(op)
	if err != nil {
		return AttachedTab{}, err
	}
	defer end()
	unlock, err := v.lockPort(ctx, op)
	if err != nil {
		return AttachedTab{}, err
	}
	defer unlock()
	if id := v.b.labelTarget(v.workflow, label); id != "" {
		if _, _, err := v.find(ctx, op, label); err == nil {
			e := v.newError(op, ErrInvalidArgument, fmt.Sprintf("label %q already names tab %s of this workflow", label, id))
			e.Tab = id
			e.Hint = fmt.Sprintf("select it with SelectTab(ctx, %q) and load a page with Open, or choose another label", label)
			return AttachedTab{}, e
		} else if !errors.Is(err, ErrTabClosed) {
			return AttachedTab{}, err
		}
	}
	t, err := v.create(ctx, op, label)
	if err != nil {
		return AttachedTab{}, err
	}
	res := AttachedTab{ID: t.id, Label: label, URL: "about:blank", Selected: true}
	if url != "about:blank" {
		if _, err := t.navigate(ctx, op, url); err != nil {
			res.URL = redactURL(url)
			return res, v.tag(err)
		}
	}
	if r, err := v.s.browser.Target.GetTargetInfo(ctx, target.NewGetTargetInfoArgs().SetTargetID(target.ID(t.id))); err == nil {
		res.URL, res.Title = redactURL(r.TargetInfo.URL), cutTitle(r.TargetInfo.Title, 100)
		v.b.choose(v.workflow, t.id, label, r.TargetInfo.URL, r.TargetInfo.Title)
	}
	return res, nil
}

// create opens an about:blank tab, attaches to it and
// selects it for this workflow (labelled when label is not empty). The
// caller holds the port lock.
func (v *AttachedView) create(ctx context.Context, op, label string) (*Tab, error) {
	created, err := v.s.browser.Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		return nil, v.tag(v.s.wrap(op, "", err))
	}
	id := string(created.TargetID)
	t, err := v.s.attach(ctx, id, true)
	if err != nil {
		v.s.closeTarget(id) // ours, just made: no user tab is closed
		return nil, v.tag(v.s.wrap(op, id, err))
	}
	v.b.choose(v.workflow, id, label, "about:blank", "")
	return t, nil
}

// Open loads url (http, https or about:blank) in this workflow's selected
// tab and waits for the load; with no selected tab, or if it was closed, it
// first opens a new unlabeled tab and selects it. It is
// the one page action that needs no tab name.
func (v *AttachedView) Open(ctx context.Context, url string) (NavigateResult, error) {
	const op = "AttachedView.Open"
	if err := checkOpenURL(op, url); err != nil {
		return NavigateResult{}, v.tag(err)
	}
	end, err := v.begin(op)
	if err != nil {
		return NavigateResult{}, err
	}
	defer end()
	unlock, err := v.lockPort(ctx, op)
	if err != nil {
		return NavigateResult{}, err
	}
	defer unlock()
	var t *Tab
	if sel, ok := v.Selected(); ok {
		t, err = v.take(ctx, op, sel.ID)
		if err != nil && !errors.Is(err, ErrTabNotFound) && !errors.Is(err, ErrTabClosed) {
			return NavigateResult{}, err
		}
	}
	if t == nil {
		if t, err = v.create(ctx, op, ""); err != nil {
			return NavigateResult{}, err
		}
	}
	res, err := t.navigate(ctx, op, url)
	if err == nil {
		v.b.choose(v.workflow, t.id, "", url, "")
	}
	return res, v.tag(err)
}

// Do runs fn on the tab named by id or this workflow's label, holding the
// port lock: the tab is resolved, made this workflow's selected tab, and fn
// runs, with no other action on this browser in between. An empty
// idOrLabel is an ErrTabRequired error carrying the selected-tab hint. fn's
// error is returned as is; fn must not keep the *Tab past its return (use it
// again through another Do).
func (v *AttachedView) Do(ctx context.Context, idOrLabel string, fn func(*Tab) error) error {
	const op = "AttachedView.Do"
	return v.locked(ctx, op, idOrLabel, func() error {
		t, err := v.take(ctx, op, idOrLabel)
		if err != nil {
			return err
		}
		return fn(t)
	})
}

// locked runs fn for a named tab as one call on the session, holding the
// port lock: an empty idOrLabel is ErrTabRequired.
func (v *AttachedView) locked(ctx context.Context, op, idOrLabel string, fn func() error) error {
	if idOrLabel == "" {
		return v.tabRequired(op)
	}
	end, err := v.begin(op)
	if err != nil {
		return err
	}
	defer end()
	unlock, err := v.lockPort(ctx, op)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// Activate brings the named tab to the front of its window and selects it
// for this workflow (Target.activateTarget). In a visible browser this
// takes focus from the user: call it only when asked to.
func (v *AttachedView) Activate(ctx context.Context, idOrLabel string) error {
	const op = "AttachedView.Activate"
	return v.locked(ctx, op, idOrLabel, func() error {
		info, label, err := v.find(ctx, op, idOrLabel)
		if err != nil {
			return err
		}
		id := string(info.TargetID)
		if err := v.s.browser.Target.ActivateTarget(ctx, target.NewActivateTargetArgs(target.ID(id))); err != nil {
			return v.tag(v.s.wrap(op, id, err))
		}
		v.b.choose(v.workflow, id, label, info.URL, info.Title)
		return nil
	})
}

// CloseTab closes the named tab, which may be one of the user's: call it
// only when asked to. Its labels and selections are dropped for every
// workflow.
func (v *AttachedView) CloseTab(ctx context.Context, idOrLabel string) error {
	const op = "AttachedView.CloseTab"
	return v.locked(ctx, op, idOrLabel, func() error {
		info, _, err := v.find(ctx, op, idOrLabel)
		if err != nil {
			return err
		}
		id := string(info.TargetID)
		if err := v.s.CloseTab(ctx, id); err != nil {
			return v.tag(err)
		}
		v.b.drop(id)
		return nil
	})
}
