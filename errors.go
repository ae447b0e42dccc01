// Room: errors. The one exported error type, its sentinel classes and the
// hint table. No locks.

package browserpool

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/manifest"
)

// Error classes. Every error the package returns is an *Error whose Class is
// one of these, so errors.Is(err, ErrX) tells what happened; errors.As with
// *Error gives the operation, the session and tab, and a hint.
var (
	// ErrPoolClosed: the Pool (or Tracker, Allocator) was closed. Returned by
	// every method of it called after Close; the sessions and tabs it had
	// return ErrSessionClosed (reason shutdown).
	ErrPoolClosed = errors.New("pool is closed")
	// ErrBrowserNotFound: no browser executable was found (a capability
	// error). Returned by NewPool's first launch and by Pool.Open.
	ErrBrowserNotFound = errors.New("no browser executable found")
	// ErrLaunchFailed: the browser started but did not become ready.
	ErrLaunchFailed = errors.New("browser launch failed")
	// ErrSessionNotFound: no live session has the given id.
	ErrSessionNotFound = errors.New("session not found")
	// ErrAmbiguousSession: no session id was given and several are live.
	ErrAmbiguousSession = errors.New("several sessions are live and no session id was given")
	// ErrSessionClosed: the session was closed (explicitly, idle, LRU, ...).
	ErrSessionClosed = errors.New("session is closed")
	// ErrBrowserExited: the session's browser process exited on its own.
	ErrBrowserExited = errors.New("browser exited")
	// ErrTabNotFound: no tab has the given id in the session, or the session
	// has no active tab.
	ErrTabNotFound = errors.New("tab not found")
	// ErrTabNotInSession: the tab id belongs to another session (or to a
	// session this call creates, see Ref.NewInstance).
	ErrTabNotInSession = errors.New("tab does not belong to this session")
	// ErrTabClosed: the tab was closed or its target crashed or detached.
	ErrTabClosed = errors.New("tab is closed")
	// ErrInvalidURL: the URL is malformed, its scheme is not allowed, its
	// port is outside 1 to 65535, or the browser calls it invalid (a host
	// such as 300.1.1.1).
	ErrInvalidURL = errors.New("URL not allowed")
	// ErrInvalidID: an id that would become part of a path or a key is not
	// of the form [A-Za-z0-9_-]{1,64}.
	ErrInvalidID = errors.New("invalid id")
	// ErrNavigation: the browser could not load the page.
	ErrNavigation = errors.New("navigation failed")
	// ErrTimeout: a bounded wait inside the library ran out (not the
	// caller's context, which yields context errors).
	ErrTimeout = errors.New("timed out")
	// ErrPathEscapes: an artifact file name would leave the output dir.
	ErrPathEscapes = errors.New("path escapes the output directory")
	// ErrProtocol: the browser answered a CDP call with an error. The
	// *rpcc.ResponseError is reachable with errors.As.
	ErrProtocol = errors.New("browser returned a protocol error")
	// ErrCloseFailed: a session's browser could not be stopped or its
	// profile dir removed; the pool retries the removal and counts it.
	ErrCloseFailed = errors.New("session close left something behind")
	// ErrInvalidArgument: an argument is not usable (an existing artifact
	// name, an empty selector, a session id given with NewInstance, ...).
	// The detail says which.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrInvalidConfig: a Config field has a value NewPool cannot use.
	ErrInvalidConfig = errors.New("invalid config")
)

// Error is the error type of every failing operation. Fields that do not
// apply are empty. The text reads well verbatim to a person or an LLM:
//
//	browserpool: <Op> session=<id> tab=<id>: <class>: <detail> (hint: <what to do next>)
//
// Session is always a session id (s-…); a Tracker error names the tracked
// session by the caller's name for it instead, shown as name=<name>.
type Error struct {
	Op       string // operation, e.g. "Pool.Open", "Tab.Navigate"
	Session  string // session id, if any
	Name     string // the session's name in a Tracker (Tracker errors); never an id
	Tab      string // tab (target) id, if any
	Workflow string // workflow, for Tracker errors
	Task     string // task, for Allocator errors
	Class    error  // one of the Err* sentinels
	Detail   string // facts: what exactly happened
	Err      error  // underlying cause, if any
	Hint     string // what to do next

	notSent  bool // the call provably never reached the browser (see Retryable)
	noAnswer bool // the caller's context ended before the browser answered the call (Session.wrap; Tab.givenUp reads it)
}

// Retryable reports whether the failed call provably never reached the
// browser: the connection was already gone, or the session already closed,
// when the request would have been written. Such a call had no effect, so
// retrying it (on another session, or after reopening) cannot apply it
// twice. A false result means the browser may have received the call (for
// example a reply lost when the connection dropped, or a context that ended
// while the browser worked): its effect is unknown. This is the pool's
// version of database/sql's driver.ErrBadConn rule.
func (e *Error) Retryable() bool {
	return e != nil && (e.notSent || errors.Is(e.Err, cdpmux.ErrNotSent))
}

// Error formats the error as "browserpool: <op> <ids>: <class>: <detail>: <cause> (hint: ...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("browserpool: ")
	b.WriteString(e.Op)
	for _, kv := range [...][2]string{{"session", e.Session}, {"name", e.Name}, {"tab", e.Tab}, {"workflow", e.Workflow}, {"task", e.Task}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], echoField(kv[1]))
		}
	}
	b.WriteString(": ")
	e.writeBody(&b)
	hint := e.Hint
	if inner, ok := e.Err.(*Error); ok && hint == "" {
		hint = inner.Hint
	}
	if hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(hint)
		b.WriteString(")")
	}
	return b.String()
}

// writeBody writes the class, the detail and the cause. A cause that is
// itself an *Error is written the same way, without its own prefix and
// hint: one error reads as one sentence with one hint (the outer one, or
// the cause's when the outer has none).
func (e *Error) writeBody(b *strings.Builder) {
	if e.Class != nil {
		b.WriteString(e.Class.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		if inner, ok := e.Err.(*Error); ok {
			inner.writeBody(b)
		} else {
			b.WriteString(e.Err.Error())
		}
	}
}

// Unwrap returns the class and the cause, so errors.Is and errors.As see both.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Class != nil {
		errs = append(errs, e.Class)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// hints holds the default hint of every class the package defines, in one
// table so golden tests can pin them. Constructors that know more facts
// write a more specific hint.
var hints = map[error]string{
	ErrPoolClosed:       "create a new Pool; a closed one cannot be reused",
	ErrBrowserNotFound:  "install Chromium (Debian/Ubuntu: apt-get install chromium) or set Config.Executable to the browser's path",
	ErrLaunchFailed:     "the session was not created; the error says why (with the browser's output when it printed any): retry, or fix the browser install",
	ErrSessionNotFound:  "list live sessions with Pool.Sessions, or open a new one",
	ErrSessionClosed:    "open a new session; this one is gone",
	ErrBrowserExited:    "the browser crashed or was killed; open a new session and retry the step",
	ErrTabNotFound:      "list the session's tabs and use one of their ids, or open a new tab",
	ErrTabNotInSession:  "use a tab id from this session's tab list; tab ids never carry over between sessions",
	ErrTabClosed:        "list the session's tabs and pick another, or open a new tab",
	ErrInvalidURL:       "use an http:// or https:// URL (about:blank opens an empty tab)",
	ErrInvalidID:        "use 1 to 64 letters, digits, '-' or '_'",
	ErrNavigation:       "check that the URL is right and the site is reachable from this machine, then retry",
	ErrTimeout:          "the browser did not answer in time; retry, or close the session if it keeps happening",
	ErrPathEscapes:      "give a plain file name such as shot.png; it is always placed inside the session's output directory",
	ErrProtocol:         "the browser refused the call; check its arguments",
	ErrInvalidConfig:    "fix the Config field named above",
	ErrCloseFailed:      "nothing to do now: the pool retries the cleanup and Pool.Stats shows what is pending (Leaked, ProfileDirsPendingDelete)",
	ErrAmbiguousSession: "pass one of the live session ids",

	ErrInvalidArgument: "fix the argument the detail names; nothing was changed",
	ErrInvalidIdentity: "build identities with NewIdentity, Identity.Child or Identity.IsolatedChild, and group keys with GroupKey from the group's canonical id",
	ErrTabNotHeld:      "open a tab of your own with Holder.OpenTab, or ask the tab's holder to hand it over with Holder.HandTab",
	ErrJavaScript:      "fix the expression; the page is unchanged unless the code ran partly",
	ErrDecode:          "pass a pointer to a Go type that can hold the expression's value (or *any), or convert the value in the expression",

	// Tracker (tracker.go).
	ErrSessionLimit: "close one of the workflow's sessions first, or keep using one it already has",
	ErrAllBusy:      "wait for a running browser step to finish and open again, or close a session you no longer need",
	ErrNoRoom:       "open again after the time the error gives, or close a session you no longer need",

	// Attaching to the user's browser (attach.go, cdpcheck.go).
	ErrTabRequired:      "name the tab by id or label (AttachedView.Tabs lists them), or create one with AttachedView.NewTab",
	ErrCDPRefused:       "start Chrome with --remote-debugging-port=9222 (quit every other Chrome first), and check that no other program holds the port",
	ErrCDPUnreachable:   "check the host name and that this machine can reach it (from a container: host.docker.internal)",
	ErrCDPNotDevTools:   "point at Chrome's DevTools port (the one given to --remote-debugging-port), not another service",
	ErrCDPTimeout:       "check that Chrome is responsive and the port is right, then check again",
	ErrCDPPromptPending: "click Allow in Chrome's \"Allow remote debugging?\" prompt, then check again; do not open another connection meanwhile",
	ErrCDPRejected:      "Chrome refused the connection: copy a fresh URL from /json/version or DevToolsActivePort, or restart Chrome with --remote-debugging-port",

	// Agent actions (tab_*.go).
	ErrDialogOpen:     "answer the dialog with Tab.AnswerDialog (accept or dismiss), then continue; Tab.PageInfo shows it",
	ErrDownloadFailed: "check that the link still works (open it in a tab to see the server's answer), then retry",
	ErrCovered:        "deal with the covering element first (close or accept it), or scroll; then take a new snapshot and retry",
	ErrNotVisible:     "the element cannot be clicked now: take a new snapshot, open whatever hides it (a menu, a tab, a details box), or wait for it with Tab.WaitVisible",
	ErrClickMissed:    "the page moved or covered the element during the click (an animation, or the page reacting to the press); wait for it to settle, take a new snapshot and click again",
	ErrDragNotStarted: "the page moved the element as it was pressed, or was not done drawing; take a new snapshot once it has settled and drag again",
	ErrStaleRef:       "take a new snapshot with Tab.Snapshot and use a ref it shows",
	ErrFocusLost:      "click the field (Tab.Click on its ref) and check its value in a snapshot before typing the rest, or use Tab.Fill, which sets the whole value at once",
	ErrNoHistory:      "nothing changed: navigate with Tab.Navigate instead, or check Tab.PageInfo for where the tab is",
	ErrFFmpegNotFound: "install the Debian package ffmpeg (apt-get install ffmpeg) or set RecordingOptions.FFmpeg to its path; the frames, events.jsonl and index.html of the recording are there without it",

	// Allocator (allocator.go).
	ErrNotBound:        "bind the task first with Allocator.Bind(task, computer), or name the computer in AcquireOptions.Computer",
	ErrWrongComputer:   "acquire on the computer the task is bound to (leave AcquireOptions.Computer empty to use its binding)",
	ErrUnknownComputer: "use one of the computer names listed above",
	ErrRejected:        "retry later, or acquire with PolicyQueue to wait in line for a free slot",
	ErrQueueFull:       "the computer is overloaded: retry later, or finish tasks that no longer need a browser",
	ErrQueueTimeout:    "the computer stayed busy for the whole budget: retry later, finish tasks that no longer need a browser, or raise AcquireOptions.Budget, AllocatorConfig.Budget or the computer's Cap",
	ErrTaskBusy:        "use the session the task already holds (Lease.Session), or Finish the task before acquiring differently",
	ErrNotShared:       "acquire a session for the task named in ShareWith first, or drop ShareWith to give this task its own session",
	ErrTaskFinished:    "the task is over; use a new task id if more browser work is needed",
	ErrLeaked:          "nothing to do for this task: the allocator retries the close and reports it in Allocator.Stats (Leaked); check the computer if the count keeps growing",

	// Remote fleets (fleet.go).
	ErrFleetFull:    "the fleet is full: retry later, raise its concurrency, or queue through an Allocator",
	ErrFileTransfer: "the file cannot travel between this machine and the remote browser this way: follow the detail, or run this task on a local browser",

	// Profiles and storage (profile.go, storage.go).
	ErrProfileInUse:        "close the session named above first (its profile is released when it closes), or open another profile name",
	ErrInvalidStorageState: "give the JSON written by Session.StorageState: {\"cookies\": [{\"name\", \"value\", \"domain\", \"path\", ...}], \"origins\": [{\"origin\": \"https://host\", \"localStorage\": [{\"name\", \"value\"}]}]}",
	ErrBlockedByPolicy:     "the pool's Config.Network policy forbids this host: use an allowed host, or create the Pool with a policy that allows it",
	ErrProfileNotFound:     "list the profiles with Pool.Profiles; a profile is created by the first Pool.OpenProfile on its name",
}

func newError(op string, class error, detail string) *Error {
	return &Error{Op: op, Class: class, Detail: detail, Hint: hints[class]}
}

// retag returns a copy of err's *Error changed by set, leaving the error
// others may hold (a launch's, shared by its waiters) alone; an error of
// another type is returned as it is.
func retag(err error, set func(*Error)) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	set(&c)
	return &c
}

// maxEcho bounds how many bytes of a caller's input (a URL, an id, a name)
// an error message repeats: a 70 KB URL must not make a 70 KB error.
const maxEcho = 200

// echo returns s for an error message: whole when it is at most maxEcho
// bytes, else its start (cut at a character boundary), "…" and its length.
func echo(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

// echoField is echo for an id after "session=" and the like: quoted and
// escaped when it holds control characters (a newline would forge a log
// line), spaces, quotes or invalid UTF-8.
func echoField(s string) string {
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == ' ' || r == '"' || r == utf8.RuneError }) {
		return echo(strconv.Quote(s))
	}
	return echo(s)
}

// isValidID reports whether id matches [A-Za-z0-9_-]{1,64}: the one rule
// for every id and name the package checks, kept in internal/manifest,
// whose sweep applies it to the session dirs it may remove.
func isValidID(id string) bool { return manifest.ValidID(id) }

// ValidateID reports whether id may name a session, tab label, task or
// workflow: 1 to 64 of [A-Za-z0-9_-]. Such ids become path parts and keys.
func ValidateID(kind, id string) error {
	if isValidID(id) {
		return nil
	}
	shown := id
	if len(shown) > 70 {
		shown = shown[:64] + "..."
	}
	return &Error{Op: "ValidateID", Class: ErrInvalidID, Detail: fmt.Sprintf("%s %q", kind, shown), Hint: hints[ErrInvalidID]}
}
