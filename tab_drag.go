// Room: drag and drop (Tab.Drag). dragState.mu guards the drag data the
// browser intercepted; it arrives on the mux's reader through
// the tab's tap (Tab.onEvent -> tabExt.onToolEvent). No CDP call is made
// with the lock held.

package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/browserpool/browserpool/internal/axtext"
)

// dragSteps is how many mouse moves carry a drag from its source to its
// target (pages that follow the mouse see a path, not a jump).
const dragSteps = 5

// dragSettleMoves bounds the extra moves over the target that wait for
// the browser to report an HTML5 drag it started (its report and the
// move's reply travel separately).
const dragSettleMoves = 3

// dragState holds the data of an HTML5 drag the browser intercepted.
type dragState struct {
	mu   sync.Mutex
	data json.RawMessage // guarded by mu; Input.dragIntercepted's data, until taken
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
	d.mu.Unlock()
}

// take returns and forgets the intercepted drag data (nil if none).
func (d *dragState) take() json.RawMessage {
	d.mu.Lock()
	defer d.mu.Unlock()
	data := d.data
	d.data = nil
	return data
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
// visible box ErrNotVisible, a covered source ErrCovered. The page
// decides what a drop does: check the result with a snapshot.
func (t *Tab) Drag(ctx context.Context, fromRef, toRef string) error {
	const op = "Tab.Drag"
	return t.inputOnRef(ctx, op, "drag", fromRef, "to "+toRef, func(ctx context.Context, x *tabExt, from refTarget, args *string) error {
		to, err := x.resolve(ctx, op, toRef)
		if err != nil {
			return err
		}
		*args = fromRef + " " + from.role + " " + axtext.Quote(from.name) + " to " + toRef + " " + to.role + " " + axtext.Quote(to.name)
		return x.dragFrom(ctx, op, fromRef, from, toRef, func() (float64, float64, error) {
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
		return x.dragFrom(ctx, op, fromRef, from, "", func() (float64, float64, error) { return px, py, nil }, args)
	})
}

// dragFrom is a drag of from (fromRef) to the point aim gives, asked once
// the drag has started (see Drag); toRef names the target in errors.
func (x *tabExt) dragFrom(ctx context.Context, op, fromRef string, from refTarget, toRef string, aim func() (float64, float64, error), args *string) error {
	t := x.t
	fx, fy, err := x.point(ctx, op, fromRef, from, true)
	if err != nil {
		return err
	}
	if err := t.direct.Invoke(ctx, "Input.setInterceptDrags", input.NewSetInterceptDragsArgs(true), nil); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	x.drag.take() // a leftover of an earlier drag
	pressed := false
	defer func() {
		// Whatever happened, leave no button down and no drag
		// intercepted, within 2 seconds even if ctx has ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if data := x.drag.take(); data != nil {
			x.dispatchDrag(cctx, "dragCancel", fx, fy, data)
		}
		if pressed {
			x.release(cctx, fx, fy)
		}
		t.direct.Invoke(cctx, "Input.setInterceptDrags", input.NewSetInterceptDragsArgs(false), nil)
	}()
	if err := x.press(ctx, fx, fy); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	pressed = true
	// A first small move starts an HTML5 drag before the target is
	// scrolled to (the page may scroll the source away).
	if err := x.dragMove(ctx, fx+3, fy+3); err != nil {
		return x.fail(op, ctx, fromRef, err)
	}
	tx, ty, err := aim()
	if err != nil {
		return err
	}
	var data json.RawMessage
	for i := 1; i <= dragSteps && data == nil; i++ {
		f := float64(i) / dragSteps
		if err := x.dragMove(ctx, fx+(tx-fx)*f, fy+(ty-fy)*f); err != nil {
			return x.fail(op, ctx, toRef, err)
		}
		data = x.drag.take()
	}
	if data == nil && x.dragStarted(ctx) {
		data = x.drag.take()
	}
	if data != nil {
		for _, typ := range []string{"dragEnter", "dragOver", "drop"} {
			if err := x.dispatchDrag(ctx, typ, tx, ty, data); err != nil {
				return x.fail(op, ctx, toRef, err)
			}
		}
	}
	if err := x.release(ctx, tx, ty); err != nil {
		return x.fail(op, ctx, toRef, err)
	}
	pressed = false
	if data != nil {
		*args += " (html5)"
	}
	return nil
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

// dispatchDrag sends one drag event of an intercepted drag.
func (x *tabExt) dispatchDrag(ctx context.Context, typ string, px, py float64, data json.RawMessage) error {
	a := struct {
		Type string          `json:"type"`
		X    float64         `json:"x"`
		Y    float64         `json:"y"`
		Data json.RawMessage `json:"data"`
	}{typ, px, py, data}
	return x.t.direct.Invoke(ctx, "Input.dispatchDragEvent", &a, nil)
}
