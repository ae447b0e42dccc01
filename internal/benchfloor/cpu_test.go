package benchfloor_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/browserpool/browserpool/internal/benchfloor"
)

func TestProcessCPUGrowsWithWorkDoneHere(t *testing.T) {
	before := benchfloor.ProcessCPU()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	if got := benchfloor.ProcessCPU() - before; got < 20*time.Millisecond {
		t.Errorf("50 ms of spinning counted as %v of CPU (%d turns), want 20 ms or more", got, x)
	}
}

func TestGroupCPUCountsABusyProcessGroupAndNoOther(t *testing.T) {
	// A shell spinning for a second, leading a group of its own.
	cmd := exec.Command("sh", "-c", "end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	pg := cmd.Process.Pid
	var got time.Duration
	deadline := time.Now().Add(10 * time.Second)
	for got < 200*time.Millisecond && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		var err error
		if got, err = benchfloor.GroupCPU(pg); err != nil {
			t.Fatal(err)
		}
	}
	if got < 200*time.Millisecond {
		t.Errorf("a group spinning for up to 2 s counted %v of CPU, want 200 ms or more", got)
	}
	if _, err := benchfloor.GroupCPU(os.Getpid() + 1<<22); err == nil {
		t.Error("GroupCPU of a group with no process: no error")
	}
}

func TestSettleWaitsForABusyGroupToGoIdle(t *testing.T) {
	// Busy for one to two seconds, then asleep.
	cmd := exec.Command("sh", "-c", "end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done; sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	if err := benchfloor.Settle(200*time.Millisecond, 20*time.Millisecond, 20*time.Second, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	busy, err := benchfloor.GroupCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if busy < 500*time.Millisecond {
		t.Errorf("Settle returned after the group used %v of CPU, before its busy seconds ended", busy)
	}
	if err := benchfloor.Settle(50*time.Millisecond, 0, 10*time.Millisecond, os.Getpid()+1<<22); err == nil {
		t.Error("Settle on a group with no process: no error")
	}
}
