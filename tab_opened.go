// Room: a tab a page just opened (window.open, a link with a target), or
// an attached browser's tab on its first navigation, while it is still on
// its initial empty document: WaitLoad and Snapshot
// wait for its first page here, and WaitNavigation says here when its
// action opened such a tab instead of navigating. tabExt.openedWaited
// (atomic) says a snapshot's wait was done; no lock of its own.

package browserpool

import (
	"context"
	"time"

	"github.com/mafredri/cdp/protocol/target"
)

// openedPageWait bounds how long a snapshot of a tab a page opened waits
// for the tab's first page to commit (awaitOpenedPage). WaitLoad waits
// within its own bound instead (openedPage).
const openedPageWait = 2 * time.Second

// openedPoll is how often openedPage asks the browser, between the tab's
// lifecycle events, whether the first navigation is still on its way.
const openedPoll = 250 * time.Millisecond

// awaitOpenedPage is openedPage for a snapshot: once per tab, and up to
// openedPageWait. It reports whether a new document committed.
func (x *tabExt) awaitOpenedPage(ctx context.Context, frameURL string) bool {
	if x.openedWaited.Load() {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, openedPageWait)
	defer cancel()
	committed, _ := x.openedPage(ctx, frameURL)
	return committed
}

// openedPage waits, within ctx, for a tab a page opened (window.open, a
// link with a target) to commit its first page, when it is still on its
// initial empty document: frameURL (its main frame's) is about:blank or
// empty, and its target has an opener and no URL of its own yet (the
// browser's sign that the first navigation is still on its way; a window
// opened without a URL, window.open(), has about:blank), or lists a URL
// other than about:blank (a tab of an attached browser on its first
// navigation, which its user or command line began). Until then the
// tab reads as an empty about:blank, loaded: WaitLoad would return at once
// and a snapshot would be empty while the page it opens is on its way. It
// reports whether a new document committed; err is ctx's (or the
// connection's) end while the first page was still on its way, and nil
// for a tab that waits for no first page.
func (x *tabExt) openedPage(ctx context.Context, frameURL string) (committed bool, err error) {
	w := x.t.lifecycle
	if frameURL != "" && frameURL != "about:blank" || w == nil {
		return false, nil
	}
	since, _ := w.mainDoc()
	pending := func() (bool, error) {
		info, err := invoke[target.GetTargetInfoReply](ctx, x.t.direct, "Target.getTargetInfo", nil)
		if err != nil {
			return false, err
		}
		// A tab a page opened lists no URL until its first page commits;
		// a tab sent somewhere by its browser's user or command line (an
		// attached browser's) lists where it goes meanwhile.
		u := info.TargetInfo.URL
		return u == "" && info.TargetInfo.OpenerID != nil || u != "" && u != "about:blank", nil
	}
	if p, err := pending(); err != nil || !p {
		return false, nil
	}
	x.openedWaited.Store(true)
	shows := func() (bool, error) {
		var tree struct {
			FrameTree struct {
				Frame struct {
					URL string `json:"url"`
				} `json:"frame"`
			} `json:"frameTree"`
		}
		if err := x.t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree); err != nil {
			return false, err
		}
		u := tree.FrameTree.Frame.URL
		return u != "" && u != "about:blank", nil
	}
	tick := time.NewTicker(openedPoll)
	defer tick.Stop()
	for {
		_, changed := w.has("") // before the count: a commit after it closes changed
		if n := w.commits.Load(); n > since {
			// A new document, or the events of the empty one, which the
			// browser sends when the tab's events are turned on: the
			// frame says which.
			since = n
			if ok, err := shows(); err != nil || ok {
				return ok, err
			}
		}
		err := w.nextOr(ctx, changed, tick.C)
		if err == errPendingPassed {
			// No event meanwhile: is the navigation still on its way (a
			// slow server), or has it ended without a page (stopped)?
			if p, err := pending(); err != nil {
				return false, err
			} else if !p {
				return shows()
			}
			continue
		}
		if err != nil {
			return false, err
		}
	}
}

// openedGrace is how long WaitNavigation, once its action opened a new
// tab, waits for a navigation of the tab's own before it says the action
// opened a tab instead.
const openedGrace = 500 * time.Millisecond

// openedTabErr is WaitNavigation's error when its action opened a new tab
// and this tab did not navigate.
func (x *tabExt) openedTabErr(op string) error {
	where := ""
	if u := x.opened.Load(); u != nil && *u != "" {
		where = " at " + echo(redactURL(*u))
	}
	e := newError(op, ErrNavigation, "the action opened a new tab"+where+" and this tab did not navigate")
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Hint = "act on the new tab instead: Session.Tabs lists it, Session.Tab returns it by its id, and Tab.WaitLoad on it waits for its page; this tab stays on its page"
	return e
}
