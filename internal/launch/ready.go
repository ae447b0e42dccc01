// Room: waiting for a started browser to become ready (Browser.getVersion,
// DevToolsActivePort, the exec check). No locks.

package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/devtools"
	"github.com/browserpool/browserpool/internal/proc"
)

// connect waits for the browser to become ready: it answers
// Browser.getVersion and, unless noPort, has written its port. It returns
// the stage that failed, and why: a *NoSpaceError when the session dir's
// file system is full.
func (p *Process) connect(ctx context.Context, noPipe, noPort bool) (stage string, err error) {
	defer func() {
		if err != nil {
			err = p.orNoSpace(err)
		}
	}()
	// A browser that exits ends the wait at once, with its exit status.
	ctx, stop := untilExit(ctx, p.exited, func() error { return p.exit })
	defer stop()
	activePort := filepath.Join(p.userDataDir, ActivePortFile)
	if noPipe {
		port, path, err := waitActivePort(ctx, activePort, p.outOfSpace())
		if err != nil {
			return "waiting for " + ActivePortFile, p.causeOf(ctx, err)
		}
		p.port, p.wsPath = port, path
		t, err := cdpmux.DialWebSocket(ctx, p.WebSocketURL())
		if err != nil {
			return "connecting to the DevTools websocket", p.causeOf(ctx, err)
		}
		p.t = &transport{t: t}
	} else {
		p.t = &transport{t: cdpmux.NewPipeTransport(p.pipeR, p.pipeW)}
		p.pipeR, p.pipeW = nil, nil // the transport owns them now
	}
	// Readiness is the one Browser.getVersion round trip, made on the bare
	// transport before its owner builds a mux on it.
	v, err := devtools.BrowserVersion(ctx, p.t)
	if err != nil {
		return "waiting for Browser.getVersion", p.causeOf(ctx, err)
	}
	p.version = v.Product
	if !noPipe && !noPort {
		port, path, err := waitActivePort(ctx, activePort, p.outOfSpace())
		if err != nil {
			return "waiting for " + ActivePortFile, p.causeOf(ctx, err)
		}
		p.port, p.wsPath = port, path
	}
	if err := p.checkExec(); err != nil {
		return "checking the browser process", err
	}
	return "", nil
}

// untilExit returns ctx, also cancelled (with cause()) when exited closes.
// stop releases the watcher and waits for it.
func untilExit(parent context.Context, exited <-chan struct{}, cause func() error) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-exited:
			cancel(cause())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil); <-done }
}

// causeOf names why a step of the start failed: the browser's exit status
// when it exited, else the context's cause, else err. A connection that
// failed by itself (a write into a pipe the dying browser no longer reads
// fails before the read side sees EOF) usually means the browser is exiting:
// its status is waited for, up to CauseWait.
func (p *Process) causeOf(ctx context.Context, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee
	}
	if ctx.Err() != nil {
		if c := context.Cause(ctx); errors.As(c, &ee) {
			return ee
		} else if c != nil {
			return c
		}
		return err
	}
	if waitFor(p.exited, CauseWait) {
		return p.exit
	}
	return err
}

// Cause names why the browser's connection ended: its exit status, if it
// exits within CauseWait. It fits cdpmux.Options.Cause for a mux built on
// Transport.
func (p *Process) Cause(readErr error) error {
	t := time.NewTimer(CauseWait)
	defer t.Stop()
	select {
	case <-p.exited:
		return p.exit
	case <-t.C:
		return fmt.Errorf("the browser (pid %d) closed its DevTools connection (%v) and is still running", p.pid, readErr)
	}
}

// spaceCheckEvery is how often, in polls of DevToolsActivePort (5 ms
// each), the wait for it asks whether the browser ran out of disk space.
const spaceCheckEvery = 100

// outOfSpace returns a check for waitActivePort: it returns a
// *NoSpaceError when the session dir's file system is full and either the
// browser said it could not write a file for want of space (Chromium's
// FILE_ERROR_NO_SPACE, or ENOSPC's text) or not one block was available
// at this check and the one before. Such a browser never writes
// DevToolsActivePort, and would keep its start waiting to the end.
func (p *Process) outOfSpace() func() error {
	wasEmpty := false
	return func() error {
		ns := noSpace(p.sessionDir)
		if ns == nil {
			wasEmpty = false
			return nil
		}
		empty := ns.Available == 0 || ns.NoInodes
		if empty && wasEmpty {
			return ns
		}
		wasEmpty = empty
		if tail := p.OutputTail(); strings.Contains(tail, "NO_SPACE") || strings.Contains(tail, "No space left on device") {
			return ns
		}
		return nil
	}
}

// orNoSpace returns err wrapped in a *NoSpaceError when the session dir's
// file system is full: whatever the step that failed, that is the cause
// to fix first.
func (p *Process) orNoSpace(err error) error {
	if errors.As(err, new(*NoSpaceError)) {
		return err
	}
	if ns := noSpace(p.sessionDir); ns != nil {
		ns.Err = err
		return ns
	}
	return err
}

// waitActivePort polls for DevToolsActivePort until it holds a whole port
// line and browser path line. Every spaceCheckEvery polls it calls check
// (when not nil), and ends the wait with its error.
func waitActivePort(ctx context.Context, path string, check func() error) (int, string, error) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		if check != nil && n%spaceCheckEvery == 0 {
			if err := check(); err != nil {
				return 0, "", err
			}
		}
		b, err := os.ReadFile(path)
		if err == nil {
			if port, ws, ok := parseActivePort(b); ok {
				return port, ws, nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return 0, "", err
		}
		select {
		case <-ctx.Done():
			return 0, "", ctx.Err()
		case <-tick.C:
		}
	}
}

// parseActivePort parses "<port>\n/devtools/browser/<uuid>[\n]". A file
// still being written parses as not ok.
func parseActivePort(b []byte) (int, string, bool) {
	portLine, path, ok := strings.Cut(string(b), "\n")
	if !ok {
		return 0, "", false
	}
	path = strings.TrimRight(path, "\n")
	port, err := strconv.Atoi(portLine)
	const prefix = "/devtools/browser/"
	if err != nil || port <= 0 || port > 65535 || !strings.HasPrefix(path, prefix) || len(path) != len(prefix)+36 {
		return 0, "", false
	}
	return port, path, true
}

// shells are programs a wrapper script may be left running as, instead of
// the browser it should have exec'd.
var shells = map[string]bool{"sh": true, "dash": true, "bash": true, "zsh": true, "ksh": true, "busybox": true, "env": true}

// checkExec proves that the pid we track is the browser itself: a wrapper
// script (the Debian /usr/bin/chromium) must have exec'd it in place, and our
// flags must have reached it.
func (p *Process) checkExec() error {
	real, err := proc.Exe(p.pid)
	if err != nil {
		return err
	}
	procExe, _ := os.Stat("/proc/" + strconv.Itoa(p.pid) + "/exe")
	interp := interpreter(p.exe)
	interpFI, _ := os.Stat(interp)
	if shells[filepath.Base(real)] || (procExe != nil && interpFI != nil && os.SameFile(procExe, interpFI)) {
		return fmt.Errorf("pid %d still runs %s: %s did not exec the browser in place; name the browser binary itself as the executable", p.pid, real, p.exe)
	}
	cl, err := proc.Cmdline(p.pid)
	if err != nil {
		return err
	}
	if !strings.Contains(cl, "--user-data-dir="+p.userDataDir) {
		return fmt.Errorf("pid %d (%s) does not carry our --user-data-dir: %s changed the command line", p.pid, real, p.exe)
	}
	p.realExe = real
	return nil
}

// interpreter returns the interpreter named by path's "#!" line, or "".
func interpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, ok := strings.CutPrefix(string(buf[:n]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}
