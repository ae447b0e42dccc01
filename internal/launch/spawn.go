// Room: spawning and reaping the browser process. The run goroutine takes
// Process.killMu around the group kill and the reaped flag; readOutput takes
// Process.tailMu around the tail only, never around a read.

package launch

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/browserpool/browserpool/internal/proc"
)

// spawn starts the browser process, its waiter and its output reader.
func (p *Process) spawn(opts Options) error {
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        p.exe,
		Args:        append([]string{p.exe}, ArgsPort(p.userDataDir, !opts.NoPipe, opts.NoPipe || !opts.NoPort, opts.ExtraArgs)...),
		Env:         Environ(p.sessionDir, p.sessionID, opts.Env),
		Stdout:      outW,
		Stderr:      outW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	childEnds := []*os.File{outW}
	if !opts.NoPipe {
		// The browser reads commands from fd 3 and writes to fd 4.
		cmdR, cmdW, err := os.Pipe()
		if err != nil {
			closeFiles(outR, outW)
			return err
		}
		replyR, replyW, err := os.Pipe()
		if err != nil {
			closeFiles(outR, outW, cmdR, cmdW)
			return err
		}
		cmd.ExtraFiles = []*os.File{cmdR, replyW}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		childEnds = append(childEnds, cmdR, replyW)
		p.pipeR, p.pipeW = replyR, cmdW
	}
	ready := make(chan spawned, 1)
	go p.run(cmd, ready)
	s := <-ready
	closeFiles(childEnds...)
	if s.err != nil {
		closeFiles(outR, p.pipeR, p.pipeW)
		p.pipeR, p.pipeW = nil, nil
		if s.pid != 0 {
			// The process exists but its start time could not be read:
			// take it down before reporting.
			p.pid, p.pgid = s.pid, s.pid
			p.Kill()
			<-p.exited
		}
		return s.err
	}
	p.pid, p.pgid, p.startTime = s.pid, s.pid, s.startTime
	p.outR = outR
	go p.readOutput(outR)
	return nil
}

type spawned struct {
	pid       int
	startTime uint64
	err       error
}

// run starts cmd and waits for it, on one locked OS thread for the life of
// the browser: the parent-death signal fires when the thread that forked the
// browser exits, so that thread must outlive the browser. The thread is never
// unlocked; the runtime ends it with this goroutine, after the reap.
//
// The wait does not reap at first (WNOWAIT): while the exited main process is
// a zombie its pid, and so its process group id, cannot be reused, and the
// rest of the group is killed then. Only after that is it reaped.
func (p *Process) run(cmd *exec.Cmd, ready chan<- spawned) {
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		ready <- spawned{err: err}
		return
	}
	pid := cmd.Process.Pid
	// Nobody reaps the process but this goroutine, so it is readable.
	st, err := proc.StartTime(pid)
	ready <- spawned{pid: pid, startTime: st, err: err}

	_ = waitNoReap(pid) // on failure, fall through: killing an unreaped group is safe
	p.killMu.Lock()
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	p.reaped = true
	p.killMu.Unlock()

	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		p.exit = exitErrorOf(pid, ws)
	} else {
		p.exit = &ExitError{PID: pid, Code: -1}
	}
	close(p.exited)
}

// waitNoReap blocks until pid has exited, leaving it a zombie.
func waitNoReap(pid int) error {
	const pPID = 1     // idtype_t P_PID
	var info [128]byte // siginfo_t
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		switch errno {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return errno
		}
	}
}

// readOutput keeps the tail of the browser's output until EOF: every process
// that held the pipe (the whole browser, crashpad handlers included) has
// exited, or Stop closed our end.
func (p *Process) readOutput(r *os.File) {
	defer close(p.outDone)
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			p.tailMu.Lock()
			p.tail.write(buf[:n])
			p.tailMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}
