// Room: tool registration, and the page tools that read (browser_evaluate's
// page code is in tools_evaluate.go). Each tool is one
// library call and one result mapping. No locks of its own.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/redact"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Target names the session and tab a page tool acts on.
type Target struct {
	Session string `json:"session,omitempty" jsonschema:"Your browser session: a name or id from browser_session_list. Empty means your only session (one is opened on first use)."`
	Tab     string `json:"tab,omitempty" jsonschema:"Tab id from browser_tabs. Empty means the session's active tab. Required when the server is attached to a shared browser (-cdp-endpoint)."`
}

// annotations of a tool. ReadOnlyHint is set for tools that only look;
// DestructiveHint for tools whose effect on the page or the sessions cannot
// be taken back (a click may submit or delete; closing loses the page);
// IdempotentHint where calling again with the same arguments changes
// nothing more; OpenWorldHint where the tool talks to web sites.
func annotations(title string, readOnly, destructive, idempotent, openWorld bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    readOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  idempotent,
		OpenWorldHint:   &openWorld,
	}
}

// schema returns In's input schema with the enums given: a property path
// (names, and "items" for an array's items, joined by dots) to the allowed
// values.
func schema[In any](enums map[string][]any) *jsonschema.Schema {
	sc, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("browserpool-mcp: schema of %T: %v", *new(In), err))
	}
	for path, values := range enums {
		p := sc
		for name := range strings.SplitSeq(path, ".") {
			if name == "items" {
				p = p.Items
			} else {
				p = p.Properties[name]
			}
		}
		p.Enum = values
	}
	return sc
}

// add registers a tool whose handler gets the calling client. An error the
// handler returns becomes a tool error (see describe).
//
// The handler's context ends when the client goes away (its MCP session
// ends, or over HTTP the request carrying the call is cut, see
// HTTPHandler), when the server shuts down, when the client cancels the
// call, or at the tool's bound: a launch of the client's browser, then the
// tool's page bound (toolBound, applied by withTab and pageCtx).
func add[In any](s *Server, t *mcp.Tool, enums map[string][]any, h func(ctx context.Context, c *toolCall, in In) (*mcp.CallToolResult, error)) {
	if t.InputSchema == nil {
		t.InputSchema = schema[In](enums)
	}
	bound := s.toolBound(t.Name)
	limit := bound + s.pool.Config().LaunchTimeout + 15*time.Second
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		// Counted before the closed check: a call that passes it is one
		// shutdown sees in flight, and drain waits for its answer.
		s.calls.Add(1)
		defer s.calls.Add(-1)
		c, err := s.client(req.Session)
		if err != nil {
			return errorResult(t.Name, err), nil, nil
		}
		ctx, cancel := context.WithTimeout(ctx, limit)
		defer cancel()
		ctx, gone := context.WithCancelCause(ctx)
		defer gone(nil)
		defer context.AfterFunc(c.ctx, func() { gone(errClientGone) })()
		if req.Extra != nil {
			if id := req.Extra.Header.Get(postHeader); id != "" {
				defer s.watchPost(id, func() { gone(errClientGone) })()
			}
		}
		s.log.Debug("tool call", "tool", t.Name, "client", c.id)
		res, err := h(ctx, &toolCall{client: c, bound: bound}, in)
		if err != nil {
			if s.base.Err() != nil {
				err = toolErrorf("the server is shutting down, and stopped this call", "reconnect to a running browserpool-mcp server and redo the step")
			}
			s.log.Debug("tool error", "tool", t.Name, "client", c.id, "err", err, "cause", context.Cause(ctx))
			res = errorResult(t.Name, err)
		}
		s.noteDownloads(c)
		if notes := c.takeNotes(); len(notes) > 0 {
			var b strings.Builder
			for _, n := range notes {
				b.WriteString("Note: " + n + "\n")
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				tc.Text = b.String() + tc.Text
			} else {
				res.Content = append([]mcp.Content{&mcp.TextContent{Text: b.String()}}, res.Content...)
			}
		}
		return res, nil, nil
	})
}

// errClientGone is the cause of a call's context that ended because its
// client went away: no one is left to read its result.
var errClientGone = errors.New("the client went away")

// text returns a result of one text content.
func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// refDigits is a ref without its "@" (e3), as agents often write one.
var refDigits = regexp.MustCompile(`^e[0-9]+$`)

// ref accepts a ref with or without its "@" ("e3" or "@e3").
func ref(r string) string {
	r = strings.TrimSpace(r)
	if refDigits.MatchString(r) {
		return "@" + r
	}
	return r // a ref already, or not one: its error quotes it as given
}

// where names the session and tab of a result.
func where(t *browserpool.Tab) string {
	return fmt.Sprintf("[session %s, tab %s]", t.SessionID(), t.ID())
}

// addTools registers every tool.
func (s *Server) addTools() {
	s.addPageTools()
	s.addExtraTools()
	s.addInputTools()
	s.addSessionTools()
	s.addRecordingTools()
}

// SnapshotArgs are browser_snapshot's arguments.
type SnapshotArgs struct {
	Target
	Interactive bool `json:"interactive,omitempty" jsonschema:"List only the elements that have refs (buttons, links, fields), one per line, without the page's structure. Shorter."`
	MaxChars    int  `json:"maxChars,omitempty" jsonschema:"Bound on the snapshot's length in characters. Zero means 30000 (about 8000 tokens)."`
}

// NavigateArgs are browser_navigate's arguments.
type NavigateArgs struct {
	Target
	URL string `json:"url" jsonschema:"The http:// or https:// URL to load."`
}

// PageInfoArgs are browser_page_info's arguments.
type PageInfoArgs struct {
	Target
}

// WaitForArgs are browser_wait_for's arguments.
type WaitForArgs struct {
	Target
	Time     float64 `json:"time,omitempty" jsonschema:"Seconds to wait (at most 60). Prefer waiting for text or a selector."`
	Text     string  `json:"text,omitempty" jsonschema:"Wait until this text appears on the page."`
	TextGone string  `json:"textGone,omitempty" jsonschema:"Wait until this text is no longer on the page."`
	Selector string  `json:"selector,omitempty" jsonschema:"Wait until the first element matching this CSS selector is visible."`
	State    string  `json:"state,omitempty" jsonschema:"Wait for the page's load event (load) or for its network to go quiet (networkidle)."`
	Timeout  float64 `json:"timeout,omitempty" jsonschema:"Seconds to wait for text, textGone, selector or state before giving up (at most 110). Zero means 30."`
}

// ScreenshotArgs are browser_take_screenshot's arguments.
type ScreenshotArgs struct {
	Target
	Type         string `json:"type,omitempty" jsonschema:"Image format: png (the default) or jpeg."`
	Filename     string `json:"filename,omitempty" jsonschema:"File name inside the session's output directory, such as page.png. Empty means a generated name."`
	FullPage     bool   `json:"fullPage,omitempty" jsonschema:"Capture the whole page instead of the viewport."`
	MaxDimension int    `json:"maxDimension,omitempty" jsonschema:"Scale the image down so its long side is at most this many pixels. Zero means the server's default."`
	Element      string `json:"element,omitempty" jsonschema:"Human-readable description of the element, for the record."`
	Ref          string `json:"ref,omitempty" jsonschema:"Ref of an element from browser_snapshot: capture that element only (not with fullPage)."`
}

// EvaluateArgs are browser_evaluate's arguments.
type EvaluateArgs struct {
	Target
	Function string `json:"function" jsonschema:"JavaScript to run in the page: a function such as () => document.title (it is called with no arguments, and awaited if it returns a promise) or an expression. With a ref, a function of the element: (el) => el.textContent. The result comes back as JSON."`
	Element  string `json:"element,omitempty" jsonschema:"Human-readable description of the element, for the record."`
	Ref      string `json:"ref,omitempty" jsonschema:"Ref of an element from browser_snapshot: the function is called with it as its argument."`
}

// DownloadArgs are browser_download's arguments.
type DownloadArgs struct {
	Target
	Element string `json:"element,omitempty" jsonschema:"Human-readable description of the link or button, for the record."`
	Ref     string `json:"ref,omitempty" jsonschema:"Ref of the link or button that starts the download, from browser_snapshot. Empty waits up to 30 s for a download the page starts by itself."`
}

func (s *Server) addPageTools() {
	add(s, &mcp.Tool{
		Name:        "browser_navigate",
		Description: "Load a URL in the tab and wait for the page's load event. Then call browser_snapshot to read the page.",
		Annotations: annotations("Navigate to a URL", false, true, true, true),
	}, nil, func(ctx context.Context, c *toolCall, in NavigateArgs) (*mcp.CallToolResult, error) {
		if s.cfg.CDPEndpoint != "" && in.Tab == "" {
			v, err := s.view(ctx, c.client)
			if err != nil {
				return nil, err
			}
			r, err := v.Open(ctx, in.URL)
			if err != nil {
				return nil, err
			}
			return text("%s", navigated(r)), nil
		}
		var r browserpool.NavigateResult
		var file *browserpool.Download
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			before := downloadPaths(t.Session())
			r, err = t.Navigate(ctx, in.URL)
			if aborted(err) {
				file = s.savedFile(ctx, t.Session(), before, in.URL)
			}
			return err
		})
		if file != nil {
			// Chromium aborts the load of a URL that answers with a file
			// (Content-Disposition: attachment) and saves the file.
			c.sawDownload(file.Path)
			return text("The URL is a file, not a page: saved %q (%d bytes) to %s [session %s]. The tab stays on the page it was on.", file.SuggestedName, file.Bytes, file.Path, file.SessionID), nil
		}
		prefix := ""
		var be *browserpool.Error
		switch {
		case errors.Is(err, browserpool.ErrTabNotFound) && in.Tab == "":
			// Every tab was closed: the URL opens in a new one, as in a
			// browser whose last tab is gone.
			r, err = s.openTab(ctx, c, in.Session, in.URL)
		case in.Tab == "" && errors.As(err, &be) && errors.Is(err, browserpool.ErrTabClosed) && strings.Contains(be.Detail, "renderer crashed") && be.Tab != "":
			// The active tab's page crashed: it answers nothing, so it is
			// closed and the URL opens in a new tab.
			var se *browserpool.Session
			if se, _, err = s.session(ctx, c.client, in.Session); err == nil {
				if err = se.CloseTab(ctx, be.Tab); err == nil {
					prefix = fmt.Sprintf("The active tab %s had crashed: it was closed, and the URL opened in a new tab. ", be.Tab)
					r, err = s.openTab(ctx, c, in.Session, in.URL)
				}
			}
		}
		if err != nil {
			return nil, err
		}
		return text("%s%s", prefix, navigated(r)), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_snapshot",
		Description: "Read the page as an accessibility snapshot: one line per element, with a ref (@e1, @e2, ...) on each element you can act on. Pass refs to browser_click, browser_type, browser_fill_form and the other action tools. Take a new snapshot after the page changes: refs of elements that are gone go stale.",
		Annotations: annotations("Page snapshot", true, false, true, true),
	}, nil, func(ctx context.Context, c *toolCall, in SnapshotArgs) (*mcp.CallToolResult, error) {
		if in.MaxChars < 0 {
			// The library reads a negative bound as none: a page's
			// whole snapshot can be hundreds of thousands of characters.
			return nil, toolErrorf(fmt.Sprintf("browser_snapshot got maxChars %d: it takes 0 (the default, 30000 characters) or a positive number of characters", in.MaxChars),
				"call browser_snapshot again without maxChars, or with a bound such as 60000; interactive true makes the snapshot shorter")
		}
		var snap browserpool.Snapshot
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			snap, err = t.Snapshot(ctx, browserpool.SnapshotOptions{Interactive: in.Interactive, MaxChars: in.MaxChars})
			return err
		})
		if err != nil {
			return nil, err
		}
		var b strings.Builder
		// The library's truncation line names its Go options; the tool's
		// arguments are spelled in lower camel case. A snapshot that is
		// interactive already can only grow.
		advice, more := "use interactive or a larger maxChars]", "pass a larger maxChars, or interactive true"
		if in.Interactive {
			advice, more = "use a larger maxChars]", "pass a larger maxChars"
		}
		body := strings.Replace(snap.Text, "use Interactive or a larger MaxChars]", advice, 1)
		body = strings.Replace(body, "use a larger MaxChars (negative: no bound)]", advice, 1)
		fmt.Fprintf(&b, "Page: %s\nURL: %s\n[session %s, tab %s]\n\n%s", snap.Title, snap.URL, snap.SessionID, snap.TabID, body)
		if snap.Omitted > 0 && !strings.Contains(body, "[truncated: ") {
			fmt.Fprintf(&b, "\n(%d elements left out: %s)", snap.Omitted, more)
		}
		return text("%s", b.String()), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_page_info",
		Description: "Tell the page's URL, title, viewport size, scroll position and page size, or the JavaScript dialog that is open (answer it with browser_handle_dialog).",
		Annotations: annotations("Page info", true, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in PageInfoArgs) (*mcp.CallToolResult, error) {
		var pi browserpool.PageInfo
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			pi, err = t.PageInfo(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		if d := pi.Dialog; d != nil {
			prompt := ""
			if d.Type == "prompt" {
				prompt = fmt.Sprintf(" (default prompt text %q)", d.DefaultPrompt)
			}
			return text("%s is open and waits for browser_handle_dialog: %q%s [session %s, tab %s]", capital(dialogNamed(d.Type)), d.Message, prompt, pi.SessionID, pi.TabID), nil
		}
		return text("Page: %s\nURL: %s\nViewport: %dx%d, scrolled to %d,%d; page size %dx%d\n[session %s, tab %s]",
			pi.Title, pi.URL, pi.ViewportWidth, pi.ViewportHeight, pi.ScrollX, pi.ScrollY, pi.PageWidth, pi.PageHeight, pi.SessionID, pi.TabID), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_wait_for",
		Description: "Wait until text appears or disappears, an element becomes visible, the page loads or its network goes quiet, or a number of seconds passes. Give one condition.",
		Annotations: annotations("Wait for a condition", true, false, true, true),
	}, map[string][]any{"state": {"load", "networkidle"}}, s.waitFor)

	scaled, maxDim := "The image comes back at full size", "Zero means the server's default: full size."
	if m := s.cfg.ScreenshotMax; m > 0 {
		scaled = fmt.Sprintf("The image comes back scaled down to a long side of at most %d px", m)
		maxDim = fmt.Sprintf("Zero means the server's default (%d).", m)
	}
	shot := schema[ScreenshotArgs](map[string][]any{"type": {"png", "jpeg"}})
	shot.Properties["maxDimension"].Description = "Scale the image down so its long side is at most this many pixels. " + maxDim
	add(s, &mcp.Tool{
		Name:        "browser_take_screenshot",
		Description: "Take a screenshot of the viewport (or the whole page, or one element by ref). " + scaled + " and is saved in the session's output directory. To act on elements use browser_snapshot: screenshots carry no refs.",
		Annotations: annotations("Take a screenshot", false, false, false, false),
		InputSchema: shot,
	}, nil, s.screenshot)

	add(s, &mcp.Tool{
		Name:        "browser_evaluate",
		Description: "Run JavaScript in the page (or on one element, by ref) and return its result as JSON, as JSON.stringify writes it (a Date as its ISO time; an element as its tag and the start of its text; a Map as an object, a Set as an array). Promises are awaited. The code can change the page.",
		Annotations: annotations("Evaluate JavaScript", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in EvaluateArgs) (*mcp.CallToolResult, error) {
		var out []byte
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) error {
			var raw json.RawMessage
			var err error
			if in.Ref != "" {
				err = t.EvaluateOn(ctx, ref(in.Ref), onElement(in.Function), &raw)
			} else {
				err = evaluateCode(ctx, t, in.Function, &raw)
			}
			out = raw
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			out = []byte("undefined")
		} else if r, err := readableJSON(out); err == nil {
			out = r
		}
		const limit = 20000
		if len(out) > limit {
			cut := limit
			for cut > 0 && !utf8.RuneStart(out[cut]) {
				cut--
			}
			return text("%s… (cut at %d of %d bytes: return less, e.g. a slice or a count)", out[:cut], cut, len(out)), nil
		}
		return text("%s", out), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_download",
		Description: "Click a link or button (by ref) and wait for the download it starts to complete; the file is saved in the session's download directory and its path returned.",
		Annotations: annotations("Download a file", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in DownloadArgs) (*mcp.CallToolResult, error) {
		var dl browserpool.Download
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			var trigger func(context.Context) error
			if in.Ref != "" {
				trigger = func(ctx context.Context) error { return t.Click(ctx, ref(in.Ref)) }
				dl, err = t.WaitDownload(ctx, trigger)
				return err
			}
			wctx, cancel := context.WithTimeout(ctx, downloadWait)
			defer cancel()
			dl, err = t.WaitDownload(wctx, nil)
			if err != nil && wctx.Err() != nil && ctx.Err() == nil {
				return toolErrorf(fmt.Sprintf("the page started no download within %v", downloadWait),
					"pass ref set to the link or button that starts the download (from browser_snapshot); browser_download then clicks it and waits")
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		c.sawDownload(dl.Path)
		return text("Downloaded %q (%d bytes) from %s to %s [session %s, tab %s]", dl.SuggestedName, dl.Bytes, dl.URL, dl.Path, dl.SessionID, dl.TabID), nil
	})
}

// openTab opens url in a new tab of the client's session and returns its
// navigation.
func (s *Server) openTab(ctx context.Context, c *toolCall, session, url string) (browserpool.NavigateResult, error) {
	se, _, err := s.session(ctx, c.client, session)
	if err != nil {
		return browserpool.NavigateResult{}, err
	}
	ctx, cancel := s.pageCtx(ctx, c)
	defer cancel()
	t, err := se.OpenTab(ctx, url)
	if t != nil {
		s.prepare(c.client, t)
	}
	if err != nil {
		if t != nil {
			err = &doneThenError{fmt.Sprintf("opened a new tab %s, the active one now", t.ID()), err}
		}
		return browserpool.NavigateResult{}, err
	}
	r, _ := t.LastNavigation()
	return r, nil
}

// navigated is browser_navigate's result: where the tab went, after
// redirects, and the server's HTTP status, which an error page (404, 500)
// loads with as a page does.
func navigated(r browserpool.NavigateResult) string {
	var b strings.Builder
	if strings.HasPrefix(r.FinalURL, "chrome-error://") {
		// Not a redirect: the page did not load (a history entry whose
		// load failed is reloaded as it failed).
		fmt.Fprintf(&b, "Navigated to %s, but its load failed: the tab shows the browser's error page [session %s, tab %s]. Call browser_snapshot to read the error, then browser_navigate with a URL that works.", r.URL, r.SessionID, r.TabID)
		return b.String()
	}
	fmt.Fprintf(&b, "Navigated to %s", r.URL)
	if r.FinalURL != "" && r.FinalURL != r.URL {
		fmt.Fprintf(&b, ", redirected to %s", r.FinalURL)
	}
	switch {
	case r.Status >= 400:
		fmt.Fprintf(&b, ": the server answered HTTP %d %s, so the page is likely its error page", r.Status, http.StatusText(r.Status))
	case r.Status != 0:
		fmt.Fprintf(&b, " (HTTP %d)", r.Status)
	}
	fmt.Fprintf(&b, " [session %s, tab %s]. Call browser_snapshot to read the page.", r.SessionID, r.TabID)
	return b.String()
}

// downloadWait bounds browser_download's wait for a download the page
// starts by itself (no ref): well inside the server's limit of a call, so
// that a page that starts none gets an answer an agent can act on.
var downloadWait = 30 * time.Second

// downloadSettle bounds browser_navigate's wait, after Chromium aborted the
// load, for the file the URL answered with to be saved: the abort comes as
// the download begins, and Session.Downloads lists it once complete.
var downloadSettle = 3 * time.Second

// aborted reports whether err is a navigation Chromium aborted
// (net::ERR_ABORTED), as it aborts one that answers with a file.
func aborted(err error) bool {
	var be *browserpool.Error
	return errors.As(err, &be) && errors.Is(err, browserpool.ErrNavigation) && strings.Contains(be.Detail, "net::ERR_ABORTED")
}

// downloadPaths returns the paths of se's completed downloads.
func downloadPaths(se *browserpool.Session) map[string]bool {
	seen := map[string]bool{}
	for _, d := range se.Downloads() {
		seen[d.Path] = true
	}
	return seen
}

// savedFile returns the download of rawURL that se completed since before
// (downloadPaths), waiting up to downloadSettle for it, or nil.
func (s *Server) savedFile(ctx context.Context, se *browserpool.Session, before map[string]bool, rawURL string) *browserpool.Download {
	want := redact.Scrub(rawURL)
	ctx, cancel := context.WithTimeout(ctx, downloadSettle)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, d := range se.Downloads() {
			if !before[d.Path] && sameURL(d.URL, want) {
				return &d
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sameURL reports whether two URLs (redacted alike) name the same
// resource, as Chromium and a caller may write one differently (a missing
// "/" path, a fragment).
func sameURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	norm := func(u *url.URL) string {
		u.Fragment, u.RawFragment = "", ""
		if u.Path == "" {
			u.Path = "/"
		}
		u.Host = strings.ToLower(u.Host)
		return u.String()
	}
	return norm(ua) == norm(ub)
}

// capital returns s with its first letter in upper case.
func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
