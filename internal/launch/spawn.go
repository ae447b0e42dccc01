// Room: spawning the browser process. The process's one goroutine (run,
// then loop in waiter_linux.go) takes Process.killMu around the group kill
// and the reaped flag, and Process.tailMu around the tail only, never around
// a read.

package launch

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/browserpool/browserpool/internal/proc"
	"github.com/browserpool/browserpool/internal/stackroom"
)

// spawn starts the browser process and its one goroutine, which waits for
// it and reads its output.
func (p *Process) spawn(opts Options) error {
	w, outW, wake, err := newWaiter()
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{
		Path:        p.exe,
		Args:        append([]string{p.exe}, ArgsPort(p.userDataDir, !opts.NoPipe, opts.NoPipe || !opts.NoPort, opts.ExtraArgs)...),
		Env:         environ(p.sessionDir, p.sessionID, p.tmpDir, opts.Env),
		Stdout:      outW,
		Stderr:      outW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	childEnds := []*os.File{outW}
	if !opts.NoPipe {
		// The browser reads commands from fd 3 and writes to fd 4.
		cmdR, cmdW, err := os.Pipe()
		if err != nil {
			w.close(wake)
			closeFiles(outW)
			return err
		}
		replyR, replyW, err := os.Pipe()
		if err != nil {
			w.close(wake)
			closeFiles(outW, cmdR, cmdW)
			return err
		}
		cmd.ExtraFiles = []*os.File{cmdR, replyW}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		childEnds = append(childEnds, cmdR, replyW)
		p.pipeR, p.pipeW = replyR, cmdW
	}
	p.wake = wake
	ready := make(chan spawned, 1)
	go p.run(cmd, w, ready)
	s := <-ready
	closeFiles(childEnds...)
	if s.err != nil {
		closeFiles(p.pipeR, p.pipeW)
		p.pipeR, p.pipeW = nil, nil
		if s.pid != 0 {
			// The process exists but its start time could not be read:
			// take it down before reporting.
			p.pid, p.pgid = s.pid, s.pid
			p.Kill()
			p.giveUpOutput()
		}
		<-p.runDone
		return s.err
	}
	p.pid, p.pgid, p.startTime = s.pid, s.pid, s.startTime
	return nil
}

type spawned struct {
	pid       int
	startTime uint64
	err       error
}

// run starts cmd and then, as loop, waits for it and reads its output, on
// one locked OS thread for the life of the browser: the parent-death signal
// fires when the thread that forked the browser exits, so that thread must
// outlive the browser and is never shared. The thread is never unlocked;
// the runtime ends it with this goroutine, after the reap and the end of
// the output. It closes runDone last, on every path.
//
// The main process is reaped only after the rest of its group is killed:
// while the exited main process is a zombie its pid, and so its process
// group id, cannot be reused.
func (p *Process) run(cmd *exec.Cmd, w *waiter, ready chan<- spawned) {
	stackroom.To8K() // cmd.Start takes it there anyway; now the copy walks one frame
	runtime.LockOSThread()
	defer close(p.runDone)
	if err := cmd.Start(); err != nil {
		w.close(p.wake)
		ready <- spawned{err: err}
		return
	}
	pid := cmd.Process.Pid
	w.watch(pid)
	// Nobody reaps the process but this goroutine, so it is readable.
	st, err := proc.StartTime(pid)
	ready <- spawned{pid: pid, startTime: st, err: err}
	p.loop(cmd, w)
}
