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
// A pool with Config.Network Allow or Block rules refuses to attach
// (ErrInvalidConfig): the browser was not started behind the pool's policy
// proxy, so the rules could not be enforced on it.
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
	if n := p.cfg.Network; len(n.Allow) > 0 || len(n.Block) > 0 {
		// Rules the pool cannot enforce must not look enforced (as for a
		// fleet's browsers at NewPool).
		e := newError(op, ErrInvalidConfig, "Network: the pool's Allow and Block rules cannot be enforced on a browser it attaches to: that browser was started without the pool's policy proxy and reaches the network directly")
		e.Hint = "attach from a pool without Network rules (a second Pool for attaching), or have the browser's user start it behind a proxy of their own"
		return nil, e
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
	s.filesRemote = !loopbackHost(o.ep.Host)
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
	p.watch(s)
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
		e := waitError(tg, op, ctx, false)
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

	mu     sync.Mutex
	wfs    map[string]*workflowTabs // guarded by mu; by workflow
	holder portHolder               // guarded by mu; the action holding the port lock, zero when none
}

// portHolder is the action that holds an attached browser's port lock: a
// workflow's call (its op) and since when.
type portHolder struct {
	workflow, op string
	since        time.Time
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
func (b *attachedBrowser) exitEndsConn()           {}

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
// wf's first, else a target id (with wf's label for it, if any). known
// reports that wf knows the tab: by a label, or as its selected tab.
func (b *attachedBrowser) lookup(wf, idOrLabel string) (id, label string, byLabel, known bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.workflowLocked(wf)
	if id := w.labels[idOrLabel]; id != "" {
		return id, idOrLabel, true, true
	}
	label = labelOfLocked(w, idOrLabel)
	return idOrLabel, label, false, label != "" || (idOrLabel != "" && idOrLabel == w.selected)
}

// hold records the action that took the port lock; release forgets it.
func (b *attachedBrowser) hold(wf, op string) (release func()) {
	b.mu.Lock()
	b.holder = portHolder{workflow: wf, op: op, since: time.Now()}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.holder = portHolder{}
		b.mu.Unlock()
	}
}

// heldBy returns the action holding the port lock, if any.
func (b *attachedBrowser) heldBy() (portHolder, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holder, b.holder.op != ""
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
	w.selected, w.url = id, redactURL(url)
	w.title = tabTitle(title, url, w.url)
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
