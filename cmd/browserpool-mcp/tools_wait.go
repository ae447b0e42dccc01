// Room: browser_wait_for's and browser_take_screenshot's handlers. Each is
// one library call and one result mapping. No locks of its own.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) waitFor(ctx context.Context, c *toolCall, in WaitForArgs) (*mcp.CallToolResult, error) {
	n := 0
	for _, set := range []bool{in.Time > 0, in.Text != "", in.TextGone != "", in.Selector != "", in.State != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, toolErrorf(fmt.Sprintf("browser_wait_for needs exactly one condition, got %d", n), "pass one of time, text, textGone, selector or state")
	}
	if in.Time > 0 {
		d := time.Duration(min(in.Time, 60) * float64(time.Second))
		tm := time.NewTimer(d)
		defer tm.Stop()
		select {
		case <-tm.C:
			return text("Waited %v.", d), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	limit := waitForDefault
	if in.Timeout > 0 {
		limit = time.Duration(min(in.Timeout, waitForMax.Seconds()) * float64(time.Second))
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var done, what string
	err := s.withTab(wctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) error {
		switch {
		case in.Text != "":
			q, _ := json.Marshal(in.Text)
			done, what = fmt.Sprintf("The text %q is on the page", in.Text), fmt.Sprintf("the text %q did not appear", in.Text)
			return t.WaitCondition(wctx, fmt.Sprintf(pageHasText, q), nil)
		case in.TextGone != "":
			q, _ := json.Marshal(in.TextGone)
			done, what = fmt.Sprintf("The text %q is gone", in.TextGone), fmt.Sprintf("the text %q was still on the page", in.TextGone)
			return t.WaitCondition(wctx, "!"+fmt.Sprintf(pageHasText, q), nil)
		case in.Selector != "":
			done, what = fmt.Sprintf("%q is visible", in.Selector), fmt.Sprintf("no element matching %q became visible", in.Selector)
			return t.WaitVisible(wctx, in.Selector)
		case in.State == "load":
			done, what = "The page has loaded", "the page did not finish loading"
			return t.WaitLoad(wctx)
		case in.State == "networkidle":
			done, what = "The network is idle", "the network did not go quiet"
			return t.WaitNetworkIdle(wctx, browserpool.NetworkIdleOptions{})
		}
		return toolErrorf(fmt.Sprintf("unknown state %q", in.State), "pass state load or networkidle")
	})
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		return nil, toolErrorf(fmt.Sprintf("%s within %v", what, limit),
			"call browser_snapshot to see what the page shows; if it is only slow, call browser_wait_for again with a larger timeout")
	}
	if err != nil {
		return nil, err
	}
	return text("%s.", done), nil
}

// browser_wait_for's bounds on a condition: the default, and the most
// (inside the server's limit on a call, so the agent gets this tool's
// answer rather than the call's timeout).
const (
	waitForDefault = 30 * time.Second
	waitForMax     = 110 * time.Second
)

// pageHasText is the check of browser_wait_for's text and textGone, a fmt
// template of the text as a JSON string: the text is in the page's
// rendered text, or in that of one of its frames the page may read (its
// own origin's; another site's frame cannot be read from the page).
const pageHasText = `(() => { const q = %s; const has = w => { try { if (w.document.body && w.document.body.innerText.includes(q)) return true; } catch (e) {} for (let i = 0; i < w.frames.length; i++) { if (has(w.frames[i])) return true; } return false; }; return has(window); })()`

func (s *Server) screenshot(ctx context.Context, c *toolCall, in ScreenshotArgs) (*mcp.CallToolResult, error) {
	if in.FullPage && in.Ref != "" {
		return nil, toolErrorf("browser_take_screenshot got both fullPage and a ref: each chooses what to capture (the whole page, or one element)",
			"pass fullPage true for the whole page, or ref for one element, not both")
	}
	ext := ".png"
	if in.Type == "jpeg" {
		ext = ".jpeg"
	}
	opts := browserpool.ScreenshotOptions{Name: withExt(in.Filename, ext), FullPage: in.FullPage, JPEG: in.Type == "jpeg", MaxDimension: in.MaxDimension}
	if in.Ref != "" {
		opts.Ref = ref(in.Ref)
	}
	if opts.MaxDimension <= 0 && s.cfg.ScreenshotMax > 0 {
		opts.MaxDimension = s.cfg.ScreenshotMax
	}
	var shot browserpool.Screenshot
	err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
		shot, err = t.Screenshot(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("Screenshot %dx%d saved to %s [session %s, tab %s]", shot.Width, shot.Height, shot.Path, shot.SessionID, shot.TabID)
	if in.FullPage && shot.Width < 600 && shot.Height > 2*shot.Width {
		// A long page scaled to fit the image's bound: its text is too
		// small to read.
		msg += ". The page is long, so the image is scaled down until its text is unreadable: to read a part, scroll there with browser_scroll and take a screenshot of the viewport, or read the page with browser_snapshot"
	}
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: msg},
		// The type the bytes are: a file name ending in .jpg makes a JPEG
		// whatever type says.
		&mcp.ImageContent{Data: shot.Data, MIMEType: "image/" + shot.Format},
	}}, nil
}
