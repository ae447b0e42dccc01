// Room: the one goroutine of a launched browser (Process.run), on the
// locked OS thread that forked it: it waits for the main process and reads
// the browser's output, both through one epoll set. It takes Process.killMu
// around the group kill and the reaped flag only, and Process.tailMu around
// the tail only, never across a read or a wait. The waiter's descriptors
// are the goroutine's alone; Process.wake is shared (an *os.File, so a
// write racing the goroutine's close never reaches a reused descriptor).

package launch

import (
	"encoding/binary"
	"os"
	"os/exec"
	"syscall"
	"unsafe"
)

// waiter is what a browser's goroutine multiplexes in one epoll set: the
// main process (a pidfd), the read end of the output pipe, and an eventfd
// by which Stop gives the output up. spawn makes it; run owns its
// descriptors from then on and closes them as it ends.
type waiter struct {
	ep    int // the epoll set
	outR  int // read end of the output pipe: nonblocking, not in Go's netpoller; -1 once the output is done
	wake  int // the eventfd; Process.wake wraps it and closes it
	pidfd int // the main process; -1 before it is opened, after the reap, or when pidfd_open failed
}

// pidPoll is how often, in milliseconds, the goroutine polls for the main
// process's exit when the kernel gave no pidfd (Linux before 5.3).
const pidPoll = 50

// pidfdOpen opens a pidfd (close-on-exec) for pid. A variable so that a test
// can make it fail as an old kernel does.
var pidfdOpen = func(pid int) (int, error) {
	const sysPidfdOpen = 434 // the same on every Linux architecture
	fd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1, os.NewSyscallError("pidfd_open", errno)
	}
	return int(fd), nil
}

// newWaiter makes the output pipe, the eventfd and the epoll set watching
// both. It returns the write end of the pipe for the browser's stdout and
// stderr (blocking: the browser's writes must never fail with EAGAIN) and
// the eventfd as a file for Process.wake.
func newWaiter() (w *waiter, outW, wake *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, nil, os.NewSyscallError("pipe2", err)
	}
	w = &waiter{ep: -1, outR: fds[0], wake: -1, pidfd: -1}
	// Blocking, so never in the netpoller: exec passes it on as it is.
	outW = os.NewFile(uintptr(fds[1]), "browser-output")
	fail := func(e error) (*waiter, *os.File, *os.File, error) {
		w.close(wake)
		outW.Close()
		return nil, nil, nil, e
	}
	if err := syscall.SetNonblock(w.outR, true); err != nil {
		return fail(os.NewSyscallError("fcntl", err))
	}
	efd, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return fail(os.NewSyscallError("eventfd2", errno))
	}
	w.wake, wake = int(efd), os.NewFile(efd, "browser-output-wake")
	if w.ep, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		w.ep = -1
		return fail(os.NewSyscallError("epoll_create1", err))
	}
	for _, fd := range []int{w.outR, w.wake} {
		if err := w.add(fd); err != nil {
			return fail(err)
		}
	}
	return w, outW, wake, nil
}

func (w *waiter) add(fd int) error {
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
	return os.NewSyscallError("epoll_ctl", syscall.EpollCtl(w.ep, syscall.EPOLL_CTL_ADD, fd, &ev))
}

// drop removes fd from the set and closes it.
func (w *waiter) drop(fd int) {
	_ = syscall.EpollCtl(w.ep, syscall.EPOLL_CTL_DEL, fd, nil)
	_ = syscall.Close(fd)
}

// close closes every descriptor w still holds, and wake (the eventfd's
// file) when it is set.
func (w *waiter) close(wake *os.File) {
	for _, fd := range []int{w.pidfd, w.outR, w.ep} {
		if fd >= 0 {
			_ = syscall.Close(fd)
		}
	}
	w.pidfd, w.outR, w.ep = -1, -1, -1
	if wake != nil {
		_ = wake.Close()
	}
}

// watch opens the pidfd of the started main process and adds it to the
// set. Without one (an old kernel, no descriptor left) loop polls instead.
// No pid reuse is possible: only this goroutine reaps the process.
func (w *waiter) watch(pid int) {
	fd, err := pidfdOpen(pid)
	if err != nil {
		return
	}
	w.pidfd = fd
	if w.add(fd) != nil {
		_ = syscall.Close(fd)
		w.pidfd = -1
	}
}

// loop is the life of the browser's goroutine after the start: it reaps the
// main process as soon as it exits (closing exited, without waiting for the
// output: crashpad handlers outside the group may hold it longer), keeps the
// output's tail until EOF or until Stop gives it up (closing outDone), and
// returns once both are done, having closed every descriptor of w.
func (p *Process) loop(cmd *exec.Cmd, w *waiter) {
	defer w.close(p.wake)
	pid := cmd.Process.Pid
	reaped, outDone := false, false
	buf := make([]byte, 4096)
	events := make([]syscall.EpollEvent, 3)
	endOutput := func() {
		w.drop(w.outR)
		w.outR = -1
		outDone = true
		close(p.outDone)
	}
	for !reaped || !outDone {
		timeout := -1
		if w.pidfd < 0 && !reaped {
			timeout = pidPoll
		}
		n, err := syscall.EpollWait(w.ep, events, timeout)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// Not with descriptors of our own; finish without the set.
			if !reaped {
				exitedNoReap(pid, true) // on failure, fall through: killing an unreaped group is safe
				p.reap(cmd)
			}
			if !outDone {
				endOutput()
			}
			return
		}
		for _, ev := range events[:n] {
			switch fd := int(ev.Fd); {
			case fd == w.outR && !outDone:
				if p.drain(w.outR, buf) {
					endOutput()
				}
			case fd == w.wake:
				// Stop gives the output up: keep what is there, stop there.
				// The eventfd leaves the set but stays open: Process.wake
				// owns it and closes it once, as the goroutine ends (a
				// close here would let its number be reused while writers
				// and that close still name it).
				_ = syscall.EpollCtl(w.ep, syscall.EPOLL_CTL_DEL, w.wake, nil)
				w.wake = -1
				if !outDone {
					p.drain(w.outR, buf)
					endOutput()
				}
			case fd == w.pidfd && exitedNoReap(pid, false):
				w.drop(w.pidfd)
				w.pidfd = -1
				reaped = true
				p.reap(cmd)
			}
		}
		if w.pidfd < 0 && !reaped && exitedNoReap(pid, false) {
			reaped = true
			p.reap(cmd)
		}
	}
}

// reap kills the rest of the exited main process's group while it is a
// zombie (its pid, and so its group id, cannot be reused until the reap),
// then reaps it and closes exited.
func (p *Process) reap(cmd *exec.Cmd) {
	pid := cmd.Process.Pid
	p.killMu.Lock()
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	p.reaped = true
	p.killMu.Unlock()

	_ = cmd.Wait() // the process is a zombie: this does not block
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		p.exit = exitErrorOf(pid, ws)
	} else {
		p.exit = &ExitError{PID: pid, Code: -1}
	}
	close(p.exited)
}

// drainReads bounds the reads of one drain, so that a browser writing
// without pause cannot keep the goroutine from its other events.
const drainReads = 16

// drain reads what the output pipe holds into the tail. It reports whether
// the pipe reached EOF (every process that held it has exited) or failed.
func (p *Process) drain(fd int, buf []byte) (done bool) {
	for i := 0; i < drainReads; {
		n, err := syscall.Read(fd, buf)
		switch {
		case n > 0:
			p.tailMu.Lock()
			p.tail.write(buf[:n])
			p.tailMu.Unlock()
			i++
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return false
		default: // EOF, or an error
			return true
		}
	}
	return false
}

// giveUpOutput makes the goroutine stop reading the output and close
// outDone. Once the goroutine has ended, the write fails harmlessly.
func (p *Process) giveUpOutput() {
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = p.wake.Write(one[:])
}

// exitedNoReap reports whether pid has exited, leaving it a zombie; with
// block it waits for that. It reports true when pid cannot be waited for
// at all: the reap then says so.
func exitedNoReap(pid int, block bool) bool {
	flags := syscall.WEXITED | syscall.WNOWAIT
	if !block {
		flags |= syscall.WNOHANG
	}
	var info [128]byte // siginfo_t; si_pid at offset 16 stays 0 if nothing exited
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid),
			uintptr(unsafe.Pointer(&info)), uintptr(flags), 0, 0)
		switch errno {
		case 0:
			return block || binary.NativeEndian.Uint32(info[16:20]) != 0
		case syscall.EINTR:
			continue
		default:
			return true
		}
	}
}

// pPID is waitid's idtype_t P_PID.
const pPID = 1
