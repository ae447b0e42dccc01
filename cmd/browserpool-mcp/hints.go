// Room: error texts for tool results. The library's hints name Go methods
// (Tab.Snapshot); an agent knows tools (browser_snapshot). No locks: the
// tables are written once, at package initialization.

package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolError is an error of the server itself, already in tool terms.
type toolError struct {
	what, next string
}

func (e *toolError) Error() string { return e.what + " (next: " + e.next + ")" }

func toolErrorf(what, next string) error { return &toolError{what: what, next: next} }

// doneThenError is err after part of a tool's work was done (a tab opened,
// a session launched): its text says first what was done and stays done.
type doneThenError struct {
	done string
	err  error
}

func (e *doneThenError) Error() string { return e.done + ", but then: " + e.err.Error() }
func (e *doneThenError) Unwrap() error { return e.err }

// errorResult turns err, an error of tool, into a tool error result whose
// text says what happened and what to do next, naming tools.
func errorResult(tool string, err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: describeFor(tool, err)}}}
}

// describe returns err's text for an agent: "Error: <what happened>" and
// "Next: <what to do>", with every Go method the library names replaced by
// the tool that does the same.
func describe(err error) string { return describeFor("", err) }

// resolving are the library's operations that find the session or tab a
// tool acts on: their errors are the calling tool's (a click on a crashed
// tab fails in browser_click, not in browser_tabs).
var resolving = map[string]bool{"Session.Tab": true, "Pool.ResolveTab": true, "AttachedView.Do": true}

// actions are the tools that act on the page: one that ran out of time
// may have started what doing it again would start again.
var actions = map[string]bool{
	"browser_click": true, "browser_type": true, "browser_press_key": true, "browser_select_option": true,
	"browser_hover": true, "browser_drag": true, "browser_fill_form": true, "browser_file_upload": true,
	"browser_handle_dialog": true, "browser_scroll": true, "browser_download": true, "browser_evaluate": true,
}

// describeFor is describe for an error of tool ("" when unknown).
func describeFor(tool string, err error) string {
	var de *doneThenError
	if errors.As(err, &de) {
		return "Error: " + de.done + ", but then: " + strings.TrimPrefix(describeFor(tool, de.err), "Error: ")
	}
	var te *toolError
	if errors.As(err, &te) {
		return "Error: " + te.what + "\nNext: " + te.next
	}
	var be *browserpool.Error
	if errors.As(err, &be) {
		what := *be
		what.Hint = ""
		if tool != "" && (resolving[what.Op] || strings.HasPrefix(what.Op, "Tab.")) {
			// A tab's operation is the calling tool's doing, whichever
			// tool does it alone (browser_download clicks, and
			// browser_fill_form types, with Tab.Click and Tab.Fill).
			what.Op = tool
		}
		if errors.Is(be, browserpool.ErrSessionLimit) {
			what.Detail = sessionLimit.ReplaceAllString(what.Detail, "you already have $1 browser session$2 open (the limit per client is $3): [$4]")
		}
		var noRoomNext string
		if errors.Is(be, browserpool.ErrNoRoom) {
			what.Detail, noRoomNext = noRoom(what.Detail, be.Hint)
		}
		next := ""
		for class, h := range classHints {
			if errors.Is(be, class) {
				next = h
				break
			}
		}
		switch {
		case errors.Is(be, browserpool.ErrNavigation) && strings.Contains(be.Detail, "replaced it"):
			next = "another navigation of this tab (another call, or the page itself) replaced this one: call browser_snapshot to see where the tab is, and call browser_navigate again only if it is not where you want it"
		case errors.Is(be, browserpool.ErrNavigation) && strings.Contains(be.Detail, "net::ERR_ABORTED") && strings.Contains(be.Hint, "sent no page"):
			// An answer with no page (204 No Content): the tab stays.
			next = "the server answered with no page to show (such as HTTP 204 No Content) and no file, so the tab stays on its page: call browser_snapshot to see it; if you expected a page, check the URL"
		case errors.Is(be, browserpool.ErrNavigation) && strings.Contains(be.Detail, "net::ERR_ABORTED"):
			// browser_navigate turns the abort of a URL that answers with
			// a file into the file's path: this one saved none.
			next = "the load was cancelled before the page came: the page went elsewhere meanwhile, or another navigation of the tab replaced it; call browser_snapshot to see where the tab is, then call browser_navigate again if it is still needed"
		case errors.Is(be, browserpool.ErrTabClosed) && strings.Contains(be.Detail, "renderer crashed") && be.Tab != "":
			next = fmt.Sprintf("the tab's page crashed; the browser still lists the tab (browser_tabs marks it crashed), but it answers nothing: call browser_navigate without tab to close it and open the URL in a new tab, or close it with browser_tabs action close and tab %s", be.Tab)
		case strings.Contains(be.Hint, "close the tab (Session.CloseTab)") && be.Tab != "":
			// A script busy in the tab's page holds it: every call of
			// the tab would wait, a snapshot too.
			next = fmt.Sprintf("a script busy in the tab's page holds it, and every call of the tab would wait (browser_snapshot too): close it with browser_tabs action close and tab %s, then open the page again with browser_navigate without tab (a new tab)", be.Tab)
		case errors.Is(be, browserpool.ErrFocusLost) && strings.Contains(be.Detail, "nothing on the page has the keyboard focus"):
			next = "click the field with browser_click, or pass its ref to browser_type; for a page's shortcut key use browser_press_key"
		case errors.Is(be, browserpool.ErrInvalidURL) && tool == "browser_tabs":
			next = "call browser_tabs again with action new and an http:// or https:// URL (or no url, for a blank tab)"
		case errors.Is(be, browserpool.ErrInvalidURL) && tool != "" && tool != "browser_navigate":
			next = fmt.Sprintf("call %s again with an http:// or https:// URL", tool)
		case errors.Is(be, browserpool.ErrNavigation) && (tool == "browser_navigate_back" || tool == "browser_navigate_forward"):
			// The history entry's page did not load: the tab shows the
			// browser's error page for it.
			next = fmt.Sprintf("the tab shows the browser's error page for that entry: call browser_navigate with a URL that works, or %s again to go past it", tool)
		case errors.Is(be, context.DeadlineExceeded) && actions[tool] && strings.HasPrefix(be.Hint, "retry, with a longer deadline") && strings.Contains(be.Hint, "keeps it busy"):
			// The action may have started a script that never returns:
			// doing it again would start it again.
			next = "the action may have started a script that is still running (if it never returns, it is stopped in a moment): call browser_snapshot in a few seconds to see what the action did, before repeating the action"
		case (errors.Is(be, context.DeadlineExceeded) || errors.Is(be, context.Canceled)) && strings.Contains(be.Detail, "the tab is waiting for "):
			// A navigation the page started waits for a server that has
			// not answered, and the browser holds every read of the tab.
			next = "the tab waits for that server, and every read of the tab (browser_snapshot too) waits with it: call browser_navigate with another URL to go on (it is not held), or browser_wait_for with state load to wait for the page longer"
		case errors.Is(be, browserpool.ErrTimeout) && strings.Contains(be.Hint, "held by resources still loading"):
			// The document is there; what it still loads holds its load
			// event.
			next = "the page is there but still loading some of what it shows (an image, a frame): it is usually usable now, call browser_snapshot to see it; to wait for the rest, call browser_wait_for with state load"
		case errors.Is(be, browserpool.ErrTimeout) && strings.Contains(be.Hint, "stopped in a moment"):
			// The page came but did not load, and the library checks
			// whether a script of it keeps it busy.
			next = "if a script of the page keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes calls again: call browser_snapshot to see the page, then retry if it is not what you need"
		case (errors.Is(be, context.DeadlineExceeded) || errors.Is(be, context.Canceled)) && be.Hint != "":
			// The library's own hint says what became of the page (a
			// script it stops, a navigation it stopped): keep it, in tool
			// terms, unless it only speaks to a Go caller.
			if h := agentHint(be.Hint); h != "" {
				next = h
			}
		}
		// An invalid argument's own hint says what to pass instead (a
		// ref, a point, the tool for that kind of field): it beats the
		// class's, once every Go name in it has become a tool's.
		if h := toolNames(be.Hint); h != "" && !goName.MatchString(h) && (next == "" || errors.Is(be, browserpool.ErrInvalidArgument)) {
			next = h
		}
		if noRoomNext != "" {
			next = noRoomNext
		}
		if next == "" {
			next = "check the arguments and call the tool again"
		}
		return "Error: " + callerWords.Replace(toolNames(what.Error())) + "\nNext: " + next
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "Error: " + err.Error() + "\nNext: the call ran out of time; call browser_snapshot to see where the page is, then retry the step"
	case errors.Is(err, context.Canceled):
		return "Error: " + err.Error() + "\nNext: the call was cancelled; call the tool again if it is still needed"
	}
	return "Error: " + toolNames(err.Error()) + "\nNext: call browser_snapshot to see the page's state, then retry the step"
}

// sessionLimit matches the tracker's per-workflow limit detail, which an
// agent reads better as about itself.
var sessionLimit = regexp.MustCompile(`workflow \S+ already has (\d+) active browser session(s?) \(max (\d+) per workflow\); active sessions: \[([^\]]*)\]`)

// noRoomDetail and noRoomWait match the tracker's ErrNoRoom detail and the
// wait its hint gives (the library speaks of workflows; here a workflow is
// a client).
var (
	noRoomDetail = regexp.MustCompile(`^the global limit of (\d+) browser sessions is reached, and the idle ones belong to other workflows that used them within the last (\S+) \(EvictGrace\), the least recently used (.+) ago$`)
	noRoomWait   = regexp.MustCompile(`^open again in (\S+) or later`)
)

// noRoom returns the tracker's ErrNoRoom detail in a client's terms, and
// what to do next with the wait its hint gives; detail unchanged and ""
// when they do not read as expected.
func noRoom(detail, hint string) (string, string) {
	d, w := noRoomDetail.FindStringSubmatch(detail), noRoomWait.FindStringSubmatch(hint)
	if d == nil || w == nil {
		return detail, ""
	}
	plural := "s"
	if d[1] == "1" {
		plural = ""
	}
	return fmt.Sprintf("the server runs at most %s browser%s over all clients (-max-sessions %s), and a browser for you would close another client's, last used %s ago; a browser used within %s is not closed to make room", d[1], plural, d[1], d[3], d[2]),
		fmt.Sprintf("call the tool again in %s or later (a browser idle for %s is closed to make room for yours), or ask the user to start the server with a larger -max-sessions", w[1], d[2])
}

// callerWords are the library's words for a call whose Go context ended:
// here the call's bound (a call cancelled has no one left to read).
var callerWords = strings.NewReplacer(
	"context deadline exceeded", "timed out",
	"context canceled", "cancelled",
	"the caller's context ended", "the call's time ran out",
	"another Navigate of this tab", "another browser_navigate of this tab",
	"another call's Navigate", "another call's browser_navigate",
)

// hintPhrases are the library's hints for a Go caller, in an agent's terms.
var hintPhrases = strings.NewReplacer(
	"retry, with a longer deadline if the page is only slow", "call the tool again; if the page is only slow, wait for it first with browser_wait_for",
	"retry with a longer deadline if the site is slow, or check that it is up", "call browser_navigate again if the site is only slow, or check that it is up",
	"; pass a context with a longer deadline to wait longer", "; to wait longer, call browser_wait_for",
	"take a snapshot", "call browser_snapshot",
)

// agentHint returns a library hint in tool terms, or "" when it still
// speaks to a Go caller (a Go name, a context, a deadline to pass).
func agentHint(h string) string {
	h = toolNames(hintPhrases.Replace(h))
	if goName.MatchString(h) || strings.Contains(h, "context") || strings.Contains(h, "deadline") {
		return ""
	}
	return h
}

// classHints says what to do next for each error class, in tool names.
// They replace the library's hints, which name Go methods; the facts (which
// ref, which sessions, which limit) stay in the error's own text.
var classHints = map[error]string{
	// A library error whose class is the call's context error: the
	// library's hint tells a Go caller to pass a longer deadline.
	context.DeadlineExceeded: "the call ran out of time; call browser_snapshot to see where the page is, then retry the step",
	context.Canceled:         "the call was cancelled; call the tool again if it is still needed",

	browserpool.ErrPoolClosed:       "the server is shutting down; reconnect to a running browserpool-mcp",
	browserpool.ErrBrowserNotFound:  "Chromium is not installed where the server runs: install it (Debian/Ubuntu: apt-get install chromium) or start the server with -browser /path/to/chrome",
	browserpool.ErrLaunchFailed:     "the browser did not start; call the tool again, and if it keeps failing check the server's log",
	browserpool.ErrSessionNotFound:  "call browser_session_list to see your sessions, or browser_session_open to open one",
	browserpool.ErrAmbiguousSession: "pass session set to one of the sessions listed (browser_session_list shows them)",
	browserpool.ErrSessionClosed:    "the session is gone: call browser_session_open (or any page tool without a session, which opens one) and redo the steps",
	browserpool.ErrBrowserExited:    "the browser crashed or was killed: call browser_navigate again (a new browser opens) and redo the step",
	browserpool.ErrTabNotFound:      "call browser_tabs with action list to see your tabs' ids, or action new to open one",
	browserpool.ErrTabNotInSession:  "call browser_tabs with action list and use one of the ids it shows",
	browserpool.ErrTabClosed:        "the tab is gone: call browser_tabs with action list and pick another, or action new to open one",
	browserpool.ErrInvalidURL:       "call browser_navigate with an http:// or https:// URL",
	browserpool.ErrInvalidID:        "use 1 to 64 letters, digits, '-' or '_'",
	browserpool.ErrNavigation:       "check the URL and that the site is reachable from the server's machine, then call browser_navigate again",
	browserpool.ErrTimeout:          "the page did not get there in time: call browser_snapshot to see its state, then retry or wait longer with browser_wait_for",
	browserpool.ErrPathEscapes:      "give a plain file name such as shot.png; files always land in the session's output directory",
	browserpool.ErrProtocol:         "the browser refused the call: check the arguments, call browser_snapshot, and retry",
	browserpool.ErrCloseFailed:      "nothing to do: the server retries the cleanup",
	browserpool.ErrInvalidArgument:  "fix the argument the error names and call the tool again; nothing was changed",
	browserpool.ErrInvalidConfig:    "the server was started with a bad option; fix the server's command line",
	browserpool.ErrInvalidIdentity:  "reconnect: your client session has no usable identity",
	browserpool.ErrTabNotHeld:       "call browser_tabs with action list and use one of your own tabs, or action new to open one",
	browserpool.ErrJavaScript:       "fix the function passed to browser_evaluate; the page is unchanged unless the code ran partly",

	browserpool.ErrSessionLimit: "close a session you no longer need with browser_session_close, or keep using one you have (browser_session_list)",
	browserpool.ErrAllBusy:      "every browser is busy: wait for a running step to finish and call browser_session_open again, or close a session with browser_session_close",
	browserpool.ErrNoRoom:       "call the tool again later, or ask the user to start the server with a larger -max-sessions",

	browserpool.ErrTabRequired:      "the browser is shared: pass tab set to an id from browser_tabs with action list, or open one with browser_tabs action new",
	browserpool.ErrCDPRefused:       "the user must quit every Chrome window and start Chrome with --remote-debugging-port set to the port of the server's -cdp-endpoint and a separate --user-data-dir (Chrome 136+ ignores the port on the default profile); then call the tool again",
	browserpool.ErrCDPUnreachable:   "the server cannot reach the browser's host: check the -cdp-endpoint host name, then call the tool again",
	browserpool.ErrCDPNotDevTools:   "the -cdp-endpoint port is not Chrome's DevTools port: restart the server with the port given to --remote-debugging-port",
	browserpool.ErrCDPTimeout:       "Chrome did not answer: check that it is responsive, then call the tool again",
	browserpool.ErrCDPPromptPending: "ask the user to click Allow in Chrome's \"Allow remote debugging?\" prompt, then call the tool again (no second prompt opens)",
	browserpool.ErrCDPRejected:      "Chrome refused the connection: the user must allow remote debugging (or restart Chrome with --remote-debugging-port), then call the tool again",

	browserpool.ErrDialogOpen:     "answer the dialog with browser_handle_dialog (accept true or false), then continue; browser_page_info shows it",
	browserpool.ErrDownloadFailed: "check that the link still works (browser_navigate to it shows the server's answer), then call browser_download again",
	browserpool.ErrCovered:        "deal with the covering element first (click its close or accept button), or browser_scroll; then call browser_snapshot and retry with a fresh ref",
	browserpool.ErrNotVisible:     "the element cannot be acted on now: call browser_snapshot, open whatever hides it (a menu, a tab, a details box), or wait for it with browser_wait_for",
	browserpool.ErrClickMissed:    "the page moved during the click: wait for it to settle (browser_wait_for), call browser_snapshot and click again with a fresh ref",
	browserpool.ErrStaleRef:       "call browser_snapshot and use a ref it shows",
	browserpool.ErrFocusLost:      "the keys did not all reach the field: call browser_snapshot to see its value, then call browser_type with the field's ref and without slowly (it replaces the content at once)",
	browserpool.ErrDragNotStarted: "nothing was dropped: the page moved or hid the element as it was pressed, or was not done drawing; wait for it to settle (browser_wait_for), call browser_snapshot and call browser_drag again with fresh refs",
	browserpool.ErrFFmpegNotFound: "ffmpeg is not installed where the server runs (Debian package ffmpeg: apt-get install ffmpeg); call browser_stop_recording without video: the frames and the replay page index.html are there without it",

	browserpool.ErrNotBound:        "internal: the server's allocator lost the task; call the tool again",
	browserpool.ErrWrongComputer:   "internal: the server's allocator mixed computers; call the tool again",
	browserpool.ErrUnknownComputer: "internal: the server has no such computer; call the tool again",
	browserpool.ErrRejected:        "every browser slot is in use: call the tool again later, or close a session with browser_session_close",
	browserpool.ErrQueueFull:       "the server is overloaded: call the tool again later, or close a session with browser_session_close",
	browserpool.ErrQueueTimeout:    "no browser freed up in time: call the tool again later, or close a session with browser_session_close",
	browserpool.ErrTaskBusy:        "a browser is already being opened for you: call the tool again",
	browserpool.ErrNotShared:       "open a session of your own with browser_session_open",
	browserpool.ErrTaskFinished:    "call browser_session_open to start again",
	browserpool.ErrLeaked:          "nothing to do: the server retries the close",

	browserpool.ErrProfileInUse:        "another session holds this profile: close it first, or use another profile name",
	browserpool.ErrProfileNotFound:     "no profile has this name; a profile is created when a session first opens on it",
	browserpool.ErrInvalidStorageState: "give the JSON a storage-state export wrote: {\"cookies\": [...], \"origins\": [{\"origin\", \"localStorage\": [...]}]}",
	browserpool.ErrBlockedByPolicy:     "the server's network policy forbids this host; do not retry it, use an allowed site or ask the user",

	browserpool.ErrDecode:       "the value the page returned does not fit what was asked for; call browser_evaluate again returning a plain JSON value (a string, number, boolean, array or object)",
	browserpool.ErrNoHistory:    "there is no page to go to in that direction; call browser_navigate with the URL instead, or browser_page_info to see where the tab is",
	browserpool.ErrFleetFull:    "the browser fleet the server leases from is full: wait and call browser_session_open again, or close a session you no longer need with browser_session_close",
	browserpool.ErrFileTransfer: "the file cannot travel between the server and its remote browser this way: for browser_file_upload send smaller files, for browser_download use a link the page serves over http(s); retrying the same call will not help",
}

// goToTool maps the library's Go names to the tools that do the same. Longer
// names come first where one is a prefix of another.
var goToTool = []struct{ goName, tool string }{
	{"Tab.Snapshot", "browser_snapshot"},
	{"Tab.ClickAt", "browser_click"},
	{"Tab.Click", "browser_click"},
	{"Tab.HoverAt", "browser_hover"},
	{"Tab.Hover", "browser_hover"},
	{"Tab.DragTo", "browser_drag"},
	{"Tab.Drag", "browser_drag"},
	{"Tab.Fill", "browser_type"},
	{"Tab.Type", "browser_type"},
	{"Tab.Press", "browser_press_key"},
	{"Tab.Select", "browser_select_option"},
	{"Tab.Upload", "browser_file_upload"},
	{"Tab.WaitVisible", "browser_wait_for"},
	{"Tab.WaitCondition", "browser_wait_for"},
	{"Tab.WaitNetworkIdle", "browser_wait_for"},
	{"Tab.WaitNavigation", "browser_wait_for"},
	{"Tab.WaitLoad", "browser_wait_for"},
	{"Tab.WaitDownload", "browser_download"},
	{"Tab.Screenshot", "browser_take_screenshot"},
	{"Tab.AnswerDialog", "browser_handle_dialog"},
	{"Tab.EvaluateOn", "browser_evaluate"},
	{"Tab.Evaluate", "browser_evaluate"},
	{"Tab.Reload", "browser_navigate with the same URL"},
	{"Tab.Back", "browser_navigate_back"},
	{"Tab.Forward", "browser_navigate_forward"},
	{"Tab.Console", "browser_console_messages"},
	{"Tab.Network", "browser_network_requests"},
	{"Tab.SetViewport", "browser_resize"},
	{"Tab.PDF", "browser_pdf_save"},
	{"Tab.PageInfo", "browser_page_info"},
	{"Tab.Scroll", "browser_scroll"},
	{"Tab.Navigate", "browser_navigate"},
	{"Session.OpenTab", "browser_tabs action new"},
	{"Session.CloseTab", "browser_tabs action close"},
	{"Session.ActivateTab", "browser_tabs action select"},
	{"Session.Tabs", "browser_tabs action list"},
	{"Session.Tab", "browser_tabs"},
	{"Session.Close", "browser_session_close"},
	{"Pool.OpenTab", "browser_tabs action new"},
	{"Pool.ResolveTab", "browser_tabs"},
	{"Pool.Sessions", "browser_session_list"},
	{"Pool.Session", "browser_session_list"},
	{"Pool.Open", "browser_session_open"},
	{"Pool.CloseSession", "browser_session_close"},
	{"Pool.AttachFor", "browser_tabs"},
	{"Pool.Attach", "browser_tabs"},
	{"Tracker.OpenFor", "browser_session_open"},
	{"Tracker.Open", "browser_session_open"},
	{"Tracker.Lookup", "browser_session_list"},
	{"Tracker.CloseSession", "browser_session_close"},
	{"AttachedView.Tabs", "browser_tabs action list"},
	{"AttachedView.NewTab", "browser_tabs action new"},
	{"AttachedView.SelectTab", "browser_tabs action select"},
	{"AttachedView.Activate", "browser_tabs action select"},
	{"AttachedView.CloseTab", "browser_tabs action close"},
	{"AttachedView.Open", "browser_navigate"},
	{"AttachedView.Do", "browser_tabs"},
	// An id the library checked (a session name): its Go function.
	{"browserpool: ValidateID: ", "browserpool: "},
}

// libraryWords are the library's words for what an agent knows by another
// name: each MCP client is a Tracker workflow.
var libraryWords = []string{
	"workflow=", "client=",
	"per workflow", "per client",
	"workflow's", "client's",
	"workflow ", "client ",
}

var goToToolReplacer = func() *strings.Replacer {
	var pairs []string
	for _, p := range goToTool {
		pairs = append(pairs, p.goName, p.tool)
	}
	return strings.NewReplacer(append(pairs, libraryWords...)...)
}()

// goName matches a Go method or field the library may still name
// (Config.Executable, AcquireOptions.Budget).
var goName = regexp.MustCompile(`\b[A-Z][A-Za-z]+\.[A-Z][A-Za-z]+\b`)

// toolNames replaces the Go names in a library text with tool names, and
// the library's words with the agent's.
func toolNames(s string) string { return goToToolReplacer.Replace(s) }
