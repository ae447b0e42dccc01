// Room: history (Back, Forward, Reload). No lock and no state of its own:
// the history lives in the browser, and the waits read the tab's
// lifecycleWatch (which locks itself).

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
)

// ErrNoHistory: Tab.Back was called on a tab at the first entry of its
// history, or Tab.Forward at the last. Nothing was changed.
var ErrNoHistory = errors.New("no history entry to go to")

// busyPage is what a history move or reload whose call the browser held
// until the bound ran out did not get: a page busy in a script (or a hung
// renderer) holds them, as it does not unload.
const busyPage = "the page did not let the tab leave it (a script busy in it, or a hung renderer, holds the move)"

// historyPoll is how often a history move checks, between the tab's
// lifecycle events, whether it has arrived (a page restored from the
// back-forward cache or a same-document entry fires none).
const historyPoll = 50 * time.Millisecond

// Back goes one entry back in the tab's history, like the browser's back
// button, and waits until that page has loaded (document.readyState is
// "complete"), bounded by ctx and Config.NavigationTimeout like Navigate.
// At the first entry it is an ErrNoHistory error and nothing changes; the
// blank page a tab opened with a URL starts on is not an entry. An entry
// whose page the browser now fails to load (the site down, a redirect
// loop) is an ErrNavigation error carrying the browser's error text, e.g.
// net::ERR_TOO_MANY_REDIRECTS, as soon as the tab shows the browser's
// error page in its place. The result's URL is the entry's, redacted;
// LoaderID is empty when the entry was in the same document (a #fragment
// or history.pushState).
func (t *Tab) Back(ctx context.Context) (NavigateResult, error) {
	return t.goHistory(ctx, "Tab.Back", "back", -1)
}

// Forward goes one entry forward in the tab's history and waits like Back.
// At the last entry it is an ErrNoHistory error and nothing changes.
func (t *Tab) Forward(ctx context.Context) (NavigateResult, error) {
	return t.goHistory(ctx, "Tab.Forward", "forward", +1)
}

// Reload reloads the tab's page and waits for its load event, like
// Navigate (bounded by ctx and Config.NavigationTimeout); a load that does
// not finish in time is an ErrTimeout error. A load the browser fails (the
// site down, a redirect loop) is an ErrNavigation error carrying the
// browser's error text, e.g. net::ERR_CONNECTION_REFUSED: the tab then
// shows the browser's error page. The result's URL is the page's,
// redacted.
func (t *Tab) Reload(ctx context.Context) (res NavigateResult, err error) {
	const op = "Tab.Reload"
	res = NavigateResult{SessionID: t.s.id, TabID: t.id, Channel: ChannelCDP}
	caller := ctx
	err = t.act(ctx, op, "reload", "", nil, func(ctx context.Context, x *tabExt, args *string) error {
		ctx, cancel := context.WithTimeout(ctx, t.deps.navigationTimeout)
		defer cancel()
		before := x.currentLoader(ctx)
		start := time.Now()
		if err := t.direct.Invoke(ctx, "Page.reload", page.NewReloadArgs(), nil); err != nil {
			return t.busyErr(op, caller, ctx, x, err)
		}
		for {
			_, changed := t.lifecycle.has("")
			if e := t.stayedErr(op, start, "the page"); e != nil {
				return e
			}
			if cur := x.currentLoader(ctx); cur != "" && cur != before {
				res.LoaderID = cur
				if err := x.waitLoad(ctx, cur); err != nil {
					return t.historyErr(op, caller, ctx, x, "the reloaded page did not finish loading", err)
				}
				break
			}
			if err := t.lifecycle.next(ctx, changed); err != nil {
				return t.historyErr(op, caller, ctx, x, "the reload did not start", err)
			}
		}
		if e := t.failedLoad(ctx, op, ""); e != nil {
			res.URL = shownURL(e.failed)
			*args = res.URL
			e.Hint = "the tab now shows the browser's error page: check that the site is up and reachable from this machine, then Reload again, or Navigate elsewhere"
			return e.Error
		}
		res.URL = t.currentURL(ctx)
		*args = res.URL
		res.Status, res.FinalURL = t.loaded(ctx, res.LoaderID)
		return nil
	})
	return res, err
}

// goHistory moves delta entries in the history and waits for the page.
func (t *Tab) goHistory(ctx context.Context, op, action string, delta int) (res NavigateResult, err error) {
	res = NavigateResult{SessionID: t.s.id, TabID: t.id, Channel: ChannelCDP}
	caller := ctx
	err = t.act(ctx, op, action, "", nil, func(ctx context.Context, x *tabExt, args *string) error {
		ctx, cancel := context.WithTimeout(ctx, t.deps.navigationTimeout)
		defer cancel()
		h, err := invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil)
		for try := 0; err != nil && notAttached(err) && try < 20; try++ {
			// On an error page (a navigation that failed) Chromium answers
			// so until the page is attached again.
			select {
			case <-ctx.Done():
				return t.historyErr(op, caller, ctx, x, "", ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
			h, err = invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil)
		}
		if err != nil {
			return t.busyErr(op, caller, ctx, x, err)
		}
		h = t.settledHistory(ctx, h)
		to := h.CurrentIndex + delta
		// The blank page a tab starts on, before its first navigation,
		// is no page to go back to: Chromium cannot attach to it again
		// once left, and the tab's later calls fail.
		first := 0
		if len(h.Entries) > 1 && h.Entries[0].URL == "about:blank" {
			first = 1
		}
		if to < first || to >= len(h.Entries) {
			where := "first"
			if delta > 0 {
				where = "last"
			}
			e := newError(op, ErrNoHistory, fmt.Sprintf("the tab is at the %s of its %d history entries", where, len(h.Entries)-first))
			e.Session, e.Tab = t.s.id, t.id
			return e
		}
		entry := h.Entries[to]
		res.URL = shownURL(entry.URL)
		*args = res.URL
		errURL := echo(redactURL(entry.URL)) // errors never carry a query string
		before := x.currentLoader(ctx)
		start := time.Now()
		if err := t.direct.Invoke(ctx, "Page.navigateToHistoryEntry", page.NewNavigateToHistoryEntryArgs(entry.ID), nil); err != nil && !notAttached(err) {
			return t.busyErr(op, caller, ctx, x, err)
		} // not attached: the page was swapped as the navigation started (from an error page); the wait below sees where it went
		stop := t.direct.Listen() // the load comes as events
		defer stop()
		tick := time.NewTicker(historyPoll)
		defer tick.Stop()
		for {
			_, changed := t.lifecycle.has("")
			if before != "" {
				// Chromium shows its error page for an entry whose load
				// fails as an entry of its own: the one asked for never
				// becomes current.
				if e := t.failedLoad(ctx, op, before); e != nil {
					e.Hint = "the tab now shows the browser's error page in place of that entry: check that the site is up and reachable from this machine, then Tab.Reload; or Navigate to a page that loads"
					return e.Error
				}
			}
			done, err := t.historyArrived(ctx, entry.ID)
			if e := t.stayedErr(op, start, errURL); e != nil {
				return e // Chromium reports the entry it was asked for meanwhile
			}
			if err != nil {
				return t.historyErr(op, caller, ctx, x, errURL+" did not finish loading", err)
			} else if done {
				// Chromium reports the entry it was asked for as current
				// before a page's beforeunload dialog has even opened: the
				// old document, complete, is not the arrival. A new
				// document is; so is the old one at the entry's URL (an
				// entry of the same document: a fragment, a pushState).
				cur := x.currentLoader(ctx)
				if cur != before {
					res.LoaderID = cur
					res.Status, res.FinalURL = t.loaded(ctx, cur)
					return nil
				}
				if t.currentURL(ctx) == res.URL {
					return nil
				}
			}
			select {
			case <-changed:
			case <-tick.C:
			case <-ctx.Done():
				return t.historyErr(op, caller, ctx, x, errURL+" did not finish loading", ctx.Err())
			}
		}
	})
	return res, err
}

// stayedErr is the error of a navigation (to what) the page refused to
// leave for since start: its beforeunload dialog was not accepted. Nil if
// no such dialog opened.
func (t *Tab) stayedErr(op string, start time.Time, what string) error {
	d, ok := t.stayedFor(start)
	if !ok {
		return nil
	}
	how := map[DialogBy]string{
		DialogByHandler: "the tab's dialog handler answered Cancel",
		DialogByCaller:  "Tab.AnswerDialog answered Cancel",
		DialogTimedOut:  "nobody answered it in time, so it was dismissed",
	}[d.By]
	if how == "" {
		how = "with no dialog handler set it was dismissed"
	}
	e := newError(op, ErrNavigation, fmt.Sprintf("%s: the page asked to confirm leaving it (a beforeunload dialog) and %s, so the tab stayed on it", what, how))
	e.Session, e.Tab = t.s.id, t.id
	e.Hint = "set a dialog handler that accepts beforeunload dialogs (Tab.SetDialogHandler returning Accept: true for Type \"beforeunload\"), then try again"
	return e
}

// failedPage is the ErrNavigation error of a load the browser failed, and
// the URL (as it is: not for errors or the trace) it failed to load.
type failedPage struct {
	*Error
	failed string
}

// failedLoad returns the error of a load the browser failed: the tab's
// main frame shows the browser's error page (its frame names the URL that
// could not be loaded), in a document other than before's ("" for any).
// Nil if it does not, or if the frame does not answer. The error carries
// the browser's error text (net::ERR_...) when its page says it; its hint
// is the caller's to set.
func (t *Tab) failedLoad(ctx context.Context, op, before string) *failedPage {
	var tree struct {
		FrameTree struct {
			Frame struct {
				LoaderID       string `json:"loaderId"`
				UnreachableURL string `json:"unreachableUrl"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree); err != nil {
		return nil
	}
	f := tree.FrameTree.Frame
	if f.UnreachableURL == "" || f.LoaderID == "" || f.LoaderID == before {
		return nil
	}
	// Its text is on the page once it has loaded (best effort, bounded).
	t.awaitErrorPage(ctx, f.LoaderID)
	u := echo(redactURL(f.UnreachableURL))
	detail := fmt.Sprintf("the load of %s failed, and the tab shows the browser's error page", u)
	if code := t.errorPageCode(ctx); code != "" {
		detail = fmt.Sprintf("%s: %s (the tab shows the browser's error page)", u, code)
	}
	e := newError(op, ErrNavigation, detail)
	e.Session, e.Tab = t.s.id, t.id
	return &failedPage{Error: e, failed: f.UnreachableURL}
}

// errorPageCode returns the browser's error text (net::ERR_...) its error
// page shows, or "" if the page does not say (within a second).
func (t *Tab) errorPageCode(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	reply, err := invoke[runtime.EvaluateReply](ctx, t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs(`(document.querySelector('.error-code') || {}).textContent || ''`).SetReturnByValue(true))
	if err != nil || reply.ExceptionDetails != nil {
		return ""
	}
	var code string
	if json.Unmarshal(reply.Result.Value, &code) != nil {
		return ""
	}
	code = strings.TrimSpace(code)
	if !netErrorCode(code) {
		return ""
	}
	return "net::" + code
}

// netErrorCode reports whether s reads as one of Chromium's net error
// names (ERR_NAME_NOT_RESOLVED): the error page's text is echoed only then.
func netErrorCode(s string) bool {
	rest, ok := strings.CutPrefix(s, "ERR_")
	if !ok || rest == "" || len(s) > 64 {
		return false
	}
	for _, r := range rest {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// historyArrived reports whether the tab is at history entry id and its
// document has loaded. A navigation replacing the document under the
// check is not an error: the caller checks again.
func (t *Tab) historyArrived(ctx context.Context, id int) (bool, error) {
	h, err := invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil)
	if err != nil {
		if ctx.Err() == nil && notAttached(err) {
			return false, nil // swapped to another process: ask again
		}
		return false, err
	}
	if h.CurrentIndex < 0 || h.CurrentIndex >= len(h.Entries) || h.Entries[h.CurrentIndex].ID != id {
		return false, nil
	}
	state, err := t.readyState(ctx)
	if err != nil {
		if ctx.Err() == nil && contextGone(err.Error()) {
			return false, nil
		}
		return false, err
	}
	return state == "complete", nil
}

// notAttached reports Chromium's answer to a Page call while the tab's
// page is being swapped for another process's (leaving an error page, a
// cross-site navigation): a moment later the call succeeds.
func notAttached(err error) bool {
	return strings.Contains(err.Error(), "Not attached to an active page")
}

// currentURL returns the main frame's URL, redacted ("" on error).
func (t *Tab) currentURL(ctx context.Context) string {
	if u := t.location(ctx); u != "" {
		return shownURL(u)
	}
	return ""
}

// location is the page's location.href as it is (not for errors or the
// trace: it may carry credentials), or "" if the page does not answer.
func (t *Tab) location(ctx context.Context) string {
	reply, err := invoke[runtime.EvaluateReply](ctx, t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs("location.href").SetReturnByValue(true))
	if err != nil || reply.ExceptionDetails != nil {
		return ""
	}
	var u string
	if json.Unmarshal(reply.Result.Value, &u) != nil {
		return ""
	}
	return u
}

// historySettle bounds how long settledHistory waits for the browser to
// record a same-document navigation the page has made.
const historySettle = time.Second

// settledHistory returns the tab's history h, read again until the browser
// records the page's URL as its current entry. A same-document navigation
// (a #fragment, history.pushState) is the page's at once and the
// browser's history's some milliseconds later: a read between the two
// sees the entry before it, and Back from there skips one. Only a
// difference within the page's origin is waited for (an error page's URL
// is never its entry's), for at most historySettle (the page's answer
// included); then, or on an error, the history is returned as it is.
func (t *Tab) settledHistory(ctx context.Context, h *page.GetNavigationHistoryReply) *page.GetNavigationHistoryReply {
	// The whole wait is bounded, the page's answer too: a page busy in a
	// script must not hold a Back that would leave it.
	ctx, cancel := context.WithTimeout(ctx, historySettle)
	defer cancel()
	want := t.location(ctx)
	for {
		if h.CurrentIndex < 0 || h.CurrentIndex >= len(h.Entries) || want == "" {
			return h
		}
		cur := h.Entries[h.CurrentIndex].URL
		if cur == want || !sameOrigin(cur, want) {
			return h
		}
		select {
		case <-ctx.Done():
			return h
		case <-time.After(5 * time.Millisecond):
		}
		again, err := invoke[page.GetNavigationHistoryReply](ctx, t.direct, "Page.getNavigationHistory", nil)
		if err != nil {
			return h
		}
		h = again
	}
}

// sameOrigin reports whether URLs a and b have one scheme and host (and
// port).
func sameOrigin(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil {
		return false
	}
	ub, err := url.Parse(b)
	return err == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host && ua.Host != ""
}

// historyErr turns a failed history wait into ErrTimeout when the
// navigation bound ran out, into the caller's context error when that
// ended first, and otherwise into the usual action error.
func (t *Tab) historyErr(op string, caller, ctx context.Context, x *tabExt, what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		if what == "" {
			what = "the page"
		}
		if caller.Err() != nil {
			return t.callerEnded(op, caller, what)
		}
		e := newError(op, ErrTimeout, fmt.Sprintf("%s within %v", what, t.deps.navigationTimeout))
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "the page may still be usable: take a snapshot; or retry, or raise Config.NavigationTimeout"
		return e
	}
	return x.fail(op, ctx, "", err)
}

// busyErr is historyErr for a history move or reload the browser held
// (busyPage): its timeout's hint says what helps with a page that does not
// answer.
func (t *Tab) busyErr(op string, caller, ctx context.Context, x *tabExt, err error) error {
	err = t.historyErr(op, caller, ctx, x, busyPage, err)
	if e, ok := err.(*Error); ok && e.Class == ErrTimeout {
		e.Hint = "the page's scripts are not answering: close the tab (Session.CloseTab) and open a new one; a longer Config.NavigationTimeout helps only a page that is slow, not stuck"
	}
	return err
}

// callerEnded is the error of a navigation or history move whose caller's
// context ended before the page did what (the library's own bound,
// Config.NavigationTimeout, had not run out).
func (t *Tab) callerEnded(op string, caller context.Context, what string) error {
	e := newError(op, caller.Err(), what+" before the caller's context ended")
	e.Session, e.Tab = t.s.id, t.id
	e.Hint = "the page may still be usable: take a snapshot; pass a context with a longer deadline to wait longer"
	return e
}
