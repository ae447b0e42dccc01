// Room: an input action's wait for the navigation it started (a link
// followed, a form submitted), so that the next action meets the new page.
// The counters are lifecycleWatch's (tab_lifecycle.go), written under its
// mu on the mux's reader.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// followWait bounds how long an input action waits for the navigation it
// started to reach a new document: a server that takes longer leaves the
// action returned and the tab loading (the trace says so).
const followWait = 10 * time.Second

// scriptLinkWait bounds how long an action whose click followed a
// javascript: link waits for the link's script to ask for a navigation
// (an ASP.NET __doPostBack link submits its form so): Chromium runs the
// script about 10 ms after the click. A script that navigates nowhere
// costs the action this long.
const scriptLinkWait = 250 * time.Millisecond

// errFollowWait is the cause of follow's own bound running out.
var errFollowWait = errors.New("followWait passed")

// navMark is the main frame's navigation counters when an input action
// began.
type navMark struct{ requests, commits uint64 }

// mark returns the counters now (zero without a watch).
func (w *lifecycleWatch) mark() navMark {
	if w == nil {
		return navMark{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return navMark{w.requests.Load(), w.commits.Load()}
}

// noteNavigation counts a main-frame navigation request made in the tab
// (not in a new one), or the end of one without a new document (on the
// mux's reader): the frame stopped loading, moved within its document, or
// a dialog was dismissed (a beforeunload's Cancel keeps the page, and the
// browser says nothing more).
func (w *lifecycleWatch) noteNavigation(method string, params json.RawMessage) {
	var ev struct {
		FrameID     string `json:"frameId"`
		URL         string `json:"url"` // Page.frameRequestedNavigation: where to
		Disposition string `json:"disposition"`
		Result      *bool  `json:"result"` // Page.javascriptDialogClosed: OK (true) or Cancel
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	if method == "Page.javascriptDialogClosed" {
		if ev.Result == nil || *ev.Result {
			return // accepted: a beforeunload's OK lets the navigation go on
		}
	} else if ev.FrameID != w.main {
		return
	}
	w.mu.Lock()
	switch method {
	case "Page.frameRequestedNavigation":
		if ev.Disposition != "" && ev.Disposition != "currentTab" {
			w.mu.Unlock()
			return // a new tab or window: this one stays
		}
		w.requests.Add(1)
		w.reqEnds, w.reqDocs, w.reqURL = w.ends.Load(), w.commits.Load(), ev.URL
		if f := w.onRequest; f != nil {
			w.onRequest = nil
			f()
		}
	default: // Page.frameStoppedLoading, Page.navigatedWithinDocument, a dismissed dialog
		w.ends.Add(1)
	}
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// follow waits, after an input action that made the main frame ask for a
// navigation in its tab (nav: the counters when the action began), until
// the navigation has committed a new document, or ended without one after
// the newest request (a download, an answer without content, a
// same-document move, a dismissed beforeunload), for at most followWait
// and ctx: a click on a form's submit button then returns with the
// answer's page in the tab, as one on a link does, and the next snapshot
// reads it. The page need not have loaded (Tab.WaitLoad waits for that).
// An action that started none returns at once.
func (x *tabExt) follow(ctx context.Context, nav navMark, args *string) {
	w := x.t.lifecycle
	if w == nil {
		return
	}
	if w.requests.Load() == nav.requests && x.input.scriptLink {
		x.awaitScriptLink(ctx, w, nav)
	}
	if w.requests.Load() == nav.requests {
		return
	}
	ctx, cancel := context.WithTimeoutCause(ctx, followWait, errFollowWait)
	defer cancel()
	err := w.waitFor(ctx, func() bool { return w.commits.Load() > nav.commits || w.ends.Load() > w.reqEnds })
	switch {
	case err == nil:
	case context.Cause(ctx) == errFollowWait: // not the caller's own deadline
		*args += fmt.Sprintf(" (the navigation it started had no new page after %v: the tab may still be loading it)", followWait)
	case ctx.Err() != nil:
		*args += " (the caller's context ended before the navigation it started had a new page: the tab may still be loading it)"
	}
}

// awaitScriptLink waits, after a click that followed a javascript: link,
// until the main frame asks for a navigation in its tab, for at most
// scriptLinkWait and ctx.
func (x *tabExt) awaitScriptLink(ctx context.Context, w *lifecycleWatch, nav navMark) {
	ctx, cancel := context.WithTimeout(ctx, scriptLinkWait)
	defer cancel()
	w.waitFor(ctx, func() bool { return w.requests.Load() != nav.requests })
}

// waitFor waits until cond, read under w.mu, holds after an event, or ctx
// or the connection ends (its error).
func (w *lifecycleWatch) waitFor(ctx context.Context, cond func() bool) error {
	for {
		w.mu.Lock()
		changed, ok := w.changed, cond()
		w.mu.Unlock()
		if ok {
			return nil
		}
		if err := w.next(ctx, changed); err != nil {
			return err
		}
	}
}

// untilRequest returns ctx, also cancelled when the main frame asks for a
// navigation in its tab after nav (at once if it has already), and reports
// through asked whether that is why it ended. stop clears the watch; the
// caller must call it. Without a watch it is ctx.
func (w *lifecycleWatch) untilRequest(ctx context.Context, nav navMark) (_ context.Context, asked func() bool, stop func()) {
	if w == nil {
		return ctx, func() bool { return false }, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var fired atomic.Bool
	onRequest := func() { fired.Store(true); cancel() }
	w.mu.Lock()
	if w.requests.Load() != nav.requests {
		onRequest()
	} else {
		w.onRequest = onRequest
	}
	w.mu.Unlock()
	return ctx, fired.Load, func() {
		w.mu.Lock()
		w.onRequest = nil
		w.mu.Unlock()
		cancel()
	}
}

// navigating reports whether the main frame's newest navigation request
// (renderer-initiated: a link, a submit, a script) has neither committed a
// document nor ended without one: the browser holds the tab's calls into
// its page until it does.
func (w *lifecycleWatch) navigating() bool {
	pending, _ := w.pendingRequest()
	return pending
}

// pendingRequest reports whether the main frame's newest navigation
// request is pending (see navigating), and the URL it asked for.
func (w *lifecycleWatch) pendingRequest() (pending bool, url string) {
	if w == nil {
		return false, ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.requests.Load() > 0 && w.commits.Load() == w.reqDocs && w.ends.Load() == w.reqEnds {
		return true, w.reqURL
	}
	return false, ""
}
