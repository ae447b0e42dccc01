// Room: an action's error when its ref's element is gone (ErrStaleRef's
// words: tabExt.fail, goneErr, goneAnswers) or its frame's session ended
// (frameErr). No state and no lock of its own: it reads the refs through
// refTable, which locks itself.

package browserpool

import (
	"context"
	"errors"
	"strings"

	"github.com/browserpool/browserpool/internal/pagejs"
	"github.com/mafredri/cdp/rpcc"
)

// fail turns an error of an action's CDP call into the package's error:
// a deferred dialog that stopped the call, a node or frame that is gone
// (ErrStaleRef), an element without a box (ErrNotVisible), or whatever
// Session.wrap says.
func (x *tabExt) fail(op string, ctx context.Context, ref string, err error) error {
	t := x.t
	var dc *dialogCause
	if errors.As(context.Cause(ctx), &dc) {
		what := "the action"
		if ref != "" {
			what = "acting on " + ref
		}
		return x.dialogOpenErr(op, dc.d, what)
	}
	var re *rpcc.ResponseError
	if errors.As(err, &re) {
		msg := re.Message + " " + re.Data
		if strings.Contains(msg, "No node found at given location") && ref != "" {
			// Nothing is at the element's point (the page scrolled or
			// moved since it was aimed at): not a stale ref.
			e := newError(op, ErrNotVisible, ref+" is not at the point it was aimed at: the page scrolled or moved it")
			e.Session, e.Tab, e.Err = t.s.id, t.id, err
			e.Hint = "take a new snapshot and retry; if the page keeps moving, wait for it to settle"
			return e
		}
		for _, g := range goneAnswers {
			if strings.Contains(msg, g.answer) && ref != "" {
				return x.goneErr(op, ref, g.why, err) // why in words, not the browser's raw answer
			}
		}
		for _, s := range []string{"Could not compute content quads", "does not have a layout object", "not visible", "Could not compute box model"} {
			if strings.Contains(msg, s) && ref != "" {
				if x.discarded(ctx, ref) {
					return x.goneErr(op, ref, "it is in a document its frame has left (the frame navigated)", err)
				}
				e := newError(op, ErrNotVisible, ref+" has no layout box (hidden with display:none, collapsed, or not rendered)")
				e.Session, e.Tab, e.Err = t.s.id, t.id, err
				return e
			}
		}
	}
	if ref != "" && errors.Is(err, errFrameGone) {
		e := newError(op, ErrStaleRef, ref+" was in a frame that has navigated or closed")
		e.Session, e.Tab = t.s.id, t.id
		return e
	}
	if re != nil && ref == "" {
		msg := re.Message + " " + re.Data
		if strings.Contains(msg, "Inspected target navigated or closed") || strings.Contains(msg, "Execution context was destroyed") {
			// Chromium drops a script's evaluation when its page goes.
			e := newError(op, ErrProtocol, "the page navigated (or its frame went away) while the call ran; its result is lost")
			e.Session, e.Tab, e.Err = t.s.id, t.id, err
			e.Hint = "take a snapshot to see the page now, and run the call again if it is still needed"
			return e
		}
	}
	return t.s.wrap(op, t.id, err)
}

// discarded reports whether ref's element belongs to a document no frame
// shows any more: a same-site frame that navigated keeps its old nodes
// resolvable, without a layout box, so an action on one looked like one on
// a hidden element. It is asked only when an action found no box. A frame
// of its own session (out of process, or nested in a frame that is) whose
// session ended, or whose document's context is gone, went with the
// navigation of a frame around it: its element is discarded too.
func (x *tabExt) discarded(ctx context.Context, ref string) bool {
	tg, err := x.resolve(ctx, "", ref)
	if err != nil {
		return false
	}
	var shown bool
	if err := x.callOn(ctx, "", tg.in(), tg.node, pagejs.Shown, nil, &shown); err != nil {
		if ctx.Err() != nil {
			return false // the caller's end, not the element's
		}
		if errors.Is(frameErr(tg.f, err), errFrameGone) {
			return true
		}
		var re *rpcc.ResponseError
		if !errors.As(err, &re) {
			return false
		}
		msg := re.Message + " " + re.Data
		return strings.Contains(msg, "No node with given id") || strings.Contains(msg, "does not belong to the document") || contextGone(msg)
	}
	return !shown
}

// errFrameGone marks a call on an out-of-process frame's session that ended.
var errFrameGone = errors.New("frame session ended")

// frameErr marks err as errFrameGone when f is an out-of-process frame
// whose session has ended.
func frameErr(f *frameSess, err error) error {
	if err != nil && f.own && !f.live() {
		return errors.Join(errFrameGone, err)
	}
	return err
}

// goneErr is the ErrStaleRef error of an action on ref whose element is
// gone from the page: why, in words, and answer, the browser's answer
// that showed it (nil when the page said so), kept behind the cause for
// programs (errors.As finds its *rpcc.ResponseError). The browser's raw
// answer ("Could not find node with given id (-32000)") read verbatim
// says nothing a person or an LLM can act on.
func (x *tabExt) goneErr(op, ref, why string, answer error) error {
	e := newError(op, ErrStaleRef, ref+" is gone from the page")
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Err = &goneCause{why: why, answer: answer}
	return e
}

// goneAnswers are the browser's answers that show an element gone (as
// tabExt.fail reads them), and what each means in words. The first match
// wins.
var goneAnswers = []struct{ answer, why string }{
	{"Node is detached", "it was removed from its document"},
	{"does not belong to the document", "it was removed from its document"},
	{"Cannot find context with specified id", "its frame navigated to another document"},
	{"No target with given id", "its frame closed or navigated"},
	{"Session with given id not found", "its frame closed or navigated"},
	{"No node with given id", "the browser no longer has it (it was removed, or its frame navigated)"},
	{"Could not find node", "the browser no longer has it (it was removed, or its frame navigated)"},
	{"No node found", "the browser no longer has it (it was removed, or its frame navigated)"},
}

// goneCause is the cause of a stale ref's error: why the element is
// gone, and the browser's answer that showed it, if any, which Unwrap
// returns.
type goneCause struct {
	why    string
	answer error // nil when the page, not the browser, said so
}

// Error says why the element is gone, in words.
func (c *goneCause) Error() string { return c.why }

// Unwrap returns the browser's answer.
func (c *goneCause) Unwrap() error { return c.answer }
