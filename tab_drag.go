// Room: drag and drop (Tab.Drag). dragState.mu guards the drag data the
// browser intercepted and the channel that tells of its coming; it
// arrives on the mux's reader through the tab's tap (Tab.onEvent ->
// tabExt.onToolEvent). No CDP call is made with the lock held.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// dragSteps is how many mouse moves carry a drag from its source to its
// target (pages that follow the mouse see a path, not a jump).
const dragSteps = 5

// ErrDragNotStarted: Drag's press did not reach the source, or the browser
// started no drag from a source it drags itself (a draggable element, an
// image, a link): the page moved or hid it as it was pressed. Nothing was
// dropped. The detail says what got the press. Returned by Drag and DragTo.
var ErrDragNotStarted = errors.New("the drag did not start")

// dragStartMove is how far the first move of a drag goes from the press,
// in CSS pixels along each axis, before the target is aimed at: Chromium
// starts an HTML5 drag once the mouse is 4 pixels from the press along
// either axis, and a move of 3.9 starts none (measured in Chromium 156, at
// device scale factors 0.5, 1 and 2 alike). The drag must start before
// aiming at the target scrolls the page: Chromium starts no drag whose
// source has moved from under the point it was pressed at.
const dragStartMove = 5

// dragSettleMoves bounds the extra moves over the target that wait for
// the browser to report an HTML5 drag it started, when nothing watched the
// source's document (its report and the move's reply travel separately).
const dragSettleMoves = 3

// dragInterceptWait bounds the wait for Input.dragIntercepted once the
// source's document has seen a dragstart it did not cancel: the browser
// reports the drag's data a moment after (it comes on its own, apart from
// the reply to the move that started it).
const dragInterceptWait = 5 * time.Second

// dragEndWait bounds ending an intercepted drag in its source's frame
// (endSource), even once the caller's context has ended: a frame left in
// a drag takes no mouse press.
const dragEndWait = 2 * time.Second

// dragState holds the data of an HTML5 drag the browser intercepted.
type dragState struct {
	mu   sync.Mutex
	data json.RawMessage // guarded by mu; Input.dragIntercepted's data, until taken
	came chan struct{}   // guarded by mu (made on first use); a token when data arrives
}

// intercepted records Input.dragIntercepted (on the mux's reader).
func (d *dragState) intercepted(params json.RawMessage) {
	var ev struct {
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &ev) != nil || len(ev.Data) == 0 {
		return
	}
	d.mu.Lock()
	d.data = ev.Data
	came := d.cameLocked()
	d.mu.Unlock()
	select {
	case came <- struct{}{}:
	default:
	}
}

func (d *dragState) cameLocked() chan struct{} {
	if d.came == nil {
		d.came = make(chan struct{}, 1)
	}
	return d.came
}

// take returns and forgets the intercepted drag data (nil if none).
func (d *dragState) take() json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	data := d.data
	d.data = nil
	return data
}

// wait is take, waiting up to within (or until ctx ends) for the data to
// come.
func (d *dragState) wait(ctx context.Context, within time.Duration) json.RawMessage {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		d.mu.Lock()
		data, came := d.data, d.cameLocked()
		d.data = nil
		d.mu.Unlock()
		if data != nil {
			return data
		}
		select {
		case <-came: // this drag's data, or a token an earlier drag left
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// dragReport is what the source's document saw of a drag's press and
// first move.
type dragReport struct {
	Draggable bool   `json:"draggable"` // the browser drags the source itself
	Pressed   bool   `json:"pressed"`   // the document got a mousedown
	Reached   bool   `json:"reached"`   // the mousedown reached the source
	PressOn   string `json:"pressOn"`   // what got the mousedown instead
	Handled   bool   `json:"handled"`   // the page prevented the mousedown: it drags with the mouse itself
	Started   bool   `json:"started"`   // a dragstart was fired
	Cancelled bool   `json:"cancelled"` // the page cancelled the dragstart
}

// Drag drags the element fromRef names onto the element toRef names (refs
// from the latest Tab.Snapshot) with real pointer input, as a user would:
// it presses the left button on the source (after Click's checks), moves
// the mouse in steps to the centre of the target, and releases it there.
// It works for both kinds of drag a page may implement:
//
//   - HTML5 drag and drop (draggable elements, dragstart/dragover/drop
//     listeners): the browser's drag is intercepted and replayed onto the
//     target (Input.setInterceptDrags and Input.dispatchDragEvent, the
//     way Chromium's own automation does it), so the page's drop listener
//     gets the drag's dataTransfer;
//   - drags built on mouse or pointer events (sliders, sortable lists):
//     the page sees mousedown, mousemoves and mouseup.
//
// A ref that is unknown or old is an ErrStaleRef error, one without a
// visible box ErrNotVisible. A covered source, or a target something
// covers before the drag starts (an overlay a drop would land on), is an
// ErrCovered error naming what covers it, and nothing is pressed. A press
// that does not reach the source, or a source the browser would drag (a
// draggable element, an image, a link) from which it starts no drag (the
// page moved or hid it as it was pressed), is an ErrDragNotStarted error
// and nothing is dropped; a page that takes the press itself (it prevents
// the mousedown or the dragstart) gets a drag of mouse events. The page
// decides what a drop does: check the result with a snapshot.
//
// Source and target may be in different frames, of the same site or not.
// An HTML5 drag between a frame of another site (a process of its own)
// and the page around it ends in both: the target gets the drop and the
// source its dragend, whose dataTransfer.dropEffect is then "none" (the
// browser tells a source in another process no drop's outcome). If the
// browser will not end the drag in the source's frame, which would then
// ignore the mouse, Drag says so with an ErrProtocol (or ErrTimeout) error
// saying the drop was made.
func (t *Tab) Drag(ctx context.Context, fromRef, toRef string) error {
	const op = "Tab.Drag"
	return t.inputOnRef(ctx, op, "drag", fromRef, "to "+toRef, func(ctx context.Context, x *tabExt, from refTarget, args *string) error {
		to, err := x.resolve(ctx, op, toRef)
		if err != nil {
			return err
		}
		*args = fromRef + " " + from.role + " " + axtext.Quote(from.name) + " to " + toRef + " " + to.role + " " + axtext.Quote(to.name)
		// What covers the target now would get the drop: say so before
		// pressing. Once the drag has started the target is aimed at
		// without this check: what the page shows over it while dragging
		// (a drop overlay, the dragged element) is the page's own.
		if _, _, err := x.point(ctx, op, toRef, to, true); err != nil {
			if errors.Is(err, ErrCovered) {
				return retag(err, func(e *Error) {
					e.Detail = "the drop target " + e.Detail + ", which would get the drop; nothing was dragged"
				})
			}
			return err
		}
		return x.dragFrom(ctx, op, fromRef, from, toRef, to.f, func() (float64, float64, error) {
			return x.point(ctx, op, toRef, to, false)
		}, args)
	})
}

// DragTo drags the element fromRef names to a point of the viewport, in
// CSS pixels from its top left corner, as Drag does onto an element: for
// a drop zone the snapshot gives no ref (an empty column of a board). The
// point is the viewport's once the source is in view (DragTo scrolls it
// into view first, if it is not).
func (t *Tab) DragTo(ctx context.Context, fromRef string, px, py float64) error {
	const op = "Tab.DragTo"
	at := fmt.Sprintf("%g,%g", px, py)
	return t.inputOnRef(ctx, op, "drag", fromRef, "to "+at, func(ctx context.Context, x *tabExt, from refTarget, args *string) error {
		if err := x.checkPoint(op, px, py); err != nil {
			return err
		}
		return x.dragFrom(ctx, op, fromRef, from, "", nil, func() (float64, float64, error) { return px, py, nil }, args)
	})
}

// dragFrom is a drag of from (fromRef) to the point aim gives, asked once
// the drag has started (see Drag); toRef names the target in errors, and
// toF is its frame's session (nil for a point).
func (x *tabExt) dragFrom(ctx context.Context, op, fromRef string, from refTarget, toRef string, toF *frameSess, aim func() (float64, float64, error), args *string) error {
	t := x.t
	fx, fy, err := x.point(ctx, op, fromRef, from, true)
	if err != nil {
		return err
	}
	if err := t.direct.Invoke(ctx, "Input.setInterceptDrags", input.NewSetInterceptDragsArgs(true), nil); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	x.drag.take() // a leftover of an earlier drag
	group := x.newGroup()
	watch := ""
	pressed := false
	var data json.RawMessage // the intercepted drag, until its source has ended it
	defer func() {
		// Whatever happened, leave no button down, no drag intercepted
		// or unended and no watch armed, within 2 seconds even if ctx has
		// ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if late := x.drag.take(); data == nil {
			data = late
		}
		if data != nil {
			x.endSource(cctx, from.f, fx, fy, data)
		}
		if pressed {
			x.release(cctx, fx, fy)
		}
		t.direct.Invoke(cctx, "Input.setInterceptDrags", input.NewSetInterceptDragsArgs(false), nil)
		// A dialog the press opened holds the page: calls into it would
		// wait for its answer (a watch's listeners then stay until the
		// document goes, recording nothing anyone reads).
		var dc *dialogCause
		if errors.As(context.Cause(ctx), &dc) {
			return
		}
		if watch != "" {
			x.callFn(cctx, op, from.f, watch, pagejs.ClickDisarm, nil, true)
		}
		releaseGroup(cctx, from.f, group)
	}()
	// A source whose document cannot be watched (no listener of the
	// package's can run there) is dragged as before the watch: the drag
	// is whatever the browser reports.
	if el, err := x.resolveIn(ctx, from.in(), group, from.node); err == nil {
		if w, err := x.callFn(ctx, op, from.f, el[0], pagejs.DragWatchArm, nil, false); err == nil {
			watch = w.ObjectID
		}
	}
	if err := x.press(ctx, fx, fy); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	pressed = true
	// The drag starts here, before the target is aimed at (aiming scrolls
	// the page, and Chromium starts no drag once its source has moved
	// from under the press): away from the viewport's right and bottom
	// edges, by more than the browser's threshold.
	mx, my := fx+dragStartMove, fy+dragStartMove
	if w, h, ok := t.givenViewport(); ok {
		if mx >= w {
			mx = fx - dragStartMove
		}
		if my >= h {
			my = fy - dragStartMove
		}
	}
	if err := x.dragMove(ctx, mx, my); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	watched := false
	if watch != "" {
		var rep dragReport
		res, err := x.callFn(ctx, op, from.f, watch, pagejs.DragWatchRead, nil, true)
		if err != nil {
			return x.fail(op, ctx, fromRef, err)
		}
		watch = "" // disarmed
		if err := json.Unmarshal(res.Value, &rep); err != nil {
			return x.fail(op, ctx, fromRef, err)
		}
		watched = true
		if err := x.dragNotStarted(op, fromRef, from, rep, fx, fy); err != nil {
			return err
		}
		if rep.Started && !rep.Cancelled {
			if data = x.drag.wait(ctx, dragInterceptWait); data == nil {
				if ctx.Err() != nil {
					return x.fail(op, ctx, fromRef, context.Cause(ctx))
				}
				e := newError(op, ErrDragNotStarted, fmt.Sprintf("the page let the drag of %s (%s %s) start (its dragstart was not cancelled), but the browser reported no drag within %v; nothing was dropped", fromRef, from.role, axtext.Quote(from.name), dragInterceptWait))
				e.Session, e.Tab = t.s.id, t.id
				e.Hint = "take a new snapshot and drag again; if it keeps failing, the browser is too busy to answer: retry later"
				return e
			}
		}
	}
	tx, ty, err := aim()
	if err != nil {
		return err
	}
	// An HTML5 drag sends the page no mouse moves (drag events instead),
	// so only a drag of mouse events is carried there in steps.
	for i := 1; i <= dragSteps && data == nil; i++ {
		f := float64(i) / dragSteps
		if err := x.dragMove(ctx, mx+(tx-mx)*f, my+(ty-my)*f); err != nil {
			return x.fail(op, ctx, toRef, err)
		}
		if !watched {
			data = x.drag.take()
		}
	}
	if data == nil && !watched && x.dragStarted(ctx) {
		data = x.drag.take()
	}
	html5 := data != nil
	if html5 {
		elsewhere := x.dropLeavesSource(ctx, from.f, toF, tx, ty)
		for _, typ := range []string{"dragEnter", "dragOver", "drop"} {
			if err := x.dispatchDrag(ctx, t.direct, typ, tx, ty, data); err != nil {
				return x.fail(op, ctx, toRef, err)
			}
		}
		// The browser ends a drop's drag in the frame the drop lands in;
		// a source in another process (a frame of another site, or the
		// page around one) never hears of it and ignores the mouse from
		// then on, taking no click: end it there too. Within its own
		// bound, so that a caller's deadline does not leave it undone.
		var err error
		if elsewhere {
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dragEndWait)
			err = x.endSource(ectx, from.f, fx, fy, data)
			cancel()
		}
		if err != nil && from.f.live() {
			class := ErrProtocol
			if errors.Is(err, context.DeadlineExceeded) {
				class = ErrTimeout
			}
			e := newError(op, class, fmt.Sprintf("%s (%s %s) was dropped on %s, but the drag could not be ended in the frame it started from, which takes no mouse press until it is", fromRef, from.role, axtext.Quote(from.name), dropName(toRef, tx, ty)))
			e.Session, e.Tab, e.Err = t.s.id, t.id, err
			e.Hint = "take a snapshot to see what the drop did; if a click in that frame then does nothing, reload the page (Tab.Reload) and take a new snapshot before acting there"
			return e // the deferred end tries once more, and the release lets go of the button
		}
		data = nil // ended
	}
	if err := x.release(ctx, tx, ty); err != nil {
		return x.fail(op, ctx, toRef, err)
	}
	pressed = false
	if html5 {
		*args += " (html5)"
	}
	return nil
}

// endSource ends an intercepted drag in the frame of its source, f, as a
// cancelled one (the source's dragend says dropEffect "none"): a drag not
// dropped, or dropped in another process (see dropLeavesSource), where
// Chromium's Input.dispatchDragEvent ends it in the widget at the drop
// point, not in the one it started from. A widget whose drag is not ended
// drops every mouse event from then on. The point (px, py) is the press,
// in the tab's viewport: a frame of another site reads it in its own,
// which moves only where its dragend says the mouse was.
func (x *tabExt) endSource(ctx context.Context, f *frameSess, px, py float64, data json.RawMessage) error {
	return x.dispatchDrag(ctx, f.d, "dragCancel", px, py, data)
}

// dropLeavesSource reports whether a drop at (px, py) of the viewport,
// onto a target in the frame of session to (nil for a point of DragTo),
// lands in another process than its source's, in the frame of session
// src: one session is one process's part of the page, and Chromium ends
// the drag only in the part the drop lands in. Ending it in the source's
// part as well when the drop landed there fires a second dragend (if the
// drop was in another frame of it), so a drop known to be there is left
// alone; one that may be elsewhere is not.
func (x *tabExt) dropLeavesSource(ctx context.Context, src, to *frameSess, px, py float64) bool {
	switch {
	case to != nil:
		return to != src
	case src.own:
		return true // where in the source's frame the point is is not known
	}
	// A point of the top page: the browser's hit test there goes into
	// the frames of its process, and stops at the element holding a frame
	// of another.
	m, err := layoutMetrics(ctx, src.d)
	if err != nil {
		return true
	}
	node, err := nodeAt(ctx, src, px+m.VP.PageX, py+m.VP.PageY)
	if err != nil {
		return true
	}
	var desc struct {
		Node struct {
			Name string `json:"nodeName"`
		} `json:"node"`
	}
	if src.d.Invoke(ctx, "DOM.describeNode", nodeArgs(node), &desc) != nil {
		return true
	}
	switch desc.Node.Name {
	case "IFRAME", "FRAME", "FENCEDFRAME", "OBJECT", "EMBED":
		return true
	}
	return false
}

// dropName names a drop target in errors: its ref, or the point of a
// DragTo.
func dropName(toRef string, px, py float64) string {
	if toRef != "" {
		return toRef
	}
	return fmt.Sprintf("(%.0f, %.0f)", px, py)
}

// dragNotStarted is the error of a drag whose press, at (px, py), and first
// move the source's document reported in rep: a press that reached
// another element or none of its document, or a source the browser drags
// itself from which it started no drag, though the page left the press and
// the dragstart to it. It is nil for a drag that can go on.
func (x *tabExt) dragNotStarted(op, ref string, tg refTarget, rep dragReport, px, py float64) error {
	var detail string
	switch el := fmt.Sprintf("%s (%s %s)", ref, tg.role, axtext.Quote(tg.name)); {
	case rep.Started:
		return nil
	case !rep.Pressed:
		detail = fmt.Sprintf("the press at (%.0f, %.0f) to drag %s reached nothing of its document (the page moved, or the browser had not yet placed its frame where it is shown)", px, py, el)
	case !rep.Reached:
		detail = fmt.Sprintf("the press at (%.0f, %.0f) to drag %s reached %s instead", px, py, el, rep.PressOn)
	case rep.Draggable && !rep.Handled:
		detail = fmt.Sprintf("no drag started from %s, which is draggable: it got the press at (%.0f, %.0f) and a move of %d px, but the browser fired no dragstart (it starts none once the element has left the point pressed: the page moved or hid it as it was pressed)", el, px, py, dragStartMove)
	default:
		return nil // a drag of mouse events, which the page took
	}
	e := newError(op, ErrDragNotStarted, detail+"; nothing was dropped")
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Hint = "take a new snapshot once the page has settled and drag again; if the page moves the element when it is pressed, drag what it shows in its place"
	return e
}

// dragStarted reports whether the browser reports an intercepted HTML5
// drag within a few more moves; the data stays for take.
func (x *tabExt) dragStarted(ctx context.Context) bool {
	x.input.mu.Lock()
	mx, my := x.input.x, x.input.y
	x.input.mu.Unlock()
	for i := range dragSettleMoves {
		x.drag.mu.Lock()
		got := x.drag.data != nil
		x.drag.mu.Unlock()
		if got {
			return true
		}
		// Each move is answered after the page's next frame: a drag the
		// browser started has been reported by then.
		if x.dragMove(ctx, mx+float64(i%2), my) != nil {
			return false
		}
	}
	x.drag.mu.Lock()
	defer x.drag.mu.Unlock()
	return x.drag.data != nil
}

// dragMove moves the mouse with the left button held.
func (x *tabExt) dragMove(ctx context.Context, px, py float64) error {
	return x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", px, py).
		SetButton(input.MouseButtonLeft).SetButtons(1))
}

// dispatchDrag sends one drag event of an intercepted drag on session d:
// the tab's own for the drag's way to its target (the browser sends each
// event to the frame at its point).
func (x *tabExt) dispatchDrag(ctx context.Context, d *cdpmux.Direct, typ string, px, py float64, data json.RawMessage) error {
	a := struct {
		Type string          `json:"type"`
		X    float64         `json:"x"`
		Y    float64         `json:"y"`
		Data json.RawMessage `json:"data"`
	}{typ, px, py, data}
	return d.Invoke(ctx, "Input.dispatchDragEvent", &a, nil)
}
