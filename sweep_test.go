// Room: tests of the orphan sweep against hostile and stale manifest
// entries, with stand-in processes instead of browsers. No locks.

package browserpool_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/proc"
)

// deadOwner is an owner pid above any pid_max: never alive.
const deadOwner = 1 << 30

// entry is one manifest entry in the file's own JSON format, so these tests
// write what an earlier (or hostile) writer could have left.
type entry struct {
	Session    string    `json:"session"`
	State      string    `json:"state"`
	PID        int       `json:"pid,omitempty"`
	PGID       int       `json:"pgid,omitempty"`
	StartTime  uint64    `json:"start_time,omitempty"`
	BootID     string    `json:"boot_id,omitempty"`
	Dir        string    `json:"dir"`
	OwnerPID   int       `json:"owner_pid"`
	OwnerStart uint64    `json:"owner_start"`
	OwnerBoot  string    `json:"owner_boot,omitempty"`
	Created    time.Time `json:"created"`
}

// writeEntries writes a version 1 manifest holding es into root.
func writeEntries(t *testing.T, root string, es ...entry) {
	t.Helper()
	if es == nil {
		es = []entry{}
	}
	data, err := json.Marshal(map[string]any{"version": 1, "entries": es})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "manifest.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// sweepCounts are the three sweep counters of a pool's Stats.
type sweepCounts struct{ Swept, Skipped, DirsRemoved uint64 }

func countsOf(p *browserpool.Pool) sweepCounts {
	st := p.Stats()
	return sweepCounts{st.OrphansSwept, st.OrphansSkipped, st.OrphanDirsRemoved}
}

// sweepOnce runs the sweep of a new pool on root (which launches nothing)
// and returns its counts; the pool is closed at once.
func sweepOnce(t *testing.T, root string) sweepCounts {
	t.Helper()
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	c := countsOf(p)
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	return c
}

// stand-in is a process the sweep may find: a copy of /bin/sh named
// after its role, blocked in the builtin read (so it has no child) until
// the test ends, with the given arguments after its script and env added to
// its environment.
type standIn struct {
	cmd   *exec.Cmd
	pid   int
	start uint64
}

// startStandIn starts a stand-in whose executable is called exe (chromium
// makes it look like a browser). Its process group is pgid when nonzero,
// else its own.
func startStandIn(t *testing.T, exe string, pgid int, env []string, args ...string) *standIn {
	t.Helper()
	bin := filepath.Join(t.TempDir(), exe)
	src, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o700); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-c", "read x", exe}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() {
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid := cmd.Process.Pid
	// Until it has exec'd, /proc shows a copy of this test binary.
	waitFor(t, exe+" runs and waits in read", func() bool {
		got, _ := proc.Exe(pid)
		st, err := proc.ReadStat(pid)
		return filepath.Base(got) == exe && err == nil && st.State == 'S'
	})
	start, err := proc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	return &standIn{cmd: cmd, pid: pid, start: start}
}

// browserEnv is the environment marker our launcher gives a browser of
// session id whose host was owner ("pid:start").
func browserEnv(id, owner string) []string {
	return []string{"BROWSERPOOL_SESSION=" + id, "BROWSERPOOL_OWNER=" + owner}
}

func bootID(t *testing.T) string {
	t.Helper()
	b, err := proc.BootID()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mkdirWithFile makes dir and a file inside it, and returns the file.
func mkdirWithFile(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "precious")
	if err := os.WriteFile(f, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSweepNeverRemovesADirectoryOutsideTheSessionsDir(t *testing.T) {
	root := newRoot(t)
	outside := filepath.Join(t.TempDir(), "some-data")
	file := mkdirWithFile(t, outside)
	writeEntries(t, root, entry{Session: "s-old", State: "ready", Dir: outside, OwnerPID: deadOwner, Created: time.Now()})
	got := sweepOnce(t, root)
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the sweep removed a directory outside <root>/sessions named by a manifest entry: %v", err)
	}
	if diff := cmp.Diff(sweepCounts{Skipped: 1}, got); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

func TestSweepLeavesANonBrowserProcessNamingASessionDirRunning(t *testing.T) {
	root := newRoot(t)
	dir := filepath.Join(root, "sessions", "s-old")
	logFile := mkdirWithFile(t, dir)
	tail := exec.Command("tail", "-f", logFile)
	tail.Stdout = io.Discard
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tail.Process.Kill(); tail.Wait() })
	waitFor(t, "tail runs", func() bool {
		cl, _ := proc.Cmdline(tail.Process.Pid)
		return strings.Contains(cl, logFile)
	})
	got := sweepOnce(t, root)
	if !proc.Alive(tail.Process.Pid) {
		t.Fatal("the sweep killed `tail -f` of a file in a session dir: not a browser, not ours")
	}
	if _, err := os.Stat(logFile); err != nil {
		t.Errorf("the sweep removed a session dir a live process it could not prove ours still uses: %v", err)
	}
	if diff := cmp.Diff(sweepCounts{Skipped: 1}, got); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

func TestSweepNeverSignalsARecordedProcessGroupThatIsNotTheBrowsers(t *testing.T) {
	root := newRoot(t)
	id := "s-orphan"
	dir := filepath.Join(root, "sessions", id)
	mkdirWithFile(t, dir)
	victim := startStandIn(t, "victim", 0, nil)
	b := startStandIn(t, "chromium", 0, browserEnv(id, fmt.Sprintf("%d:1", deadOwner)), "--user-data-dir="+dir+"/user-data")
	writeEntries(t, root, entry{Session: id, State: "ready", PID: b.pid, PGID: victim.pid, StartTime: b.start,
		BootID: bootID(t), Dir: dir, OwnerPID: deadOwner, Created: time.Now()})
	got := sweepOnce(t, root)
	if !proc.Alive(victim.pid) {
		t.Fatal("the sweep killed the process group the entry recorded, which is not the browser's")
	}
	if proc.Alive(b.pid) {
		t.Error("the proven orphan browser still runs: its own group should have been killed")
	}
	// The browser's own group was signalled; the recorded one was refused.
	if diff := cmp.Diff(sweepCounts{Swept: 1, Skipped: 1, DirsRemoved: 1}, got); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}
