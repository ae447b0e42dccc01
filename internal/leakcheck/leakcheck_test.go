// Room: tests of the leak gate. No locks.

package leakcheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/leakcheck"
)

var testRoot string

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-leakcheck-test-"})
}

// subRoot returns a fresh root for one test, inside the run's root.
func subRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testRoot, t.Name())
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// quick is a context short enough for checks that are meant to fail.
func quick(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func TestCheckPassesOnAnEmptyRootAndAMissingOne(t *testing.T) {
	root := subRoot(t)
	if err := leakcheck.Check(context.Background(), root, filepath.Join(root, "missing")); err != nil {
		t.Fatal(err)
	}
}

func TestCheckNamesEntriesLeftUnderARoot(t *testing.T) {
	root := subRoot(t)
	left := filepath.Join(root, "session-1")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	err := leakcheck.Check(quick(t), root)
	var le *leakcheck.Error
	if !errors.As(err, &le) {
		t.Fatalf("Check = %v, want a *leakcheck.Error", err)
	}
	if diff := cmp.Diff([]string{left}, le.Entries); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "1 entr(ies) under the roots:\n  "+left) {
		t.Errorf("error text does not name the entry:\n%v", err)
	}
}

func TestCheckNamesAProcessWhoseCommandLineNamesARoot(t *testing.T) {
	root := subRoot(t)
	cmd := exec.Command("sh", "-c", "sleep 30; :", filepath.Join(root, "profile"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := leakcheck.Check(quick(t), root)
	var le *leakcheck.Error
	if !errors.As(err, &le) || len(le.Processes) != 1 || le.Processes[0].PID != cmd.Process.Pid {
		t.Errorf("Check = %v, want a *leakcheck.Error naming pid %d", err, cmd.Process.Pid)
	}
	if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("pid %d ppid %d", cmd.Process.Pid, os.Getpid())) {
		t.Errorf("error text does not name the process:\n%v", err)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	if err := leakcheck.Check(context.Background(), root); err != nil {
		t.Errorf("Check after the kill: %v", err)
	}
}

func TestCheckNamesAMarkedProcessWhoseXDGDirIsInsideARoot(t *testing.T) {
	root := subRoot(t)
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), leakcheck.SessionEnv+"=s1", "XDG_CONFIG_HOME="+filepath.Join(root, "s1", "xdg-config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	procs, err := leakcheck.Processes(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(procs) != 1 || procs[0].PID != cmd.Process.Pid {
		t.Errorf("Processes(%s) = %+v, want only pid %d", root, procs, cmd.Process.Pid)
	}
	other, err := leakcheck.Processes(root + "-other")
	if err != nil {
		t.Fatal(err)
	}
	if len(other) != 0 {
		t.Errorf("Processes(a sibling root) = %+v, want none", other)
	}
}

func TestCheckNamesALeakedGoroutineAndPassesOnceItEnds(t *testing.T) {
	release := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		<-release
	}()
	err := leakcheck.Check(quick(t), subRoot(t))
	var le *leakcheck.Error
	if !errors.As(err, &le) || len(le.Goroutines) != 1 {
		t.Fatalf("Check = %v, want one leaked goroutine", err)
	}
	g := le.Goroutines[0]
	if g.State != "chan receive" || !strings.Contains(g.Top, "TestCheckNamesALeakedGoroutineAndPassesOnceItEnds.func") {
		t.Errorf("leaked goroutine = %v, want this test's func blocked in chan receive", g)
	}
	if !strings.Contains(g.String(), "created by github.com/browserpool/browserpool/internal/leakcheck_test.TestCheckNamesALeakedGoroutineAndPassesOnceItEnds") {
		t.Errorf("String() = %q, want it to name its creator", g.String())
	}
	close(release)
	<-ended
	if err := leakcheck.Check(context.Background()); err != nil {
		t.Errorf("Check after the goroutine ended: %v", err)
	}
}

func TestSinceReportsOnlyNewGoroutines(t *testing.T) {
	before := leakcheck.Goroutines()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); <-stop }()
	got := leakcheck.Since(before)
	close(stop)
	<-done
	if len(got) != 1 {
		t.Fatalf("Since = %v, want exactly the one goroutine started after the snapshot", got)
	}
	for _, g := range before {
		if strings.Contains(g.Stack, "\ntesting.tRunner(") {
			t.Errorf("Goroutines() kept a test runner goroutine:\n%s", g.Stack)
		}
	}
}

func TestCheckRejectsAnEmptyRoot(t *testing.T) {
	if err := leakcheck.Check(context.Background(), ""); err == nil {
		t.Error("Check(\"\") = nil, want an error: an empty root would match every process")
	}
}
