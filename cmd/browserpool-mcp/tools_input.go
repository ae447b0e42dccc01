// Room: the page tools that act (click, type, fill, keys, select, upload,
// dialogs, scroll); the waits and screenshots are in tools_wait.go, the
// form fields' kinds in tools_form.go. Each is one library call and one
// result mapping. No locks of its own.

package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ElementArgs name one element by ref, as Playwright MCP's tools do.
type ElementArgs struct {
	Target
	Element string `json:"element,omitempty" jsonschema:"Human-readable description of the element, for the record (the ref alone decides)."`
	Ref     string `json:"ref" jsonschema:"The element's ref from the latest browser_snapshot, such as @e3."`
}

// ClickArgs are browser_click's arguments: a ref, or a point.
type ClickArgs struct {
	Target
	Element string   `json:"element,omitempty" jsonschema:"Human-readable description of the element, for the record (the ref or the point alone decides)."`
	Ref     string   `json:"ref,omitempty" jsonschema:"The element's ref from the latest browser_snapshot, such as @e3. Leave empty to click at x, y instead."`
	X       *float64 `json:"x,omitempty" jsonschema:"Without a ref: the point's distance from the viewport's left edge, in CSS pixels (as in browser_take_screenshot's image at scale 1), for an element the snapshot gives no ref."`
	Y       *float64 `json:"y,omitempty" jsonschema:"Without a ref: the point's distance from the viewport's top edge, in CSS pixels."`
}

// HoverArgs are browser_hover's arguments: a ref, or a point.
type HoverArgs struct {
	Target
	Element string   `json:"element,omitempty" jsonschema:"Human-readable description of the element, for the record (the ref or the point alone decides)."`
	Ref     string   `json:"ref,omitempty" jsonschema:"The element's ref from the latest browser_snapshot, such as @e3. Leave empty to move the mouse to x, y instead."`
	X       *float64 `json:"x,omitempty" jsonschema:"Without a ref: the point's distance from the viewport's left edge, in CSS pixels (as in browser_take_screenshot's image at scale 1), for an element the snapshot gives no ref (a row whose buttons show on hover)."`
	Y       *float64 `json:"y,omitempty" jsonschema:"Without a ref: the point's distance from the viewport's top edge, in CSS pixels."`
}

// refOrPoint refuses a tool's arguments that give both a ref (argument
// names[0]) and a point (names[1], names[2]); or, unless neither is
// optional, not both a ref and a whole point; or half a point.
func refOrPoint(tool string, names [3]string, ref string, x, y *float64, optional bool) error {
	r, px, py := names[0], names[1], names[2]
	a := "a "
	if strings.ContainsRune("aeiou", rune(r[0])) {
		a = "an "
	}
	switch {
	case ref != "" && (x != nil || y != nil):
		return toolErrorf(fmt.Sprintf("%s got both %s%s and a point", tool, a, r), fmt.Sprintf("pass either %s, or %s and %s", r, px, py))
	case ref == "" && (x == nil || y == nil) && !optional:
		return toolErrorf(fmt.Sprintf("%s got neither %s%s nor both %s and %s", tool, a, r, px, py), fmt.Sprintf("pass the ref from browser_snapshot as %s, or %s and %s for a point of the viewport", r, px, py))
	case (x == nil) != (y == nil):
		return toolErrorf(fmt.Sprintf("%s got only one of %s and %s", tool, px, py), fmt.Sprintf("pass both %s and %s, or neither", px, py))
	}
	return nil
}

// oneTarget is refOrPoint for browser_click's ref, x and y.
func (a ClickArgs) oneTarget(tool string) error {
	return refOrPoint(tool, [3]string{"ref", "x", "y"}, a.Ref, a.X, a.Y, false)
}

// oneTarget is refOrPoint for browser_hover's ref, x and y.
func (a HoverArgs) oneTarget(tool string) error {
	return refOrPoint(tool, [3]string{"ref", "x", "y"}, a.Ref, a.X, a.Y, false)
}

// caretToEnd puts the caret of a text field or an editable element (this)
// at the end of its content. A field without a text selection (email,
// number) cannot take a caret from script: it returns "end", and the End
// key moves the caret there.
const caretToEnd = `function() {
	if (typeof this.value === 'string') {
		try { this.setSelectionRange(this.value.length, this.value.length); return ""; } catch (e) { return "end"; }
	}
	const r = document.createRange();
	r.selectNodeContents(this);
	r.collapse(false);
	const s = getSelection();
	s.removeAllRanges();
	s.addRange(r);
	return "";
}`

// DragArgs are browser_drag's arguments: what to drag, and onto a ref or
// to a point.
type DragArgs struct {
	Target
	StartElement string   `json:"startElement,omitempty" jsonschema:"Human-readable description of the element to drag, for the record."`
	StartRef     string   `json:"startRef" jsonschema:"The ref of the element to drag, from the latest browser_snapshot."`
	EndElement   string   `json:"endElement,omitempty" jsonschema:"Human-readable description of where to drop it, for the record."`
	EndRef       string   `json:"endRef,omitempty" jsonschema:"The ref of the element to drop it on. Leave empty to drop at endX, endY instead."`
	EndX         *float64 `json:"endX,omitempty" jsonschema:"Without an endRef: the drop point's distance from the viewport's left edge, in CSS pixels."`
	EndY         *float64 `json:"endY,omitempty" jsonschema:"Without an endRef: the drop point's distance from the viewport's top edge, in CSS pixels."`
}

// TypeArgs are browser_type's arguments.
type TypeArgs struct {
	Target
	Element string `json:"element,omitempty" jsonschema:"Human-readable description of the field, for the record."`
	Ref     string `json:"ref,omitempty" jsonschema:"Ref of the text field from browser_snapshot: its content is replaced by text. Empty types into the focused element instead."`
	Text    string `json:"text" jsonschema:"The text to type."`
	Submit  bool   `json:"submit,omitempty" jsonschema:"Press Enter after typing."`
	Slowly  bool   `json:"slowly,omitempty" jsonschema:"Type one key at a time (keydown, input and keyup for each character) after what the field holds, instead of replacing its content at once: for fields that react to keys, such as autocompletes and search as you type."`
}

// FormField is one field of browser_fill_form.
type FormField struct {
	Name  string `json:"name,omitempty" jsonschema:"Human-readable field name, for the record."`
	Type  string `json:"type" jsonschema:"The field's kind: checkbox, radio, combobox (a select box), or textbox for any field a value is typed into (text areas, editable elements, sliders, number, date and time fields)."`
	Ref   string `json:"ref" jsonschema:"The field's ref from browser_snapshot."`
	Value string `json:"value" jsonschema:"Text for a textbox or slider; true or false for a checkbox (a radio button takes true); the option's value or label for a combobox."`
}

// FillFormArgs are browser_fill_form's arguments.
type FillFormArgs struct {
	Target
	Fields []FormField `json:"fields" jsonschema:"The fields to fill, in order."`
}

// PressKeyArgs are browser_press_key's arguments.
type PressKeyArgs struct {
	Target
	Key string `json:"key" jsonschema:"Key or chord to press on the focused element: Enter, Tab, Escape, ArrowDown, a, F5, Control+A, Shift+Tab, Meta+Enter (KeyboardEvent.key names)."`
}

// SelectOptionArgs are browser_select_option's arguments.
type SelectOptionArgs struct {
	Target
	Element string   `json:"element,omitempty" jsonschema:"Human-readable description of the select box, for the record."`
	Ref     string   `json:"ref" jsonschema:"The select box's ref from browser_snapshot."`
	Values  []string `json:"values" jsonschema:"Options to select, by value or visible label. A single select takes exactly one."`
}

// FileUploadArgs are browser_file_upload's arguments.
type FileUploadArgs struct {
	Target
	Element string   `json:"element,omitempty" jsonschema:"Human-readable description of the file input, for the record."`
	Ref     string   `json:"ref" jsonschema:"The file input's ref from browser_snapshot."`
	Paths   []string `json:"paths" jsonschema:"Absolute paths of files on the server's machine. Several files need an input that accepts several."`
}

// HandleDialogArgs are browser_handle_dialog's arguments.
type HandleDialogArgs struct {
	Target
	Accept     bool   `json:"accept" jsonschema:"Press OK (true) or Cancel (false)."`
	PromptText string `json:"promptText,omitempty" jsonschema:"The answer to a prompt dialog. Empty keeps its default text."`
}

// ScrollArgs are browser_scroll's arguments.
type ScrollArgs struct {
	Target
	DeltaX float64  `json:"deltaX,omitempty" jsonschema:"How far to scroll right, in CSS pixels (negative scrolls left)."`
	DeltaY float64  `json:"deltaY,omitempty" jsonschema:"How far to scroll down, in CSS pixels (negative scrolls up)."`
	Ref    string   `json:"ref,omitempty" jsonschema:"Ref of an element whose own scroll container should scroll. Empty scrolls the page, or what is at x, y."`
	X      *float64 `json:"x,omitempty" jsonschema:"Without a ref: where the wheel turns, in CSS pixels from the viewport's left edge (over a scrollable list the snapshot gives no ref). With y; empty, or 0 and 0, turns it at the viewport's centre."`
	Y      *float64 `json:"y,omitempty" jsonschema:"Without a ref: where the wheel turns, in CSS pixels from the viewport's top edge. With x."`
}

func (s *Server) addInputTools() {
	add(s, &mcp.Tool{
		Name:        "browser_click",
		Description: "Click an element by its ref from browser_snapshot, the way a user would: scrolled into view, checked that nothing covers it, confirmed that the click landed. Without a ref, click at the point x, y of the viewport, whatever is there.",
		Annotations: annotations("Click", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in ClickArgs) (*mcp.CallToolResult, error) {
		if err := in.oneTarget("browser_click"); err != nil {
			return nil, err
		}
		if in.Ref == "" {
			x, y := *in.X, *in.Y
			return s.act(ctx, c, in.Target, ptr(fmt.Sprintf("Clicked at %g, %g", x, y)), func(ctx context.Context, t *browserpool.Tab) error { return t.ClickAt(ctx, x, y) })
		}
		return s.act(ctx, c, in.Target, ptr("Clicked "+ref(in.Ref)), func(ctx context.Context, t *browserpool.Tab) error { return t.Click(ctx, ref(in.Ref)) })
	})

	add(s, &mcp.Tool{
		Name:        "browser_drag",
		Description: "Drag an element by its ref from browser_snapshot onto another element by its ref, with real pointer input (HTML5 drag and drop, or a drag built on mouse events). Without an end ref, drop it at the point endX, endY of the viewport (a drop zone the snapshot gives no ref), as the viewport is once the dragged element is scrolled into view.",
		Annotations: annotations("Drag", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in DragArgs) (*mcp.CallToolResult, error) {
		if in.StartRef == "" {
			return nil, toolErrorf("browser_drag got no startRef", "pass the ref of the element to drag, from browser_snapshot")
		}
		if err := refOrPoint("browser_drag", [3]string{"endRef", "endX", "endY"}, in.EndRef, in.EndX, in.EndY, false); err != nil {
			return nil, err
		}
		if in.EndRef == "" {
			x, y := *in.EndX, *in.EndY
			return s.act(ctx, c, in.Target, ptr(fmt.Sprintf("Dragged %s to %g, %g", ref(in.StartRef), x, y)), func(ctx context.Context, t *browserpool.Tab) error { return t.DragTo(ctx, ref(in.StartRef), x, y) })
		}
		return s.act(ctx, c, in.Target, ptr("Dragged "+ref(in.StartRef)+" onto "+ref(in.EndRef)), func(ctx context.Context, t *browserpool.Tab) error {
			return t.Drag(ctx, ref(in.StartRef), ref(in.EndRef))
		})
	})

	add(s, &mcp.Tool{
		Name:        "browser_hover",
		Description: "Move the mouse over an element by its ref from browser_snapshot (to open a hover menu or show a tooltip). Without a ref, move it to the point x, y of the viewport, over whatever is there (a row whose buttons show on hover).",
		Annotations: annotations("Hover", false, false, true, true),
	}, nil, func(ctx context.Context, c *toolCall, in HoverArgs) (*mcp.CallToolResult, error) {
		if err := in.oneTarget("browser_hover"); err != nil {
			return nil, err
		}
		if in.Ref == "" {
			x, y := *in.X, *in.Y
			return s.act(ctx, c, in.Target, ptr(fmt.Sprintf("Hovered at %g, %g", x, y)), func(ctx context.Context, t *browserpool.Tab) error { return t.HoverAt(ctx, x, y) })
		}
		return s.act(ctx, c, in.Target, ptr("Hovered over "+ref(in.Ref)), func(ctx context.Context, t *browserpool.Tab) error { return t.Hover(ctx, ref(in.Ref)) })
	})

	add(s, &mcp.Tool{
		Name:        "browser_type",
		Description: "Type text into a field: with a ref, the field's content is replaced the way React and Vue notice (with slowly, the text is typed key by key after what it holds); without one, the text goes key by key to the focused element. Text typed into password fields never reaches the trace.",
		Annotations: annotations("Type text", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in TypeArgs) (*mcp.CallToolResult, error) {
		done := fmt.Sprintf("Typed %d characters", len([]rune(in.Text)))
		if in.Ref != "" {
			done += " into " + ref(in.Ref)
		}
		return s.act(ctx, c, in.Target, ptr(done), func(ctx context.Context, t *browserpool.Tab) error {
			var err error
			switch {
			case in.Ref != "" && in.Slowly:
				// The field takes the keys, after what it holds: the
				// click puts the caret where it lands, so it goes to the
				// end.
				if err = t.Click(ctx, ref(in.Ref)); err == nil {
					var key string
					if err = t.EvaluateOn(ctx, ref(in.Ref), caretToEnd, &key); err == nil && key == "end" {
						err = t.Press(ctx, "End")
					}
					if err == nil {
						err = t.Type(ctx, in.Text)
					}
				}
			case in.Ref != "":
				err = t.Fill(ctx, ref(in.Ref), in.Text)
			default:
				err = t.Type(ctx, in.Text)
			}
			if err == nil && in.Submit {
				err = t.Press(ctx, "Enter")
			}
			return err
		})
	})

	add(s, &mcp.Tool{
		Name:        "browser_fill_form",
		Description: "Fill several form fields at once, each by its ref from browser_snapshot: text boxes, checkboxes, radio buttons, select boxes and sliders.",
		Annotations: annotations("Fill a form", false, true, true, true),
	}, map[string][]any{"fields.items.type": {"textbox", "checkbox", "radio", "combobox", "slider"}}, func(ctx context.Context, c *toolCall, in FillFormArgs) (*mcp.CallToolResult, error) {
		return s.act(ctx, c, in.Target, ptr(fmt.Sprintf("Filled %d fields", len(in.Fields))), func(ctx context.Context, t *browserpool.Tab) error {
			return fillForm(ctx, t, in.Fields)
		})
	})

	add(s, &mcp.Tool{
		Name:        "browser_press_key",
		Description: "Press a key or a chord (Enter, Escape, ArrowDown, Control+A) on the focused element.",
		Annotations: annotations("Press a key", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in PressKeyArgs) (*mcp.CallToolResult, error) {
		return s.act(ctx, c, in.Target, ptr("Pressed "+in.Key), func(ctx context.Context, t *browserpool.Tab) error { return t.Press(ctx, in.Key) })
	})

	add(s, &mcp.Tool{
		Name:        "browser_select_option",
		Description: "Choose options of a select box by its ref from browser_snapshot, by value or visible label.",
		Annotations: annotations("Select an option", false, true, true, true),
	}, nil, func(ctx context.Context, c *toolCall, in SelectOptionArgs) (*mcp.CallToolResult, error) {
		var done string
		return s.act(ctx, c, in.Target, &done, func(ctx context.Context, t *browserpool.Tab) error {
			got, err := t.Select(ctx, ref(in.Ref), in.Values...)
			done = fmt.Sprintf("Selected %q in %s", got, ref(in.Ref))
			return err
		})
	})

	uploads, paths := "", "Absolute paths of files on the server's machine. Several files need an input that accepts several."
	switch {
	case s.cfg.NoUploads:
		uploads = " This server takes no uploads (it serves HTTP without -upload-dir): the tool refuses every file."
	case s.cfg.UploadDir != "":
		uploads = fmt.Sprintf(" Only files inside %s on the server's machine can be uploaded.", s.cfg.UploadDir)
		paths = fmt.Sprintf("Paths of files inside %s on the server's machine, absolute or relative to it. Several files need an input that accepts several.", s.cfg.UploadDir)
	}
	upload := schema[FileUploadArgs](nil)
	upload.Properties["paths"].Description = paths
	add(s, &mcp.Tool{
		Name:        "browser_file_upload",
		Description: "Set the files of a file input by its ref from browser_snapshot, as if the user chose them." + uploads,
		Annotations: annotations("Upload files", false, true, true, true),
		InputSchema: upload,
	}, nil, func(ctx context.Context, c *toolCall, in FileUploadArgs) (*mcp.CallToolResult, error) {
		paths, err := s.uploadPaths(in.Paths)
		if err != nil {
			return nil, err
		}
		return s.act(ctx, c, in.Target, ptr(fmt.Sprintf("Set %d file(s) on %s", len(paths), ref(in.Ref))), func(ctx context.Context, t *browserpool.Tab) error {
			return t.Upload(ctx, ref(in.Ref), paths...)
		})
	})

	add(s, &mcp.Tool{
		Name:        "browser_handle_dialog",
		Description: "Answer the JavaScript dialog (alert, confirm, prompt) the page opened. While one is open, other page tools fail and say so.",
		Annotations: annotations("Answer a dialog", false, true, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in HandleDialogArgs) (*mcp.CallToolResult, error) {
		answer := "Cancel"
		if in.Accept {
			answer = "OK"
		}
		return s.act(ctx, c, in.Target, ptr("Answered the dialog with "+answer), func(ctx context.Context, t *browserpool.Tab) error {
			err := t.AnswerDialog(ctx, in.Accept, in.PromptText)
			if errors.Is(err, browserpool.ErrInvalidArgument) {
				return s.noDialog(t)
			}
			return err
		})
	})

	add(s, &mcp.Tool{
		Name:        "browser_scroll",
		Description: "Scroll the page (or an element's scroll container, by ref, or whatever is at x, y) with the mouse wheel. The result tells the page's new scroll position.",
		Annotations: annotations("Scroll", false, false, false, true),
	}, nil, func(ctx context.Context, c *toolCall, in ScrollArgs) (*mcp.CallToolResult, error) {
		if err := refOrPoint("browser_scroll", [3]string{"ref", "x", "y"}, in.Ref, in.X, in.Y, true); err != nil {
			return nil, err
		}
		var pi browserpool.PageInfo
		err := s.withTab(ctx, c, in.Target, func(ctx context.Context, t *browserpool.Tab) error {
			if in.X != nil {
				if err := t.Scroll(ctx, browserpool.ScrollOptions{DeltaX: in.DeltaX, DeltaY: in.DeltaY, X: *in.X, Y: *in.Y}); err != nil {
					return err
				}
			} else if in.Ref == "" {
				// The page scrolls asynchronously: wait until it moved
				// or could not move further.
				before, err := t.PageInfo(ctx)
				if err != nil {
					return err
				}
				if err := t.Scroll(ctx, browserpool.ScrollOptions{DeltaX: in.DeltaX, DeltaY: in.DeltaY}); err != nil {
					return err
				}
				wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				_ = t.WaitCondition(wctx, fmt.Sprintf("scrollX !== %d || scrollY !== %d", before.ScrollX, before.ScrollY), nil)
				cancel()
			} else if err := t.Scroll(ctx, browserpool.ScrollOptions{DeltaX: in.DeltaX, DeltaY: in.DeltaY, Ref: ref(in.Ref)}); err != nil {
				return err
			}
			var err error
			pi, err = t.PageInfo(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		inner := ""
		if in.Ref != "" || in.X != nil {
			inner = "; what scrolled is the scroll container there, which the page's position may not show: call browser_snapshot to see it"
		}
		return text("Scrolled; the page is now at %d,%d of %dx%d (viewport %dx%d)%s [session %s, tab %s]",
			pi.ScrollX, pi.ScrollY, pi.PageWidth, pi.PageHeight, pi.ViewportWidth, pi.ViewportHeight, inner, pi.SessionID, pi.TabID), nil
	})
}

// uploadPaths checks browser_file_upload's paths against the server's
// upload policy (Config.UploadDir, Config.NoUploads) and returns the ones
// to upload: inside UploadDir, the files themselves with every symbolic
// link resolved (a relative path is taken from UploadDir).
func (s *Server) uploadPaths(paths []string) ([]string, error) {
	if s.cfg.NoUploads {
		return nil, toolErrorf("this server takes no file uploads: it serves HTTP without -upload-dir, so a client could otherwise send any file of the server's machine to a site",
			"do not retry; ask the user to restart the server with -upload-dir set to a directory holding the files to upload")
	}
	dir := s.cfg.UploadDir
	if dir == "" {
		return paths, nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, toolErrorf(fmt.Sprintf("cannot upload %q: %v", paths[i], err),
				fmt.Sprintf("give the path of a file inside the upload directory %s (a path relative to it works too)", dir))
		}
		if rel, err := filepath.Rel(dir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, toolErrorf(fmt.Sprintf("cannot upload %q: it is not inside the server's upload directory %s (symbolic links are followed)", paths[i], dir),
				fmt.Sprintf("upload only files inside %s; ask the user to put the file there", dir))
		}
		out[i] = real
	}
	return out, nil
}

// pageInfoWait bounds act's read of the page after the action: a tab
// whose navigation has not committed (a slow server) answers no call into
// its page until it does.
const pageInfoWait = 2 * time.Second

// act runs fn on the tab and reports *done (which fn may write) with the
// tab's page.
func (s *Server) act(ctx context.Context, c *toolCall, tg Target, done *string, fn func(ctx context.Context, t *browserpool.Tab) error) (*mcp.CallToolResult, error) {
	var title, url, at string
	loading := false
	var opened []browserpool.TabInfo
	var dialog *browserpool.Dialog
	var closed *closedTab
	err := s.withTab(ctx, c, tg, func(ctx context.Context, t *browserpool.Tab) error {
		before, _ := t.Session().Tabs(ctx) // to tell the tabs the action opens
		start := time.Now()
		if err := fn(ctx, t); err != nil {
			// The action itself opened a dialog: it was done, and the
			// page now waits for an answer (not a failure to retry).
			if !errors.Is(err, browserpool.ErrDialogOpen) {
				return err
			}
			pi, perr := t.PageInfo(ctx)
			if perr != nil || pi.Dialog == nil || pi.Dialog.Opened.Before(start) {
				return err
			}
			dialog, at = pi.Dialog, where(t)
			return nil
		}
		at = where(t)
		pctx, cancel := context.WithTimeout(ctx, pageInfoWait)
		pi, err := t.PageInfo(pctx)
		cancel()
		switch {
		case err == nil:
			title, url = pi.Title, pi.URL
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			loading = true
		case errors.Is(err, browserpool.ErrTabClosed) || errors.Is(err, browserpool.ErrTabNotFound):
			// The page closed its own tab as it handled the action
			// (window.close()): a page tool without tab now acts on
			// another tab, which the agent must be told of.
			closed = &closedTab{}
			if tabs, err := t.Session().Tabs(ctx); err == nil {
				for _, ti := range tabs {
					if ti.Active {
						closed.active = &ti
					}
				}
			}
			return nil
		}
		if before != nil {
			opened = newTabs(ctx, t.Session(), before)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	msg := *done + " " + at
	if d := dialog; d != nil {
		return text("%s. It opened %s %q: the page waits for its answer; call browser_handle_dialog (accept true or false) next.", msg, dialogNamed(d.Type), d.Message), nil
	}
	if closed != nil {
		if a := closed.active; a != nil {
			return text("%s. Then the page closed this tab (window.close()). The session's active tab is now %s: %q %s; page tools without tab act on it. To work in another tab, call browser_tabs with action list, then action select.", msg, a.TabID, a.Title, a.URL), nil
		}
		return text("%s. Then the page closed this tab (window.close()). Call browser_tabs with action list to see the session's tabs and action select to pick one, or browser_navigate to open a page in a new tab.", msg), nil
	}
	switch {
	case url != "" && title != "":
		msg += fmt.Sprintf(". Page: %q %s", title, url)
	case url != "":
		// No title (yet: a page the action led to may not have parsed
		// its <title>): "" would read as a title.
		msg += ". Page: " + url
	}
	if loading {
		msg += fmt.Sprintf(". The tab did not answer within %v: it may still be loading the page the action led to, or be busy with a script", pageInfoWait)
	}
	for _, o := range opened {
		at := "at " + o.URL
		if o.URL == "" {
			at = "that is still loading its page"
		}
		msg += fmt.Sprintf(". It opened a new tab %s %s; this tab stays the active one: call browser_tabs with action select and tab %s to work in the new one", o.TabID, at, o.TabID)
	}
	return text("%s. Call browser_snapshot to see the result.", msg), nil
}

// closedTab is what act tells of a tab its page closed as it handled the
// action: the session's active tab after it, if any.
type closedTab struct {
	active *browserpool.TabInfo
}

// dialogNamed names a dialog of type typ with its article: "an alert", "a
// confirm dialog".
func dialogNamed(typ string) string {
	switch typ {
	case "alert":
		return "an alert"
	case "beforeunload":
		return "a leave-page dialog (beforeunload)"
	}
	return "a " + typ + " dialog"
}

// newTabs returns the session's tabs that are not in before.
func newTabs(ctx context.Context, s *browserpool.Session, before []browserpool.TabInfo) []browserpool.TabInfo {
	after, err := s.Tabs(ctx)
	if err != nil {
		return nil
	}
	known := make(map[string]bool, len(before))
	for _, b := range before {
		known[b.TabID] = true
	}
	var out []browserpool.TabInfo
	for _, a := range after {
		if !known[a.TabID] {
			out = append(out, a)
		}
	}
	return out
}

// noDialog is browser_handle_dialog's error when no dialog is open: it
// says what became of the tab's last one, which the server may have
// dismissed itself after DialogTimeout.
func (s *Server) noDialog(t *browserpool.Tab) error {
	ds := t.Dialogs()
	if len(ds) == 0 {
		return toolErrorf("no dialog is open, and the page has opened none", "nothing to answer: call browser_snapshot to see the page")
	}
	d := ds[len(ds)-1]
	what := fmt.Sprintf("no dialog is open: the last one, %s %q, ", dialogNamed(d.Type), d.Message)
	switch d.By {
	case browserpool.DialogTimedOut:
		what += fmt.Sprintf("got no answer within the server's dialog timeout (%v) and was dismissed (as Cancel)", s.cfg.DialogTimeout)
	case browserpool.DialogClosedByPage:
		what += "was closed by a navigation"
	case browserpool.DialogByUser:
		what += "was closed in the browser by its user (or its page) before anyone here answered it"
	default:
		answer := "Cancel"
		if d.Accepted {
			answer = "OK"
		}
		what += fmt.Sprintf("was answered %s (%s)", answer, d.By)
	}
	return toolErrorf(what, "nothing to answer now: call browser_snapshot to see how the page went on, and redo the step that opened the dialog if its answer matters")
}

func ptr[T any](v T) *T { return &v }
