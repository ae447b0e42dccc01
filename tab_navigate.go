// Room: navigation (Tab.Navigate, LastNavigation) and what the tab
// learns of its main frame's documents from its events (docWatch, which
// docWatch.mu guards). Tab.navMu guards the last result. Events arrive on
// the mux's reader through the tab's tap (Tab.onEvent): nothing here blocks
// it.

package browserpool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool/internal/pagejs"
	"github.com/browserpool/browserpool/internal/redact"
)

// NavigateResult reports a finished navigation.
type NavigateResult struct {
	SessionID string // the tab's session
	TabID     string // the tab's CDP target id
	Channel   string // always ChannelCDP
	URL       string // the URL asked for; token-like query values read REDACTED, credentials are dropped
	LoaderID  string // empty for a same-document navigation
	// Status is the HTTP status of the main resource as loaded (after any
	// redirects): 200, 404, 500, ... An HTTP error status is not an error
	// of Navigate (the page loaded; it may be the site's error page), so
	// check it. 0 means unknown: a same-document navigation, or a page the
	// browser reports no status for.
	Status int
	// FinalURL is the URL the tab shows once the page loaded, after
	// redirects, redacted like URL.
	FinalURL string
}

// Navigate loads an http or https URL and waits for its load event (bounded
// by ctx and Config.NavigationTimeout). A page the browser cannot load is an
// ErrNavigation error carrying the browser's error text, e.g.
// net::ERR_NAME_NOT_RESOLVED. A page the server answers with an HTTP error
// status (404, 500, ...) loads: Navigate returns nil and the result's
// Status says what the server answered; FinalURL is where redirects led.
// A page that sends the tab on by itself before its load event (a script's
// location change as it loads: a login gateway, a short link) is followed
// to where it leads, and the result is that page's; a refresh or a timer
// that fires after the load is the page's own business (Tab.WaitNavigation
// waits for it). A navigation that is not the page's (another call's
// Navigate) replacing the page before it loads ends Navigate at once with
// an ErrNavigation error saying so.
//
// A dialog the tab's handler deferred does not stop Navigate: the
// navigation closes it (Tab.Dialogs reports it closed by the page). If
// the page it loads opens a dialog that the handler defers, Navigate
// returns ErrDialogOpen at once, as the tab's actions do, rather than wait
// for a load event the page holds back until the dialog is answered
// (answer it with Tab.AnswerDialog; Tab.WaitLoad then waits for the load).
func (t *Tab) Navigate(ctx context.Context, rawURL string) (_ NavigateResult, err error) {
	const op = "Tab.Navigate"
	if err := checkNavigateURL(op, rawURL); err != nil {
		err.Session, err.Tab = t.s.id, t.id
		if strings.HasPrefix(strings.ToLower(rawURL), "about:") {
			err.Hint = "Navigate loads http:// and https:// URLs; for an empty page open a new tab with Session.OpenTab(ctx, \"about:blank\")"
		}
		return NavigateResult{}, err
	}
	end, err := t.begin(op)
	if err != nil {
		return NavigateResult{}, err
	}
	defer end()
	return t.navigateRecorded(ctx, op, rawURL)
}

// navigateRecorded is navigate with its trace entry (and so its recording
// event): every navigation a caller asked for, by Tab.Navigate,
// Session.OpenTab or an attached view.
func (t *Tab) navigateRecorded(ctx context.Context, op, rawURL string) (_ NavigateResult, err error) {
	defer t.x.record("navigate", redact.Scrub(rawURL), time.Now(), &err)
	return t.navigate(ctx, op, rawURL)
}

// endedDuring returns the error of a tab whose tab or session ended while
// a call ran (closed, or its browser gone), else nil: Chromium aborts the
// loads of a tab it closes, and a session closed or a browser killed
// mid-navigation must say so, not send the caller after a download. It
// waits a moment for the end to show: a killed browser's connection drops
// just after its loads abort.
func (t *Tab) endedDuring(op string) error {
	timer := time.NewTimer(250 * time.Millisecond)
	defer timer.Stop()
	select {
	case <-t.direct.Done():
	case <-timer.C:
	}
	t.s.mu.Lock()
	err := t.s.endErrLocked(op, t.id)
	t.s.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-t.direct.Done():
		return t.s.wrap(op, t.id, t.direct.Err())
	default:
		return nil
	}
}

// stayedFor returns the beforeunload dialog opened since start that was
// not accepted: the page stayed, and the navigation was aborted.
func (t *Tab) stayedFor(start time.Time) (Dialog, bool) {
	ds := t.Dialogs()
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		if d.Opened.Before(start) {
			break
		}
		if d.Type == "beforeunload" && !d.Closed.IsZero() && !d.Accepted {
			return d, true
		}
	}
	return Dialog{}, false
}

// stopLoading stops the tab's pending navigation (Page.stopLoading, not
// counted as use) in the background, bounded by two seconds: its caller,
// whose context has ended, does not wait for it.
func (t *Tab) stopLoading() {
	t.s.background(func(base context.Context) {
		ctx, cancel := context.WithTimeout(base, 2*time.Second)
		defer cancel()
		_ = t.direct.Quiet().Invoke(ctx, "Page.stopLoading", nil, nil)
	})
}

// LastNavigation returns the result of the tab's last navigation that
// finished loading (by Tab.Navigate, or by Session.OpenTab when it was given
// a URL), and false if none has.
func (t *Tab) LastNavigation() (NavigateResult, bool) {
	t.navMu.Lock()
	defer t.navMu.Unlock()
	return t.lastNav, t.lastNav.TabID != ""
}

// errorPageWait bounds how long a failed navigation waits for its error
// page (awaitErrorPage).
const errorPageWait = 3 * time.Second

// awaitErrorPage waits, at most errorPageWait, for the error page of a
// failed navigation (loader, from Page.navigate's reply) to load. Chromium
// answers Page.navigate with the error first and commits the page that
// shows it about 100 ms later: returned at once, the error let the next
// call see the page before (Session.Tabs listed it, a Snapshot read it)
// and then lose it under its feet. Best effort: a page that does not come
// in time, or a navigation that replaces it, ends the wait quietly.
func (t *Tab) awaitErrorPage(ctx context.Context, loader string) {
	ctx, cancel := context.WithTimeout(ctx, errorPageWait)
	defer cancel()
	mark := t.lifecycle.mark()
	_, _, _ = t.lifecycle.waitOwn(ctx, loader, "load", mark.commits, mark.requests)
}

func (t *Tab) navigate(ctx context.Context, op, rawURL string) (NavigateResult, error) {
	res := NavigateResult{SessionID: t.s.id, TabID: t.id, Channel: ChannelCDP, URL: shownURL(rawURL)}
	errURL := echo(redactURL(rawURL)) // errors never carry a query string
	caller := ctx
	// A dialog deferred meanwhile ends the wait for the load event.
	x := t.ext()
	ctx, done := x.guardNavigation(ctx)
	defer done()
	fail := func(err error) error {
		var dc *dialogCause
		if errors.As(context.Cause(ctx), &dc) {
			return x.dialogOpenErr(op, dc.d, "the navigation")
		}
		return t.s.wrap(op, t.id, err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.deps.navigationTimeout)
	defer cancel()
	if err := t.pageEvents(ctx); err != nil {
		if caller.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			// NavigationTimeout ran out, not the caller's context: the
			// tab's page never answered the enabling of its events.
			e := newError(op, ErrTimeout, fmt.Sprintf("the tab did not get ready to navigate within %v: its page did not answer (Page.enable)", t.deps.navigationTimeout))
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "the page may be busy in a script, or the machine slow: retry; if it persists, close the tab (Session.CloseTab) and open another, or raise Config.NavigationTimeout"
			return res, e
		}
		return res, fail(err)
	}
	start := time.Now()
	gen := t.navigates.Add(1)
	asked := t.lifecycle.mark() // the page's own navigation requests so far
	var reply page.NavigateReply
	if err := t.direct.Invoke(ctx, "Page.navigate", page.NewNavigateArgs(rawURL), &reply); err != nil {
		if ctx.Err() == nil || t.direct.Err() != nil {
			return res, fail(err)
		}
		// The server never answered: Chromium holds every later command
		// of the tab while the navigation waits, so stop it.
		if caller.Err() != nil {
			t.stopLoading()
			e := t.callerEnded(op, caller, errURL+" did not answer").(*Error)
			e.Hint = "the navigation was stopped and the tab stays on its page; retry with a longer deadline if the site is slow, or check that it is up"
			return res, e
		}
		if context.Cause(ctx) == context.DeadlineExceeded {
			t.stopLoading()
			e := newError(op, ErrTimeout, fmt.Sprintf("%s did not answer within %v", errURL, t.deps.navigationTimeout))
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "the navigation was stopped and the tab stays on its page; check that the site is up, or raise Config.NavigationTimeout"
			return res, e
		}
		return res, fail(err)
	}
	if e := t.blockedNavigation(ctx, op, start, rawURL, reply.ErrorText != nil && *reply.ErrorText != ""); e != nil {
		return res, e // the network policy refused it (netproxy.go)
	}
	if reply.ErrorText != nil && *reply.ErrorText != "" {
		if *reply.ErrorText != "net::ERR_ABORTED" && reply.LoaderID != nil && *reply.LoaderID != "" {
			t.awaitErrorPage(ctx, string(*reply.LoaderID))
		}
		e := newError(op, ErrNavigation, fmt.Sprintf("%s: %s", errURL, *reply.ErrorText))
		e.Session, e.Tab = t.s.id, t.id
		if *reply.ErrorText == "net::ERR_ABORTED" {
			if err := t.endedDuring(op); err != nil {
				return res, err // the load died with the tab or its session
			}
			if e := t.stayedErr(op, start, errURL); e != nil {
				return res, e
			}
			if t.navigates.Load() != gen {
				return res, t.replacedErr(op, errURL+" did not load: another Navigate of this tab began before it committed, and replaced it")
			}
			if t.lifecycle != nil && t.lifecycle.requests.Load() != asked.requests {
				// Page.frameRequestedNavigation: the page asked (a
				// script setting location, a form it submitted, a
				// link's script such as an ASP.NET postback).
				detail := errURL + " did not load: the page's own navigation (a script, a form or a link of the page) replaced it before it committed"
				return res, t.replacedErr(op, detail+t.pageWentTo(ctx))
			}
			// Chromium aborts the navigation of a URL that answers
			// with a file to save (Content-Disposition: attachment).
			file := ": the browser is then saving it in Session.DownloadDir (Session.Downloads lists it once complete), so do not fetch it again; to wait for it and get its path, make this navigation the trigger of Tab.WaitDownload"
			if t.s.remote() {
				file = ", which a remote browser saves nowhere: make this navigation the trigger of Tab.WaitDownload to bring the file here"
			}
			e.Hint = "the load was cancelled, most often because the URL answers with a file to download" + file + "; else the page went elsewhere meanwhile: retry"
		}
		return res, e
	}
	if reply.LoaderID == nil || *reply.LoaderID == "" {
		// A same-document navigation: nothing to load. It is the page's
		// now and in the browser's history a little later; a Back before
		// then would skip it, so wait for the history (best effort).
		if h, err := invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil); err == nil {
			t.settledHistory(ctx, h)
		}
		return res, nil
	}
	res.LoaderID = string(*reply.LoaderID)
	mark := t.lifecycle.mark()
	final, newer, err := t.lifecycle.waitOwn(ctx, res.LoaderID, "load", mark.commits, mark.requests)
	if final != "" {
		res.LoaderID = final // where the page's own redirect led, if it did
	}
	if newer != "" {
		detail := errURL + " did not finish loading: another navigation replaced it (another call's Navigate, one through the raw client, or one the previous page asked for before this one committed)"
		return res, t.replacedErr(op, detail+t.tabAt(ctx, newer))
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			var e *Error
			if caller.Err() != nil {
				e = t.callerEnded(op, caller, errURL+" did not finish loading").(*Error)
			} else {
				e = newError(op, ErrTimeout, fmt.Sprintf("%s did not finish loading within %v", errURL, t.deps.navigationTimeout))
				e.Session, e.Tab = t.s.id, t.id
				e.Hint = "the page may still be usable: take a snapshot; or retry, or raise Config.NavigationTimeout"
			}
			more := "raise Config.NavigationTimeout"
			if caller.Err() != nil {
				more = "pass a context with a longer deadline"
			}
			if t.direct.Err() == nil && t.docs.get(res.LoaderID).url == "" {
				// Its document never replaced the previous one: the
				// previous page does not let go (a script busy in it), and
				// the browser holds every later call of the tab meanwhile.
				e.Hint = "its document never replaced the previous page, which most often means a script busy in that page holds the tab, and every later call of the tab waits: close the tab (Session.CloseTab) and open a new one; if the site is only slow, retry, or " + more
				return res, e
			}
			// Its document came but did not load: a script of the page's
			// may hold it (a loop that never returns), and every later
			// call of the tab with it.
			if t.direct.Err() == nil && !t.lifecycle.navigating() && t.unstick() {
				e.Hint = "if a script of the page's keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes commands again: take a snapshot; else retry, or " + more
			}
			return res, e
		}
		return res, fail(err)
	}
	x.docsSeen()
	res.Status, res.FinalURL = t.loaded(ctx, res.LoaderID)
	t.navMu.Lock()
	t.lastNav = res
	t.navMu.Unlock()
	return res, nil
}

// loaded returns the HTTP status and the redacted URL of the document
// loaderID loaded: from the events the tab followed (the main frame's
// Page.frameNavigated gives the URL; the status script's report, or
// Network.responseReceived of its document request when the Network domain
// is on, the status), else, if they did not say (a browser that refused
// the script, or the user turned the Page or Performance domain off), by
// asking the page now (one round trip; a failure here does not fail the
// navigation).
func (t *Tab) loaded(ctx context.Context, loaderID string) (int, string) {
	d := t.docs.get(loaderID)
	if d.status != 0 && d.url != "" {
		return d.status, d.url
	}
	t.statusFallbacks.Add(1)
	status, url := t.loadedStatus(ctx)
	if d.status != 0 {
		status = d.status
	}
	if d.url != "" {
		url = d.url
	}
	return status, url
}

// statusScriptParams are Page.addScriptToEvaluateOnNewDocument's params
// for pagejs.Status (Tab.connect sends them).
var statusScriptParams = append(appendJSString([]byte(`{"source":`), pagejs.Status), '}')

// loadedStatus returns the HTTP status and the redacted URL of the document
// just loaded, or 0 and "" if the page does not say (one round trip; a
// failure here does not fail the navigation).
func (t *Tab) loadedStatus(ctx context.Context) (int, string) {
	var reply runtime.EvaluateReply
	err := t.direct.Invoke(ctx, "Runtime.evaluate", runtime.NewEvaluateArgs(pagejs.LoadedStatus).SetReturnByValue(true), &reply)
	if err != nil || reply.ExceptionDetails != nil || len(reply.Result.Value) == 0 {
		return 0, ""
	}
	var v struct {
		Status int    `json:"status"`
		URL    string `json:"url"`
	}
	if json.Unmarshal(reply.Result.Value, &v) != nil {
		return 0, ""
	}
	return v.Status, shownURL(v.URL)
}

// pageWentTo returns ", and the tab is going to <URL>" while the page's
// own navigation that replaced Navigate's is pending, else where the tab
// is (tabAt), "" when unknown. It never asks the page while the navigation
// is pending: Chromium holds calls into the page until it commits, and a
// slow server would hold Navigate's error.
func (t *Tab) pageWentTo(ctx context.Context) string {
	if pending, u := t.lifecycle.pendingRequest(); pending {
		if u == "" {
			return ""
		}
		return ", and the tab is going to " + redactURL(u)
	}
	if t.lifecycle == nil {
		return ""
	}
	_, loader := t.lifecycle.mainDoc()
	return t.tabAt(ctx, loader)
}

// tabAt returns ", and the tab is at <URL>" for the main-frame document
// loader, its URL redacted: from the tab's events, else (its
// Page.frameNavigated still on the way) asked of the page for at most a
// second; "" when neither says.
func (t *Tab) tabAt(ctx context.Context, loader string) string {
	u := ""
	if loader != "" {
		u = t.docs.get(loader).url
	}
	if u == "" {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, u = t.loadedStatus(ctx)
	}
	if u == "" {
		return ""
	}
	return ", and the tab is at " + redactURL(u)
}

// replacedErr is Navigate's error when another navigation replaced its
// page: detail says which and where the tab is.
func (t *Tab) replacedErr(op, detail string) *Error {
	e := newError(op, ErrNavigation, detail)
	e.Session, e.Tab = t.s.id, t.id
	e.Hint = "take a snapshot to see the page the tab is on; navigate again if you still need this one (one Navigate at a time per tab)"
	return e
}

// loadedDoc is what the tab learned of one main-frame document.
type loadedDoc struct {
	loaderID string
	url      string // redacted, from Page.frameNavigated
	status   int    // from the status script or Network.responseReceived of its document request; 0 if neither came
	reported bool   // the status script reported (its first report counts)
}

// docWatchLimit bounds the documents a docWatch remembers (the newest
// ones; a navigation reads its own right after its load event).
const docWatchLimit = 8

// docWatch remembers the tab's latest main-frame documents.
type docWatch struct {
	mu   sync.Mutex
	docs [docWatchLimit]loadedDoc // guarded by mu; a ring
	next int                      // guarded by mu; the ring's next slot
	cur  string                   // guarded by mu; the loader of the last committed document
}

// get returns what is known of loaderID's document (zero if nothing).
func (w *docWatch) get(loaderID string) loadedDoc {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.docs {
		if d.loaderID == loaderID {
			return d
		}
	}
	return loadedDoc{}
}

// updateLocked applies f to loaderID's document, adding it if new.
func (w *docWatch) updateLocked(loaderID string, f func(*loadedDoc)) {
	for i := range w.docs {
		if w.docs[i].loaderID == loaderID {
			f(&w.docs[i])
			return
		}
	}
	w.docs[w.next] = loadedDoc{loaderID: loaderID}
	f(&w.docs[w.next])
	w.next = (w.next + 1) % docWatchLimit
}

// noteDoc reads the main frame's Page.frameNavigated (a document
// committed, at this URL), Page.navigatedWithinDocument (the current
// document shows another URL) and its document requests'
// Network.responseReceived (the status of the final response, after
// redirects) and the status script's Performance.metrics. On the mux's
// reader.
func (t *Tab) noteDoc(method string, params json.RawMessage) {
	switch method {
	case "Page.frameNavigated":
		var ev struct {
			Frame struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
				LoaderID string `json:"loaderId"`
				URL      string `json:"url"`
				Fragment string `json:"urlFragment"` // "#frag": the URL goes without it
			} `json:"frame"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.Frame.ParentID != "" || ev.Frame.LoaderID == "" {
			return
		}
		url := shownURL(ev.Frame.URL + ev.Frame.Fragment)
		t.docs.mu.Lock()
		t.docs.updateLocked(ev.Frame.LoaderID, func(d *loadedDoc) { d.url = url })
		t.docs.cur = ev.Frame.LoaderID
		t.docs.mu.Unlock()
	case "Page.navigatedWithinDocument":
		// history.pushState/replaceState or a fragment: the current
		// document now shows another URL.
		var ev struct {
			FrameID string `json:"frameId"`
			URL     string `json:"url"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.FrameID != t.id {
			return
		}
		url := shownURL(ev.URL)
		t.docs.mu.Lock()
		if t.docs.cur != "" {
			t.docs.updateLocked(t.docs.cur, func(d *loadedDoc) { d.url = url })
		}
		t.docs.mu.Unlock()
	case "Performance.metrics":
		// The status script's report of the document that committed
		// last (see statusScript). Only the first report after a commit
		// counts: a page calling console.timeStamp with our title later
		// cannot change it.
		if !bytes.Contains(params, []byte(pagejs.StatusTitle)) {
			return // another timestamp, or none: skip the decode
		}
		var ev struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		digits, ok := strings.CutPrefix(ev.Title, pagejs.StatusTitle)
		status, err := strconv.Atoi(digits)
		if !ok || err != nil {
			return
		}
		t.docs.mu.Lock()
		if t.docs.cur != "" {
			t.docs.updateLocked(t.docs.cur, func(d *loadedDoc) {
				if !d.reported {
					d.reported = true
					if status > 0 && d.status == 0 {
						d.status = status
					}
				}
			})
		}
		t.docs.mu.Unlock()
	case "Network.responseReceived":
		if !bytes.Contains(params, []byte(`"Document"`)) {
			return // not a document's response: skip the decode
		}
		var ev struct {
			LoaderID string `json:"loaderId"`
			FrameID  string `json:"frameId"`
			Type     string `json:"type"`
			Response struct {
				Status int `json:"status"`
			} `json:"response"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.Type != "Document" || ev.FrameID != t.id || ev.LoaderID == "" {
			return
		}
		t.docs.mu.Lock()
		t.docs.updateLocked(ev.LoaderID, func(d *loadedDoc) { d.status = ev.Response.Status })
		t.docs.mu.Unlock()
	}
}
