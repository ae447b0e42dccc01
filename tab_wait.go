// Room: waits (PageInfo is in tab_pageinfo.go, WaitNetworkIdle in
// tab_netidle.go). No lock of its own. A wait reads event streams it opens
// itself and closes before it returns; no lock is held while waiting or
// calling the browser.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// Defaults of the waits.
const (
	// DefaultWaitTimeout bounds every Tab.Wait* call whose context has no
	// deadline; a deadline of the caller's own, earlier or later, bounds the
	// wait instead. Running out is an ErrTimeout error saying what was
	// still awaited.
	DefaultWaitTimeout = 30 * time.Second
	// DefaultNetworkQuiet is how long the network must stay idle for
	// Tab.WaitNetworkIdle when NetworkIdleOptions.Quiet is zero.
	DefaultNetworkQuiet = 500 * time.Millisecond
)

// waitCtx bounds ctx by d when ctx has no deadline of its own: a caller's
// deadline, shorter or longer, is the wait's.
func waitCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// waitErr turns the error of a wait whose context ended into ErrTimeout
// (the default bound ran out) or the caller's context error, with what
// was still awaited in the detail; other errors go through fail.
func (x *tabExt) waitErr(op string, caller, ctx context.Context, what string, err error) error {
	var dc *dialogCause
	if ctx.Err() == nil || errors.As(context.Cause(ctx), &dc) {
		return x.fail(op, ctx, "", err)
	}
	if caller.Err() != nil {
		e := newError(op, caller.Err(), what)
		e.Session, e.Tab = x.t.s.id, x.t.id
		e.Hint = "the caller's context ended first; pass a longer deadline to wait longer"
		return e
	}
	e := newError(op, ErrTimeout, fmt.Sprintf("%s within %v", what, DefaultWaitTimeout))
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Hint = fmt.Sprintf("take a snapshot to see where the page is; a wait whose context has no deadline stops after %v: pass a context with a deadline to wait longer", DefaultWaitTimeout)
	return e
}

// WaitLoad waits until the tab's current document has fired its load
// event. It follows the page's own loader ids, so an old load event never
// satisfies it, and if a new navigation starts meanwhile it waits for that
// one's load. A tab a page just opened (window.open, a link with a
// target) that is still on its initial empty document waits for its first
// page to commit, however slow its server, then for that page's load; if
// the bound runs out first it is an error saying the tab's first page has
// not arrived. It is bounded by ctx and DefaultWaitTimeout.
func (t *Tab) WaitLoad(ctx context.Context) error {
	const op = "Tab.WaitLoad"
	return t.waiting(ctx, op, "wait-load", "", func(ctx, caller context.Context, x *tabExt) error {
		var tree struct {
			FrameTree struct {
				Frame struct {
					LoaderID string `json:"loaderId"`
					URL      string `json:"url"`
				} `json:"frame"`
			} `json:"frameTree"`
		}
		if err := t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree); err != nil {
			return x.waitErr(op, caller, ctx, "", err)
		}
		committed, err := x.openedPage(ctx, tree.FrameTree.Frame.URL)
		if err != nil {
			return x.waitErr(op, caller, ctx, "the tab's first page has not arrived: the tab still shows its initial empty document while the browser loads its first page (one a page opened it with, by window.open or a link with a target, or, in a browser the pool attached to, one its user began)", err)
		}
		if committed {
			// Its first page committed: wait for that one's load.
			if err := t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree); err != nil {
				return x.waitErr(op, caller, ctx, "", err)
			}
		}
		state, err := t.readyState(ctx)
		if err != nil {
			return x.waitErr(op, caller, ctx, "the page did not answer", err)
		}
		if state == "complete" {
			return nil
		}
		if err := x.waitLoad(ctx, tree.FrameTree.Frame.LoaderID); err != nil {
			return x.waitErr(op, caller, ctx, "the page did not finish loading", err)
		}
		return nil
	})
}

// waiting runs one traced wait: the call counts as use of the session, is
// refused while a dialog waits for an answer, is bounded by ctx and
// DefaultWaitTimeout, and is cut short when a dialog opens. fn gets the
// bounded ctx and the caller's (to tell the two apart in waitErr).
func (t *Tab) waiting(ctx context.Context, op, action, args string, fn func(ctx, caller context.Context, x *tabExt) error) error {
	caller := ctx
	return t.act(ctx, op, action, args, nil, func(ctx context.Context, x *tabExt, _ *string) error {
		// Inside the dialog guard: a dialog's cause reaches the bounded
		// ctx as it reached the guard.
		ctx, cancel := waitCtx(ctx, DefaultWaitTimeout)
		defer cancel()
		return fn(ctx, caller, x)
	})
}

// waitLoad waits until loader, or a main-frame navigation that replaced
// it, has fired load. A replacement is seen in the events it takes, or, as
// another caller may take those first (a Snapshot, a wait of its own), in
// the watch's count of new main-frame documents.
func (x *tabExt) waitLoad(ctx context.Context, loader string) error {
	w := x.t.lifecycle
	since, _ := w.mainDoc()
	for {
		_, changed := w.has("")
		if l := x.takeLifecycle(); l != "" {
			loader = l
		}
		if n, l := w.mainDoc(); n > since && l != "" {
			loader = l
		}
		if ok, _ := w.has(loader + "/load"); ok {
			x.docsSeen()
			return nil
		}
		if err := w.next(ctx, changed); err != nil {
			return err
		}
	}
}

// takeLifecycle takes the lifecycle events recorded since the last look
// and returns the newest main-frame loader among them ("" if none), whose
// document the refs then must be of (navigated). Only the newest counts:
// an older document's events can come after the refs were made (a new
// tab's first document, whose events the connect replays as its page
// moves on).
func (x *tabExt) takeLifecycle() string {
	var loader string
	for _, ev := range x.t.lifecycle.take() {
		if string(ev.FrameID) == x.t.id && (ev.Name == "init" || ev.Name == "commit") && ev.LoaderID != "" {
			loader = string(ev.LoaderID)
		}
	}
	if loader != "" {
		x.navigated(loader)
	}
	return loader
}

// WaitNavigation runs action (a click on a link, a form submission; nil
// for a navigation already requested, by the tab's latest action or since)
// and waits until the main frame has committed a new document and that
// document has fired its load event. With nil, a navigation of the latest
// action that has committed already counts.
// A same-document navigation (history.pushState, a #fragment) is not one:
// the wait runs out. An action that opens a new tab (a target=_blank link,
// window.open) while this tab does not navigate is an ErrNavigation error
// shortly after the window opened, naming its URL: drive the new tab
// (Session.Tabs lists it, Session.Tab returns it). Bounded by ctx and
// DefaultWaitTimeout.
func (t *Tab) WaitNavigation(ctx context.Context, action func(ctx context.Context) error) (err error) {
	const op = "Tab.WaitNavigation"
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	defer x.record("wait-navigation", fmt.Sprintf("action=%v", action != nil), time.Now(), &err)
	if err := x.dialogErr(op); err != nil {
		return err
	}
	caller := ctx
	ctx, cancel := waitCtx(ctx, DefaultWaitTimeout)
	defer cancel()
	x.lifecycleInits()             // note what happened before
	before := x.currentLoader(ctx) // a round trip: the events before it are in
	opens := x.opens.Load()        // windows the tab opened before the action
	if action != nil {
		if err := action(ctx); err != nil {
			return err
		}
	}
	ctx, done := x.guard(ctx)
	defer done()
	if w := t.lifecycle; action == nil && w != nil {
		if n, loader := w.mainDoc(); n > x.actDocs.Load() && loader != "" && loader == before {
			// The navigation the tab's latest action requested has
			// committed already: wait for its load.
			if err := x.waitLoad(ctx, loader); err != nil {
				return x.waitErr(op, caller, ctx, "the new page did not finish loading", err)
			}
			return nil
		}
	}
	// A window the action opened (Page.windowOpen may come just after
	// it) is looked for between the tab's lifecycle events.
	var tick <-chan time.Time
	if action != nil {
		tk := time.NewTicker(historyPoll)
		defer tk.Stop()
		tick = tk.C
	}
	var openedAt time.Time
	for {
		if cur := x.currentLoader(ctx); cur != "" && cur != before {
			if err := x.waitLoad(ctx, cur); err != nil {
				return x.waitErr(op, caller, ctx, "the new page did not finish loading", err)
			}
			return nil
		}
		if tick != nil && x.opens.Load() != opens {
			if openedAt.IsZero() {
				openedAt = time.Now()
			}
			// A navigation of this tab's own may follow the window (a
			// script that opens one and then sets location): it is
			// waited for while the tab asks for one.
			if pending, _ := t.lifecycle.pendingRequest(); !pending && time.Since(openedAt) >= openedGrace {
				return x.openedTabErr(op)
			}
		}
		if err := x.nextLifecycleOr(ctx, tick); err != nil {
			return x.waitErr(op, caller, ctx, "no navigation committed", err)
		}
	}
}

// nextLifecycleOr is nextLifecycle that also returns, with nil, when tick
// fires first (a nil tick never does).
func (x *tabExt) nextLifecycleOr(ctx context.Context, tick <-chan time.Time) error {
	w := x.t.lifecycle
	_, changed := w.has("")
	if len(w.peek()) > 0 {
		x.takeLifecycle()
		return nil
	}
	if err := w.nextOr(ctx, changed, tick); err != nil && err != errPendingPassed {
		return err
	}
	x.takeLifecycle()
	return nil
}

// nextLifecycle waits for the tab's next lifecycle event (or returns at
// once if some arrived unseen) and notes what arrived.
func (x *tabExt) nextLifecycle(ctx context.Context) error {
	w := x.t.lifecycle
	_, changed := w.has("")
	if len(w.peek()) > 0 {
		x.takeLifecycle()
		return nil
	}
	if err := w.next(ctx, changed); err != nil {
		return err
	}
	x.takeLifecycle()
	return nil
}

// WaitVisible waits until the first element matching a CSS selector is
// visible (has a box and is not hidden). It survives navigations: it
// checks again in each new document. Bounded by ctx and DefaultWaitTimeout.
func (t *Tab) WaitVisible(ctx context.Context, selector string) error {
	const op = "Tab.WaitVisible"
	return t.waiting(ctx, op, "wait-visible", selector, func(ctx, caller context.Context, x *tabExt) error {
		return t.waitVisible(ctx, caller, x, op, selector)
	})
}

func (t *Tab) waitVisible(ctx, caller context.Context, x *tabExt, op, selector string) error {
	if strings.TrimSpace(selector) == "" {
		e := newError(op, ErrInvalidArgument, "empty selector")
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "pass a CSS selector such as #results or button[type=submit]"
		return e
	}
	err := x.poll(ctx, caller, op, "", pagejs.VisibleCheck(selector), fmt.Sprintf("no element matching %s became visible", axtext.Cut(selector, 100)), nil)
	var js *JSError
	if errors.As(err, &js) && strings.Contains(js.Message, "SyntaxError") {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q is not a valid CSS selector", axtext.Cut(selector, 100)))
		e.Session, e.Tab, e.Err = t.s.id, t.id, js
		e.Hint = "fix the selector"
		return e
	}
	return err
}

// WaitCondition waits until the JavaScript expression expr is truthy
// (awaiting it if it is a promise) and decodes its value into out unless
// out is nil. The expression is checked at once, on every DOM change and
// every 50 ms, and again in each new document after a navigation. An
// exception is an ErrJavaScript error. Bounded by ctx and
// DefaultWaitTimeout. It runs in the page's own JavaScript world, with the
// page's globals; it does not need the page's Promise (a page may have
// replaced it), and on a page whose MutationObserver does not work it
// checks every 50 ms only. expr is one expression: semicolons ending it
// are dropped, and statements ("const n = 1; n > 0") are a SyntaxError,
// whose hint says to wrap them in a function called at once.
func (t *Tab) WaitCondition(ctx context.Context, expr string, out any) error {
	const op = "Tab.WaitCondition"
	err := t.waiting(ctx, op, "wait-condition", expr, func(ctx, caller context.Context, x *tabExt) error {
		return x.poll(ctx, caller, op, expr, pagejs.Condition(expr), "the condition did not become true", out)
	})
	var js *JSError
	var e *Error
	if errors.As(err, &js) && strings.HasPrefix(js.Message, "SyntaxError") && errors.As(err, &e) {
		e.Hint = "WaitCondition takes one JavaScript expression, not statements: fix it, or wrap statements in a function called at once, such as (() => { const n = document.querySelectorAll('li').length; return n > 3 })()"
	}
	return err
}

// conditionThrewAt places js, an exception WaitCondition's expression src
// threw while it ran, where its stack says it was thrown: Chromium gives
// the place of the poll's promise, which is not in src. A stack whose top
// frame is outside src's lines (a page function the expression called
// from an eval) leaves js as it is.
func conditionThrewAt(js *JSError, ex *runtime.ExceptionDetails, src string) {
	if js.URL != "" || ex.Exception == nil || ex.Exception.Description == nil {
		return
	}
	url, line, col, ok := thrownAt(*ex.Exception.Description)
	first := pagejs.ConditionLine + 1
	if ok && url == evaluatedCode && line >= first && line < first+strings.Count(src, "\n")+1 {
		js.Line, js.Column = line, col
	}
}

// poll runs pagejs.Poll with check in the page until it succeeds, retrying in
// the next document when a navigation destroys the page's context. The
// package's own check (src "") runs in its isolated world of the main
// frame, out of the page scripts' reach (tab_world.go); a check made of
// the caller's expression src runs in the page's world, and its
// exceptions are placed in src. ctx is the bounded, guarded context of
// Tab.waiting; caller the caller's.
func (x *tabExt) poll(ctx, caller context.Context, op, src, check, what string, out any) error {
	t := x.t
	own := src == ""
	for {
		before := x.currentLoader(ctx)
		ms := int64(math.Ceil(float64(DefaultWaitTimeout) / float64(time.Millisecond)))
		if dl, ok := ctx.Deadline(); ok {
			ms = max(time.Until(dl).Milliseconds(), 1)
		}
		expr := pagejs.PollCall(check, ms)
		args := runtime.NewEvaluateArgs(expr).SetReturnByValue(true).SetAwaitPromise(true)
		world := worldKey{f: x.refs.top, frame: t.id, doc: before}
		id := noWorld
		if own && before != "" {
			id, _, _ = x.world(ctx, world)
			if id != noWorld {
				args.SetContextID(runtime.ExecutionContextID(id))
			}
		}
		reply, err := invoke[runtime.EvaluateReply](ctx, t.direct, "Runtime.evaluate", args)
		if err == nil && reply.ExceptionDetails != nil && !contextGone(reply.ExceptionDetails.Text) {
			jerr := t.jsError(op, reply.ExceptionDetails)
			var js *JSError
			if !own && errors.As(jerr, &js) {
				conditionThrewAt(js, reply.ExceptionDetails, src)
				js.rebase(pagejs.ConditionLine, src) // in the caller's expression's numbering
			}
			return jerr
		}
		if e := t.unreturnable(op, err); e != nil {
			return e
		}
		if err == nil && reply.ExceptionDetails == nil {
			var res struct {
				OK    bool            `json:"ok"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(reply.Result.Value, &res); err != nil {
				return x.fail(op, ctx, "", err)
			}
			if !res.OK {
				ctxDone := ctx.Err() != nil
				if !ctxDone {
					// The page's own timer ran out first: it uses the same
					// deadline, so ours is at hand.
					<-ctx.Done()
				}
				return x.waitErr(op, caller, ctx, what, ctx.Err())
			}
			if out != nil && len(res.Value) > 0 {
				if e := decodeJS(op, res.Value, "", "", out); e != nil {
					e.Session, e.Tab = t.s.id, t.id
					return e
				}
			}
			return nil
		}
		if ctx.Err() != nil {
			return x.waitErr(op, caller, ctx, what, ctx.Err())
		}
		var re *rpcc.ResponseError
		if err != nil && !(errors.As(err, &re) && contextGone(re.Message)) {
			return x.waitErr(op, caller, ctx, what, err)
		}
		if id != noWorld {
			x.forgetWorld(world, id) // gone with its document
		}
		// A navigation replaced the document: check again in the new one
		// at once, or, if it has not committed yet, after the next
		// lifecycle event.
		if cur := x.currentLoader(ctx); cur != "" && cur != before {
			continue
		}
		if err := x.nextLifecycle(ctx); err != nil {
			return x.waitErr(op, caller, ctx, what, err)
		}
	}
}

// contextGone reports an error text saying the page's context went away
// under an evaluation (a navigation).
func contextGone(msg string) bool {
	for _, s := range []string{"Execution context was destroyed", "Inspected target navigated", "Cannot find context", "Promise was collected"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// currentLoader returns the main frame's loader id, or "" on error.
func (x *tabExt) currentLoader(ctx context.Context) string {
	var tree struct {
		FrameTree struct {
			Frame struct {
				LoaderID string `json:"loaderId"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	x.t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree)
	return tree.FrameTree.Frame.LoaderID
}

// readyState returns the main document's document.readyState ("loading",
// "interactive" or "complete"; "" when the page's answer was not one).
func (t *Tab) readyState(ctx context.Context) (string, error) {
	reply, err := invoke[runtime.EvaluateReply](ctx, t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs(pagejs.ReadyState).SetReturnByValue(true))
	if err != nil {
		return "", err
	}
	var state string
	if reply.ExceptionDetails != nil || json.Unmarshal(reply.Result.Value, &state) != nil {
		return "", nil
	}
	return state, nil
}
