// Room: the page tools beside the core ones, named as Playwright MCP names
// them: history, the console, the network log, the viewport's size and
// PDFs. Each is one library call and one result mapping. No locks of its
// own.

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HistoryArgs are browser_navigate_back's and browser_navigate_forward's
// arguments.
type HistoryArgs struct {
	Target
}

// ConsoleArgs are browser_console_messages's arguments.
type ConsoleArgs struct {
	Target
	OnlyErrors bool `json:"onlyErrors,omitempty" jsonschema:"Only errors: console.error calls and uncaught exceptions."`
}

// NetworkArgs are browser_network_requests's arguments.
type NetworkArgs struct {
	Target
}

// ResizeArgs are browser_resize's arguments.
type ResizeArgs struct {
	Target
	Width  int `json:"width" jsonschema:"The viewport's new width in CSS pixels (1 to 10000)."`
	Height int `json:"height" jsonschema:"The viewport's new height in CSS pixels (1 to 10000)."`
}

// PDFArgs are browser_pdf_save's arguments.
type PDFArgs struct {
	Target
	Filename string `json:"filename,omitempty" jsonschema:"File name inside the session's output directory, such as page.pdf. Empty means a generated name."`
}

// listLimit bounds the entries a console or network listing shows: the
// newest are kept.
const listLimit = 200

func (s *Server) addExtraTools() {
	for _, dir := range []struct {
		name, title, desc string
		back              bool
	}{
		{"browser_navigate_back", "Go back", "Go back to the previous page in the tab's history and wait for it to load, as the browser's Back button does.", true},
		{"browser_navigate_forward", "Go forward", "Go forward to the next page in the tab's history and wait for it to load, as the browser's Forward button does.", false},
	} {
		add(s, &mcp.Tool{
			Name:        dir.name,
			Description: dir.desc + " Then call browser_snapshot to read the page.",
			Annotations: annotations(dir.title, false, false, false, true),
		}, nil, func(ctx context.Context, c *toolCall, in HistoryArgs) (*mcp.CallToolResult, error) {
			var r browserpool.NavigateResult
			err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
				if dir.back {
					r, err = t.Back(ctx)
				} else {
					r, err = t.Forward(ctx)
				}
				if err == nil && r.Status == 0 && r.LoaderID != "" && !strings.HasPrefix(r.FinalURL, "chrome-error://") {
					// An entry whose load failed is loaded as it failed,
					// without a status, and the result may give the URL
					// the browser's error page stands for: the page says
					// which it is.
					if pi, err := t.PageInfo(ctx); err == nil && strings.HasPrefix(pi.URL, "chrome-error://") {
						r.FinalURL = pi.URL
					}
				}
				return err
			})
			if err != nil {
				return nil, err
			}
			return text("%s", navigated(r)), nil
		})
	}

	add(s, &mcp.Tool{
		Name:        "browser_console_messages",
		Description: "List what the page logged to its console and the uncaught errors it threw, oldest first: the current page's messages, and from this call on every later page's in the tab.",
		Annotations: annotations("Console messages", true, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in ConsoleArgs) (*mcp.CallToolResult, error) {
		var msgs []browserpool.ConsoleMessage
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			msgs, err = t.Console(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		var lines []string
		for _, m := range msgs {
			if in.OnlyErrors && m.Level != browserpool.ConsoleError && m.Level != browserpool.ConsolePageError {
				continue
			}
			line := fmt.Sprintf("[%s] %s", m.Level, m.Text)
			if m.URL != "" {
				line += fmt.Sprintf(" (%s:%d:%d)", m.URL, m.Line, m.Column)
			}
			lines = append(lines, line)
		}
		what := "console messages"
		if in.OnlyErrors {
			what = "console errors"
		}
		return text("%s", listing(what, lines)), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_network_requests",
		Description: "List the requests the page made (method, URL, status, type), oldest first, since a tool first reached the tab (a tab opened with browser_tabs starts after its first page loaded).",
		Annotations: annotations("Network requests", true, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in NetworkArgs) (*mcp.CallToolResult, error) {
		var reqs []browserpool.NetworkRequest
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			reqs, err = t.Network(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		var lines []string
		errorPage, skipped := false, 0
		for _, r := range reqs {
			if r.Type == "Document" {
				errorPage = showsErrorPage(r)
			}
			if errorPage && strings.HasPrefix(r.URL, "data:") {
				// The images of the browser's own error page, not the
				// site's.
				skipped++
				continue
			}
			line := fmt.Sprintf("[%s] %s", r.Method, shortURL(r.URL))
			switch {
			case r.Failure != "" && r.Status != 0:
				// The server answered, then the load failed (a body cut
				// short, a load cancelled): both are what happened.
				line += fmt.Sprintf(" => [%d], then failed: %s", r.Status, r.Failure)
			case r.Failure != "":
				line += " => failed: " + r.Failure
			case r.Status != 0:
				line += fmt.Sprintf(" => [%d]", r.Status)
			case !r.Done:
				line += " => (in flight)"
			}
			if r.Type != "" {
				line += " " + r.Type
			}
			lines = append(lines, line)
		}
		out := listing("requests", lines)
		if skipped > 0 {
			out += fmt.Sprintf("\n(%d data: URLs the browser's error page loaded after a failed page load are left out)", skipped)
		}
		if len(reqs) == 0 {
			out += " The log starts when a tool first reaches the tab: act on the page (or reload it with browser_navigate), then call browser_network_requests again."
		}
		return text("%s", out), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_resize",
		Description: "Resize the tab's viewport, as resizing the window would: the page sees the new size and gets a resize event. Use it to see a site's narrow (mobile) layout.",
		Annotations: annotations("Resize the viewport", false, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in ResizeArgs) (*mcp.CallToolResult, error) {
		if in.Width < 1 || in.Width > 10000 || in.Height < 1 || in.Height > 10000 {
			return nil, toolErrorf(fmt.Sprintf("browser_resize got a viewport of %dx%d: width and height must each be 1 to 10000 CSS pixels", in.Width, in.Height),
				"call browser_resize again with a width and height such as 1280 and 720 (a phone: 390 and 844)")
		}
		var at string
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) error {
			at = where(t)
			return t.SetViewport(ctx, in.Width, in.Height, 0)
		})
		if err != nil {
			return nil, err
		}
		return text("Resized the viewport to %dx%d %s. Call browser_snapshot to read the page at this size.", in.Width, in.Height, at), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_pdf_save",
		Description: "Print the page to a PDF file in the session's output directory, as the browser's print dialog would (Letter paper, no backgrounds).",
		Annotations: annotations("Save as PDF", false, false, false, false),
	}, nil, func(ctx context.Context, c *toolCall, in PDFArgs) (*mcp.CallToolResult, error) {
		var pdf browserpool.PDF
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) (err error) {
			pdf, err = t.PDF(ctx, browserpool.PDFOptions{Name: withExt(in.Filename, ".pdf")})
			return err
		})
		if err != nil {
			return nil, err
		}
		return text("Saved a PDF of %d bytes to %s [session %s, tab %s]", pdf.Bytes, pdf.Path, pdf.SessionID, pdf.TabID), nil
	})
}

// showsErrorPage reports whether a document request's failure leaves the
// browser's error page (chrome-error://chromewebdata/) in its frame: any
// failure but a cancelled load (a download, an HTTP 204) and a request its
// page left behind as it navigated away.
//
// The log does not say which document made a request, so the requests
// that follow such a document's, until the next document's, are taken as
// its error page's: only their data: URLs (the page's images) are left
// out, as a site's own request is never one.
func showsErrorPage(r browserpool.NetworkRequest) bool {
	return r.Failure != "" && !strings.Contains(r.Failure, "net::ERR_ABORTED") && !strings.HasPrefix(r.Failure, "cut off")
}

// urlShown bounds the length of a URL in the network listing.
const urlShown = 200

// shortURL is u as the network listing shows it: a data: URL as its MIME
// type and length (its content is of no use to read, and can run to
// megabytes), any other URL cut after urlShown characters.
func shortURL(u string) string {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		head, _, _ := strings.Cut(rest, ",")
		if len(head) > 100 {
			head = head[:100] + "…"
		}
		return fmt.Sprintf("data:%s (%s chars)", head, thousands(utf8.RuneCountInString(u)))
	}
	if utf8.RuneCountInString(u) <= urlShown {
		return u
	}
	return string([]rune(u)[:urlShown]) + "…"
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// listing is a numbered list of lines under a heading, the newest
// listLimit of them.
func listing(what string, lines []string) string {
	if len(lines) == 0 {
		return "No " + what + "."
	}
	var b strings.Builder
	if len(lines) > listLimit {
		fmt.Fprintf(&b, "%d %s; the newest %d:\n", len(lines), what, listLimit)
		lines = lines[len(lines)-listLimit:]
	} else {
		fmt.Fprintf(&b, "%d %s:\n", len(lines), what)
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// withExt is a file name a model gave, with ext added when it has no
// extension ("homepage" becomes "homepage.png"): the library refuses a
// name that does not say what the file holds, and a model means the
// tool's kind of file.
func withExt(name, ext string) string {
	if name == "" || strings.HasSuffix(name, "/") || filepath.Ext(name) != "" {
		return name
	}
	return name + ext
}
