// Room: tests of NewPool's sweep on a damaged or foreign manifest (a newer
// version, a malformed entry, a torn file) and on what a closed pool of
// this process left. Live owners are child processes. No locks.

package browserpool_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/manifest"
	"github.com/browserpool/browserpool/internal/proc"
)

// liveOwner is a host that still runs: a child process, killed at cleanup.
type liveOwner struct {
	pid   int
	start uint64
	boot  string
}

func startLiveOwner(t *testing.T) liveOwner {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	start, err := proc.StartTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return liveOwner{cmd.Process.Pid, start, bootID(t)}
}

// record is a manifest entry as any writer could have left it.
func (o liveOwner) record(session, dir string, extra map[string]any) map[string]any {
	e := map[string]any{"session": session, "state": "ready", "dir": dir,
		"owner_pid": o.pid, "owner_start": o.start, "owner_boot": o.boot, "created": time.Now().UTC()}
	for k, v := range extra {
		e[k] = v
	}
	return e
}

// writeManifest writes a manifest of version v holding es into root and
// returns its bytes.
func writeManifest(t *testing.T, root string, v int, es ...map[string]any) []byte {
	t.Helper()
	if es == nil {
		es = []map[string]any{}
	}
	data, err := json.Marshal(map[string]any{"version": v, "entries": es})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "manifest.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// sweepReport runs the sweep of a new pool on root and returns its counts
// and its one SweepEvent; the pool is closed at once.
func sweepReport(t *testing.T, root string) (sweepCounts, browserpool.SweepEvent) {
	t.Helper()
	evs := make(chan browserpool.SweepEvent, 1)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{},
		Hooks: browserpool.Hooks{OrphansSwept: func(ev browserpool.SweepEvent) { evs <- ev }}})
	if err != nil {
		t.Fatal(err)
	}
	c := countsOf(p)
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	return c, <-evs // Close runs the queued hooks first
}

// still reports files that must have survived the sweep but did not.
func still(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s did not survive the sweep: %v", f, err)
		}
	}
}

// gone reports dirs the sweep had to remove but did not.
func gone(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if _, err := os.Lstat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there after the sweep: %v", d, err)
		}
	}
}

func keptAsideFiles(t *testing.T, root string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, "manifest.json.corrupt*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

func TestAManifestFromANewerVersionIsNeverRewrittenOrSwept(t *testing.T) {
	root := newRoot(t)
	owner := startLiveOwner(t)
	dir := filepath.Join(root, "sessions", "s-livepool")
	precious := mkdirWithFile(t, dir)
	orphanDir := filepath.Join(root, "sessions", "s-nobodys") // named by no entry: not this build's to judge
	orphanFile := mkdirWithFile(t, orphanDir)
	written := writeManifest(t, root, 2, owner.record("s-livepool", dir, nil))

	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err == nil {
		p.Close()
		t.Fatal("NewPool on a root whose manifest has version 2 succeeded; want it refused")
	}
	if !errors.Is(err, browserpool.ErrInvalidConfig) {
		t.Errorf("NewPool = %v, want ErrInvalidConfig", err)
	}
	for _, words := range []string{"version 2", "version 1", "newer browserpool", "Config.Root"} {
		if !strings.Contains(err.Error(), words) {
			t.Errorf("NewPool's error does not say %q:\n%v", words, err)
		}
	}
	got, _ := os.ReadFile(filepath.Join(root, "manifest.json"))
	if diff := cmp.Diff(string(written), string(got)); diff != "" {
		t.Errorf("the newer manifest was rewritten (-want +got):\n%s", diff)
	}
	if aside := keptAsideFiles(t, root); len(aside) != 0 {
		t.Errorf("the newer manifest was kept aside as corrupt: %q", aside)
	}
	still(t, precious, orphanFile)
}

func TestOneMalformedEntryIsDroppedAloneAndTheLiveOwnersEntriesHonoured(t *testing.T) {
	root := newRoot(t)
	owner := startLiveOwner(t)
	sessions := filepath.Join(root, "sessions")
	liveDir := filepath.Join(sessions, "s-livepool")
	livePrecious := mkdirWithFile(t, liveDir)
	liveBadDir := filepath.Join(sessions, "s-livebad") // a live owner's entry that does not verify
	liveBadPrecious := mkdirWithFile(t, liveBadDir)
	deadBadDir := filepath.Join(sessions, "s-deadbad") // a gone owner's entry that does not verify
	mkdirWithFile(t, deadBadDir)
	writeManifest(t, root, 1,
		owner.record("s-livepool", liveDir, nil),
		owner.record("s.other", "rel", map[string]any{"state": "reserved"}),
		owner.record("s-livebad", liveBadDir, map[string]any{"pgid": -5}),
		map[string]any{"session": "s-deadbad", "state": "ready", "dir": deadBadDir, "pid": -1, "owner_pid": deadOwner, "owner_start": 1})

	counts, ev := sweepReport(t, root)
	if ev.Err != nil {
		t.Errorf("SweepEvent.Err = %v, want nil: the file is readable", ev.Err)
	}
	// Skipped: the live entry, and the three that do not verify.
	if diff := cmp.Diff(sweepCounts{Skipped: 4, DirsRemoved: 1}, counts); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
	still(t, livePrecious, liveBadPrecious)
	gone(t, deadBadDir)
	data, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	es, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range es {
		ids = append(ids, e.Session)
	}
	if diff := cmp.Diff([]string{"s-livepool"}, ids); diff != "" {
		t.Errorf("entries that verify after the sweep (-want +got):\n%s", diff)
	}
	for _, want := range []string{`"s.other"`, `"s-livebad"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the live owner's malformed entry %s was dropped:\n%s", want, data)
		}
	}
	if strings.Contains(string(data), `"s-deadbad"`) {
		t.Errorf("the gone owner's malformed entry stayed:\n%s", data)
	}
}

func TestATornManifestCostsNoSessionDirThatNoBrowserProvedOrphaned(t *testing.T) {
	root := newRoot(t)
	owner := startLiveOwner(t)
	sessions := filepath.Join(root, "sessions")
	liveDir := filepath.Join(sessions, "s-livepool")
	livePrecious := mkdirWithFile(t, liveDir)
	// A browser whose host is gone, proven by its markers.
	orphanDir := filepath.Join(sessions, "s-orphan")
	mkdirWithFile(t, orphanDir)
	b := startStandIn(t, "chromium", 0, browserEnv("s-orphan", fmt.Sprintf("%d:1", deadOwner)), "--user-data-dir="+orphanDir+"/user-data")
	whole := writeManifest(t, root, 1, owner.record("s-livepool", liveDir, nil))
	torn := whole[:len(whole)/2]
	if err := os.WriteFile(filepath.Join(root, "manifest.json"), torn, 0o600); err != nil {
		t.Fatal(err)
	}

	counts, ev := sweepReport(t, root)
	if diff := cmp.Diff(sweepCounts{Swept: 1, Skipped: 1, DirsRemoved: 1}, counts); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
	if proc.Alive(b.pid) {
		t.Errorf("the proven orphan browser %d still runs", b.pid)
	}
	still(t, livePrecious)
	gone(t, orphanDir)
	if ev.Err == nil || !strings.Contains(ev.Err.Error(), "s-livepool") || !strings.Contains(ev.Err.Error(), "manifest.json.corrupt-") {
		t.Errorf("SweepEvent.Err = %v, want it to name the kept-aside file and the kept dir s-livepool", ev.Err)
	}
	if diff := cmp.Diff([]string{string(torn)}, keptAsideFiles(t, root)); diff != "" {
		t.Errorf("kept-aside files (-want +got):\n%s", diff)
	}
}

func TestASecondCorruptManifestNeverOverwritesTheFirstsCopy(t *testing.T) {
	root := newRoot(t)
	first, second := `{"version":1,"entries":[{"session":"first-precious"`, `garbage`
	for _, body := range []string{first, second} {
		if err := os.WriteFile(filepath.Join(root, "manifest.json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		sweepReport(t, root)
	}
	if diff := cmp.Diff([]string{first, second}, keptAsideFiles(t, root)); diff != "" {
		t.Errorf("kept-aside files, oldest first (-want +got):\n%s", diff)
	}
}

// What a pool of this process recorded and left when it closed (its dir,
// its browser) is a dead owner's for the next pool on the root: Pool.Close's
// ErrCloseFailed hint sends the caller there.
func TestTheNextPoolOfThisProcessSweepsWhatAClosedPoolLeft(t *testing.T) {
	root := newRoot(t)
	// A manifest File of its own is a pool of this process that is not
	// live: as one whose Close has returned.
	closed, err := manifest.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "sessions", "s-left")
	mkdirWithFile(t, dir)
	self := closed.Owner()
	b := startStandIn(t, "chromium", 0, browserEnv("s-left", fmt.Sprintf("%d:%d", self.OwnerPID, self.OwnerStart)),
		"--user-data-dir="+dir+"/user-data")
	if err := closed.Reserve("s-left", dir); err != nil {
		t.Fatal(err)
	}
	if err := closed.Add(manifest.Entry{Session: "s-left", PID: b.pid, PGID: b.pid, StartTime: b.start, BootID: bootID(t)}); err != nil {
		t.Fatal(err)
	}
	// Left by a pool of this process before entries named their pool:
	// as before, taken for a live pool's.
	oldDir := filepath.Join(root, "sessions", "s-unnamed")
	oldPrecious := mkdirWithFile(t, oldDir)
	es, err := closed.Entries()
	if err != nil {
		t.Fatal(err)
	}
	unnamed := map[string]any{"session": "s-unnamed", "state": "reserved", "dir": oldDir,
		"owner_pid": self.OwnerPID, "owner_start": self.OwnerStart, "owner_boot": self.OwnerBoot, "created": time.Now().UTC()}
	writeManifest(t, root, 1, asMap(t, es[0]), unnamed)

	counts, _ := sweepReport(t, root)
	if diff := cmp.Diff(sweepCounts{Swept: 1, Skipped: 1, DirsRemoved: 1}, counts); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
	if proc.Alive(b.pid) {
		t.Errorf("the closed pool's browser %d still runs", b.pid)
	}
	gone(t, dir)
	still(t, oldPrecious)
}

func TestTheNextPoolOfThisProcessSweepsWhatAClosedPoolsFailedCloseLeft(t *testing.T) {
	root := newRoot(t)
	l := cdptest.NewLauncher(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: l, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), p)
	l.FailStops(errors.New("the browser cannot be killed"))
	t.Cleanup(func() { l.FailStops(nil) })
	if err := p.Close(); !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("Pool.Close = %v, want ErrCloseFailed", err)
	}
	if _, ok := entryOf(t, root, s.ID()); !ok {
		t.Fatalf("the failed close left no manifest entry of %s", s.ID())
	}
	// The browser that could not be stopped still writes its profile.
	dir := filepath.Join(root, "sessions", s.ID())
	mkdirWithFile(t, dir)

	if diff := cmp.Diff(sweepCounts{DirsRemoved: 1}, sweepOnce(t, root)); diff != "" {
		t.Errorf("the next pool's sweep counts (-want +got):\n%s", diff)
	}
	gone(t, dir)
	if e, ok := entryOf(t, root, s.ID()); ok {
		t.Errorf("the closed pool's entry is still recorded: %+v", e)
	}
}

func asMap(t *testing.T, e manifest.Entry) map[string]any {
	t.Helper()
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Pool.Orphans, asked of a pool beside one that closed leaving a browser it
// could not stop, names that browser's entry as a leftover (not alive): its
// owner, a pool of this process, has finished closing, and the next NewPool
// on the root sweeps it. Before that close the same entry is alive.
func TestOrphansNamesWhatAClosedPoolOfThisProcessLeftAsNotAlive(t *testing.T) {
	root := newRoot(t)
	l := cdptest.NewLauncher(t)
	beside, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: l, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer beside.Close()
	closing, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: l, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), closing)
	aliveOf := func() map[string]bool {
		t.Helper()
		orphans, err := beside.Orphans()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, o := range orphans {
			got[o.Session] = o.Alive
		}
		return got
	}
	if diff := cmp.Diff(map[string]bool{s.ID(): true}, aliveOf()); diff != "" {
		t.Errorf("Orphans beside a live pool (-want +got):\n%s", diff)
	}
	l.FailStops(errors.New("the browser cannot be killed"))
	t.Cleanup(func() { l.FailStops(nil) })
	if err := closing.Close(); !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("Pool.Close = %v, want ErrCloseFailed", err)
	}
	if diff := cmp.Diff(map[string]bool{s.ID(): false}, aliveOf()); diff != "" {
		t.Errorf("Orphans after that pool closed (-want +got):\n%s", diff)
	}
}
