// Room: what a tab's page is now (Tab.PageInfo): its URL, title,
// viewport, scroll position and size, and the dialog it holds open. No
// locks of its own.

package browserpool

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/browserpool/browserpool/internal/pagejs"
	"github.com/browserpool/browserpool/internal/redact"
)

// PageInfo describes the page in a tab. While a deferred dialog is open
// only Dialog is set: the page cannot answer until the dialog is.
type PageInfo struct {
	SessionID string // the tab's session
	TabID     string // the tab's CDP target id
	URL       string // token-like query values redacted
	Title     string // the document's title, "" when it has none
	// Viewport size, scroll position and page (document) size, in CSS
	// pixels.
	ViewportWidth, ViewportHeight int // the viewport's size
	ScrollX, ScrollY              int // how far the page is scrolled
	PageWidth, PageHeight         int // the whole document's size
	// Dialog is the open dialog waiting for Tab.AnswerDialog, if any.
	Dialog *Dialog
}

// PageInfo returns the page's URL, title, viewport, scroll position and
// size, or the dialog that is open instead. It reads them in the
// package's isolated JavaScript world, where a page that replaced a
// built-in (Math.max, a getter of its own for innerWidth) changes nothing.
func (t *Tab) PageInfo(ctx context.Context) (info PageInfo, err error) {
	const op = "Tab.PageInfo"
	end, err := t.begin(op)
	if err != nil {
		return PageInfo{}, err
	}
	defer end()
	x := t.ext()
	defer x.record("page-info", "", time.Now(), &err)
	info = PageInfo{SessionID: t.s.id, TabID: t.id}
	x.syncNavigation(ctx)
	if d, ok := x.dialog.current(); ok {
		info.Dialog = &d
		return info, nil
	}
	ctx, done := x.guard(ctx)
	defer done()
	reply, err := x.evaluateOwn(ctx, pagejs.PageInfo)
	if err != nil {
		if d, ok := x.dialog.current(); ok {
			info.Dialog = &d
			return info, nil
		}
		return PageInfo{}, x.fail(op, ctx, "", err)
	}
	if reply.ExceptionDetails != nil {
		return PageInfo{}, t.ownJSError(op, reply.ExceptionDetails)
	}
	var v struct {
		URL, Title             string
		VW, VH, SX, SY, PW, PH float64
	}
	if err := json.Unmarshal(reply.Result.Value, &v); err != nil {
		return PageInfo{}, x.fail(op, ctx, "", err)
	}
	r := func(f float64) int { return int(math.Round(f)) }
	info.URL, info.Title = redact.Scrub(v.URL), v.Title
	info.ViewportWidth, info.ViewportHeight = r(v.VW), r(v.VH)
	info.ScrollX, info.ScrollY = r(v.SX), r(v.SY)
	info.PageWidth, info.PageHeight = r(v.PW), r(v.PH)
	return info, nil
}
