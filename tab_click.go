// Room: clicks and the mouse (Click, ClickAt, Hover; the wheel is in
// tab_scroll.go). inputState.mu guards the tab's last mouse position; no
// CDP call is made with it held.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/pagejs"
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
	// turn holds a token while an action uses the page's one mouse and
	// one keyboard focus (see take); capacity 1, made by newTabExt.
	turn chan struct{}
	// scriptLink: the action's click followed a javascript: link, whose
	// script runs a moment later and may navigate (follow waits for it).
	// Written and read only by the holder of turn, reset as it takes it.
	scriptLink bool
}

// take waits for the tab's input. A page has one mouse pointer and one
// focused element, so actions that move the mouse, press, scroll or type
// take turns: a click's aim, press and check, or a fill's focus and typing,
// stay together when goroutines act on one tab at once (two clicks
// interleaved each pressed where the other had scrolled). It is a turn, not
// a lock of fields: the holder makes CDP calls, and a waiter gives up when
// ctx ends. It returns the func that gives the turn back.
func (x *tabExt) take(ctx context.Context, op string) (func(), error) {
	select {
	case x.input.turn <- struct{}{}:
		x.input.scriptLink = false
		return func() { <-x.input.turn }, nil
	case <-ctx.Done():
		var dc *dialogCause
		if errors.As(context.Cause(ctx), &dc) {
			return nil, x.dialogOpenErr(op, dc.d, "")
		}
		e := newError(op, ctx.Err(), "another action on this tab used the mouse and keyboard until the caller's context ended")
		e.Session, e.Tab = x.t.s.id, x.t.id
		e.Hint = "the tab's clicks, keys, scrolls and fills run one at a time: wait for the other to finish, or pass a longer deadline"
		return nil, e
	}
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
// ErrStaleRef. A form control the page keeps from the pointer with its own
// drawing (a checkbox, radio or file input made sr-only, zero-size,
// clipped or pointer-events:none, or drawn over, under a styled label) is
// clicked through the first of its labels on screen, as a person clicks
// it; the trace says so. If something covers that label too, the
// ErrCovered error names it. A click that opens a new tab (a target=_blank link,
// window.open) leaves the tab it acted on where it was: its trace names
// the new tab's URL, and Session.Tabs lists the new tab. A click whose
// page then closes its own tab (window.close() in a popup's button) is
// done: Click returns nil and its trace says so. A click that opens a
// file chooser (on a file input, or a button whose handler clicks a
// hidden one) leaves it open, and its trace says so: Tab.Upload with the
// same ref, before any other input action, gives it the files without
// clicking again. A click that
// makes the tab navigate (a link followed, a form submitted, a
// javascript: link's script, such as an ASP.NET postback, which Click
// gives a quarter of a second to ask for the navigation) returns once
// the new page is in the tab (its document committed; it may still be
// loading: Tab.WaitLoad waits for that), or the navigation ended without
// one (a download), for at most 10 seconds and ctx; so does any input
// action that starts a navigation (Enter in a search box). When either
// bound ends first the click is still done (nil) and its trace says the
// tab may still be loading.
//
// Click returns nil only once the page has confirmed the click: a click
// event reached the element (or, through its label, its control), or the
// element got the press and the page then removed or hid it or left the
// document (a menu that acts on the press, a link followed); or, in a
// document where the package's isolated world cannot run (the browser
// made none for it), where nothing can confirm it, once the click was
// sent, once. (A frame sandboxed without allow-scripts runs no page
// scripts, but the isolated world runs there and confirms the click.) A page can
// move an element between the press and the release (the press moves the
// focus, and a blur handler changes the layout above it): the release then
// lands elsewhere and the browser sends the click to neither. Click then
// aims again and clicks again, up to 3 times in all; if the click still
// does not land, or the element's document went away before the press
// could be confirmed, it returns an ErrClickMissed error saying what got
// the press and the release.
func (t *Tab) Click(ctx context.Context, ref string) error {
	const op = "Tab.Click"
	return t.inputOnRef(ctx, op, "click", ref, "", func(ctx context.Context, x *tabExt, tg refTarget, args *string) error {
		viaLabel := false
		for attempt := 1; ; attempt++ {
			px, py, err := x.point(ctx, op, ref, tg, true)
			if err != nil {
				if px, py, err = x.aimLabel(ctx, op, ref, tg, err); err != nil {
					return err
				}
				if !viaLabel {
					viaLabel = true
					*args += " (through its label: the page draws the control there)"
				}
			}
			opens, choosers := x.opens.Load(), x.chooserCount.Load()
			rep, err := x.clickTarget(ctx, tg, px, py)
			if err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
			switch rep.outcome() {
			case clickLanded:
				x.input.scriptLink = rep.ScriptLink
				if rep.closed {
					*args += " (the page then closed its tab: act on another, Session.Tabs lists them)"
				}
				if x.chooserCount.Load() != choosers {
					if ev := x.lastChooser.Load(); ev != nil && ev.BackendNodeID == 0 {
						*args += " (it opened the browser's file picker of its own, showOpenFilePicker, which Tab.Upload cannot fill)"
					} else if ev != nil {
						x.pending.Store(&pendingChooser{at: tg.in(), node: tg.node, ev: ev})
						*args += " (it opened a file chooser: give it the files with Tab.Upload on the same ref)"
					}
				}
				if x.opens.Load() != opens {
					if u := x.opened.Load(); u != nil {
						*args += " (opened a new tab at " + *u + ": Session.Tabs lists it; this tab stays the one acted on)"
					}
				}
				if attempt > 1 {
					*args += fmt.Sprintf(" (landed on attempt %d: the earlier click missed it)", attempt)
				}
				if rep.unwatched {
					*args += " (unconfirmed: no script of the package's could watch its document)"
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

// ClickAt clicks at a point of the viewport, in CSS pixels from its top
// left corner, whatever is there.
func (t *Tab) ClickAt(ctx context.Context, px, py float64) error {
	const op = "Tab.ClickAt"
	return t.inputAct(ctx, op, "click-at", fmt.Sprintf("%g,%g", px, py), nil, func(ctx context.Context, x *tabExt, _ *string) error {
		if err := x.checkPoint(op, px, py); err != nil {
			return err
		}
		if err := x.click(ctx, px, py); err != nil {
			return x.fail(op, ctx, "", err)
		}
		return nil
	})
}

// HoverAt moves the mouse to a point of the viewport, in CSS pixels from
// its top left corner, over whatever is there: for a menu or a row's
// buttons that show on hover over an element the snapshot gives no ref.
func (t *Tab) HoverAt(ctx context.Context, px, py float64) error {
	const op = "Tab.HoverAt"
	return t.inputAct(ctx, op, "hover-at", fmt.Sprintf("%g,%g", px, py), nil, func(ctx context.Context, x *tabExt, _ *string) error {
		if err := x.checkPoint(op, px, py); err != nil {
			return err
		}
		if err := x.mouse(ctx, input.NewDispatchMouseEventArgs("mouseMoved", px, py)); err != nil {
			return x.fail(op, ctx, "", err)
		}
		return nil
	})
}

// checkPoint refuses a point that is not one of the viewport's: not a
// number, negative, or past the right or bottom edge of the viewport the
// package gave the tab (Config.Viewport, SetViewport; the browser would
// send the event nowhere, and say nothing). It asks the browser nothing:
// a page that is navigating answers nothing until its next document
// commits, and an input event need not wait for that.
func (x *tabExt) checkPoint(op string, px, py float64) error {
	t := x.t
	bad := math.IsNaN(px) || math.IsNaN(py) || math.IsInf(px, 0) || math.IsInf(py, 0) || px < 0 || py < 0
	size := ""
	if w, h, ok := t.givenViewport(); ok && !bad {
		bad = px >= w || py >= h
		size = fmt.Sprintf(" (%g×%g CSS pixels)", w, h)
	}
	if bad {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("(%g, %g) is not a point of the viewport%s", px, py, size))
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "give CSS pixels from the viewport's top left corner, inside it; Tab.PageInfo tells the viewport's size, and Tab.Scroll brings the rest of the page into it"
		return e
	}
	return nil
}

// Hover moves the mouse over the element a ref names, after the same
// checks as Click.
func (t *Tab) Hover(ctx context.Context, ref string) error {
	const op = "Tab.Hover"
	return t.inputOnRef(ctx, op, "hover", ref, "", func(ctx context.Context, x *tabExt, tg refTarget, _ *string) error {
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
	if err := x.t.direct.Invoke(ctx, "Input.dispatchMouseEvent", args, nil); err != nil {
		return err
	}
	if args.Type != "mouseWheel" {
		x.input.setMouse(args.X, args.Y)
	}
	return nil
}

// clickReport is what the page saw of one click, from a click watch.
type clickReport struct {
	Pressed   bool   `json:"pressed"`   // a pointerdown or mousedown reached the element (or its label)
	Clicked   bool   `json:"clicked"`   // a click event reached it
	PressOn   string `json:"pressOn"`   // what in its document got a press instead, described
	ReleaseOn string `json:"releaseOn"` // what in its document got a release instead, described
	Connected bool   `json:"connected"` // it is still in its document
	Shown     bool   `json:"shown"`     // it still has a visible box
	Disabled  bool   `json:"disabled"`  // it is disabled now
	// ScriptLink: the click followed a javascript: link whose script does
	// something (not void(0)), and the page did not prevent it.
	ScriptLink bool `json:"scriptLink"`

	// refused: the element was disabled before the press, so nothing was
	// sent. gone: the element's document went away (a navigation, its frame
	// removed) before the report after the release could be read; Pressed
	// is then what was read after the press, if that could be. unwatched:
	// its document calls no listener (it runs no scripts), so the click
	// was sent once and nothing could confirm it. navigated: after the
	// release the main frame asked for a navigation (a link followed, a
	// form submitted), and the old document answers nothing more until the
	// new one commits (Chromium holds a tab's commands during its
	// navigation), so its report is not read: the document counts as gone,
	// and the click as taken if the element got the press.
	refused, gone, unwatched, navigated bool
	// closed: the tab's target went away after the press while its session
	// stayed live: the page closed its own tab (window.close() in the
	// click's handler); the click counts as taken if the element got the
	// press.
	closed bool
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
	case r.Clicked, r.unwatched:
		return clickLanded
	case r.Pressed && (r.gone || r.closed || !r.Connected || !r.Shown || r.Disabled):
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
		cleanup := func(ctx context.Context) {
			if watch != "" && err != nil {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				x.callFn(cctx, op, f, watch, pagejs.ClickDisarm, nil, true)
				cancel()
			}
			releaseGroup(ctx, f, group)
		}
		// A caller whose context ended is not held up by a page too busy
		// to answer the cleanup, nor the caller of a click that started a
		// navigation, whose old page the browser holds until the new one
		// commits: it runs after the return, bounded (a page may never
		// answer).
		if (ctx.Err() != nil || rep.navigated) && x.t.s.background(func(ctx context.Context) {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			cleanup(ctx)
		}) {
			return
		}
		cleanup(ctx)
	}()
	el, err := x.resolveIn(ctx, tg.in(), group, tg.node)
	if err != nil {
		return rep, err
	}
	armed, err := x.callFn(ctx, op, f, el[0], pagejs.ClickArm, nil, false)
	if err != nil {
		return rep, err
	}
	if armed.ObjectID == "" {
		switch axtext.RawString(armed.Value) {
		case "disabled":
			rep.refused = true
			return rep, nil
		case "unwatched":
			// Clicking again could only repeat what the page did.
			rep.unwatched = true
			if err := x.press(ctx, px, py); err != nil {
				return rep, err
			}
			return rep, x.release(ctx, px, py)
		}
		return rep, fmt.Errorf("arming the click watch returned %s %s", armed.Type, armed.Value)
	}
	watch = armed.ObjectID
	if err := x.press(ctx, px, py); err != nil {
		return rep, err
	}
	pressed, perr := x.callFn(ctx, op, f, watch, pagejs.ClickReport, []any{false}, true)
	nav := x.t.lifecycle.mark()
	rerr := x.release(ctx, px, py)
	if perr != nil && !docGone(f, perr) {
		return rep, perr
	}
	if perr == nil {
		if err := json.Unmarshal(pressed.Value, &rep); err != nil {
			return rep, err
		}
	}
	if rerr != nil {
		if x.pageClosedTab() {
			rep.closed = true
			return rep, nil
		}
		return rep, rerr
	}
	rctx, asked, stop := x.t.lifecycle.untilRequest(ctx, nav)
	final, err := x.callFn(rctx, op, f, watch, pagejs.ClickReport, []any{true}, true)
	stop()
	if asked() && ctx.Err() == nil {
		rep.navigated, rep.gone = true, true
		return rep, nil
	}
	if err != nil {
		if x.pageClosedTab() {
			rep.closed = true
			return rep, nil
		}
		if !docGone(f, err) {
			return rep, err
		}
		rep.gone = true
		return rep, nil
	}
	rep = clickReport{}
	return rep, json.Unmarshal(final.Value, &rep)
}

// pageClosedTab reports whether the tab's target went away (its CDP
// session detached) while its session is live and no Session.CloseTab
// closed it: its page closed it (window.close()). A tab another caller
// closed meanwhile is not the click's doing: the click fails as closed.
func (x *tabExt) pageClosedTab() bool {
	return errors.Is(x.t.direct.Err(), cdpmux.ErrDetached) && x.t.s.Err() == nil && x.t.closedByCall.Load() == 0
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
	noInput := false // nothing of the press reached the page's own frame
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
	case tg.f == x.refs.top && tg.frame == "":
		// In the page's own frame nothing can be outside it: the
		// browser took the press and delivered nothing to the page, or
		// the page stopped every mouse event on its window.
		why = fmt.Sprintf("was not pressed: no mouse event of the press at (%.0f, %.0f) reached the page", px, py)
		noInput = true
	default:
		why = fmt.Sprintf("was not pressed: the press at (%.0f, %.0f) landed outside its frame", px, py)
	}
	detail := fmt.Sprintf("%s (%s %s) %s", ref, tg.role, axtext.Quote(tg.name), why)
	if attempts > 1 {
		detail += fmt.Sprintf("; aimed and clicked %d times", attempts)
	}
	e := newError(op, ErrClickMissed, detail)
	e.Session, e.Tab = x.t.s.id, x.t.id
	switch {
	case r.gone:
		e.Hint = "the page navigated or the frame was removed during the click: take a new snapshot to see whether the click took effect before clicking again"
	case noInput:
		e.Hint = "the browser may have stopped delivering input to this tab (Chromium can, after the tab showed a network error page), or the page stops every mouse event on its window: see with a screenshot whether the click changed the page; if the tab takes no input, open the page in a new tab with Session.OpenTab and act there"
	}
	return e
}
