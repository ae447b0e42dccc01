// Room: a tab a page just opened (window.open, a link with a target)
// while it is still on its initial empty document: WaitLoad and Snapshot
// wait for its first page here. tabExt.openedWaited (atomic) says the
// wait was done; no lock of its own.

package browserpool

import (
	"context"
	"time"

	"github.com/mafredri/cdp/protocol/target"
)

// openedPageWait bounds how long a wait or a snapshot of a tab a page
// opened waits for the tab's first page to commit (awaitOpenedPage).
const openedPageWait = 2 * time.Second

// awaitOpenedPage waits, once per tab and up to openedPageWait, for a tab
// a page opened (window.open, a link with a target) to commit its first
// page, when it is still on its initial empty document: frameURL (its
// main frame's) is about:blank or empty, and its target has an opener and
// no URL of its own yet (the browser's sign that no navigation has
// committed). Until then the tab reads as an empty about:blank, loaded:
// WaitLoad would return at once and a snapshot would be empty while the
// page it opens is on its way. It reports whether a new document
// committed. A popup opened without a URL (window.open()) costs its first
// wait openedPageWait.
func (x *tabExt) awaitOpenedPage(ctx context.Context, frameURL string) bool {
	w := x.t.lifecycle
	if frameURL != "" && frameURL != "about:blank" || w == nil || x.openedWaited.Load() {
		return false
	}
	since, _ := w.mainDoc()
	info, err := invoke[target.GetTargetInfoReply](ctx, x.t.direct, "Target.getTargetInfo", nil)
	if err != nil || info.TargetInfo.URL != "" || info.TargetInfo.OpenerID == nil {
		return false
	}
	x.openedWaited.Store(true)
	timer := time.NewTimer(openedPageWait)
	defer timer.Stop()
	for {
		_, changed := w.has("") // before the count: a commit after it closes changed
		if n := w.commits.Load(); n > since {
			// A new document, or the events of the empty one, which the
			// browser sends when the tab's events are turned on: the
			// frame says which.
			since = n
			var tree struct {
				FrameTree struct {
					Frame struct {
						URL string `json:"url"`
					} `json:"frame"`
				} `json:"frameTree"`
			}
			if err := x.t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree); err != nil {
				return false
			}
			if u := tree.FrameTree.Frame.URL; u != "" && u != "about:blank" {
				return true
			}
		}
		if w.nextOr(ctx, changed, timer.C) != nil {
			return false
		}
	}
}
