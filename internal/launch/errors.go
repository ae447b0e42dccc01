// Room: the errors of starting and stopping a browser. No locks.

package launch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// Classes of failure, for errors.Is.
var (
	// ErrExited: the browser process has exited. An *ExitError is of this
	// class.
	ErrExited = errors.New("browser exited")
	// ErrDirNotRemoved: Stop could not remove the session directory. A
	// *StopError with RemoveErr set is of this class.
	ErrDirNotRemoved = errors.New("session directory not removed")
	// ErrLingering: processes of the browser were still running when Stop
	// gave up on them. A *StopError with Lingering set is of this class.
	ErrLingering = errors.New("browser processes still running")
)

// ExitError says how the browser's main process ended. Every call pending
// on the browser's connection when it died fails with an error wrapping it
// (errors.As works through the rpcc and cdpmux error chains).
type ExitError struct {
	PID    int
	Code   int            // exit status; -1 when killed by a signal
	Signal syscall.Signal // the signal that killed it; 0 when it exited
}

// Error says "browser exited with status N" or "browser was killed by
// signal S".
func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return "browser was killed by signal " + e.Signal.String()
	}
	return "browser exited with status " + strconv.Itoa(e.Code)
}

// Is reports whether target is ErrExited.
func (e *ExitError) Is(target error) bool { return target == ErrExited }

func exitErrorOf(pid int, ws syscall.WaitStatus) *ExitError {
	if ws.Signaled() {
		return &ExitError{PID: pid, Code: -1, Signal: ws.Signal()}
	}
	return &ExitError{PID: pid, Code: ws.ExitStatus()}
}

// maxOutputInError bounds the browser output quoted in a StartError's text.
const maxOutputInError = 2048

// StartError is returned by Start when the browser could not be started or
// did not become ready. By then Start has killed the process group, reaped
// the browser and removed what it created.
type StartError struct {
	Executable string
	// Stage is what Start was doing: "preparing the session directory",
	// "spawning", "OnSpawn", "waiting for Browser.getVersion", ...
	Stage string
	// Err is why: the context's error, an *ExitError, OnSpawn's error, ...
	Err error
	// Exit is how the browser process ended (after Start killed it, if it
	// had not exited by itself); nil if it never started.
	Exit *ExitError
	// Output is the tail of the browser's stdout and stderr.
	Output string
}

// Error names the executable, the stage and the cause, then quotes the
// last 2 KiB of the browser's output.
func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "launch: starting %s: %s: %v", e.Executable, e.Stage, e.Err)
	var ee *ExitError
	if e.Exit != nil && !errors.As(e.Err, &ee) {
		fmt.Fprintf(&b, " (then the %v)", e.Exit)
	}
	if out := strings.TrimSpace(e.Output); out != "" {
		if len(out) > maxOutputInError {
			out = "…" + out[len(out)-maxOutputInError:]
		}
		fmt.Fprintf(&b, "\nbrowser output (tail):\n%s", out)
	}
	return b.String()
}

// Unwrap returns Err and Exit.
func (e *StartError) Unwrap() []error {
	if e.Exit != nil {
		return []error{e.Err, e.Exit}
	}
	return []error{e.Err}
}

// minFreeSpace is the free space under which a browser's file system is
// full: a fresh profile alone takes several MiB.
const minFreeSpace = 1 << 20

// NoSpaceError says that the file system of a session dir is full: less
// than 1 MiB available to this user, or no inode free. A browser cannot
// start there (Chromium logs FILE_ERROR_NO_SPACE and never writes
// DevToolsActivePort). It unwraps to syscall.ENOSPC and to Err.
type NoSpaceError struct {
	Dir       string
	Available uint64 // bytes available to this user
	NoInodes  bool   // no inode free
	// Err is the failure it explains (a deadline, an exit), or nil.
	Err error
}

// Error says which file system is full, how full, and what failed.
func (e *NoSpaceError) Error() string {
	what := fmt.Sprintf("%d KiB available", e.Available>>10)
	if e.NoInodes {
		what = "no inode free"
	}
	msg := fmt.Sprintf("the disk is full: the file system of %s has %s, too little for a browser profile", e.Dir, what)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

// Unwrap returns syscall.ENOSPC and Err.
func (e *NoSpaceError) Unwrap() []error {
	if e.Err != nil {
		return []error{syscall.ENOSPC, e.Err}
	}
	return []error{syscall.ENOSPC}
}

// noSpace returns a *NoSpaceError when dir's file system is full, else nil
// (also when statfs fails).
func noSpace(dir string) *NoSpaceError {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil
	}
	avail := st.Bavail * uint64(st.Bsize)
	noInodes := st.Files > 0 && st.Ffree == 0
	if avail >= minFreeSpace && !noInodes {
		return nil
	}
	return &NoSpaceError{Dir: dir, Available: avail, NoInodes: noInodes}
}

// StopError is returned by Stop for what it could not clean up. The browser's
// main process has always been reaped by then unless Lingering names it.
type StopError struct {
	SessionDir string
	// RemoveErr is the last error removing SessionDir, nil if it was
	// removed. A caller should count it and retry later.
	RemoveErr error
	// Lingering are pids of the browser's processes still running after
	// Stop killed them.
	Lingering []int
}

// Error names the lingering processes and the directory left behind.
func (e *StopError) Error() string {
	var parts []string
	if len(e.Lingering) > 0 {
		parts = append(parts, fmt.Sprintf("processes %v still running after SIGKILL", e.Lingering))
	}
	if e.RemoveErr != nil {
		parts = append(parts, fmt.Sprintf("session directory %s not removed: %v", e.SessionDir, e.RemoveErr))
	}
	return "launch: stop: " + strings.Join(parts, "; ")
}

// Is reports whether target is ErrDirNotRemoved (when RemoveErr is set) or
// ErrLingering (when Lingering is set).
func (e *StopError) Is(target error) bool {
	return (target == ErrDirNotRemoved && e.RemoveErr != nil) || (target == ErrLingering && len(e.Lingering) > 0)
}

// Unwrap returns RemoveErr.
func (e *StopError) Unwrap() error { return e.RemoveErr }
