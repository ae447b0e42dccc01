// Room: input (mouse, keyboard, form fields, file upload). inputState.mu
// guards the tab's last mouse position; no CDP call is made with it held.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	kb "github.com/browserpool/browserpool/internal/keys"
)

// Classes of input errors.
var (
	// ErrCovered: the element's click point is covered by another element
	// (a banner, a modal, an overlay). The detail names the covering
	// element and, if the latest snapshot showed it, its ref. Returned by
	// Click and Hover.
	ErrCovered = errors.New("element is covered by another element")
	// ErrNotVisible: the element has no visible box to act on (display:
	// none, visibility: hidden, zero size, or outside the page). Returned
	// by Click, Hover and Scroll.
	ErrNotVisible = errors.New("element is not visible")
	// ErrClickMissed: Click pressed and released the mouse over the
	// element, but no click reached it at any of its aims (the page moved
	// or covered the element during each click), or its document went away
	// before the press could be confirmed. The detail says what got the
	// press or the release instead. Returned by Click.
	ErrClickMissed = errors.New("the click did not reach the element")
)

// inputState is a tab's mouse position and its counter of JavaScript
// object groups (atomic: no lock).
type inputState struct {
	mu     sync.Mutex
	x, y   float64 // guarded by mu; where the mouse last went
	moved  bool    // guarded by mu; x and y are set
	groups atomic.Uint64
}

func (s *inputState) setMouse(x, y float64) {
	s.mu.Lock()
	s.x, s.y, s.moved = x, y, true
	s.mu.Unlock()
}

// clickAttempts bounds how many times Click aims at an element and clicks
// it, when the page moves it out from under the mouse.
const clickAttempts = 3

// Click clicks the element a ref names (from the latest Tab.Snapshot) the
// way a user would: it scrolls the element into view, takes the centre of
// its visible box, checks that nothing covers that point, then moves the
// mouse there and presses and releases the left button. A covered element
// is an ErrCovered error naming what covers it; one without a visible box
// is ErrNotVisible; a disabled one is ErrInvalidArgument; an old ref is
// ErrStaleRef.
//
// Click returns nil only once the page has confirmed the click: a click
// event reached the element (or, through its label, its control), or the
// element got the press and the page then removed or hid it or left the
// document (a menu that acts on the press, a link followed). A page can
// move an element between the press and the release (the press moves the
// focus, and a blur handler changes the layout above it): the release then
// lands elsewhere and the browser sends the click to neither. Click then
// aims again and clicks again, up to 3 times in all; if the click still
// does not land, or the element's document went away before the press
// could be confirmed, it returns an ErrClickMissed error saying what got
// the press and the release.
func (t *Tab) Click(ctx context.Context, ref string) error {
	const op = "Tab.Click"
	return t.onRef(ctx, op, "click", ref, "", func(ctx context.Context, x *tabExt, tg refTarget, args *string) error {
		for attempt := 1; ; attempt++ {
			px, py, err := x.point(ctx, op, ref, tg, true)
			if err != nil {
				return err
			}
			rep, err := x.clickTarget(ctx, tg, px, py)
			if err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
			switch rep.outcome() {
			case clickLanded:
				if attempt > 1 {
					*args += fmt.Sprintf(" (landed on attempt %d: the earlier click missed it)", attempt)
				}
				return nil
			case clickDisabled:
				return x.badTarget(op, ref, tg, "disabled", "a disabled element ignores clicks; take a new snapshot to see when it is enabled")
			case clickMissed:
				if attempt < clickAttempts {
					continue
				}
			}
			return x.missed(op, ref, tg, rep, px, py, attempt)
		}
	})
}

// onRef runs one traced action on the element ref names (see act); it
// resolves the ref first. The trace shows the ref, the element's role and
// name, then extra; fn may change that.
func (t *Tab) onRef(ctx context.Context, op, action, ref, extra string, fn func(ctx context.Context, x *tabExt, tg refTarget, args *string) error) error {
	return t.act(ctx, op, action, strings.TrimSpace(ref+" "+extra), func(ctx context.Context, x *tabExt, args *string) error {
		tg, err := x.resolve(ctx, op, ref)
		if err != nil {
			return err
		}
		*args = strings.TrimSpace(ref + " " + tg.role + " " + axtext.Quote(tg.name) + " " + extra)
		return fn(ctx, x, tg, args)
	})
}

// act runs one traced action: it counts the call as use of the session,
// refuses while a dialog waits for an answer, and guards ctx against a
// dialog opening meanwhile. args is what the trace shows; fn may change it.
func (t *Tab) act(ctx context.Context, op, action, args string, fn func(ctx context.Context, x *tabExt, args *string) error) (err error) {
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	start := time.Now()
	defer func() { x.record(action, args, start, &err) }()
	if err := x.dialogErr(op); err != nil {
		return err
	}
	ctx, done := x.guard(ctx)
	defer done()
	return fn(ctx, x, &args)
}

// ClickAt clicks at a point of the viewport, in CSS pixels from its top
// left corner, whatever is there.
func (t *Tab) ClickAt(ctx context.Context, px, py float64) (err error) {
	const op = "Tab.ClickAt"
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	defer x.record("click-at", fmt.Sprintf("%g,%g", px, py), time.Now(), &err)
	if err := x.dialogErr(op); err != nil {
		return err
	}
	if math.IsNaN(px) || math.IsNaN(py) || px < 0 || py < 0 {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("(%g, %g) is not a point of the viewport", px, py))
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "give CSS pixels from the viewport's top left corner; Tab.PageInfo tells the viewport's size"
		return e
	}
	ctx, done := x.guard(ctx)
	defer done()
	if err := x.click(ctx, px, py); err != nil {
		return x.fail(op, ctx, "", err)
	}
	return nil
}

// Hover moves the mouse over the element a ref names, after the same
// checks as Click.
func (t *Tab) Hover(ctx context.Context, ref string) error {
	const op = "Tab.Hover"
	return t.onRef(ctx, op, "hover", ref, "", func(ctx context.Context, x *tabExt, tg refTarget, _ *string) error {
		px, py, err := x.point(ctx, op, ref, tg, true)
		if err != nil {
			return err
		}
		if err := x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", px, py)); err != nil {
			return x.fail(op, ctx, ref, err)
		}
		return nil
	})
}

func (x *tabExt) click(ctx context.Context, px, py float64) error {
	if err := x.press(ctx, px, py); err != nil {
		return err
	}
	return x.release(ctx, px, py)
}

// press moves the mouse to (px, py) and presses the left button.
func (x *tabExt) press(ctx context.Context, px, py float64) error {
	// A move waits for the page's next frame (about 16 ms): skip it when
	// the mouse is already there.
	x.input.mu.Lock()
	there := x.input.moved && x.input.x == px && x.input.y == py
	x.input.mu.Unlock()
	if !there {
		if err := x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", px, py)); err != nil {
			return err
		}
	}
	return x.mouse(ctx, input.NewDispatchMouseEventArgs("mousePressed", px, py).
		SetButton(input.MouseButtonLeft).SetButtons(1).SetClickCount(1))
}

// release releases the left button at (px, py). The browser sends each
// mouse event to whatever is at its point when it is dispatched: if the
// page moved the pressed element meanwhile, the release lands elsewhere.
func (x *tabExt) release(ctx context.Context, px, py float64) error {
	return x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseReleased", px, py).
		SetButton(input.MouseButtonLeft).SetButtons(0).SetClickCount(1))
}

func (x *tabExt) mouse(ctx context.Context, args *input.DispatchMouseEventArgs) error {
	if err := x.t.client.Input.DispatchMouseEvent(ctx, args); err != nil {
		return err
	}
	if args.Type != "mouseWheel" {
		x.input.setMouse(args.X, args.Y)
	}
	return nil
}

// quads is DOM.getContentQuads's reply.
type quads struct {
	Quads [][]float64 `json:"quads"`
}

// point scrolls the target into view and returns the centre of its
// visible box in the viewport's CSS pixels. With hit set it also checks
// that the element (or a descendant) is what is at that point.
func (x *tabExt) point(ctx context.Context, op, ref string, tg refTarget, hit bool) (float64, float64, error) {
	nodeArgs := func(id dom.BackendNodeID) any {
		return struct {
			Backend dom.BackendNodeID `json:"backendNodeId"`
		}{id}
	}
	// Bring each out-of-process iframe into view in its parent, then the
	// element itself in its frame.
	for _, h := range tg.chain {
		if err := rpcc.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", nodeArgs(h.owner), nil, h.parent.conn); err != nil {
			return 0, 0, x.fail(op, ctx, ref, frameErr(h.parent, err))
		}
	}
	if err := rpcc.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", nodeArgs(tg.node), nil, tg.f.conn); err != nil {
		return 0, 0, x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	var q quads
	if err := rpcc.Invoke(ctx, "DOM.getContentQuads", nodeArgs(tg.node), &q, tg.f.conn); err != nil {
		return 0, 0, x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	// Offsets of out-of-process frames: each iframe's content box in its
	// parent's viewport.
	offsets := make([][2]float64, len(tg.chain))
	var ox, oy float64
	for i, h := range tg.chain {
		var box struct {
			Model struct {
				Content []float64 `json:"content"`
			} `json:"model"`
		}
		if err := rpcc.Invoke(ctx, "DOM.getBoxModel", nodeArgs(h.owner), &box, h.parent.conn); err != nil {
			return 0, 0, x.fail(op, ctx, ref, frameErr(h.parent, err))
		}
		if len(box.Model.Content) < 2 {
			return 0, 0, x.notVisible(op, ref, "its frame has no box")
		}
		offsets[i] = [2]float64{box.Model.Content[0], box.Model.Content[1]}
		ox += box.Model.Content[0]
		oy += box.Model.Content[1]
	}
	lm, err := layoutMetrics(ctx, x.t.conn)
	if err != nil {
		return 0, 0, x.fail(op, ctx, ref, err)
	}
	// The largest part of any of the element's boxes inside the viewport.
	var best, bx0, by0, bx1, by1 float64
	for _, qd := range q.Quads {
		if len(qd) != 8 {
			continue
		}
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for i := 0; i < 8; i += 2 {
			x0, x1 = min(x0, qd[i]+ox), max(x1, qd[i]+ox)
			y0, y1 = min(y0, qd[i+1]+oy), max(y1, qd[i+1]+oy)
		}
		x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, lm.VP.W), min(y1, lm.VP.H)
		if a := (x1 - x0) * (y1 - y0); x1 > x0 && y1 > y0 && a > best {
			best, bx0, by0, bx1, by1 = a, x0, y0, x1, y1
		}
	}
	if best < 1 {
		if len(q.Quads) == 0 {
			return 0, 0, x.notVisible(op, ref, "it has no box (display: none, or not rendered)")
		}
		return 0, 0, x.notVisible(op, ref, "it has no size, or lies outside the page even after scrolling")
	}
	px, py := (bx0+bx1)/2, (by0+by1)/2
	if hit {
		if err := x.hitTest(ctx, op, ref, tg, px, py, lm, offsets); err != nil {
			return 0, 0, err
		}
	}
	return px, py, nil
}

func (x *tabExt) notVisible(op, ref, why string) error {
	e := newError(op, ErrNotVisible, ref+": "+why)
	e.Session, e.Tab = x.t.s.id, x.t.id
	return e
}

// hitTest checks that the point (px, py) of the viewport hits the target:
// through each out-of-process iframe on the way, then the element itself or
// one of its descendants (or a label of it). DOM.getNodeForLocation takes
// document coordinates: each level adds its document's scroll offset.
func (x *tabExt) hitTest(ctx context.Context, op, ref string, tg refTarget, px, py float64, top metrics, offsets [][2]float64) error {
	lx, ly := px, py
	scroll := top.VP
	for i, h := range tg.chain {
		got, err := nodeAt(ctx, h.parent, lx+scroll.PageX, ly+scroll.PageY)
		if err != nil {
			return x.fail(op, ctx, ref, frameErr(h.parent, err))
		}
		if got != h.owner {
			return x.covered(ctx, op, ref, tg, h.parent, h.owner, got, px, py)
		}
		lx, ly = lx-offsets[i][0], ly-offsets[i][1]
		f := tg.f
		if i+1 < len(tg.chain) {
			f = tg.chain[i+1].parent
		}
		m, err := layoutMetrics(ctx, f.conn)
		if err != nil {
			return x.fail(op, ctx, ref, frameErr(f, err))
		}
		scroll = m.VP
	}
	got, err := nodeAt(ctx, tg.f, lx+scroll.PageX, ly+scroll.PageY)
	if err != nil {
		return x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	if got == tg.node {
		return nil
	}
	return x.covered(ctx, op, ref, tg, tg.f, tg.node, got, px, py)
}

// metrics is the part of Page.getLayoutMetrics we use: the layout
// viewport's size and scroll offset, in CSS pixels.
type metrics struct {
	VP struct {
		PageX float64 `json:"pageX"`
		PageY float64 `json:"pageY"`
		W     float64 `json:"clientWidth"`
		H     float64 `json:"clientHeight"`
	} `json:"cssLayoutViewport"`
}

func layoutMetrics(ctx context.Context, conn *rpcc.Conn) (metrics, error) {
	var m metrics
	err := rpcc.Invoke(ctx, "Page.getLayoutMetrics", nil, &m, conn)
	return m, err
}

// nodeAt returns the node at a point of a frame's viewport.
func nodeAt(ctx context.Context, f *frameSess, px, py float64) (dom.BackendNodeID, error) {
	args := struct {
		X int `json:"x"`
		Y int `json:"y"`
	}{int(math.Floor(px)), int(math.Floor(py))}
	var reply struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
	}
	err := rpcc.Invoke(ctx, "DOM.getNodeForLocation", &args, &reply, f.conn)
	return reply.Backend, err
}

// coverJS decides whether the node hit at the click point (h) is the
// element (this) for a click's purpose, and else describes it.
const coverJS = `function(h) {
	for (let n = h; n; n = n.parentNode || n.host) if (n === this) return {ok: true};
	for (let p = h; p; p = p.parentElement) if (p.tagName === 'LABEL' && p.control === this) return {ok: true};
	const visible = this.checkVisibility ? this.checkVisibility({visibilityProperty: true}) : true;
	return {ok: false, visible, cover: (` + describeJS + `)(h)};
}`

// covered reports that got, not want, is at the click point of ref,
// unless got is part of want.
func (x *tabExt) covered(ctx context.Context, op, ref string, tg refTarget, f *frameSess, want, got dom.BackendNodeID, px, py float64) error {
	var res struct {
		OK      bool   `json:"ok"`
		Visible bool   `json:"visible"`
		Cover   string `json:"cover"`
	}
	if err := x.callOn(ctx, op, f, want, coverJS, []any{nodeArg(got)}, &res); err != nil {
		return x.fail(op, ctx, ref, frameErr(f, err))
	}
	if res.OK {
		return nil
	}
	if !res.Visible {
		return x.notVisible(op, ref, "it is hidden (visibility: hidden or content-visibility)")
	}
	cover := res.Cover
	if cover == "" {
		cover = "another element"
	}
	if r := x.refs.refName(f, got); r != "" {
		cover += " (" + r + ")"
	}
	e := newError(op, ErrCovered, fmt.Sprintf("%s (%s %s) is covered at (%.0f, %.0f) by %s", ref, tg.role, axtext.Quote(tg.name), px, py, cover))
	e.Session, e.Tab = x.t.s.id, x.t.id
	return e
}

// nodeArg marks a call argument as the DOM node with this backend id.
type nodeArg dom.BackendNodeID

// callOn calls the JavaScript function fn with this bound to a DOM node of
// frame f, passing args (JSON values, or nodeArg for nodes of f), and
// decodes its value (awaited if a promise) into out. The objects it makes
// are released before it returns.
func (x *tabExt) callOn(ctx context.Context, op string, f *frameSess, node dom.BackendNodeID, fn string, args []any, out any) error {
	group := x.newGroup()
	defer releaseGroup(ctx, f, group)
	this, err := resolveNode(ctx, f, node, group)
	if err != nil {
		return err
	}
	cargs := make([]any, len(args))
	for i, a := range args {
		cargs[i] = a
		if n, ok := a.(nodeArg); ok {
			id, err := resolveNode(ctx, f, dom.BackendNodeID(n), group)
			if err != nil {
				return err
			}
			cargs[i] = objectArg(id)
		}
	}
	res, err := x.callFn(ctx, op, f, this, fn, cargs, true)
	if err != nil {
		return err
	}
	if out != nil && len(res.Value) > 0 {
		return json.Unmarshal(res.Value, out)
	}
	return nil
}

// newGroup names a new object group for the JavaScript objects of one
// action, released together.
func (x *tabExt) newGroup() string {
	return "browserpool-" + strconv.FormatUint(x.input.groups.Add(1), 10)
}

// releaseGroup releases the objects of group in frame f, within 2 seconds
// even if ctx has ended.
func releaseGroup(ctx context.Context, f *frameSess, group string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	rpcc.Invoke(rctx, "Runtime.releaseObjectGroup", struct {
		Group string `json:"objectGroup"`
	}{group}, nil, f.conn)
}

// resolveNode returns the id of a JavaScript object for a DOM node of
// frame f, in the page's main world, belonging to group.
func resolveNode(ctx context.Context, f *frameSess, node dom.BackendNodeID, group string) (string, error) {
	a := struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
		Group   string            `json:"objectGroup"`
	}{node, group}
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	err := rpcc.Invoke(ctx, "DOM.resolveNode", &a, &r, f.conn)
	return r.Object.ObjectID, err
}

// objectArg marks a call argument as the JavaScript object with this id.
type objectArg string

// remoteValue is the part of a Runtime.RemoteObject we read.
type remoteValue struct {
	Type     string          `json:"type"`
	Value    json.RawMessage `json:"value"`
	ObjectID string          `json:"objectId"`
}

// callFn calls the JavaScript function fn with this bound to the object
// this of frame f, passing args (JSON values, or objectArg for objects of
// f), and returns its result, awaited if a promise: by value if byValue,
// else as an object of this's group (a primitive has its value either way).
// An exception is an ErrJavaScript error.
func (x *tabExt) callFn(ctx context.Context, op string, f *frameSess, this, fn string, args []any, byValue bool) (remoteValue, error) {
	type callArg struct {
		Value    any    `json:"value,omitempty"`
		ObjectID string `json:"objectId,omitempty"`
	}
	cargs := make([]callArg, len(args))
	for i, a := range args {
		if id, ok := a.(objectArg); ok {
			cargs[i].ObjectID = string(id)
			continue
		}
		cargs[i].Value = a
	}
	call := struct {
		Fn       string    `json:"functionDeclaration"`
		ObjectID string    `json:"objectId"`
		Args     []callArg `json:"arguments"`
		ByValue  bool      `json:"returnByValue"`
		Await    bool      `json:"awaitPromise"`
	}{fn, this, cargs, byValue, true}
	var reply struct {
		Result    remoteValue               `json:"result"`
		Exception *runtime.ExceptionDetails `json:"exceptionDetails"`
	}
	if err := rpcc.Invoke(ctx, "Runtime.callFunctionOn", &call, &reply, f.conn); err != nil {
		return remoteValue{}, err
	}
	if reply.Exception != nil {
		return remoteValue{}, x.t.jsError(op, reply.Exception)
	}
	return reply.Result, nil
}

// describeJS describes an element for an error message: its tag, id, up
// to three classes and the start of its text, as in div#banner.cookie
// "We use cookies".
const describeJS = `(n => {
	const c = n && (n.nodeType === 1 ? n : n.parentElement);
	if (!c) return '';
	let d = c.tagName.toLowerCase();
	if (c.id) d += '#' + c.id;
	if (typeof c.className === 'string' && c.className.trim()) d += '.' + c.className.trim().split(/\s+/).slice(0, 3).join('.');
	let text = (c.getAttribute('aria-label') || c.innerText || c.value || '').trim().replace(/\s+/g, ' ');
	if (text.length > 60) text = text.slice(0, 59) + '…';
	if (text) d += ' "' + text + '"';
	return d;
})`

// clickArmJS arms a click watch on an element (this) for the length of one
// click: listeners in the capture phase on its window, which see the
// presses, releases and clicks of its document before any element's
// handler can stop them, and on the element itself, which also see events
// inside its shadow trees. A page that stops these events on its window
// first leaves the click unconfirmed. It returns the watch object, or, when the element
// cannot take a click at all, a string saying why ("disabled").
const clickArmJS = `function() {
	const el = this, win = el.ownerDocument.defaultView;
	if (el.matches(':disabled')) return 'disabled';
	const w = {el, log: [], hit: new WeakSet()};
	const types = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click'];
	const onWin = e => {
		if (w.log.length >= 32) return;
		let label = false;
		for (const n of e.composedPath()) if (n.tagName === 'LABEL' && n.control === el) label = true;
		w.log.push({e, type: e.type, label, target: e.target});
	};
	const onEl = e => { w.hit.add(e); };
	for (const t of types) {
		win.addEventListener(t, onWin, true);
		el.addEventListener(t, onEl, true);
	}
	w.stop = () => {
		for (const t of types) {
			win.removeEventListener(t, onWin, true);
			el.removeEventListener(t, onEl, true);
		}
	};
	return w;
}`

// clickReportJS reads a click watch (this) into a clickReport, and
// disarms it if stop is set. Only the nodes that got a press or a release
// instead of the element are described, and only here: describing reads
// innerText, which would lay the page out in the middle of the click.
const clickReportJS = `function(stop) {
	const w = this, el = w.el;
	if (stop) w.stop();
	const describe = ` + describeJS + `;
	const reached = r => r.label || w.hit.has(r.e);
	const press = r => r.type === 'pointerdown' || r.type === 'mousedown';
	const release = r => r.type === 'pointerup' || r.type === 'mouseup';
	const missed = is => { const r = w.log.find(r => is(r) && !reached(r)); return r ? describe(r.target) || 'a node without a description' : ''; };
	const shown = el.isConnected && el.getClientRects().length > 0 && (!el.checkVisibility || el.checkVisibility({visibilityProperty: true}));
	return {
		pressed: w.log.some(r => press(r) && reached(r)),
		clicked: w.log.some(r => r.type === 'click' && reached(r)),
		pressOn: missed(press),
		releaseOn: missed(release),
		connected: el.isConnected,
		shown,
		disabled: el.matches(':disabled'),
	};
}`

// clickReport is what the page saw of one click, from a click watch.
type clickReport struct {
	Pressed   bool   `json:"pressed"`   // a pointerdown or mousedown reached the element (or its label)
	Clicked   bool   `json:"clicked"`   // a click event reached it
	PressOn   string `json:"pressOn"`   // what in its document got a press instead, described
	ReleaseOn string `json:"releaseOn"` // what in its document got a release instead, described
	Connected bool   `json:"connected"` // it is still in its document
	Shown     bool   `json:"shown"`     // it still has a visible box
	Disabled  bool   `json:"disabled"`  // it is disabled now

	// refused: the element was disabled before the press, so nothing was
	// sent. gone: the element's document went away (a navigation, its frame
	// removed) before the report after the release could be read; Pressed
	// is then what was read after the press, if that could be.
	refused, gone bool
}

// clickOutcome is Click's verdict on one click.
type clickOutcome int

const (
	clickLanded   clickOutcome = iota // the element got the click, or the press and then the page took it away
	clickDisabled                     // the element was disabled before the press: nothing was sent
	clickMissed                       // the press or the release landed elsewhere: aim again
	clickLost                         // the element's document went away before the press was confirmed
)

func (r clickReport) outcome() clickOutcome {
	switch {
	case r.refused:
		return clickDisabled
	case r.Clicked:
		return clickLanded
	case r.Pressed && (r.gone || !r.Connected || !r.Shown || r.Disabled):
		// The page reacted to the press: it removed, hid or disabled the
		// element, or left the document (a menu acting on mousedown, a
		// link followed, a button disabling itself).
		return clickLanded
	case r.gone:
		return clickLost
	default:
		return clickMissed
	}
}

// clickTarget presses and releases the left button at (px, py), over the
// element tg, and reports what the element's document saw of it. A watch
// armed on the element for the length of the click records each press,
// release and click and whether it reached the element; it is read after
// the press too, so that a press is known to have landed even if the
// document then goes away. After a press the button is always released.
func (x *tabExt) clickTarget(ctx context.Context, tg refTarget, px, py float64) (rep clickReport, err error) {
	const op = "Tab.Click"
	f := tg.f
	group := x.newGroup()
	var watch string
	defer func() {
		// A dialog opened by the click holds the page: calls into it
		// would wait for the answer. The watch's listeners then stay
		// until the document goes, recording nothing anyone reads.
		var dc *dialogCause
		if errors.As(context.Cause(ctx), &dc) {
			return
		}
		if watch != "" && err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			x.callFn(cctx, op, f, watch, "function() { this.stop(); }", nil, true)
			cancel()
		}
		releaseGroup(ctx, f, group)
	}()
	el, err := resolveNode(ctx, f, tg.node, group)
	if err != nil {
		return rep, err
	}
	armed, err := x.callFn(ctx, op, f, el, clickArmJS, nil, false)
	if err != nil {
		return rep, err
	}
	if armed.ObjectID == "" {
		if axtext.RawString(armed.Value) == "disabled" {
			rep.refused = true
			return rep, nil
		}
		return rep, fmt.Errorf("arming the click watch returned %s %s", armed.Type, armed.Value)
	}
	watch = armed.ObjectID
	if err := x.press(ctx, px, py); err != nil {
		return rep, err
	}
	pressed, perr := x.callFn(ctx, op, f, watch, clickReportJS, []any{false}, true)
	if err := x.release(ctx, px, py); err != nil {
		return rep, err
	}
	if perr != nil && !docGone(f, perr) {
		return rep, perr
	}
	if perr == nil {
		if err := json.Unmarshal(pressed.Value, &rep); err != nil {
			return rep, err
		}
	}
	final, err := x.callFn(ctx, op, f, watch, clickReportJS, []any{true}, true)
	if err != nil {
		if !docGone(f, err) {
			return rep, err
		}
		rep.gone = true
		return rep, nil
	}
	rep = clickReport{}
	return rep, json.Unmarshal(final.Value, &rep)
}

// docGone says whether err, from a call into frame f, means that the
// document the call was for has gone: navigated, or its frame removed.
func docGone(f *frameSess, err error) bool {
	if errors.Is(frameErr(f, err), errFrameGone) {
		return true
	}
	var re *rpcc.ResponseError
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Message + " " + re.Data
	for _, s := range []string{"Cannot find context with specified id", "Could not find object with given id",
		"Execution context was destroyed", "Inspected target navigated or closed", "Session with given id not found",
		"No target with given id"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// missed is the ErrClickMissed error of a click that did not land after
// attempts aims, the last at (px, py).
func (x *tabExt) missed(op, ref string, tg refTarget, r clickReport, px, py float64, attempts int) error {
	var why string
	switch {
	case r.gone:
		why = "went away with its document (a navigation, or its frame removed) before the press could be confirmed"
	case r.Pressed:
		on := r.ReleaseOn
		if on == "" {
			on = "something outside its frame"
		}
		why = fmt.Sprintf("was pressed at (%.0f, %.0f) but moved before the release, which landed on %s", px, py, on)
	case r.PressOn != "":
		why = fmt.Sprintf("was not pressed: the press at (%.0f, %.0f) landed on %s", px, py, r.PressOn)
	default:
		why = fmt.Sprintf("was not pressed: the press at (%.0f, %.0f) landed outside its frame", px, py)
	}
	detail := fmt.Sprintf("%s (%s %s) %s", ref, tg.role, axtext.Quote(tg.name), why)
	if attempts > 1 {
		detail += fmt.Sprintf("; aimed and clicked %d times", attempts)
	}
	e := newError(op, ErrClickMissed, detail)
	e.Session, e.Tab = x.t.s.id, x.t.id
	if r.gone {
		e.Hint = "the page navigated or the frame was removed during the click: take a new snapshot to see whether the click took effect before clicking again"
	}
	return e
}

// fillJS focuses an editable element and selects its content, and says
// what kind of element it is and whether its content is a secret.
const fillJS = `function() {
	const el = this, tag = el.tagName, type = (el.type || '').toLowerCase();
	const ac = (el.getAttribute && el.getAttribute('autocomplete')) || '';
	const secret = type === 'password' || /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
	let kind = 'other';
	if (tag === 'TEXTAREA') kind = 'text';
	else if (tag === 'INPUT') kind = ['checkbox', 'radio', 'file', 'submit', 'button', 'reset', 'image', 'range', 'color', 'hidden'].includes(type) ? type : 'text';
	else if (el.isContentEditable) kind = 'editable';
	else if (tag === 'SELECT') kind = 'select';
	if (kind !== 'text' && kind !== 'editable') return {kind, secret};
	if (el.disabled) return {kind: 'disabled', secret};
	if (el.readOnly) return {kind: 'readonly', secret};
	el.focus();
	if (kind === 'text') {
		try { el.select(); } catch (e) {}
		try { el.setSelectionRange(0, el.value.length); } catch (e) {}
	} else {
		const r = document.createRange();
		r.selectNodeContents(el);
		const s = getSelection();
		s.removeAllRanges();
		s.addRange(r);
	}
	return {kind, secret};
}`

// fillDoneJS makes sure the value is v (through the prototype's setter,
// which frameworks' value trackers do not see, if typing did not get it
// there) and fires input and change.
const fillDoneJS = `function(v) {
	const el = this;
	if ('value' in el && el.value !== v) {
		const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, v);
	}
	el.dispatchEvent(new Event('input', {bubbles: true}));
	el.dispatchEvent(new Event('change', {bubbles: true}));
	return 'value' in el ? el.value === v : true;
}`

// Fill replaces the content of the text field (input, textarea or
// contenteditable element) a ref names with value, the way React and Vue
// notice: it focuses the field, selects its content, types value over it
// (an empty value deletes it), then fires input and change. Text filled
// into password and one-time-code fields never reaches the trace.
func (t *Tab) Fill(ctx context.Context, ref, value string) error {
	const op = "Tab.Fill"
	return t.onRef(ctx, op, "fill", ref, "(value withheld)", func(ctx context.Context, x *tabExt, tg refTarget, args *string) error {
		if err := rpcc.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", struct {
			Backend dom.BackendNodeID `json:"backendNodeId"`
		}{tg.node}, nil, tg.f.conn); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		var info struct {
			Kind   string `json:"kind"`
			Secret bool   `json:"secret"`
		}
		if err := x.callOn(ctx, op, tg.f, tg.node, fillJS, nil, &info); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		if info.Secret {
			*args = ref + " " + tg.role + " " + axtext.Quote(tg.name) + " ***"
		} else {
			*args = ref + " " + tg.role + " " + axtext.Quote(tg.name) + " " + axtext.Quote(value)
		}
		switch info.Kind {
		case "text", "editable":
		case "select":
			return x.badTarget(op, ref, tg, "a select box", "use Tab.Select to choose its option")
		case "checkbox", "radio":
			return x.badTarget(op, ref, tg, "a "+info.Kind, "use Tab.Click to toggle it")
		case "file":
			return x.badTarget(op, ref, tg, "a file input", "use Tab.Upload to choose files")
		case "disabled", "readonly":
			return x.badTarget(op, ref, tg, info.Kind, "it cannot be edited now; take a new snapshot to see when it is enabled")
		default:
			return x.badTarget(op, ref, tg, "not a text field", "fill a textbox, searchbox or editable element; click buttons with Tab.Click")
		}
		if value == "" {
			events, _ := kb.Events("Delete")
			for _, ev := range events {
				if err := x.key(ctx, ev); err != nil {
					return x.fail(op, ctx, ref, err)
				}
			}
		} else if err := x.insertText(ctx, tg.f, value); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		var ok bool
		if err := x.callOn(ctx, op, tg.f, tg.node, fillDoneJS, []any{value}, &ok); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		if !ok {
			e := newError(op, ErrInvalidArgument, ref+" did not take the whole value (a maxlength, pattern or input type may limit it)")
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "take a new snapshot to see the field's value, and fill a value the field accepts"
			return e
		}
		return nil
	})
}

func (x *tabExt) badTarget(op, ref string, tg refTarget, what, hint string) error {
	e := newError(op, ErrInvalidArgument, fmt.Sprintf("%s (%s %s) is %s", ref, tg.role, axtext.Quote(tg.name), what))
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Hint = hint
	return e
}

// insertText types text into the focused element of frame f's page.
// Keyboard input goes to the page's focused frame, so the tab's own session
// carries it.
func (x *tabExt) insertText(ctx context.Context, f *frameSess, text string) error {
	return x.t.client.Input.InsertText(ctx, input.NewInsertTextArgs(text))
}

// secretFocusJS says whether the focused element holds a secret (or is an
// iframe, whose focused element cannot be seen from here).
const secretFocusJS = `(() => {
	let a = document.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	if (!a) return false;
	if (a.tagName === 'IFRAME' || a.tagName === 'FRAME') return true;
	const ac = (a.getAttribute && a.getAttribute('autocomplete')) || '';
	return (a.type || '').toLowerCase() === 'password' || /(^|\s)(current-password|new-password|one-time-code|cc-number|cc-csc)(\s|$)/.test(ac);
})()`

// Type types text into the focused element, as one insertion (no key
// events). Text typed into a password or one-time-code field, or into an
// iframe, never reaches the trace.
func (t *Tab) Type(ctx context.Context, text string) error {
	const op = "Tab.Type"
	return t.act(ctx, op, "type", "(text withheld)", func(ctx context.Context, x *tabExt, args *string) error {
		var secret bool
		reply, err := t.client.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(secretFocusJS).SetReturnByValue(true))
		if err == nil && reply.ExceptionDetails == nil && reply.Result.Value != nil {
			err = json.Unmarshal(reply.Result.Value, &secret)
		}
		if err == nil && !secret {
			*args = axtext.Quote(text)
		} else {
			*args = "***"
		}
		if err := x.insertText(ctx, x.refs.top, text); err != nil {
			return x.fail(op, ctx, "", err)
		}
		return nil
	})
}

// Press presses a key or a chord on the focused element, with the key
// codes of a US keyboard: "Enter", "Tab", "Escape", "ArrowDown", "a", "A",
// "F5", "Control+A", "Shift+Tab", "Control+Shift+K", "Meta+Enter". Key
// names are those of KeyboardEvent.key; modifiers are Control (Ctrl), Shift,
// Alt (Option) and Meta (Cmd, Command).
func (t *Tab) Press(ctx context.Context, keys string) (err error) {
	const op = "Tab.Press"
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	defer x.record("press", keys, time.Now(), &err)
	events, perr := kb.Events(keys)
	if perr != "" {
		e := newError(op, ErrInvalidArgument, perr)
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = `name keys as KeyboardEvent.key does ("Enter", "ArrowDown", "a") and join modifiers with "+" ("Control+Shift+K")`
		return e
	}
	if err := x.dialogErr(op); err != nil {
		return err
	}
	ctx, done := x.guard(ctx)
	defer done()
	for _, ev := range events {
		if err := x.key(ctx, ev); err != nil {
			return x.fail(op, ctx, "", err)
		}
	}
	return nil
}

func (x *tabExt) key(ctx context.Context, ev *input.DispatchKeyEventArgs) error {
	return x.t.client.Input.DispatchKeyEvent(ctx, ev)
}

// ScrollOptions says where and how far Tab.Scroll scrolls. The zero value
// scrolls nothing.
type ScrollOptions struct {
	// DeltaX and DeltaY are how far to scroll, in CSS pixels; positive
	// scrolls right and down.
	DeltaX, DeltaY float64
	// Ref, if set, scrolls the element's own scroll container (the mouse
	// wheel turns over the element). Otherwise the wheel turns at X, Y, or
	// at the centre of the viewport when both are zero.
	Ref  string
	X, Y float64
}

// Scroll turns the mouse wheel. The page scrolls asynchronously: read the
// new position with Tab.PageInfo or wait for it with Tab.WaitCondition.
func (t *Tab) Scroll(ctx context.Context, opts ScrollOptions) error {
	const op = "Tab.Scroll"
	args := fmt.Sprintf("dx=%g dy=%g ref=%s at=%g,%g", opts.DeltaX, opts.DeltaY, opts.Ref, opts.X, opts.Y)
	return t.act(ctx, op, "scroll", args, func(ctx context.Context, x *tabExt, _ *string) error {
		px, py := opts.X, opts.Y
		switch {
		case opts.Ref != "":
			tg, err := x.resolve(ctx, op, opts.Ref)
			if err != nil {
				return err
			}
			if px, py, err = x.point(ctx, op, opts.Ref, tg, false); err != nil {
				return err
			}
		case px == 0 && py == 0:
			lm, err := layoutMetrics(ctx, t.conn)
			if err != nil {
				return x.fail(op, ctx, "", err)
			}
			px, py = lm.VP.W/2, lm.VP.H/2
		}
		if err := x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseWheel", px, py).SetDeltaX(opts.DeltaX).SetDeltaY(opts.DeltaY)); err != nil {
			return x.fail(op, ctx, opts.Ref, err)
		}
		return nil
	})
}

// selectJS chooses the options matching vals (by value, else by label).
const selectJS = `function(vals) {
	const el = this;
	if (el.tagName !== 'SELECT') return {err: 'not-select'};
	if (el.disabled) return {err: 'disabled'};
	const opts = Array.from(el.options), pick = [];
	const norm = s => s.replace(/\s+/g, ' ').trim();
	for (const v of vals) {
		const o = opts.find(o => o.value === v) || opts.find(o => norm(o.label) === norm(v)) || opts.find(o => norm(o.textContent) === norm(v));
		if (!o) return {err: 'missing', missing: v, options: opts.slice(0, 30).map(o => norm(o.label) || o.value)};
		if (o.disabled) return {err: 'option-disabled', missing: v};
		pick.push(o);
	}
	if (!el.multiple && pick.length !== 1) return {err: 'single'};
	el.focus();
	for (const o of opts) o.selected = pick.includes(o);
	el.dispatchEvent(new Event('input', {bubbles: true}));
	el.dispatchEvent(new Event('change', {bubbles: true}));
	return {selected: Array.from(el.selectedOptions).map(o => o.value)};
}`

// Select chooses options of the select box a ref names, by value or else by
// visible label, fires input and change, and returns the values now
// selected. A single select takes exactly one value.
func (t *Tab) Select(ctx context.Context, ref string, values ...string) (selected []string, err error) {
	const op = "Tab.Select"
	err = t.onRef(ctx, op, "select", ref, strings.Join(values, ", "), func(ctx context.Context, x *tabExt, tg refTarget, _ *string) error {
		if values == nil {
			values = []string{}
		}
		var res struct {
			Err      string   `json:"err"`
			Missing  string   `json:"missing"`
			Options  []string `json:"options"`
			Selected []string `json:"selected"`
		}
		if err := x.callOn(ctx, op, tg.f, tg.node, selectJS, []any{values}, &res); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		switch res.Err {
		case "":
			selected = res.Selected
			return nil
		case "not-select":
			return x.badTarget(op, ref, tg, "not a select box", "for a custom dropdown, click it open with Tab.Click, take a snapshot, and click the option")
		case "disabled":
			return x.badTarget(op, ref, tg, "disabled", "it cannot be changed now")
		case "missing":
			return x.badTarget(op, ref, tg, fmt.Sprintf("without an option %q; its options: %s", res.Missing, strings.Join(res.Options, ", ")), "pass one of the listed values or labels")
		case "option-disabled":
			return x.badTarget(op, ref, tg, fmt.Sprintf("a select whose option %q is disabled", res.Missing), "choose an enabled option")
		default:
			return x.badTarget(op, ref, tg, "a single select", "pass exactly one value")
		}
	})
	return selected, err
}

// Upload sets the files of the file input a ref names, as if the user
// chose them, and fires its input and change events. Paths must be
// absolute and name existing regular files; several files need an input
// with the multiple attribute.
func (t *Tab) Upload(ctx context.Context, ref string, paths ...string) (err error) {
	const op = "Tab.Upload"
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	start := time.Now()
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	defer x.record("upload", ref+" "+strings.Join(names, ", "), start, &err)
	bad := func(detail, hint string) error {
		e := newError(op, ErrInvalidArgument, detail)
		e.Session, e.Tab, e.Hint = t.s.id, t.id, hint
		return e
	}
	if len(paths) == 0 {
		return bad("no file given", "pass the absolute paths of the files to upload")
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return bad(fmt.Sprintf("%q is not an absolute path", p), "pass absolute paths; relative ones would depend on the process's working directory")
		}
		fi, err := os.Stat(p)
		if err != nil {
			return bad(fmt.Sprintf("%q does not exist or cannot be read", p), "check the path")
		}
		if !fi.Mode().IsRegular() {
			return bad(fmt.Sprintf("%q is not a regular file", p), "pass files, not directories")
		}
	}
	tg, err := x.resolve(ctx, op, ref)
	if err != nil {
		return err
	}
	if err := x.dialogErr(op); err != nil {
		return err
	}
	ctx, done := x.guard(ctx)
	defer done()
	var desc struct {
		Node struct {
			NodeName   string   `json:"nodeName"`
			Attributes []string `json:"attributes"`
		} `json:"node"`
	}
	if err := rpcc.Invoke(ctx, "DOM.describeNode", struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
	}{tg.node}, &desc, tg.f.conn); err != nil {
		return x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	attrs := map[string]string{}
	for i := 0; i+1 < len(desc.Node.Attributes); i += 2 {
		attrs[strings.ToLower(desc.Node.Attributes[i])] = desc.Node.Attributes[i+1]
	}
	_, multiple := attrs["multiple"]
	switch {
	case desc.Node.NodeName != "INPUT" || !strings.EqualFold(attrs["type"], "file"):
		return x.badTarget(op, ref, tg, "not a file input", "take a snapshot and use the ref of the file input (often a button labelled Choose File or Browse)")
	case len(paths) > 1 && !multiple:
		return x.badTarget(op, ref, tg, "a file input that takes one file", "pass one path")
	}
	if err := tg.f.client.DOM.SetFileInputFiles(ctx, dom.NewSetFileInputFilesArgs(paths).SetBackendNodeID(tg.node)); err != nil {
		return x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	return nil
}
