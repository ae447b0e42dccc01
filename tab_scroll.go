// Room: the mouse wheel (Tab.Scroll). No locks of its own: the wheel
// turns holding the tab's input turn (Tab.inputAct), and the mouse's
// position is inputState's (tab_click.go).

package browserpool

import (
	"context"
	"fmt"
	"math"

	"github.com/mafredri/cdp/protocol/input"

	"github.com/browserpool/browserpool/internal/pagejs"
)

// ScrollOptions says where and how far Tab.Scroll scrolls. The zero value
// scrolls nothing.
type ScrollOptions struct {
	// DeltaX and DeltaY are how far to scroll, in CSS pixels; positive
	// scrolls right and down.
	DeltaX, DeltaY float64
	// Ref, if set, scrolls the element's scroll container, the element
	// itself or its nearest ancestor that scrolls, by the delta from where
	// it is: the wheel turns over the part of it in view (scrolled into
	// view only when none is), or at the viewport's centre when the page
	// itself scrolls it. In a frame the wheel turns over the element.
	// Otherwise the wheel turns at X, Y, or at the centre of the viewport
	// when both are zero.
	Ref  string
	X, Y float64 // where the wheel turns, in CSS pixels of the viewport
}

// Scroll turns the mouse wheel. The page scrolls asynchronously: read the
// new position with Tab.PageInfo or wait for it with Tab.WaitCondition.
func (t *Tab) Scroll(ctx context.Context, opts ScrollOptions) error {
	const op = "Tab.Scroll"
	args := fmt.Sprintf("dx=%g dy=%g ref=%s at=%g,%g", opts.DeltaX, opts.DeltaY, opts.Ref, opts.X, opts.Y)
	return t.inputAct(ctx, op, "scroll", args, nil, func(ctx context.Context, x *tabExt, _ *string) error {
		px, py := opts.X, opts.Y
		for _, d := range []float64{opts.DeltaX, opts.DeltaY} {
			if math.IsNaN(d) || math.IsInf(d, 0) {
				e := newError(op, ErrInvalidArgument, fmt.Sprintf("the scroll (%g, %g) is not a number of pixels", opts.DeltaX, opts.DeltaY))
				e.Session, e.Tab = t.s.id, t.id
				e.Hint = "give DeltaX and DeltaY in CSS pixels (positive scrolls right and down)"
				return e
			}
		}
		if opts.Ref == "" && (px != 0 || py != 0) {
			if err := x.checkPoint(op, px, py); err != nil {
				return err
			}
		}
		switch {
		case opts.Ref != "":
			tg, err := x.resolve(ctx, op, opts.Ref)
			if err != nil {
				return err
			}
			// The wheel turns over the element's scroll container, as it
			// is: scrolling the element into view first would move the
			// container, by its own amount and perhaps the other way.
			// In the top document; in a frame, over the element.
			if tg.f == x.refs.top && tg.frame == "" && len(tg.chain) == 0 {
				var box *struct{ X, Y float64 }
				if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.ScrollBox, nil, &box); err != nil {
					return x.fail(op, ctx, opts.Ref, frameErr(tg.f, err))
				}
				if box == nil { // the document scrolls it: the page's wheel
					lm, err := layoutMetrics(ctx, t.direct)
					if err != nil {
						return x.fail(op, ctx, "", err)
					}
					px, py = lm.VP.W/2, lm.VP.H/2
				} else {
					px, py = box.X, box.Y
				}
				break
			}
			if px, py, err = x.point(ctx, op, opts.Ref, tg, false); err != nil {
				return err
			}
		case px == 0 && py == 0:
			lm, err := layoutMetrics(ctx, t.direct)
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
