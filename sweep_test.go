// Room: tests of the orphan sweep against hostile and stale manifest
// entries, with stand-in processes instead of browsers. No locks.

package browserpool_test

import (
	"encoding/json"
	"errors"
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
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/leakcheck"
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
	// A fork by another test may still hold the copy open for writing
	// until it execs: retry while the kernel says the file is busy.
	for i := 0; ; i++ {
		err = cmd.Start()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ETXTBSY) || i == 100 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		c := exec.Command(cmd.Path, cmd.Args[1:]...)
		c.Env, c.Stdin, c.SysProcAttr = cmd.Env, cmd.Stdin, cmd.SysProcAttr
		cmd = c
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

// sweepCase is one kind of hostile or stale thing under a root. setup
// makes it (the root exists, with its sessions dir) and returns a check of
// what must still hold after the sweep.
type sweepCase struct {
	name  string
	setup func(t *testing.T, root string) (check func(t *testing.T))
	want  sweepCounts
}

// survives checks that path still exists.
func survives(path string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("the sweep removed %s: %v", path, err)
		}
	}
}

// runs checks that pid still runs.
func runs(what string, pid int) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		if !proc.Alive(pid) {
			t.Errorf("the sweep killed %s (pid %d)", what, pid)
		}
	}
}

func all(checks ...func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		for _, c := range checks {
			c(t)
		}
	}
}

// deadOwnerMarker is the BROWSERPOOL_OWNER value of a host that is gone.
var deadOwnerMarker = fmt.Sprintf("%d:1", deadOwner)

func TestSweepLeavesAloneWhatItCannotProveIsOurs(t *testing.T) {
	cases := []sweepCase{
		{"an entry naming a directory outside the root", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			f := mkdirWithFile(t, dir)
			writeEntries(t, root, entry{Session: "s-out", Dir: dir, OwnerPID: deadOwner})
			return survives(f)
		}, sweepCounts{Skipped: 1}},
		{"an entry naming the root itself", func(t *testing.T, root string) func(*testing.T) {
			f := mkdirWithFile(t, root)
			writeEntries(t, root, entry{Session: "s-root", Dir: root, OwnerPID: deadOwner})
			return all(survives(f), survives(filepath.Join(root, "sessions")))
		}, sweepCounts{Skipped: 1}},
		{"an entry naming the output dir", func(t *testing.T, root string) func(*testing.T) {
			f := mkdirWithFile(t, filepath.Join(root, "output", "s-1"))
			writeEntries(t, root, entry{Session: "s-1", Dir: filepath.Join(root, "output"), OwnerPID: deadOwner})
			return survives(f)
		}, sweepCounts{Skipped: 1}},
		{"an entry naming a session dir that climbs out with dot-dot", func(t *testing.T, root string) func(*testing.T) {
			f := mkdirWithFile(t, filepath.Join(root, "output"))
			writeEntries(t, root, entry{Session: "s-1", Dir: root + "/sessions/s-1/../../output", OwnerPID: deadOwner})
			return survives(f)
		}, sweepCounts{Skipped: 1}},
		{"an entry naming a symlink into another tree", func(t *testing.T, root string) func(*testing.T) {
			other := t.TempDir()
			f := mkdirWithFile(t, other)
			link := filepath.Join(root, "sessions", "s-link")
			if err := os.Symlink(other, link); err != nil {
				t.Fatal(err)
			}
			writeEntries(t, root, entry{Session: "s-link", Dir: link, OwnerPID: deadOwner})
			return all(survives(f), survives(link))
		}, sweepCounts{Skipped: 1}},
		{"a sessions dir that is a symlink out of the root", func(t *testing.T, root string) func(*testing.T) {
			other := t.TempDir()
			f := mkdirWithFile(t, filepath.Join(other, "s-1"))
			if err := os.Remove(filepath.Join(root, "sessions")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, filepath.Join(root, "sessions")); err != nil {
				t.Fatal(err)
			}
			writeEntries(t, root, entry{Session: "s-1", Dir: filepath.Join(root, "sessions", "s-1"), OwnerPID: deadOwner})
			return survives(f)
		}, sweepCounts{Skipped: 1}},
		{"a file in the sessions dir that is not a session dir", func(t *testing.T, root string) func(*testing.T) {
			f := filepath.Join(root, "sessions", "notes.txt")
			if err := os.WriteFile(f, []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			return survives(f)
		}, sweepCounts{Skipped: 1}},
		{"an entry whose pid is 1", func(t *testing.T, root string) func(*testing.T) {
			st, err := proc.StartTime(1)
			if err != nil {
				t.Skipf("cannot read pid 1: %v", err)
			}
			writeEntries(t, root, entry{Session: "s-init", PID: 1, PGID: 1, StartTime: st, BootID: bootID(t),
				Dir: filepath.Join(root, "sessions", "s-init"), OwnerPID: deadOwner})
			return runs("pid 1", 1)
		}, sweepCounts{Skipped: 1}},
		{"a live process that is not a browser, with the recorded start time and our markers", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-sh")
			f := mkdirWithFile(t, dir)
			sh := startStandIn(t, "helper", 0, browserEnv("s-sh", deadOwnerMarker), "--type=renderer", "--user-data-dir="+dir+"/user-data")
			writeEntries(t, root, entry{Session: "s-sh", PID: sh.pid, PGID: sh.pid, StartTime: sh.start, BootID: bootID(t), Dir: dir, OwnerPID: deadOwner})
			return all(runs("a process that is not a browser", sh.pid), survives(f))
		}, sweepCounts{Skipped: 1}},
		{"a recorded pid whose start time differs (a reused pid)", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-re")
			b := startStandIn(t, "chromium", 0, browserEnv("s-re", deadOwnerMarker), "--user-data-dir="+dir+"/user-data")
			writeEntries(t, root, entry{Session: "s-re", PID: b.pid, PGID: b.pid, StartTime: b.start + 1, BootID: bootID(t), Dir: dir, OwnerPID: deadOwner})
			return runs("a browser whose start time is not the recorded one", b.pid)
		}, sweepCounts{Skipped: 1}},
		{"a recorded process group that is someone else's", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-pg")
			mkdirWithFile(t, dir)
			victim := startStandIn(t, "victim", 0, nil)
			b := startStandIn(t, "chromium", 0, browserEnv("s-pg", deadOwnerMarker), "--user-data-dir="+dir+"/user-data")
			writeEntries(t, root, entry{Session: "s-pg", PID: b.pid, PGID: victim.pid, StartTime: b.start, BootID: bootID(t), Dir: dir, OwnerPID: deadOwner})
			return runs("the recorded group's leader", victim.pid)
		}, sweepCounts{Swept: 1, Skipped: 1, DirsRemoved: 1}},
		{"a proven browser inside someone else's process group", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-in")
			mkdirWithFile(t, dir)
			victim := startStandIn(t, "victim", 0, nil)
			b := startStandIn(t, "chromium", victim.pid, browserEnv("s-in", deadOwnerMarker), "--user-data-dir="+dir+"/user-data")
			writeEntries(t, root, entry{Session: "s-in", PID: b.pid, PGID: victim.pid, StartTime: b.start, BootID: bootID(t), Dir: dir, OwnerPID: deadOwner})
			return func(t *testing.T) {
				runs("the leader of the group the browser sits in", victim.pid)(t)
				if proc.Alive(b.pid) {
					t.Error("the proven browser still runs: it should have been killed alone")
				}
			}
		}, sweepCounts{Swept: 1, Skipped: 1, DirsRemoved: 1}},
		{"a browser whose marker names another session", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-a")
			b := startStandIn(t, "chromium", 0, browserEnv("s-b", deadOwnerMarker), "--user-data-dir="+dir+"/user-data")
			return runs("a browser of another session", b.pid)
		}, sweepCounts{Skipped: 1}},
		{"a browser without the owner marker", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-no")
			b := startStandIn(t, "chromium", 0, []string{"BROWSERPOOL_SESSION=s-no"}, "--user-data-dir="+dir+"/user-data")
			return runs("a browser without an owner marker", b.pid)
		}, sweepCounts{Skipped: 1}},
		{"a browser main process without any marker", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-user")
			b := startStandIn(t, "chromium", 0, nil, "--user-data-dir="+dir+"/user-data")
			return runs("someone's own browser on a session dir", b.pid)
		}, sweepCounts{Skipped: 1}},
		{"a neighbour pool's live browser, recorded", func(t *testing.T, root string) func(*testing.T) {
			owner := startStandIn(t, "host", 0, nil)
			dir := filepath.Join(root, "sessions", "s-nb")
			f := mkdirWithFile(t, dir)
			b := startStandIn(t, "chromium", 0, browserEnv("s-nb", fmt.Sprintf("%d:%d", owner.pid, owner.start)), "--user-data-dir="+dir+"/user-data")
			writeEntries(t, root, entry{Session: "s-nb", State: "ready", PID: b.pid, PGID: b.pid, StartTime: b.start, BootID: bootID(t),
				Dir: dir, OwnerPID: owner.pid, OwnerStart: owner.start, OwnerBoot: bootID(t)})
			return all(runs("a live neighbour's browser", b.pid), survives(f))
		}, sweepCounts{Skipped: 1}},
		{"a neighbour pool's live browser whose entry was lost", func(t *testing.T, root string) func(*testing.T) {
			owner := startStandIn(t, "host", 0, nil)
			dir := filepath.Join(root, "sessions", "s-nb")
			f := mkdirWithFile(t, dir)
			b := startStandIn(t, "chromium", 0, browserEnv("s-nb", fmt.Sprintf("%d:%d", owner.pid, owner.start)), "--user-data-dir="+dir+"/user-data")
			return all(runs("a live neighbour's browser", b.pid), survives(f))
		}, sweepCounts{Skipped: 1}},
		{"a child process of a browser whose group leader is not ours", func(t *testing.T, root string) func(*testing.T) {
			dir := filepath.Join(root, "sessions", "s-ch")
			leader := startStandIn(t, "chromium", 0, nil, "--user-data-dir=/elsewhere/user-data")
			// The child's environ is unreadable as ours (no marker), as a
			// zygote child's is.
			child := startStandIn(t, "chromium", leader.pid, nil, "--type=renderer", "--user-data-dir="+dir+"/user-data")
			return all(runs("the leader", leader.pid), runs("the child", child.pid))
		}, sweepCounts{Skipped: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := newRoot(t)
			if err := os.MkdirAll(filepath.Join(root, "sessions"), 0o700); err != nil {
				t.Fatal(err)
			}
			check := tc.setup(t, root)
			got := sweepOnce(t, root)
			check(t)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sweep counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSweepKillsAnOrphanedBrowserChildWhoseLeaderIsGone(t *testing.T) {
	root := newRoot(t)
	dir := filepath.Join(root, "sessions", "s-child")
	mkdirWithFile(t, dir)
	// The leader (the browser) is gone; its group lives on in a child
	// whose environment the zygote overwrote.
	leader := startStandIn(t, "chromium", 0, nil)
	child := startStandIn(t, "chromium", leader.pid, nil, "--type=renderer", "--user-data-dir="+dir+"/user-data")
	leader.cmd.Process.Kill()
	leader.cmd.Wait()
	got := sweepOnce(t, root)
	if proc.Alive(child.pid) {
		t.Error("the orphaned browser child still runs")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the orphan's session dir is still there: %v", err)
	}
	if diff := cmp.Diff(sweepCounts{Swept: 1, DirsRemoved: 1}, got); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

// addEntries appends es to root's manifest as it stands.
func addEntries(t *testing.T, root string, es ...entry) {
	t.Helper()
	path := filepath.Join(root, "manifest.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version int               `json:"version"`
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		m.Entries = append(m.Entries, b)
	}
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSweepRemovesExactlyTheOrphanOfASIGKILLedHost(t *testing.T) {
	requireBrowser(t)
	root := newRoot(t)
	// A real orphan: a browser without the pipe outlives its SIGKILLed host.
	host, pids := startHostN(t, root, "ready", true, 1)
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	if !proc.Alive(pids[0]) {
		t.Fatalf("browser %d died with its host; the sweep would prove nothing", pids[0])
	}
	orphanDirs, err := filepath.Glob(filepath.Join(root, "sessions", "*"))
	if err != nil || len(orphanDirs) != 1 {
		t.Fatalf("session dirs of the dead host: %v, %v; want one", orphanDirs, err)
	}
	// Its singleton dir: in the host's TMPDIR, the session dir being too
	// deep for one of its own, where removing the session dir misses it.
	link, err := os.Readlink(filepath.Join(orphanDirs[0], "user-data", "SingletonSocket"))
	if err != nil {
		t.Fatal(err)
	}
	singleton := filepath.Dir(link)
	if strings.HasPrefix(singleton, orphanDirs[0]+"/") {
		t.Fatalf("the orphan's singleton dir %s is inside its session dir: the test proves nothing", singleton)
	}
	// Beside it, things that are not ours to touch.
	sessions := filepath.Join(root, "sessions")
	helperDir := filepath.Join(sessions, "s-helper")
	helperFile := mkdirWithFile(t, helperDir)
	helper := startStandIn(t, "helper", 0, browserEnv("s-helper", deadOwnerMarker), "--user-data-dir="+helperDir+"/user-data")
	owner := startStandIn(t, "host", 0, nil)
	nbDir := filepath.Join(sessions, "s-neighbour")
	nbFile := mkdirWithFile(t, nbDir)
	nb := startStandIn(t, "chromium", 0, browserEnv("s-neighbour", fmt.Sprintf("%d:%d", owner.pid, owner.start)), "--user-data-dir="+nbDir+"/user-data")
	outside := filepath.Join(t.TempDir(), "data")
	outsideFile := mkdirWithFile(t, outside)
	addEntries(t, root,
		entry{Session: "s-helper", State: "ready", PID: helper.pid, PGID: helper.pid, StartTime: helper.start, BootID: bootID(t), Dir: helperDir, OwnerPID: deadOwner},
		entry{Session: "s-outside", State: "ready", Dir: outside, OwnerPID: deadOwner})

	p, err := browserpool.NewPool(browserpool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The orphan is gone, at once: its processes and its dir.
	procs, err := leakcheck.Processes(orphanDirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, pi := range procs {
		t.Errorf("the orphan's process %d still runs: %.200s", pi.PID, pi.Cmdline)
	}
	if _, err := os.Stat(orphanDirs[0]); !os.IsNotExist(err) {
		t.Errorf("the orphan's session dir is still there: %v", err)
	}
	if _, err := os.Lstat(singleton); !os.IsNotExist(err) {
		t.Errorf("the orphan's singleton dir %s is still there: %v", singleton, err)
	}
	// Everything else is as it was.
	all(runs("a non-browser process with our markers", helper.pid), survives(helperFile),
		runs("a live neighbour's browser", nb.pid), survives(nbFile), survives(outsideFile))(t)
	st := p.Stats()
	if st.OrphansSwept < 1 {
		t.Errorf("Stats.OrphansSwept = %d, want at least 1", st.OrphansSwept)
	}
	if diff := cmp.Diff(sweepCounts{st.OrphansSwept, 3, 1}, countsOf(p)); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

// A host restarted in a fresh pid namespace (a container) gets the pid its
// predecessor had: the same pid with another start time is a host that is
// gone, not this one.
func TestSweepRemovesWhatAnEarlierHostWithThisProcesssPidLeft(t *testing.T) {
	root := newRoot(t)
	self := os.Getpid()
	start, err := proc.StartTime(self)
	if err != nil {
		t.Fatal(err)
	}
	earlier := fmt.Sprintf("%d:%d", self, start-1)
	dir := filepath.Join(root, "sessions", "s-earlier")
	mkdirWithFile(t, dir)
	b := startStandIn(t, "chromium", 0, browserEnv("s-earlier", earlier), "--user-data-dir="+dir+"/user-data")
	writeEntries(t, root, entry{Session: "s-earlier", State: "ready", PID: b.pid, PGID: b.pid, StartTime: b.start, BootID: bootID(t),
		Dir: dir, OwnerPID: self, OwnerStart: start - 1, OwnerBoot: bootID(t)})
	if diff := cmp.Diff(sweepCounts{Swept: 1, DirsRemoved: 1}, sweepOnce(t, root)); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
	if proc.Alive(b.pid) {
		t.Errorf("the earlier host's browser %d still runs", b.pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the earlier host's session dir is still there: %v", err)
	}
}

func TestSweepLeavesAloneTheEntriesOfAnotherPoolOfThisProcess(t *testing.T) {
	root := newRoot(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(t), IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := mustOpen(t, ctxT(t), p)
	if diff := cmp.Diff(sweepCounts{Skipped: 1}, sweepOnce(t, root)); diff != "" {
		t.Errorf("a second pool's sweep counts (-want +got):\n%s", diff)
	}
	if err := s.Err(); err != nil {
		t.Errorf("the first pool's session after a second pool's sweep: %v", err)
	}
}
