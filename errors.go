// Room: errors. The one exported error type, its sentinel classes and the
// hint table. No locks.

package browserpool

import (
	"errors"
	"fmt"
	"strings"
)

// Error classes. Every error the package returns is an *Error whose Class is
// one of these, so errors.Is(err, ErrX) tells what happened; errors.As with
// *Error gives the operation, the session and tab, and a hint.
var (
	// ErrPoolClosed: the Pool (or Tracker, Allocator) was closed. Returned by
	// every method called after Close.
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
	// ErrInvalidURL: the URL is malformed or its scheme is not allowed.
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
type Error struct {
	Op       string // operation, e.g. "Pool.Open", "Tab.Navigate"
	Session  string // session id, if any
	Tab      string // tab (target) id, if any
	Workflow string // workflow, for Tracker errors
	Task     string // task, for Allocator errors
	Class    error  // one of the Err* sentinels
	Detail   string // facts: what exactly happened
	Err      error  // underlying cause, if any
	Hint     string // what to do next
}

// Error formats the error as "browserpool: <op> <ids>: <class>: <detail>: <cause> (hint: ...)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("browserpool: ")
	b.WriteString(e.Op)
	for _, kv := range [...][2]string{{"session", e.Session}, {"tab", e.Tab}, {"workflow", e.Workflow}, {"task", e.Task}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	b.WriteString(": ")
	if e.Class != nil {
		b.WriteString(e.Class.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
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

// hints holds the default hint of each class. Constructors that know more
// facts write a more specific hint.
var hints = map[error]string{
	ErrPoolClosed:       "create a new Pool; a closed one cannot be reused",
	ErrBrowserNotFound:  "install Chromium (Debian/Ubuntu: apt-get install chromium) or set Config.Executable to the browser's path",
	ErrLaunchFailed:     "check the browser output quoted above; the session was not created, so retry or fix the browser install",
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
	ErrCloseFailed:      "nothing to do now: the pool retries the cleanup and Stats shows what is pending",
	ErrAmbiguousSession: "pass one of the live session ids",
}

func newError(op string, class error, detail string) *Error {
	return &Error{Op: op, Class: class, Detail: detail, Hint: hints[class]}
}

// isValidID reports whether id matches [A-Za-z0-9_-]{1,64}.
func isValidID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

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
