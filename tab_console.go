// Room: the console log (Tab.Console, Tab.ClearConsole). consoleState.mu
// guards the buffer and whether the Runtime domain is on. Messages arrive
// on the mux's reader through the tab's tap (Tab.onEvent ->
// tabExt.onToolEvent): no goroutine of ours reads them, and nothing under
// the lock blocks. Trace entries for them coalesce in the tab's trace ring,
// of which they take a bounded share (traceEvent takes traceRing.mu, never
// together with consoleState.mu).

package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/redact"
)

// ConsoleLimit is how many console messages and page errors a tab keeps;
// older ones are dropped first.
const ConsoleLimit = 500

// ConsoleTextLimit is how many characters of a message's text are kept;
// longer texts are cut and end in "…".
const ConsoleTextLimit = 2000

// ConsoleLevel is the severity of a console message. The text is stable.
type ConsoleLevel string

// Console levels.
const (
	ConsoleDebug     ConsoleLevel = "debug"     // console.debug
	ConsoleInfo      ConsoleLevel = "info"      // console.log, info, dir, table, trace, ...
	ConsoleWarning   ConsoleLevel = "warning"   // console.warn
	ConsoleError     ConsoleLevel = "error"     // console.error, a failed console.assert
	ConsolePageError ConsoleLevel = "pageerror" // an uncaught exception or unhandled promise rejection
)

// ConsoleMessage is one console message or uncaught page error of a tab.
type ConsoleMessage struct {
	Time   time.Time    // when the page logged it
	Level  ConsoleLevel // its severity; ConsolePageError for an uncaught error
	Method string       // the console method ("log", "warning", "table", ...); empty for a page error
	Text   string       // the arguments as the browser's console prints them (format directives such as %s applied, objects by their preview: {a: 1}, [1, 2], Map(1) {"k" => 1}), or the error's message; at most ConsoleTextLimit characters
	URL    string       // the script that logged or threw it, token-like values redacted; empty if unknown or if it has none (code run from a string: eval, setTimeout("…"), Tab.Evaluate)
	Line   int          // 1-based line in URL, or in the code run from a string when URL is empty; zero if unknown
	Column int          // 1-based column, the same way; zero if unknown
}

// consoleState is a tab's console buffer.
type consoleState struct {
	mu      sync.Mutex
	on      bool           // guarded by mu; Runtime.enable has succeeded
	entries []consoleEntry // guarded by mu; oldest first, at most ConsoleLimit
}

// consoleEntry is a message and what it still needs.
type consoleEntry struct {
	msg  ConsoleMessage
	exc  int         // Runtime.exceptionThrown's id; 0 for a console message
	lead string      // an exception's text before its value ("Uncaught"), to remake its text from args
	args []remoteArg // the arguments (an exception's value) while objects among them await their preview (previewReplayed); nil after
}

func (c *consoleState) add(e consoleEntry) {
	c.mu.Lock()
	if len(c.entries) >= ConsoleLimit {
		c.entries = append(c.entries[:0], c.entries[1:]...)
	}
	c.entries = append(c.entries, e)
	c.mu.Unlock()
}

// messages returns a copy of the messages, oldest first.
func (c *consoleState) messages() []ConsoleMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ConsoleMessage, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.msg
	}
	return out
}

// revoke removes the page error of exception id: a promise rejection the
// page handled after all (Runtime.exceptionRevoked).
func (c *consoleState) revoke(id int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.exc == id && id != 0 {
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			return
		}
	}
}

// Console returns the tab's console messages and uncaught page errors,
// oldest first (at most ConsoleLimit). The trace records each as a
// "console" entry with its level and source, never its text.
//
// The console is watched from the tab's first Console or ClearConsole
// call on (the Runtime domain is off until then: it costs the page events
// on every log, and some sites treat it as a sign of automation). At that
// first call the browser hands over what the current document has
// already logged (Chromium keeps up to 1000 messages per page), so a
// message or error logged before the first call is seen as long as the
// tab has not navigated away from its page since; the messages of pages
// left before the first call are not. Call Console once right after
// opening a tab to keep everything from then on. Messages of
// out-of-process (cross-site) iframes and of workers (dedicated, shared
// or service workers, each a target of its own) are not included.
func (t *Tab) Console(ctx context.Context) (out []ConsoleMessage, err error) {
	const op = "Tab.Console"
	err = t.act(ctx, op, "read-console", "", nil, func(ctx context.Context, x *tabExt, args *string) error {
		if err := x.consoleOn(ctx, op); err != nil {
			return err
		}
		out = x.console.messages()
		*args = strconv.Itoa(len(out)) + " messages"
		return nil
	})
	return out, err
}

// ClearConsole drops the tab's console messages and page errors,
// including those the page logged before the first Console call (it
// starts watching the console, as Console does).
func (t *Tab) ClearConsole(ctx context.Context) error {
	const op = "Tab.ClearConsole"
	return t.act(ctx, op, "clear-console", "", nil, func(ctx context.Context, x *tabExt, _ *string) error {
		if err := x.consoleOn(ctx, op); err != nil {
			return err
		}
		// The browser's own copy goes too, so a later enable (after a
		// reconnect) cannot bring the messages back.
		if err := x.t.direct.Invoke(ctx, "Runtime.discardConsoleEntries", nil, nil); err != nil {
			return x.fail(op, ctx, "", err)
		}
		x.console.mu.Lock()
		x.console.entries = nil
		x.console.mu.Unlock()
		return nil
	})
}

// consoleOn turns the Runtime domain on at the first call. The browser
// sends the messages it kept before its reply, so they are in the buffer
// when this returns, and their objects get their previews here
// (previewReplayed). It also releases the page objects the browser keeps
// for the messages' arguments (the text is made of their previews).
func (x *tabExt) consoleOn(ctx context.Context, op string) error {
	c := &x.console
	c.mu.Lock()
	on := c.on
	c.mu.Unlock()
	if !on {
		if err := x.t.direct.Invoke(ctx, "Runtime.enable", nil, nil); err != nil {
			return x.fail(op, ctx, "", err)
		}
		c.mu.Lock()
		c.on = true
		c.mu.Unlock()
		x.previewReplayed(ctx)
	}
	x.t.direct.Invoke(ctx, "Runtime.releaseObjectGroup", struct {
		Group string `json:"objectGroup"`
	}{"console"}, nil)
	return nil
}

// stackTop is the first frame of a Runtime.StackTrace.
type stackTop struct {
	CallFrames []struct {
		URL    string `json:"url"`
		Line   int    `json:"lineNumber"`
		Column int    `json:"columnNumber"`
	} `json:"callFrames"`
}

func (s *stackTop) where() (string, int, int) {
	if s == nil || len(s.CallFrames) == 0 {
		return "", 0, 0
	}
	f := s.CallFrames[0]
	return f.URL, f.Line + 1, f.Column + 1
}

// consoleLevels maps console methods (Runtime.consoleAPICalled's type) to
// levels; the rest are ConsoleInfo.
var consoleLevels = map[string]ConsoleLevel{
	"debug":   ConsoleDebug,
	"warning": ConsoleWarning,
	"error":   ConsoleError,
	"assert":  ConsoleError,
}

// consoleCalled records a Runtime.consoleAPICalled event (on the mux's
// reader).
func (x *tabExt) consoleCalled(params json.RawMessage) {
	var ev struct {
		Type       string      `json:"type"`
		Args       []remoteArg `json:"args"`
		Timestamp  float64     `json:"timestamp"` // ms since the epoch
		StackTrace *stackTop   `json:"stackTrace"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	level, ok := consoleLevels[ev.Type]
	if !ok {
		level = ConsoleInfo
	}
	u, line, col := ev.StackTrace.where()
	var await []remoteArg
	if slices.ContainsFunc(ev.Args, remoteArg.awaitsPreview) {
		await = ev.Args
	}
	x.noteConsole(consoleEntry{msg: ConsoleMessage{Time: msTime(ev.Timestamp), Level: level, Method: ev.Type,
		Text: axtext.Cut(consoleText(ev.Args), ConsoleTextLimit), URL: redact.Scrub(u), Line: line, Column: col}, args: await})
}

// exceptionThrown records a Runtime.exceptionThrown event (an uncaught
// error or an unhandled rejection), on the mux's reader.
func (x *tabExt) exceptionThrown(params json.RawMessage) {
	var ev struct {
		Timestamp float64 `json:"timestamp"`
		Details   struct {
			ExceptionID int        `json:"exceptionId"`
			Text        string     `json:"text"`
			Line        int        `json:"lineNumber"`
			Column      int        `json:"columnNumber"`
			URL         string     `json:"url"`
			StackTrace  *stackTop  `json:"stackTrace"`
			Exception   *remoteArg `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	d := ev.Details
	text := d.Text
	var await []remoteArg
	if e := d.Exception; e != nil {
		// A thrown object that is no Error ({code: 42}, an array) reads
		// by its preview, as the browser's console prints it, not as
		// its description "Object"; one the page threw before the
		// console was watched comes without its preview, which
		// previewReplayed asks for.
		text = pageErrorText(d.Text, *e)
		if e.awaitsPreview() {
			await = []remoteArg{*e}
		}
	}
	u, line, col := d.URL, d.Line+1, d.Column+1
	if su, sl, sc := d.StackTrace.where(); u == "" && su != "" {
		u, line, col = su, sl, sc
	}
	x.noteConsole(consoleEntry{msg: ConsoleMessage{Time: msTime(ev.Timestamp), Level: ConsolePageError,
		Text: axtext.Cut(text, ConsoleTextLimit), URL: redact.Scrub(u), Line: line, Column: col}, exc: d.ExceptionID, lead: d.Text, args: await})
}

// exceptionRevoked drops the page error of a promise rejection the page
// handled late: it was no error after all.
func (x *tabExt) exceptionRevoked(params json.RawMessage) {
	var ev struct {
		ExceptionID int `json:"exceptionId"`
	}
	if json.Unmarshal(params, &ev) == nil {
		x.console.revoke(ev.ExceptionID)
	}
}

func (x *tabExt) noteConsole(e consoleEntry) {
	x.console.add(e)
	m := e.msg
	where := redact.URL(m.URL)
	if where == "" {
		where = "(page)"
	}
	x.traceEvent("console", m.Level, string(m.Level)+" "+axtext.Cut(where, 200), m.Time)
}

// msTime converts milliseconds since the epoch (zero: now).
func msTime(ms float64) time.Time {
	if ms <= 0 {
		return time.Now()
	}
	return time.UnixMilli(int64(ms))
}

// pageRunEntries bounds the trace entries of one run of page events (no
// action of the agent's between them): the first are kept one by one,
// and the last counts the rest of the run ("798 more messages: 399 info,
// 399 warning").
const pageRunEntries = 4

// pageShare bounds the trace entries of page events in all: a new one
// beyond it drops the oldest, so that the agent's own actions keep the
// rest of the trace.
const pageShare = TraceLimit / 8

// traceEvent records that something happened in the page (a console
// message, a page error, at level) without its content, so that a noisy
// page cannot push the agent's own actions out of the trace: repeats of
// the newest trace entry are counted in it ("error https://x/app.js
// (×3)") rather than added; a run of page events takes at most
// pageRunEntries entries, the last of which counts the rest of the run by
// level; and page events take at most pageShare entries of the trace. A
// recorder sees each entry as it is added, not the counts added to it
// later.
func (x *tabExt) traceEvent(action string, level ConsoleLevel, args string, at time.Time) {
	r := &x.trace
	r.mu.Lock()
	if r.n > 0 {
		last := &r.ring[(r.start+r.n-1)%TraceLimit]
		if last.Action == action {
			if counts, ok := parseRunCounts(last.Args); ok {
				counts[levelIndex(level)]++
				last.Args = runCountsArgs(counts)
				r.mu.Unlock()
				return
			}
			base, n := last.Args, 1
			if i := strings.LastIndex(base, " (×"); i >= 0 && strings.HasSuffix(base, ")") {
				if c, err := strconv.Atoi(base[i+len(" (×") : len(base)-1]); err == nil {
					base, n = base[:i], c
				}
			}
			if base == args {
				last.Args = fmt.Sprintf("%s (×%d)", args, n+1)
				r.mu.Unlock()
				return
			}
			if r.tailRun(action) >= pageRunEntries-1 {
				var counts runCounts
				counts[levelIndex(level)]++
				args = runCountsArgs(counts)
			}
		}
	}
	if i := r.oldest(action); i >= 0 && r.count(action) >= pageShare {
		r.removeAt(i)
	}
	r.mu.Unlock()
	x.record(action, args, at, nil)
}

// runLevels are the levels a run's counting entry counts, in its order.
var runLevels = [...]ConsoleLevel{ConsoleDebug, ConsoleInfo, ConsoleWarning, ConsoleError, ConsolePageError}

// runCounts counts the page events of a run by level (runLevels).
type runCounts [len(runLevels)]int

func levelIndex(l ConsoleLevel) int {
	if i := slices.Index(runLevels[:], l); i >= 0 {
		return i
	}
	return 1 // info
}

// runCountsArgs is the arguments of a run's counting entry: "3 more
// messages: 1 info, 2 warning". They start with a digit, and the other
// entries of page events with a level.
func runCountsArgs(c runCounts) string {
	total := 0
	var parts []string
	for i, n := range c {
		if n > 0 {
			total += n
			parts = append(parts, strconv.Itoa(n)+" "+string(runLevels[i]))
		}
	}
	noun := "messages"
	if total == 1 {
		noun = "message"
	}
	return fmt.Sprintf("%d more %s: %s", total, noun, strings.Join(parts, ", "))
}

// parseRunCounts reads a run's counting entry's arguments (runCountsArgs);
// ok is false for any other entry's.
func parseRunCounts(args string) (c runCounts, ok bool) {
	if args == "" || args[0] < '0' || args[0] > '9' {
		return c, false
	}
	_, list, found := strings.Cut(args, ": ")
	if !found {
		return c, false
	}
	for part := range strings.SplitSeq(list, ", ") {
		num, level, _ := strings.Cut(part, " ")
		n, err := strconv.Atoi(num)
		i := slices.Index(runLevels[:], ConsoleLevel(level))
		if err != nil || i < 0 {
			return c, false
		}
		c[i] = n
	}
	return c, true
}

// tailRun counts the newest entries of action, up to pageRunEntries.
// r.mu is held.
func (r *traceRing) tailRun(action string) int {
	k := 0
	for k < r.n && k < pageRunEntries && r.ring[(r.start+r.n-1-k)%TraceLimit].Action == action {
		k++
	}
	return k
}

// count counts the entries of action. r.mu is held.
func (r *traceRing) count(action string) int {
	k := 0
	for i := range r.n {
		if r.ring[(r.start+i)%TraceLimit].Action == action {
			k++
		}
	}
	return k
}

// oldest is the place (0: the oldest entry) of the oldest entry of action,
// or -1. r.mu is held.
func (r *traceRing) oldest(action string) int {
	for i := range r.n {
		if r.ring[(r.start+i)%TraceLimit].Action == action {
			return i
		}
	}
	return -1
}

// removeAt removes the entry at place i (0: the oldest), leaving the ring
// as record expects one of fewer than TraceLimit entries: start 0 and
// len(ring) == n (its capacity kept, so record's append does not
// allocate). r.mu is held.
func (r *traceRing) removeAt(i int) {
	if r.start != 0 { // rotate the full ring so that the oldest is first
		slices.Reverse(r.ring[:r.start])
		slices.Reverse(r.ring[r.start:])
		slices.Reverse(r.ring)
		r.start = 0
	}
	r.ring = slices.Delete(r.ring, i, i+1)
	r.n--
}

// onToolEvent sees the tab's events that the tools of this file and
// tab_network.go, tab_drag.go follow (Tab.onEvent hands them over on the
// mux's reader); it must not block.
func (x *tabExt) onToolEvent(method string, params json.RawMessage) {
	switch method {
	case "Runtime.consoleAPICalled":
		x.consoleCalled(params)
	case "Runtime.exceptionThrown":
		x.exceptionThrown(params)
	case "Runtime.exceptionRevoked":
		x.exceptionRevoked(params)
	case "Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished", "Network.loadingFailed", "Page.frameDetached", "Page.frameNavigated":
		x.netlog.note(method, params)
	case "Input.dragIntercepted":
		x.drag.intercepted(params)
	case "Page.fileChooserOpened":
		x.chooserOpened(params)
	}
}
