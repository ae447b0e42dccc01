// Room: navigation (Tab.Navigate, LastNavigation): Tab.navMu guards the
// last result. What the tab learns of its main frame's documents from its
// events is tab_docs.go's.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"

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
	// redirects (for a same-document navigation, with its new fragment),
	// redacted like URL.
	FinalURL string
}

// Navigate loads an http or https URL and waits for its load event (bounded
// by ctx and Config.NavigationTimeout). A URL that is not an absolute http
// or https URL with a host, that names a port outside 1 to 65535, or that
// the browser calls invalid (a host such as 300.1.1.1) is an ErrInvalidURL
// error, and nothing is loaded. A page the browser cannot load is an
// ErrNavigation error carrying the browser's error text, e.g.
// net::ERR_NAME_NOT_RESOLVED. A page the server answers with an HTTP error
// status (404, 500, ...) loads: Navigate returns nil and the result's
// Status says what the server answered; FinalURL is where redirects led.
// That holds when the server sends the status with an empty body too: the
// tab then shows the browser's own error page for it ("HTTP ERROR 404").
// A URL the browser shows no page for, net::ERR_ABORTED, is an
// ErrNavigation error whose hint says why when the session knows: the URL
// answered with a file, which the browser is saving (Session.Downloads
// lists it once complete; Tab.WaitDownload gets it), or with no page (HTTP
// 204 No Content) and the tab stays on its page.
//
// A page that sends the tab on by itself before its load event (a script's
// location change as it loads: a login gateway, a short link) is followed
// to where it leads, and the result is that page's; a refresh or a timer
// that fires after the load is the page's own business (Tab.WaitNavigation
// waits for it). A navigation that is not the page's (another call's
// Navigate) replacing the page before it loads ends Navigate at once with
// an ErrNavigation error saying so.
//
// A ctx that has already ended sends nothing: Navigate returns its error
// at once, and the tab stays on its page. One that ends while the server
// has not answered has the navigation stopped before Navigate returns, so
// that the stop cannot cut the next Navigate short.
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

// stopWait bounds stopLoading's wait for the browser's answer.
const stopWait = time.Second

// stopLoading stops the tab's pending navigation (Page.stopLoading, not
// counted as use) before its caller, whose context has ended, returns:
// on a context detached from the caller's, bounded by stopWait. Sent in
// the background, the stop could reach the browser after the caller's
// next Page.navigate and abort that one instead (net::ERR_ABORTED). Sent
// here it goes out first, and the tab's commands run in order: a stop
// whose answer is late is still ahead of any later navigation.
func (t *Tab) stopLoading(caller context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(caller), stopWait)
	defer cancel()
	_ = t.direct.Quiet().Invoke(ctx, "Page.stopLoading", nil, nil)
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
	if err := ctx.Err(); err != nil {
		// Nothing to stop: the browser was never asked.
		e := newError(op, err, errURL+" was not loaded: the caller's context had ended before the navigation began, so nothing was sent to the browser")
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "the tab stays on its page; navigate again with a context that has not ended"
		return res, e
	}
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
	dls := t.s.downloads.mark() // the downloads so far: did this navigation start one?
	asked := t.lifecycle.mark() // the page's own navigation requests so far
	var reply page.NavigateReply
	if err := t.direct.Invoke(ctx, "Page.navigate", page.NewNavigateArgs(rawURL), &reply); err != nil {
		if e := invalidURLErr(op, errURL, err); e != nil {
			e.Session, e.Tab = t.s.id, t.id
			return res, e
		}
		if ctx.Err() == nil || t.direct.Err() != nil {
			return res, fail(err)
		}
		// The server never answered: Chromium holds every later command
		// of the tab while the navigation waits, so stop it.
		if caller.Err() != nil {
			t.stopLoading(caller)
			e := t.callerEnded(op, caller, errURL+" did not answer").(*Error)
			e.Hint = "the navigation was stopped and the tab stays on its page; retry with a longer deadline if the site is slow, or check that it is up"
			return res, e
		}
		if context.Cause(ctx) == context.DeadlineExceeded {
			t.stopLoading(caller)
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
		if *reply.ErrorText == "net::ERR_HTTP_RESPONSE_CODE_FAILURE" && reply.LoaderID != nil && *reply.LoaderID != "" {
			// An HTTP error status with an empty body (a bare 404, 500
			// or 503): the server answered, and Chromium shows its own
			// error page for the answer ("HTTP ERROR 404"). It loaded
			// as a page with a body does, so it is no error either.
			res.LoaderID = string(*reply.LoaderID)
			if res.Status, res.FinalURL = t.loaded(ctx, res.LoaderID); res.Status >= 400 {
				x.docsSeen()
				t.recordNav(res)
				return res, nil
			}
			// The error page did not say the status (it did not load
			// in time): still say what the browser's error means.
			res.LoaderID, res.Status, res.FinalURL = "", 0, ""
			e := newError(op, ErrNavigation, fmt.Sprintf("%s: %s: the server answered with an HTTP error status and an empty body, and the tab shows the browser's error page for it", errURL, *reply.ErrorText))
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "the server has no page at this URL, or failed to make one: check the URL, or retry later if the server is down"
			return res, e
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
			e.Hint = t.abortHint(ctx, dls)
		}
		return res, e
	}
	if reply.LoaderID == nil || *reply.LoaderID == "" {
		// A same-document navigation: nothing to load. It is the page's
		// now and in the browser's history a little later; a Back before
		// then would skip it, so wait for the history (best effort), whose
		// entry is then the URL the tab shows.
		if h, err := invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil); err == nil {
			h = t.settledHistory(ctx, h)
			if h.CurrentIndex >= 0 && h.CurrentIndex < len(h.Entries) {
				res.FinalURL = shownURL(h.Entries[h.CurrentIndex].URL)
			}
		}
		if res.FinalURL == "" {
			_, res.FinalURL = t.loadedStatus(ctx)
		}
		t.recordNav(res)
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
			// Its document came but did not load. Once parsed
			// (DOMContentLoaded), what holds its load event is most often
			// what it still loads (an image, a frame, a script that never
			// comes): the page is there. Before that, a script of the
			// page's may hold it (a loop that never returns), and every
			// later call of the tab with it. Either way, a page that does
			// not answer has its script stopped (unstick).
			if t.direct.Err() == nil && !t.lifecycle.navigating() {
				parsed, _ := t.lifecycle.has(res.LoaderID + "/DOMContentLoaded")
				checked := t.unstick()
				switch {
				case parsed:
					e.Hint = "its document is in the tab and was parsed, but its load event is held by resources still loading (an image, a frame or a script that never finishes): the page is usually usable now, take a snapshot to see it; to wait for the rest, call Tab.WaitLoad, or " + more
				case checked:
					e.Hint = "if a script of the page's keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes commands again: take a snapshot; else retry, or " + more
				}
			}
			return res, e
		}
		return res, fail(err)
	}
	x.docsSeen()
	res.Status, res.FinalURL = t.loaded(ctx, res.LoaderID)
	t.recordNav(res)
	return res, nil
}

// invalidURLErr returns the ErrInvalidURL error of a Page.navigate the
// browser refused as an invalid URL (one Go's parser takes and Chromium's
// does not: a host such as 300.1.1.1, not an IPv4 address), else nil.
func invalidURLErr(op, errURL string, err error) *Error {
	var re *rpcc.ResponseError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "invalid URL") {
		return nil
	}
	e := newError(op, ErrInvalidURL, "the browser refused "+errURL+" as an invalid URL")
	e.Err = err
	e.Hint = "fix the URL: check its host (an IP address is four numbers from 0 to 255) and its port (1 to 65535); Navigate loads http:// and https:// URLs"
	return e
}

// recordNav makes res the tab's last navigation (LastNavigation).
func (t *Tab) recordNav(res NavigateResult) {
	t.navMu.Lock()
	t.lastNav = res
	t.navMu.Unlock()
}

// abortDownloadWait bounds how long abortHint waits, past endedDuring's
// wait, for the browser to report the download that aborted a navigation.
const abortDownloadWait = 1750 * time.Millisecond

// abortHint is the hint of a navigation the browser aborted
// (net::ERR_ABORTED) that no other navigation replaced and no ended tab
// or beforeunload dialog explains. Chromium aborts the navigation of a URL
// that answers with a file to save (Content-Disposition: attachment), and
// of one that answers with no page (204 No Content, 205 Reset Content),
// leaving the tab on its page; the session's record of the downloads the
// browser began (Browser.downloadWillBegin) since dls tells them apart.
// It is called after endedDuring's wait (250 ms): the browser reports a
// download 1-40 ms after it aborts the navigation (Chromium 156, load 15),
// and when it has not yet, abortHint waits up to abortDownloadWait more
// for the report. Only a navigation that began no download (a 204) pays
// that wait in full.
func (t *Tab) abortHint(ctx context.Context, dls downloadMark) string {
	switch t.s.downloads.beganWithin(ctx, dls, t.id, t.s.remote(), abortDownloadWait) {
	case downloadBegan:
		return "the URL answers with a file to download, and the browser is saving it in Session.DownloadDir (Session.Downloads lists it once complete), so do not fetch it again; to wait for it and get its path, make this navigation the trigger of Tab.WaitDownload"
	case downloadNone:
		return "the server sent no page to show (an answer such as HTTP 204 No Content or 205 Reset Content does this) and began no download, so the tab stays on its page: take a snapshot to see it; if you expected a page, check the URL"
	}
	// The session does not see its browser's downloads (a remote one's,
	// or one it attached to before any Tab.WaitDownload): either may be
	// the cause.
	file := "(make this navigation the trigger of Tab.WaitDownload to get it)"
	if t.s.remote() {
		file = "(a remote browser saves it nowhere: make this navigation the trigger of Tab.WaitDownload to bring it here)"
	}
	return "the load was cancelled: the URL may answer with a file to download " + file + ", or with no page to show (HTTP 204 No Content or 205 Reset Content), and the tab then stays on its page: take a snapshot to see it"
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
