package browserpool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

// The host helper: this test binary re-executed as a host program that opens
// browsers and is then SIGKILLed by the test.
const hostHelperEnv = "BROWSERPOOL_TEST_HOST"

func runHostHelper() {
	mode := os.Getenv(hostHelperEnv) // "ready", "spawned" or "midcall"
	root := os.Getenv("BROWSERPOOL_TEST_HOST_ROOT")
	noPipe := os.Getenv("BROWSERPOOL_TEST_HOST_NOPIPE") == "1"
	var launcher browserpool.Launcher = browserpool.NewTestLocalLauncher(noPipe)
	if mode == "spawned" {
		launcher = blockAfterSpawn{launcher}
	}
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: launcher})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	ctx := context.Background()
	var calls atomic.Int32
	n := 2
	if v, err := strconv.Atoi(os.Getenv("BROWSERPOOL_TEST_HOST_N")); err == nil {
		n = v
	}
	for range n {
		go func() {
			s, err := p.Open(ctx)
			if err != nil {
				fmt.Println("error", err)
				return
			}
			if mode != "midcall" {
				fmt.Println("ready", s.Info().PID)
				return
			}
			// Die in the middle of a call: one that never ends.
			tab, err := s.Tab(ctx, "")
			if err != nil {
				fmt.Println("error", err)
				return
			}
			n := calls.Add(1)
			go tab.Evaluate(ctx, "new Promise(() => {})", nil)
			for p.Stats().CallsInFlight < int(n) {
				time.Sleep(5 * time.Millisecond)
			}
			fmt.Println("midcall", s.Info().PID)
		}()
	}
	select {} // wait for SIGKILL
}

// blockAfterSpawn records the spawn, says so, and never lets the launch
// reach readiness: the host dies between the manifest write and readiness.
type blockAfterSpawn struct{ l browserpool.Launcher }

func (b blockAfterSpawn) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	inner := spec.OnSpawn
	spec.OnSpawn = func(info browserpool.SpawnInfo) error {
		if err := inner(info); err != nil {
			return err
		}
		// Let the Debian wrapper script exec the real binary first: a shell
		// still writing its warnings when the host dies is killed by
		// SIGPIPE, and the test wants browsers that outlive their host.
		for range 500 {
			if exe, _ := proc.Exe(info.PID); strings.Contains(exe, "chrom") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("spawned", info.PID)
		select {}
	}
	return b.l.Launch(ctx, spec)
}

// startHost runs the host helper and returns it once it reported two
// browsers (spawned, ready or mid-call) with their pids.
func startHost(t *testing.T, root, mode string, noPipe bool) (*exec.Cmd, []int) {
	t.Helper()
	return startHostN(t, root, mode, noPipe, 2)
}

// startHostN is startHost with n browsers.
func startHostN(t *testing.T, root, mode string, noPipe bool, n int) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hostHelperEnv+"="+mode, "BROWSERPOOL_TEST_HOST_ROOT="+root, "BROWSERPOOL_TEST_HOST_N="+strconv.Itoa(n))
	if noPipe {
		cmd.Env = append(cmd.Env, "BROWSERPOOL_TEST_HOST_NOPIPE=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var pids []int
	sc := bufio.NewScanner(out)
	for len(pids) < n && sc.Scan() {
		var word string
		var pid int
		if _, err := fmt.Sscan(sc.Text(), &word, &pid); err != nil || word != mode {
			t.Fatalf("host said %q", sc.Text())
		}
		pids = append(pids, pid)
	}
	if len(pids) < n {
		t.Fatalf("host ended early: %v", sc.Err())
	}
	return cmd, pids
}

func TestSweepAfterHostSIGKILLLeavesNoBrowserAndNoProfileDir(t *testing.T) {
	requireBrowser(t)
	for _, tc := range []struct {
		mode   string
		noPipe bool
	}{
		{"ready", false}, {"spawned", false}, {"ready", true}, {"spawned", true},
	} {
		t.Run(fmt.Sprintf("%s/nopipe=%v", tc.mode, tc.noPipe), func(t *testing.T) {
			root := newRoot(t)
			host, pids := startHost(t, root, tc.mode, tc.noPipe)
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			host.Wait()
			if tc.noPipe {
				// Without the pipe nothing tells the browsers their host
				// died: they must still be running for the sweep to prove
				// itself.
				for _, pid := range pids {
					if !proc.Alive(pid) {
						t.Fatalf("browser %d died with its host; the sweep would prove nothing", pid)
					}
				}
			}
			p, err := browserpool.NewPool(browserpool.Config{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// The pool's own files stay; nothing else may.
			if err := leakcheck.Check(ctx, filepath.Join(root, "sessions")); err != nil {
				t.Fatalf("after the sweep: %v", err)
			}
			st := p.Stats()
			if tc.noPipe && st.OrphansSwept < 2 {
				t.Errorf("Stats.OrphansSwept = %d, want at least 2 (the two browsers that outlived their host)", st.OrphansSwept)
			}
			if st.OrphanDirsRemoved < 2 {
				t.Errorf("Stats.OrphanDirsRemoved = %d, want 2", st.OrphanDirsRemoved)
			}
			entries, err := os.ReadFile(filepath.Join(root, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(entries), `"session"`) {
				t.Errorf("manifest still has entries after the sweep:\n%s", entries)
			}
		})
	}
}

func TestSweepNeverSignalsAReusedPid(t *testing.T) {
	root := newRoot(t)
	dir := filepath.Join(root, "sessions", "s-forged")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A live, unrelated process whose pid the forged entry claims, with a
	// wrong start time: exactly what pid reuse looks like.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	st, err := proc.StartTime(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	boot, _ := proc.BootID()
	writeEntries(t, root, entry{
		Session: "s-forged", State: "ready", PID: sleeper.Process.Pid, PGID: sleeper.Process.Pid,
		StartTime: st + 1, BootID: boot, Dir: dir, OwnerPID: 999999999, Created: time.Now(),
	})
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !proc.Alive(sleeper.Process.Pid) {
		t.Fatal("the sweep signalled a process whose start time did not match its entry")
	}
	got := p.Stats()
	want := struct{ Swept, Skipped, Dirs uint64 }{0, 1, 1}
	if diff := cmp.Diff(want, struct{ Swept, Skipped, Dirs uint64 }{got.OrphansSwept, got.OrphansSkipped, got.OrphanDirsRemoved}); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

func TestSweepKeepsEntriesOfALiveOwner(t *testing.T) {
	root := newRoot(t)
	dir := filepath.Join(root, "sessions", "s-other")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Another pool in a live process (our parent stands in for it) owns
	// this entry.
	owner := os.Getppid()
	ost, err := proc.StartTime(owner)
	if err != nil {
		t.Fatal(err)
	}
	boot, _ := proc.BootID()
	writeEntries(t, root, entry{
		Session: "s-other", State: "reserved", Dir: dir, OwnerPID: owner, OwnerStart: ost, OwnerBoot: boot, Created: time.Now(),
	})
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the sweep removed a live owner's profile dir: %v", err)
	}
	orphans, err := p.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	want := []browserpool.Orphan{{Session: "s-other", Dir: dir, Owner: owner, Alive: true}}
	if diff := cmp.Diff(want, orphans); diff != "" {
		t.Errorf("Orphans (-want +got):\n%s", diff)
	}
	os.RemoveAll(dir)
}

func TestGarbageManifestIsReplacedNotFatal(t *testing.T) {
	root := newRoot(t)
	if err := os.WriteFile(filepath.Join(root, "manifest.json"), []byte(`{"version":1,"entries":[{"sess`), 0o600); err != nil {
		t.Fatal(err)
	}
	var swept []browserpool.SweepEvent
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{},
		Hooks: browserpool.Hooks{OrphansSwept: func(ev browserpool.SweepEvent) { swept = append(swept, ev) }}})
	if err != nil {
		t.Fatalf("a torn manifest made NewPool fail: %v", err)
	}
	p.Close()
	if len(swept) != 1 || swept[0].Err == nil {
		t.Fatalf("the sweep event does not report the torn manifest: %+v", swept)
	}
	data, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"version":1,"entries":[]}`, strings.Join(strings.Fields(string(data)), "")); diff != "" {
		t.Errorf("replaced manifest (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("manifest mode = %v, want 0600", fi.Mode().Perm())
	}
	if aside, _ := filepath.Glob(filepath.Join(root, "manifest.json.corrupt-*")); len(aside) != 1 {
		t.Errorf("the torn manifest was not kept aside: kept-aside files %v, want one", aside)
	}
}

// unusedLauncher fails the test's expectations loudly if a launch happens.
type unusedLauncher struct{}

func (unusedLauncher) Launch(context.Context, browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	return nil, fmt.Errorf("this test launches no browser")
}

func TestTwoPoolsSharingARootNeverSweepEachOthersLiveSessions(t *testing.T) {
	requireBrowser(t)
	root := newRoot(t)
	// Another process's pool, alive, with two ready browsers.
	host, pids := startHost(t, root, "ready", false)
	p, err := browserpool.NewPool(browserpool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, pid := range pids {
		if !proc.Alive(pid) {
			t.Fatalf("the new pool's sweep killed browser %d of a live pool", pid)
		}
	}
	if st := p.Stats(); st.OrphansSwept != 0 || st.OrphansSkipped != 2 || st.OrphanDirsRemoved != 0 {
		t.Errorf("sweep counts: swept %d skipped %d dirs %d; want 0, 2, 0", st.OrphansSwept, st.OrphansSkipped, st.OrphanDirsRemoved)
	}
	// This pool's own session lives beside them; Orphans names the other
	// pool's two as alive, not as leftovers.
	s := mustOpen(t, ctxT(t), p)
	orphans, err := p.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	var alive int
	for _, o := range orphans {
		if o.Session == s.ID() {
			t.Errorf("Orphans lists this pool's own live session: %+v", o)
		}
		if o.Alive {
			alive++
		}
	}
	if alive != 2 {
		t.Errorf("Orphans: %+v; want the other pool's 2 sessions, alive", orphans)
	}
	// When the other host dies, its browsers follow it (pipe) and the next
	// pool sweeps what is left.
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	p.Close()
	p2, err := browserpool.NewPool(browserpool.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := leakcheck.Check(ctx, filepath.Join(root, "sessions")); err != nil {
		t.Fatalf("after the other pool died: %v", err)
	}
}

func TestAnIdleRealBrowserIsReclaimed(t *testing.T) {
	var c closes
	p := newRealPool(t, browserpool.Config{IdleTimeout: 300 * time.Millisecond, Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	dir := s.Info().ProfileDir
	tab := mustTab(t, ctx, s)
	// A call longer than the idle timeout keeps it alive.
	if err := tab.Evaluate(ctx, "new Promise(r => setTimeout(r, 800))", nil); err != nil {
		t.Fatalf("a call longer than the idle timeout failed: %v", err)
	}
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the idle session was never reclaimed")
	}
	waitFor(t, "the close event", func() bool { return len(c.reasons(s.ID())) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonIdle}, c.reasons(s.ID())); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the reclaimed session's profile dir is still there: %v", err)
	}
}

// Calls their callers gave up on (a promise that never settles, a
// navigation to a server that never answers) do not keep a session in use:
// nobody waits for them, and the session is reclaimed once idle.
func TestARealSessionWhoseCallsWereGivenUpOnIsReclaimedWhenIdle(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	t.Cleanup(func() { close(hang); srv.Close() })
	var c closes
	// 3 s: no gap between its own calls on a loaded machine reaches it.
	p := newRealPool(t, browserpool.Config{IdleTimeout: 3 * time.Second, Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := tab.Evaluate(short, "new Promise(() => {})", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Evaluate of a promise that never settles: %v, want the caller's deadline", err)
	}
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := tab.Navigate(short, srv.URL+"/never"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Navigate to a server that never answers: %v, want the caller's deadline", err)
	}
	select {
	case <-s.Done():
	case <-time.After(60 * time.Second): // a ceiling for a loaded machine; reclaim comes about 3 s after
		st := p.Stats()
		t.Fatalf("the session was not reclaimed in 60 s; %d sessions in use, %d calls in flight", st.SessionsInUse, st.CallsInFlight)
	}
	waitFor(t, "the close event", func() bool { return len(c.reasons(s.ID())) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonIdle}, c.reasons(s.ID())); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
}

// TestNewPoolAfterAHostSIGKILLLeavesNothingTheMomentItReturns kills a host
// before its browsers are ready, after, and in the middle of a call, with and
// without the pipe that takes browsers down with their host, several times
// each: the moment NewPool returns on the same root, no process and no
// session dir of the dead host is left (one look, no settle).
func TestNewPoolAfterAHostSIGKILLLeavesNothingTheMomentItReturns(t *testing.T) {
	requireBrowser(t)
	const reps = 4
	type trial struct {
		mode   string
		noPipe bool
		rep    int
	}
	var trials []trial
	for _, mode := range []string{"spawned", "ready", "midcall"} {
		for _, noPipe := range []bool{false, true} {
			for rep := range reps {
				trials = append(trials, trial{mode, noPipe, rep})
			}
		}
	}
	var leftProcs, leftDirs, swept, removed atomic.Int64
	t.Run("trials", func(t *testing.T) {
		for _, tr := range trials {
			t.Run(fmt.Sprintf("%s/nopipe=%v/%d", tr.mode, tr.noPipe, tr.rep), func(t *testing.T) {
				t.Parallel()
				root := newRoot(t)
				host, _ := startHostN(t, root, tr.mode, tr.noPipe, 1)
				if err := host.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				host.Wait()
				p, err := browserpool.NewPool(browserpool.Config{Root: root})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				// One look, at once.
				sessions := filepath.Join(root, "sessions")
				procs, err := leakcheck.Processes(sessions)
				if err != nil {
					t.Fatal(err)
				}
				dirs, err := os.ReadDir(sessions)
				if err != nil {
					t.Fatal(err)
				}
				leftProcs.Add(int64(len(procs)))
				leftDirs.Add(int64(len(dirs)))
				st := p.Stats()
				swept.Add(int64(st.OrphansSwept))
				removed.Add(int64(st.OrphanDirsRemoved))
				for _, pi := range procs {
					t.Errorf("left running when NewPool returned: pid %d (state %c): %.200s", pi.PID, pi.State, pi.Cmdline)
				}
				for _, d := range dirs {
					t.Errorf("left when NewPool returned: %s", filepath.Join(sessions, d.Name()))
				}
				if st.OrphanDirsRemoved != 1 || st.OrphansSkipped != 0 {
					t.Errorf("sweep: %d dirs removed, %d skipped; want 1 and 0", st.OrphanDirsRemoved, st.OrphansSkipped)
				}
			})
		}
	})
	t.Logf("%d host SIGKILL trials (%d before ready, %d after, %d mid-call; half without the pipe): %d processes and %d session dirs left when NewPool returned; %d kills and %d dirs removed by the sweeps",
		len(trials), 2*reps, 2*reps, 2*reps, leftProcs.Load(), leftDirs.Load(), swept.Load(), removed.Load())
}

// A navigation to a server that never answers, given up on, is stopped:
// the tab takes its next commands at once (Chromium holds them while a
// navigation waits), and the error says so.
func TestANavigationGivenUpOnIsStoppedAndTheTabStaysUsable(t *testing.T) {
	t.Parallel()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			w.Write([]byte("<title>ok</title>"))
			return
		}
		<-hang
	}))
	t.Cleanup(func() { close(hang); srv.Close() })
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	if _, err := tab.Navigate(ctx, srv.URL+"/ok"); err != nil { // the tab ready: the deadline is the server's alone
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := tab.Navigate(short, srv.URL+"/never")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not answer") || !strings.Contains(err.Error(), "navigation was stopped") {
		t.Fatalf("Navigate to a server that never answers: %v, want the caller's deadline, saying the navigation was stopped", err)
	}
	// Bounded by a deadline of its own, far below what a held command
	// would wait (for ever).
	next, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var title string
	if err := tab.Evaluate(next, "document.title", &title); err != nil {
		t.Fatalf("Evaluate after the stopped navigation: %v", err)
	}
	if _, err := tab.Navigate(next, srv.URL+"/ok"); err != nil {
		t.Fatalf("Navigate after the stopped navigation: %v", err)
	}
}

// A page script that never returns, left running by an action that ran out
// of time (an evaluated loop, a click whose handler loops), is stopped:
// the tab takes its next commands instead of holding them for ever.
func TestAScriptThatNeverReturnsIsStoppedAfterTheActionRunsOutOfTime(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>loops</title><button onclick="for (;;) {}">Spin</button>`))
	})
	answers := func(after string) {
		t.Helper()
		// Bounded by a deadline of its own, far above the second the
		// page gets to answer before its script is stopped.
		next, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var title string
		if err := tab.Evaluate(next, "document.title", &title); err != nil || title != "loops" {
			t.Fatalf("Evaluate after %s: %q, %v; want the page to answer", after, title, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	err := tab.Evaluate(short, "for (;;) {}", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "it is stopped in a moment") {
		t.Fatalf("Evaluate of a loop: %v, want the caller's deadline, saying a busy script is stopped", err)
	}
	answers("an evaluated loop")
	s, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spin := ""
	for _, r := range s.Refs {
		if r.Name == "Spin" {
			spin = r.Ref
		}
	}
	short, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := tab.Click(short, spin); err == nil {
		t.Fatal("Click on a button whose handler loops returned no error")
	}
	answers("a click whose handler loops")
}

// An evaluation the page drops by navigating away says so and what to do,
// not that the browser refused the call's arguments.
func TestAnEvaluationCutShortByANavigationSaysThePageNavigated(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<title>" + r.URL.Path + "</title>"))
	})
	err := tab.Evaluate(ctx, "new Promise(() => { setTimeout(() => { location.href = '"+srv.URL+"/next'; }, 50); })", nil)
	if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), "the page navigated") || strings.Contains(err.Error(), "check its arguments") {
		t.Errorf("Evaluate cut short by a navigation: %v, want one saying the page navigated and to take a snapshot", err)
	}
}
