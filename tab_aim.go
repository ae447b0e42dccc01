// Room: aiming and hit testing: where an element's visible box is in the
// viewport, and whether it is what a click there would hit. No lock: it
// reads the page, and the refs through refTable (which locks itself).

package browserpool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mafredri/cdp/protocol/dom"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// quads is DOM.getContentQuads's reply.
type quads struct {
	Quads [][]float64 `json:"quads"`
}

// nodeArgs is the params of a DOM call on one node by its backend id.
func nodeArgs(id dom.BackendNodeID) any {
	return struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
	}{id}
}

// inView scrolls each out-of-process iframe of tg into view in its parent,
// then the element in its frame, and returns the element's content quads
// (in its frame's viewport), each iframe's content-box offset in its
// parent, and their sum: the quads plus (ox, oy) are in the top frame's
// viewport. Both aiming (point) and element screenshots (elementClip) start
// here.
func (x *tabExt) inView(ctx context.Context, op, ref string, tg refTarget) (q quads, offsets [][2]float64, ox, oy float64, err error) {
	for _, h := range tg.chain {
		if err := h.parent.d.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", nodeArgs(h.owner), nil); err != nil {
			return q, nil, 0, 0, x.fail(op, ctx, ref, frameErr(h.parent, err))
		}
	}
	if err := tg.f.d.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", nodeArgs(tg.node), nil); err != nil {
		return q, nil, 0, 0, x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	x.framesDrawn(ctx, op, tg)
	if err := tg.f.d.Invoke(ctx, "DOM.getContentQuads", nodeArgs(tg.node), &q); err != nil {
		return q, nil, 0, 0, x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	offsets = make([][2]float64, len(tg.chain))
	for i, h := range tg.chain {
		var box struct {
			Model struct {
				Content []float64 `json:"content"`
			} `json:"model"`
		}
		if err := h.parent.d.Invoke(ctx, "DOM.getBoxModel", nodeArgs(h.owner), &box); err != nil {
			return q, nil, 0, 0, x.fail(op, ctx, ref, frameErr(h.parent, err))
		}
		if len(box.Model.Content) < 2 {
			return q, nil, 0, 0, x.notVisible(op, ref, "its frame has no box")
		}
		offsets[i] = [2]float64{box.Model.Content[0], box.Model.Content[1]}
		ox += box.Model.Content[0]
		oy += box.Model.Content[1]
	}
	return q, offsets, ox, oy, nil
}

// point scrolls the target into view and returns the centre of its
// visible box in the viewport's CSS pixels. With hit set it also checks
// that the element (or a descendant) is what is at that point; if
// something covers it there, it scrolls the element to the middle of its
// viewport and aims once more, which takes it out from under a sticky
// header or a fixed bar (the browser's "into view" leaves an element under
// them).
func (x *tabExt) point(ctx context.Context, op, ref string, tg refTarget, hit bool) (float64, float64, error) {
	px, py, err := x.aim(ctx, op, ref, tg, hit)
	if !hit || !errors.Is(err, ErrCovered) {
		return px, py, err
	}
	if x.callOn(ctx, op, tg.in(), tg.node, pagejs.ScrollCenter, nil, nil) != nil {
		return px, py, err
	}
	cx, cy, cerr := x.aim(ctx, op, ref, tg, hit)
	if cerr == nil || errors.Is(cerr, ErrCovered) {
		return cx, cy, cerr // what covers it where it is now
	}
	return px, py, err
}

// aim is one aim of point.
func (x *tabExt) aim(ctx context.Context, op, ref string, tg refTarget, hit bool) (float64, float64, error) {
	q, offsets, ox, oy, err := x.inView(ctx, op, ref, tg)
	if err != nil {
		return 0, 0, err
	}
	lm, err := layoutMetrics(ctx, x.t.direct)
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
			if x.discarded(ctx, ref) {
				// Removed since the snapshot (a list that re-renders its
				// rows as it scrolls), not hidden.
				e := newError(op, ErrStaleRef, ref+" is gone from the page (removed, or its frame navigated)")
				e.Session, e.Tab = x.t.s.id, x.t.id
				return 0, 0, e
			}
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
			return x.covered(ctx, op, ref, tg, where{f: h.parent, frame: h.frame}, h.owner, got, px, py)
		}
		lx, ly = lx-offsets[i][0], ly-offsets[i][1]
		f := tg.f
		if i+1 < len(tg.chain) {
			f = tg.chain[i+1].parent
		}
		m, err := layoutMetrics(ctx, f.d)
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
	return x.covered(ctx, op, ref, tg, tg.in(), tg.node, got, px, py)
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

func layoutMetrics(ctx context.Context, d *cdpmux.Direct) (metrics, error) {
	var m metrics
	err := d.Invoke(ctx, "Page.getLayoutMetrics", nil, &m)
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
	err := f.d.Invoke(ctx, "DOM.getNodeForLocation", &args, &reply)
	return reply.Backend, err
}

// covered reports that got, not want, is at the click point of ref,
// unless got is part of want.
func (x *tabExt) covered(ctx context.Context, op, ref string, tg refTarget, w where, want, got dom.BackendNodeID, px, py float64) error {
	f := w.f
	var res struct {
		OK      bool   `json:"ok"`
		Visible bool   `json:"visible"`
		Inert   bool   `json:"inert"`
		Cover   string `json:"cover"`
	}
	if err := x.callOn(ctx, op, w, want, pagejs.Cover, []any{nodeArg(got)}, &res); err != nil {
		return x.fail(op, ctx, ref, frameErr(f, err))
	}
	if res.OK {
		return nil
	}
	if !res.Visible {
		return x.notVisible(op, ref, "it is hidden (visibility: hidden or content-visibility)")
	}
	if res.Inert {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%s (%s %s) takes no pointer input (pointer-events: none): a click at (%.0f, %.0f) reaches %s under it", ref, tg.role, axtext.Quote(tg.name), px, py, cmp.Or(res.Cover, "the element under it")))
		e.Session, e.Tab = x.t.s.id, x.t.id
		e.Hint = "the page does not let it be clicked now (often while it is disabled or loading): take a new snapshot, or click what the page offers instead"
		return e
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

// aimLabel is the way to a form control the page keeps from the pointer
// with its own drawing: a checkbox, radio or file input made sr-only,
// zero-size, clipped or pointer-events:none, or drawn over, under a styled
// label. When aiming at the control failed (aimErr: not visible, covered,
// or taking no pointer input) and the control has a label on screen, it
// returns the centre of that label's visible box, checked to be the
// label's own: a click there reaches the control as a person's does. If
// something covers that label too, the error names it (what to deal with
// first); otherwise, and for any other element (a covered text field or
// button stays covered), the error is aimErr.
func (x *tabExt) aimLabel(ctx context.Context, op, ref string, tg refTarget, aimErr error) (px, py float64, err error) {
	if !errors.Is(aimErr, ErrNotVisible) && !errors.Is(aimErr, ErrCovered) && !errors.Is(aimErr, ErrInvalidArgument) {
		return 0, 0, aimErr
	}
	group := x.newGroup()
	defer releaseGroup(ctx, tg.f, group)
	el, err := x.resolveIn(ctx, tg.in(), group, tg.node)
	if err != nil {
		return 0, 0, aimErr
	}
	label, err := x.callFn(ctx, op, tg.f, el[0], pagejs.LabelOf, nil, false)
	if err != nil || label.ObjectID == "" {
		return 0, 0, aimErr
	}
	var desc struct {
		Node struct {
			Backend dom.BackendNodeID `json:"backendNodeId"`
		} `json:"node"`
	}
	if err := tg.f.d.Invoke(ctx, "DOM.describeNode", struct {
		ObjectID string `json:"objectId"`
	}{label.ObjectID}, &desc); err != nil || desc.Node.Backend == 0 {
		return 0, 0, aimErr
	}
	lt := tg
	lt.node, lt.role = desc.Node.Backend, "label of the "+tg.role
	px, py, err = x.point(ctx, op, ref, lt, true)
	if errors.Is(err, ErrCovered) {
		return 0, 0, err
	}
	if err != nil {
		return 0, 0, aimErr
	}
	return px, py, nil
}

// framesDrawnWait bounds framesDrawn.
const framesDrawnWait = 500 * time.Millisecond

// framesDrawn waits, when tg is in an out-of-process frame, until the
// pages around that frame have drawn what aiming at tg scrolled. The
// browser sends a mouse or drag event into such a frame by where the page
// around it last drew it: right after a scroll that brought the frame into
// view, it sent the event to that page instead (a hover was lost 5 times
// of 12 and a drop 9 of 12 in a cross-site frame below the fold, in
// Chromium 156; none once the page had drawn twice). The wait is bounded
// and says nothing: an event after a failed wait lands or not, as before.
func (x *tabExt) framesDrawn(ctx context.Context, op string, tg refTarget) {
	if len(tg.chain) == 0 {
		return
	}
	// The page's timers and frames run (the tab is at the front for
	// input), but a page may be throttled: the wait is ours to bound.
	ctx, cancel := context.WithTimeout(ctx, framesDrawnWait)
	defer cancel()
	for _, h := range tg.chain {
		x.callOn(ctx, op, where{f: h.parent, frame: h.frame}, h.owner, pagejs.NextFrames, nil, nil)
	}
}
