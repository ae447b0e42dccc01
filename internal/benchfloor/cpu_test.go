package benchfloor_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/browserpool/browserpool/internal/benchfloor"
)

// The CPU a process gets on a loaded machine is anyone's guess: these
// tests wait for CPU time to accrue (bounded by a generous deadline), and
// never ask for an amount within a given wall time.

// spinGroup starts a shell that spins until the test ends, leading a
// process group of its own, and returns its pgid.
func spinGroup(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd.Process.Pid
}

// sleepGroup starts a sleeping process leading a group of its own.
func sleepGroup(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	return cmd.Process.Pid
}

const accrueLimit = 60 * time.Second // a hang, not a slow machine

func TestProcessCPUGrowsWhileThisProcessWorks(t *testing.T) {
	before := benchfloor.ProcessCPU()
	x := 0
	for deadline := time.Now().Add(accrueLimit); benchfloor.ProcessCPU()-before < 20*time.Millisecond; x++ {
		if time.Now().After(deadline) {
			t.Fatalf("%v of spinning (%d turns) counted %v of CPU, want 20 ms", accrueLimit, x, benchfloor.ProcessCPU()-before)
		}
	}
}

func TestGroupCPUCountsABusyProcessGroup(t *testing.T) {
	pg := spinGroup(t)
	for deadline := time.Now().Add(accrueLimit); ; {
		got, err := benchfloor.GroupCPU(pg)
		if err != nil {
			t.Fatal(err)
		}
		if got >= 200*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a group spinning for %v counted %v of CPU, want 200 ms", accrueLimit, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := benchfloor.GroupCPU(os.Getpid() + 1<<22); err == nil {
		t.Error("GroupCPU of a group with no process: no error")
	}
}

func TestSettleReturnsForAnIdleGroupAndNotForABusyOne(t *testing.T) {
	if err := benchfloor.Settle(200*time.Millisecond, 20*time.Millisecond, accrueLimit, sleepGroup(t)); err != nil {
		t.Errorf("Settle on a sleeping process: %v", err)
	}
	// Spinning, the group gets a tick (10 ms) in every window of half a
	// second unless the machine starves it entirely.
	busy := spinGroup(t)
	if err := benchfloor.Settle(500*time.Millisecond, 0, 1500*time.Millisecond, busy); err == nil {
		t.Error("Settle on a spinning process returned nil, want its busy error")
	}
	if err := benchfloor.Settle(50*time.Millisecond, 0, 10*time.Millisecond, os.Getpid()+1<<22); err == nil {
		t.Error("Settle on a group with no process: no error")
	}
}
