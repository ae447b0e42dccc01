// Room: one running browser process. Process.killMu guards reaped and is the
// one lock held across a system call: kill(2) of the process group, which
// never blocks, because the group id is ours only until the main process is
// reaped (see Kill). Process.tailMu guards the output tail. Process.stopMu
// guards stopping. transport.wmu serializes writes to the DevTools
// connection (its owner's mux, and Stop's Browser.close); it is held only
// across one write. No other CDP I/O or file I/O happens under any of them.

package launch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/proc"
)

// Process is one running browser started by Start. It is safe for
// concurrent use. Its owner must call Stop, also after the browser died, to
// end its goroutine and remove its session directory.
type Process struct {
	// Set by Start before it returns, read-only after.
	exe, realExe string
	sessionDir   string
	userDataDir  string
	sessionID    string
	pid, pgid    int
	startTime    uint64
	port         int
	wsPath       string
	version      string
	tmpDir       string     // the browser's TMPDIR
	privateTmp   string     // tmpDir when it is a private one outside sessionDir (see PrivateTmpDirs), else ""
	t            *transport // the DevTools connection, pipe or websocket
	pipeR, pipeW *os.File   // our ends of the DevTools pipe until the transport owns them
	wake         *os.File   // an eventfd: a write makes the goroutine give up the output (giveUpOutput)

	exited  chan struct{} // closed once the main process is reaped
	exit    *ExitError    // written before exited is closed
	outDone chan struct{} // closed at EOF of the output pipe (or when Stop gave it up)
	runDone chan struct{} // closed when the goroutine has ended, every descriptor it made closed

	killMu sync.Mutex
	reaped bool // guarded by killMu: the main process is (being) reaped, so pgid may name another group

	tailMu sync.Mutex
	tail   tail // guarded by tailMu

	stopMu   sync.Mutex
	stopping bool          // guarded by stopMu
	stopDone chan struct{} // closed when the first Stop has finished

	retryMu sync.Mutex // serializes later Stops' retries (retryStop)
	stopErr *StopError // what is left behind: written by the first Stop before stopDone is closed, then guarded by retryMu
}

func newProcess(exe, dir, id string) *Process {
	return &Process{
		exe:         exe,
		sessionDir:  dir,
		userDataDir: dir + string(os.PathSeparator) + UserDataDirName,
		sessionID:   id,
		exited:      make(chan struct{}),
		outDone:     make(chan struct{}),
		runDone:     make(chan struct{}),
		tail:        tail{max: OutputTailSize},
		stopDone:    make(chan struct{}),
	}
}

// Transport returns the connection to the browser: the DevTools pipe, or in
// NoPipe mode the browser's websocket. Readiness used it once
// (Browser.getVersion, call id 1); the caller builds its mux on it (with
// Cause) and owns its reads from then on. It is safe for writes from Stop
// while the caller's mux writes too, and Stop closes it. Over the pipe it
// is a cdpmux.FrameWriter, so the mux coalesces concurrent writes.
func (p *Process) Transport() cdpmux.Transport {
	if fw, ok := p.t.t.(cdpmux.FrameWriter); ok {
		return framed{p.t, fw}
	}
	return p.t
}

// PID returns the browser's main process id.
func (p *Process) PID() int { return p.pid }

// PGID returns the browser's process group id (its own group).
func (p *Process) PGID() int { return p.pgid }

// StartTime returns the main process's start time in clock ticks since boot
// (/proc/PID/stat field 22).
func (p *Process) StartTime() uint64 { return p.startTime }

// Port returns the DevTools port, bound on 127.0.0.1.
func (p *Process) Port() int { return p.port }

// WebSocketURL returns the browser's DevTools websocket URL
// (ws://127.0.0.1:<port>/devtools/browser/<id>).
func (p *Process) WebSocketURL() string {
	return "ws://127.0.0.1:" + strconv.Itoa(p.port) + p.wsPath
}

// SessionDir returns the session directory (absolute).
func (p *Process) SessionDir() string { return p.sessionDir }

// UserDataDir returns the profile directory, <SessionDir>/user-data.
func (p *Process) UserDataDir() string { return p.userDataDir }

// SessionID returns the id exported as BROWSERPOOL_SESSION.
func (p *Process) SessionID() string { return p.sessionID }

// Executable returns the executable as started (possibly a wrapper script).
func (p *Process) Executable() string { return p.exe }

// Exe returns the program the main process runs (/proc/PID/exe when it
// became ready): the browser binary, even when started through a wrapper.
func (p *Process) Exe() string { return p.realExe }

// Version returns the browser's product string from Browser.getVersion
// ("HeadlessChrome/156.0.8078.108", ...).
func (p *Process) Version() string { return p.version }

// Exited is closed once the browser's main process has exited and been
// reaped (and the rest of its process group killed).
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr returns how the browser's main process ended (an *ExitError), or
// nil while it runs. After a graceful Stop it reports that exit too.
func (p *Process) ExitErr() error {
	select {
	case <-p.exited:
		return p.exit
	default:
		return nil
	}
}

// OutputTail returns the last OutputTailSize bytes, at most, of the
// browser's combined stdout and stderr.
func (p *Process) OutputTail() string {
	p.tailMu.Lock()
	defer p.tailMu.Unlock()
	return p.tail.String()
}

// Kill sends SIGKILL to the browser's whole process group at once, unless
// the main process has already been reaped. It does not wait; Exited tells
// when the main process is gone. For tests and crash simulation; Stop is the
// way to end a browser.
func (p *Process) Kill() {
	// The lock spans the kill: once the main process is reaped, its pid may
	// be reused as another group's id.
	p.killMu.Lock()
	defer p.killMu.Unlock()
	if !p.reaped && p.pgid > 0 {
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	}
}

// Stop shuts the browser down and removes its session directory:
// Browser.close (bounded by CloseTimeout and by ctx), then SIGKILL to the
// process group, reap, a bounded wait until every process that held the
// browser's output has exited (crashpad handlers included; strays that
// /proc proves ours are killed by pid), close of the connection, and removal
// of the browser's private TMPDIR, if it had one, then of SessionDir, with
// retries.
//
// Stop is idempotent and safe for concurrent use: later and concurrent
// calls wait for the first (or for their own ctx). It also cleans up after
// a browser that crashed. ctx bounds only the graceful part and the waiting
// of later callers; the cleanup itself is bounded by the constants above
// and always runs to its end.
//
// It returns nil, or a *StopError when the directory could not be removed
// (ErrDirNotRemoved) or processes outlived their SIGKILL (ErrLingering).
// A later call, once the first has ended, tries again what is left (kills
// and waits for the processes still proven the browser's, removes the
// directories) and returns what is still left, or nil: a caller retries
// a cleanup by calling Stop again.
func (p *Process) Stop(ctx context.Context) error {
	p.stopMu.Lock()
	first := !p.stopping
	p.stopping = true
	p.stopMu.Unlock()
	if !first {
		select {
		case <-p.stopDone:
			return p.retryStop()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	se := p.stop(ctx)
	p.stopErr = se
	close(p.stopDone)
	if se == nil {
		return nil
	}
	return se
}

// retryWait bounds how long a retry (retryStop) waits for the processes it
// kills again: the first Stop waited its full bounds for them, and a
// retry runs on its caller's schedule (the pool's reaper, Pool.Close), for
// every browser left behind in turn.
const retryWait = 200 * time.Millisecond

// retryStop tries again what the first Stop left behind. The main process,
// if it was not reaped, and the processes /proc still proves the browser's
// are killed again and waited for up to retryWait; a directory not removed
// is removed (the private TMPDIR first, as in stop).
func (p *Process) retryStop() error {
	p.retryMu.Lock()
	defer p.retryMu.Unlock()
	prev := p.stopErr
	if prev == nil {
		return nil
	}
	se := &StopError{SessionDir: p.sessionDir}
	if len(prev.Lingering) > 0 {
		p.Kill()
		deadline := time.Now().Add(retryWait)
		if !waitFor(p.exited, retryWait) {
			se.Lingering = append(se.Lingering, p.pid)
		}
		p.killStrays()
		for {
			left := p.strays()
			if len(left) == 0 || time.Now().After(deadline) {
				for _, s := range left {
					se.Lingering = append(se.Lingering, s.PID)
				}
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if prev.RemoveErr != nil {
		se.RemoveErr = p.removeDirs()
	}
	if se.RemoveErr == nil && len(se.Lingering) == 0 {
		se = nil
	}
	p.stopErr = se
	if se == nil {
		return nil
	}
	return se
}

func (p *Process) stop(ctx context.Context) *StopError {
	select {
	case <-p.exited:
	default:
		gctx, cancel := context.WithTimeout(ctx, CloseTimeout)
		// The reply, if any, reaches the caller's mux, which drops it: the
		// id is one no mux uses.
		_ = p.t.WriteMessage([]byte(`{"id":` + strconv.Itoa(closeCallID) + `,"method":"Browser.close"}`))
		select {
		case <-p.exited:
		case <-gctx.Done():
		}
		cancel()
	}
	se := &StopError{SessionDir: p.sessionDir}
	p.Kill()
	if !waitFor(p.exited, ReapTimeout) {
		se.Lingering = append(se.Lingering, p.pid)
	}
	se.Lingering = append(se.Lingering, p.waitOutput()...)
	p.t.Close()
	se.RemoveErr = p.removeDirs()
	if se.RemoveErr == nil && len(se.Lingering) == 0 {
		return nil
	}
	return se
}

// removeDirs removes the browser's private TMPDIR, if it has one, then its
// session directory. The TMPDIR goes first: a host killed in between leaves
// the session dir, beside which the sweep finds it.
func (p *Process) removeDirs() error {
	if p.privateTmp != "" {
		if err := removeTmp(p.privateTmp); err != nil {
			return fmt.Errorf("removing the browser's TMPDIR %s (it goes with the session directory): %w", p.privateTmp, err)
		}
	}
	return removeDir(p.sessionDir)
}

// teardown is Stop's cleanup for a start that failed: kill, reap, wait for
// the output, close what is open. It leaves the directories to the caller.
func (p *Process) teardown() {
	p.Kill()
	waitFor(p.exited, ReapTimeout)
	p.waitOutput()
	if p.t != nil {
		p.t.Close()
	}
	closeFiles(p.pipeR, p.pipeW)
}

// abort tears down a start that failed at stage and returns its error.
func (p *Process) abort(stage string, err error, created []string) error {
	p.teardown()
	p.removeCreated(created)
	return &StartError{
		Executable: p.exe,
		Stage:      stage,
		Err:        err,
		Exit:       p.exitOrNil(),
		Output:     p.OutputTail(),
	}
}

// removeCreated removes the private TMPDIR, if any, then the directories
// Start created (see prepare), innermost first.
func (p *Process) removeCreated(created []string) {
	if p.privateTmp != "" {
		_ = removeTmp(p.privateTmp)
	}
	removeAll(created)
}

func (p *Process) exitOrNil() *ExitError {
	select {
	case <-p.exited:
		return p.exit
	default:
		return nil
	}
}

// waitOutput waits for the EOF of the output pipe: every process of the
// browser has exited. The browser's crashpad handlers hold it from outside
// the process group and exit by themselves within ~50 ms of the browser;
// after OutputGrace, strays proven ours are killed, and after another grace
// the output is given up. Once the main process is reaped too, it waits for
// the goroutine's end (which closes its descriptors). It returns the pids of
// strays still alive when it gave up.
func (p *Process) waitOutput() (lingering []int) {
	if p.wake == nil {
		return nil
	}
	if !waitFor(p.outDone, OutputGrace) {
		p.killStrays()
		if !waitFor(p.outDone, OutputGrace) {
			for _, s := range p.strays() {
				lingering = append(lingering, s.PID)
			}
			p.giveUpOutput()
			<-p.outDone
		}
	}
	select {
	case <-p.exited:
		<-p.runDone
	default:
	}
	return lingering
}

// strays returns the live processes that /proc proves belong to this
// browser: their command line names the session directory and their
// environment carries our session id. That is the crashpad handlers (outside
// the process group); the zygote's children, whose environment /proc no
// longer shows, are in the group and die with it.
func (p *Process) strays() []proc.Info {
	inDir := p.sessionDir + string(os.PathSeparator)
	list, _ := proc.List(func(in proc.Info) bool {
		if in.State == 'Z' || !strings.Contains(in.Cmdline, inDir) {
			return false
		}
		id, ok, err := proc.Environ(in.PID, SessionEnv)
		return err == nil && ok && id == p.sessionID
	})
	return list
}

// killStrays sends SIGKILL to each stray by pid, through a pidfd opened
// after checking its start time, so a reused pid is never signalled.
func (p *Process) killStrays() {
	for _, s := range p.strays() {
		h, err := os.FindProcess(s.PID) // a pidfd on Linux
		if err != nil {
			continue
		}
		if st, err := proc.StartTime(s.PID); err == nil && st == s.StartTime {
			_ = h.Signal(syscall.SIGKILL)
		}
		_ = h.Release()
	}
}

// waitFor reports whether ch closed within d.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// closeCallID is the id of Stop's Browser.close: the largest id Chrome
// accepts (a 32-bit int), far above any a mux numbers its calls with.
const closeCallID = 1<<31 - 1

// transport is the browser's connection, shared by its owner's mux (reads
// and writes) and Stop (one write): writes are serialized here, and Close
// is idempotent.
type transport struct {
	t    cdpmux.Transport
	wmu  sync.Mutex // serializes WriteMessage
	once sync.Once
	err  error // of the first Close; written once under once
}

func (t *transport) ReadMessage() ([]byte, error) { return t.t.ReadMessage() }

// SetReadDeadline forwards to the connection when it supports read
// deadlines (the pipe: cdpmux.ReadDeadliner), so that its mux lets direct
// callers read their own replies; a websocket does not.
func (t *transport) SetReadDeadline(d time.Time) error {
	if r, ok := t.t.(cdpmux.ReadDeadliner); ok {
		return r.SetReadDeadline(d)
	}
	return os.ErrNoDeadline
}

func (t *transport) WriteMessage(b []byte) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.t.WriteMessage(b)
}

// framed is the pipe's transport with the pipe's batch writes
// (cdpmux.FrameWriter), serialized with WriteMessage.
type framed struct {
	*transport
	fw cdpmux.FrameWriter
}

func (f framed) AppendFrame(dst, msg []byte) []byte { return f.fw.AppendFrame(dst, msg) }

func (f framed) WriteFrames(b []byte) error {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	return f.fw.WriteFrames(b)
}

func (t *transport) Close() error {
	t.once.Do(func() { t.err = t.t.Close() })
	return t.err
}
