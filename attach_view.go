// Room: a workflow's view of an attached browser (AttachedView): tab
// labels, the selected tab and page actions. The view takes
// attachedBrowser.mu (in attach.go) for labels and selections, and the port
// lock (attachedBrowser.port, a semaphore) across the CDP calls of one page
// action; no mutex is held across a CDP call or while waiting for the port
// lock.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/target"
)

// AttachedTab is one tab of an attached browser as a workflow sees it.
type AttachedTab struct {
	ID       string // the CDP target id
	Label    string // this workflow's label for it, "" if none
	URL      string // without query string, fragment and credentials
	Title    string // cut to 100 characters; the URL for a tab without a title (as TabInfo.Title)
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
// Giving up, it names that action: its workflow, its call and how long it
// has held the browser.
func (v *AttachedView) lockPort(ctx context.Context, op string) (func(), error) {
	if err := v.b.port.Acquire(ctx, 1); err != nil {
		detail := fmt.Sprintf("gave up waiting for the action before it on port %d to finish", v.b.ep.Port)
		hint := "retry; actions on one attached browser run one at a time"
		if h, ok := v.b.heldBy(); ok {
			whose := "workflow " + h.workflow + "'s"
			if h.workflow == v.workflow {
				whose = "this workflow's own"
			}
			detail += fmt.Sprintf(": %s %s has held the browser for %v", whose, h.op, roundHeld(time.Since(h.since)))
			hint = "retry once that action ends; actions on one attached browser run one at a time, whichever workflow runs them. An action that never ends (a page script that never settles) holds it until its context ends: give its calls a deadline"
		}
		e := v.newError(op, ctx.Err(), detail)
		e.Hint = hint
		return nil, e
	}
	release := v.b.hold(v.workflow, op)
	return func() {
		release()
		v.b.port.Release(1)
	}, nil
}

// roundHeld writes how long an action has held a port: tenths of a second
// under a minute, whole seconds after.
func roundHeld(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// find returns the page target idOrLabel names for this workflow, and its
// label, checked against the browser's page targets.
func (v *AttachedView) find(ctx context.Context, op, idOrLabel string) (target.Info, string, error) {
	id, label, byLabel, known := v.b.lookup(v.workflow, idOrLabel)
	infos, err := v.s.pageTargets(ctx)
	if err != nil {
		return target.Info{}, "", v.tag(v.s.wrap(op, id, err))
	}
	for _, t := range infos {
		if string(t.TargetID) == id {
			return t, label, nil
		}
	}
	if byLabel || known {
		// A tab this workflow knew (by a label, or as its selected tab)
		// was closed in the browser: it is forgotten, so the next hint
		// does not name it again.
		v.b.drop(id)
		if label == "" {
			e := v.newError(op, ErrTabClosed, fmt.Sprintf("tab %s, this workflow's selected tab, is gone: it was closed in the browser", id))
			e.Tab = id
			e.Hint = `create a tab with NewTab(ctx, "<label>", url) and name it in the call, or pick another tab from Tabs`
			return target.Info{}, "", e
		}
		e := v.newError(op, ErrTabClosed, fmt.Sprintf("tab %q (id %s) is gone: it was closed in the browser", label, id))
		e.Tab = id
		e.Hint = fmt.Sprintf("create it again with NewTab(ctx, %q, url), or pick another tab from Tabs", label)
		return target.Info{}, "", e
	}
	e := v.newError(op, ErrTabNotFound, fmt.Sprintf("no tab has id or label %q in this workflow", echo(idOrLabel)))
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
		out = append(out, AttachedTab{ID: id, Label: labelOfLocked(w, id), URL: redactURL(t.URL), Title: cutTitle(tabTitle(t.Title, t.URL, redactURL(t.URL)), 100), Selected: id == w.selected})
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
	return AttachedTab{ID: id, Label: label, URL: redactURL(info.URL), Title: cutTitle(tabTitle(info.Title, info.URL, redactURL(info.URL)), 100), Selected: true}, nil
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
		if _, err := t.navigateRecorded(ctx, op, url); err != nil {
			res.URL = redactURL(url)
			return res, v.tag(err)
		}
	}
	var r target.GetTargetInfoReply
	if err := v.s.browserCall(ctx, "Target.getTargetInfo", target.NewGetTargetInfoArgs().SetTargetID(target.ID(t.id)), &r); err == nil {
		res.URL = redactURL(r.TargetInfo.URL)
		res.Title = cutTitle(tabTitle(r.TargetInfo.Title, r.TargetInfo.URL, res.URL), 100)
		v.b.choose(v.workflow, t.id, label, r.TargetInfo.URL, r.TargetInfo.Title)
	}
	return res, nil
}

// create opens an about:blank tab, attaches to it and
// selects it for this workflow (labelled when label is not empty). The
// caller holds the port lock.
func (v *AttachedView) create(ctx context.Context, op, label string) (*Tab, error) {
	id, err := v.s.createTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		return nil, v.tag(v.s.wrap(op, "", err))
	}
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
	res, err := t.navigateRecorded(ctx, op, url)
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
		if err := v.s.browserCall(ctx, "Target.activateTarget", target.NewActivateTargetArgs(target.ID(id)), nil); err != nil {
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
