// Room: tests of a browser's one goroutine: its count, its output reading,
// its descriptors. No locks.

package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

// creators returns, for each goroutine, the function that created it.
func creators(gs []leakcheck.Goroutine) []string {
	var out []string
	for _, g := range gs {
		c := "(unknown)"
		if i := strings.LastIndex(g.Stack, "\ncreated by "); i >= 0 {
			line, _, _ := strings.Cut(g.Stack[i+len("\ncreated by "):], "\n")
			c, _, _ = strings.Cut(line, " in goroutine ")
		}
		out = append(out, c)
	}
	return out
}

// openFDs returns this process's open descriptors and what they point to.
func openFDs(t testing.TB) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	fds := make(map[string]string, len(ents))
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the descriptor ReadDir itself used, closed since
		}
		fds[e.Name()] = target
	}
	return fds
}

// initNetpoll makes sure the runtime's poller (its epoll descriptor and
// wake-up) exists, so that it is not counted as a descriptor a test left.
func initNetpoll(t testing.TB) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Close()
}

const spawnFunc = "github.com/browserpool/browserpool/internal/launch.(*Process).spawn"

func TestAStartedBrowserCostsOneGoroutineInThisPackageAndNoneAfterStop(t *testing.T) {
	exe := browser(t)
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	n0 := heldGoroutineCount(t)
	p, err := Start(testCtx(t), Options{Executable: exe, SessionDir: sessionDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			p.Stop(context.Background())
		}
	})
	// The start's own helpers (untilExit's watcher) end by themselves: wait
	// until every new goroutine is one spawn made for the browser's life.
	var extra []leakcheck.Goroutine
	eventually(t, "only the browser's own goroutines remain", func() bool {
		extra = leakcheck.Since(before)
		for _, c := range creators(extra) {
			if c != spawnFunc {
				return false
			}
		}
		return true
	})
	if diff := cmp.Diff([]string{spawnFunc}, creators(extra)); diff != "" {
		t.Errorf("goroutines a running browser costs (-want +got):\n%s\n%v", diff, extra)
	}
	if d := goruntime.NumGoroutine() - n0; d != 1 {
		t.Errorf("runtime.NumGoroutine() grew by %d with one browser, want 1: %v", d, extra)
	}
	stopped = true
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the browser's goroutine has ended", func() bool { return len(leakcheck.Since(before)) == 0 })
	if d := goruntime.NumGoroutine() - n0; d != 0 {
		t.Errorf("runtime.NumGoroutine() after Stop is %d above the count before Start, want 0", d)
	}
	if diff := cmp.Diff(fdsBefore, openFDs(t)); diff != "" {
		t.Errorf("open descriptors after Stop, against before Start (-want +got):\n%s", diff)
	}
}

// heldGoroutineCount returns runtime.NumGoroutine once it holds for 50 ms:
// the goroutines of the test before (its tRunner, which leakcheck does not
// list) may still be ending, and would end inside a count of ours.
func heldGoroutineCount(t *testing.T) int {
	t.Helper()
	n := goruntime.NumGoroutine()
	eventually(t, "the goroutine count holds", func() bool {
		time.Sleep(50 * time.Millisecond)
		m := n
		n = goruntime.NumGoroutine()
		return n == m
	})
	return n
}

// spawnFake spawns a fake browser, the shell script body, in a fresh
// session directory, at the level of spawn: nothing waits for readiness.
// The test ends with teardown (Stop's cleanup, without a connection).
func spawnFake(t *testing.T, body string, env ...string) *Process {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "fake-browser")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := sessionDir(t)
	if _, err := prepare(dir, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := newProcess(exe, dir, filepath.Base(dir))
	if err := p.spawn(Options{Env: env}); err != nil {
		t.Fatal(err)
	}
	// Nobody speaks DevTools to a fake.
	closeFiles(p.pipeR, p.pipeW)
	p.pipeR, p.pipeW = nil, nil
	t.Cleanup(p.teardown) // idempotent; the tests call it themselves
	return p
}

// waitEnded waits until the goroutines and descriptors are those of before.
func waitEnded(t *testing.T, before []leakcheck.Goroutine, fdsBefore map[string]string) {
	t.Helper()
	eventually(t, "no goroutine is left", func() bool { return len(leakcheck.Since(before)) == 0 })
	var fds map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for fds = openFDs(t); len(fds) != len(fdsBefore) && time.Now().Before(deadline); fds = openFDs(t) {
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff(fdsBefore, fds); diff != "" {
		t.Errorf("open descriptors after the teardown, against before the spawn (-want +got):\n%s", diff)
	}
}

// lastLines returns what a tail keeps of out: its last OutputTailSize
// bytes, from the first line start among them.
func lastLines(out string) string {
	if len(out) <= OutputTailSize {
		return out
	}
	out = out[len(out)-OutputTailSize:]
	_, rest, _ := strings.Cut(out, "\n")
	return rest
}

func TestABrowserWritingFarMoreThanAPipeHoldsIsNeverBlockedAndItsTailEndsWithItsLastBytes(t *testing.T) {
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	// seq 1 100000 writes 588,895 bytes: nine times a 64 KiB pipe. A writer
	// nobody reads blocks at the pipe's size and never gets to the end.
	p := spawnFake(t, "seq 1 100000 >&2\necho end-of-output >&2\nexec sleep 1000\n")
	eventually(t, "the last line written is in the tail", func() bool {
		return strings.HasSuffix(p.OutputTail(), "\nend-of-output\n")
	})
	var all strings.Builder
	for i := 1; i <= 100000; i++ {
		all.WriteString(strconv.Itoa(i) + "\n")
	}
	all.WriteString("end-of-output\n")
	if all.Len() <= 256<<10 {
		t.Fatalf("the fake writes only %d bytes", all.Len())
	}
	if diff := cmp.Diff(lastLines(all.String()), p.OutputTail()); diff != "" {
		t.Errorf("output tail (-want +got):\n%s", diff)
	}
	if err := p.ExitErr(); err != nil {
		t.Fatalf("the fake exited (%v); it should sleep after its output", err)
	}
	if diff := cmp.Diff([]string{spawnFunc}, creators(leakcheck.Since(before))); diff != "" {
		t.Errorf("goroutines of the running fake (-want +got):\n%s", diff)
	}
	p.teardown()
	var ee *ExitError
	if !errors.As(p.ExitErr(), &ee) || ee.Signal != syscall.SIGKILL {
		t.Errorf("ExitErr() after teardown = %v, want SIGKILL", p.ExitErr())
	}
	if left := inGroup(t, p.PGID()); len(left) > 0 {
		t.Errorf("process group after teardown:%s", describe(left))
	}
	waitEnded(t, before, fdsBefore)
}

// stray starts a fake browser whose main process starts a process of its
// own session (in a session and group of its own: a group kill misses it,
// as it misses crashpad handlers) holding the output pipe, then exits with
// status 5. The stray runs sh -c script arg0 and then block. It returns the
// stray's pid, which the test kills by itself at the end if it lives.
func stray(t *testing.T, block, arg0 string) (*Process, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "stray.pid")
	script := `echo $$ > "$STRAY_PID_FILE.tmp" && mv "$STRAY_PID_FILE.tmp" "$STRAY_PID_FILE" && ` + block
	// The main process waits for the stray to be out of its group: a group
	// kill at its exit would catch it before setsid.
	p := spawnFake(t, "setsid sh -c '"+script+"' "+arg0+" &\n"+
		`until [ -e "$STRAY_PID_FILE" ]; do sleep 0.01; done`+"\nexit 5\n", "STRAY_PID_FILE="+pidFile)
	var pid int
	eventually(t, "the stray wrote its pid", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	st, err := proc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if now, err := proc.StartTime(pid); err == nil && now == st {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// The main process is reaped without waiting for the output, which
	// the stray holds.
	if !waitFor(p.Exited(), 30*time.Second) {
		t.Fatal("the main process was not reaped while a stray holds the output")
	}
	var ee *ExitError
	if !errors.As(p.ExitErr(), &ee) || ee.Code != 5 {
		t.Errorf("ExitErr() = %v, want status 5", p.ExitErr())
	}
	select {
	case <-p.outDone:
		t.Fatal("the output ended while the stray holds it")
	default:
	}
	return p, pid
}

func TestAStrayNotProvenOursKeepsTheOutputUntilItIsGivenUpAndTheGoroutineClosesEveryDescriptor(t *testing.T) {
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	// The stray becomes "sleep 1000": its command line does not name the
	// session dir, so strays() cannot prove it ours and it is never killed.
	p, pid := stray(t, "exec sleep 1000", "")
	if diff := cmp.Diff([]string{spawnFunc}, creators(leakcheck.Since(before))); diff != "" {
		t.Errorf("goroutines while the stray holds the output (-want +got):\n%s", diff)
	}
	if got := p.waitOutput(); len(got) != 0 {
		t.Errorf("waitOutput() = %v, want no pid: the stray is not proven ours", got)
	}
	if !proc.Alive(pid) {
		t.Fatal("the stray died: the output reached EOF instead of being given up")
	}
	waitEnded(t, before, fdsBefore)
	p.teardown()
	waitEnded(t, before, fdsBefore)
}

func TestAStrayProvenOursIsKilledAndTheOutputReachesEOF(t *testing.T) {
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	// The stray's command line names the session dir (its $0) and it
	// carries the session marker: strays() proves it ours. It blocks in
	// the open of a FIFO nobody writes, a process alone.
	p, pid := stray(t, `mkfifo "$XDG_CONFIG_HOME/never" && read x < "$XDG_CONFIG_HOME/never"`, `"$XDG_CONFIG_HOME/stray"`)
	if got := p.waitOutput(); len(got) != 0 {
		t.Errorf("waitOutput() = %v, want no pid left", got)
	}
	// Its output descriptors close before it becomes a zombie: wait for that.
	// A stray not killed would block in its open for ever.
	eventually(t, "the stray proven ours is gone", func() bool { return !proc.Alive(pid) })
	waitEnded(t, before, fdsBefore)
}

func TestWithoutAPidfdTheGoroutinePollsForTheExitOfTheMainProcess(t *testing.T) {
	calls := 0
	open := pidfdOpen
	pidfdOpen = func(int) (int, error) { // a kernel before 5.3
		calls++
		return -1, os.NewSyscallError("pidfd_open", syscall.ENOSYS)
	}
	t.Cleanup(func() { pidfdOpen = open })
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	goFile := filepath.Join(t.TempDir(), "go")
	p := spawnFake(t, "echo waiting >&2\nuntil [ -e \"$GO_FILE\" ]; do sleep 0.01; done\nexit 7\n", "GO_FILE="+goFile)
	if calls != 1 {
		t.Fatalf("pidfd_open was tried %d times, want 1", calls)
	}
	eventually(t, "the fake has started", func() bool { return strings.Contains(p.OutputTail(), "waiting\n") })
	if err := p.ExitErr(); err != nil {
		t.Fatalf("ExitErr() = %v before the fake was let go", err)
	}
	if diff := cmp.Diff([]string{spawnFunc}, creators(leakcheck.Since(before))); diff != "" {
		t.Errorf("goroutines without a pidfd (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !waitFor(p.Exited(), 30*time.Second) {
		t.Fatal("the exit of the main process was not noticed without a pidfd")
	}
	var ee *ExitError
	if !errors.As(p.ExitErr(), &ee) || ee.Code != 7 {
		t.Errorf("ExitErr() = %v, want status 7", p.ExitErr())
	}
	p.teardown()
	waitEnded(t, before, fdsBefore)
}

func TestOutputGivenUpWhileTheBrowserRunsKeepsTheWakeDescriptorOpenUntilTheGoroutineEnds(t *testing.T) {
	initNetpoll(t)
	fdsBefore := openFDs(t)
	before := leakcheck.Goroutines()
	p := spawnFake(t, "echo up >&2\nexec sleep 1000\n")
	eventually(t, "the fake has started", func() bool { return strings.Contains(p.OutputTail(), "up\n") })
	wakeFD := strconv.Itoa(int(p.wake.Fd())) // an eventfd is blocking: Fd changes nothing
	p.giveUpOutput()
	if !waitFor(p.outDone, 30*time.Second) {
		t.Fatal("the output was not given up")
	}
	// The goroutine goes on waiting for the main process. Process.wake
	// still names the eventfd and closes it once, as the goroutine ends:
	// its number must not have been freed for another file to take.
	if target, err := os.Readlink("/proc/self/fd/" + wakeFD); err != nil || target != "anon_inode:[eventfd]" {
		t.Errorf("descriptor %s after the give-up = %q, %v; want the eventfd still open", wakeFD, target, err)
	}
	p.giveUpOutput() // again: harmless
	if err := p.ExitErr(); err != nil {
		t.Fatalf("the fake exited (%v)", err)
	}
	p.teardown()
	waitEnded(t, before, fdsBefore)
}

func TestAStartOutOfFileDescriptorsFailsAtSpawningAndLeavesNothingBehind(t *testing.T) {
	exe := browser(t)
	initNetpoll(t)
	before := leakcheck.Goroutines()
	fdsBefore := openFDs(t)
	// Fill every free number below the highest open descriptor, so that a
	// limit of highest+1+free leaves exactly free numbers to the start.
	highest := 0
	for fd := range fdsBefore {
		n, _ := strconv.Atoi(fd)
		highest = max(highest, n)
	}
	var fillers []*os.File
	t.Cleanup(func() { closeFiles(fillers...) })
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		if int(f.Fd()) > highest {
			f.Close()
			break
		}
		fillers = append(fillers, f)
	}
	filled := openFDs(t)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Before the browser is started, spawn takes 2 (the output pipe), 1
	// (the eventfd), 1 (the epoll set), 2 and 2 (the DevTools pipes): with
	// 1 to 7 numbers free, each of those steps in turn meets EMFILE.
	for free := 1; free <= 7; free++ {
		low := lim
		low.Cur = uint64(highest + 1 + free)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			t.Fatal(err)
		}
		dir := sessionDir(t)
		p, err := Start(testCtx(t), Options{Executable: exe, SessionDir: dir})
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		if p != nil {
			p.Stop(context.Background())
			t.Fatalf("with %d descriptors free, Start succeeded", free)
		}
		var se *StartError
		if !errors.As(err, &se) || se.Stage != "spawning" || !errors.Is(err, syscall.EMFILE) {
			t.Errorf("with %d descriptors free, Start = %v; want a StartError at spawning wrapping EMFILE", free, err)
		}
		if diff := cmp.Diff(filled, openFDs(t)); diff != "" {
			t.Errorf("with %d descriptors free, open descriptors after the failed start (-want +got):\n%s", free, diff)
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("with %d descriptors free, the session dir after the failed start: stat err = %v, want not exist", free, err)
		}
	}
	closeFiles(fillers...)
	fillers = nil
	waitEnded(t, before, fdsBefore)
}
