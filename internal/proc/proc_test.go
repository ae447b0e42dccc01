// Room: tests of the /proc readers. No locks.

package proc_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

var testRoot string

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-proc-test-"})
}

// child starts argv in its own process group with env added, and arranges
// for the group to be killed and the child reaped when the test ends.
func child(t *testing.T, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	// Until the child has exec'd, /proc shows the forked copy of this
	// process.
	want, err := filepath.EvalSymlinks(cmd.Path)
	if err != nil {
		t.Fatal(err)
	}
	var exe string
	var st proc.Stat
	eventually(t, "the child runs "+want+" and sleeps", func() bool {
		// exe changes early in execve; the environment is set up later.
		// A sleeping process is past both.
		exe, _ = proc.Exe(cmd.Process.Pid)
		st, _ = proc.ReadStat(cmd.Process.Pid)
		return exe == want && st.State == 'S'
	}, func() string { return fmt.Sprintf("exe %q, stat %+v", exe, st) })
	return cmd
}

// eventually polls cond every 5 ms until it holds or 10 s pass. On timeout
// the optional state funcs say what was seen.
func eventually(t *testing.T, what string, cond func() bool, state ...func() string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			var seen []string
			for _, f := range state {
				seen = append(seen, f())
			}
			t.Fatalf("timed out waiting until %s; last seen: %s", what, strings.Join(seen, "; "))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// goneDir is a pid that cannot exist: above the kernel's pid_max.
func gonePID(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n + 1
}

func TestParseStatFindsFieldsAfterACommandNameWithSpacesAndParens(t *testing.T) {
	line := "4242 (Web Content (x) )) S 17 4242 4242 0 -1 4194560 1 2 3 4 250 75 0 0 20 0 9 0 123456 1000 200 18446744073709551615\n"
	got, err := proc.ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := proc.Stat{PID: 4242, Comm: "Web Content (x) )", State: 'S', PPID: 17, PGID: 4242, UTime: 250, STime: 75, StartTime: 123456}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseStat (-want +got):\n%s", diff)
	}
}

func TestParseStatSplitsFieldsAtAnyRunOfASCIISpaces(t *testing.T) {
	line := "77 (sh)\tR  1\t\t77 77 0 -1 4194560 1 2 3 4 \v5 6 0 0 20 0 1 0\r\n  987 1000 200\n"
	got, err := proc.ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := proc.Stat{PID: 77, Comm: "sh", State: 'R', PPID: 1, PGID: 77, UTime: 5, STime: 6, StartTime: 987}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseStat (-want +got):\n%s", diff)
	}
}

func TestParseStatRejectsTruncatedInput(t *testing.T) {
	for _, in := range []string{"", "12 (x", "12 (x) S 1 2", "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20"} {
		if _, err := proc.ParseStat([]byte(in)); err == nil {
			t.Errorf("ParseStat(%q) = nil error, want one", in)
		}
	}
}

func TestStartTimeOfSelfMatchesStat(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s, err := proc.ParseStat(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := proc.StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got != s.StartTime || got == 0 {
		t.Errorf("StartTime(self) = %d, want %d (nonzero)", got, s.StartTime)
	}
}

func TestVanishedProcessErrorsWrapErrNotExist(t *testing.T) {
	pid := gonePID(t)
	_, err1 := proc.StartTime(pid)
	_, err2 := proc.Cmdline(pid)
	_, _, err3 := proc.Environ(pid, "HOME")
	_, err4 := proc.PGID(pid)
	_, err5 := proc.Exe(pid)
	_, err6 := proc.Tree(pid)
	for i, err := range []error{err1, err2, err3, err4, err5, err6} {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("call %d on pid %d: err = %v, want one wrapping os.ErrNotExist", i+1, pid, err)
		}
	}
	if proc.Alive(pid) {
		t.Errorf("Alive(%d) = true for a pid above pid_max", pid)
	}
}

func TestCmdlineJoinsArgumentsWithSpaces(t *testing.T) {
	marker := testRoot + "/cmdline-marker"
	cmd := child(t, nil, "sh", "-c", "sleep 30; :", marker)
	got, err := proc.Cmdline(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("sh -c sleep 30; : "+marker, got); diff != "" {
		t.Errorf("Cmdline (-want +got):\n%s", diff)
	}
}

func TestEnvironFindsOneVariable(t *testing.T) {
	cmd := child(t, []string{"BROWSERPOOL_SESSION=s-1", "OTHER=a=b"}, "sleep", "30")
	type kv struct {
		V  string
		OK bool
	}
	var got []kv
	for _, name := range []string{"BROWSERPOOL_SESSION", "OTHER", "BROWSERPOOL_SESSIO", "MISSING"} {
		v, ok, err := proc.Environ(cmd.Process.Pid, name)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, kv{v, ok})
	}
	want := []kv{{"s-1", true}, {"a=b", true}, {"", false}, {"", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Environ (-want +got):\n%s", diff)
	}
}

func TestAliveTreatsAZombieAsDead(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	eventually(t, "the unreaped child is a zombie", func() bool {
		s, err := proc.ReadStat(pid)
		return err == nil && s.State == 'Z'
	})
	if proc.Alive(pid) {
		t.Errorf("Alive(zombie %d) = true, want false", pid)
	}
	cmd.Wait()
	if proc.Alive(pid) {
		t.Errorf("Alive(reaped %d) = true, want false", pid)
	}
	if !proc.Alive(os.Getpid()) {
		t.Error("Alive(self) = false")
	}
}

func TestBootIDIsAUUID(t *testing.T) {
	id, err := proc.BootID()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("BootID() = %q, want a UUID", id)
	}
}

func TestPGIDOfAProcessInItsOwnGroupIsItsPID(t *testing.T) {
	cmd := child(t, nil, "sleep", "30")
	got, err := proc.PGID(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if got != cmd.Process.Pid {
		t.Errorf("PGID(%d) = %d, want its own pid", cmd.Process.Pid, got)
	}
	if self, _ := proc.PGID(os.Getpid()); self != syscall.Getpgrp() {
		t.Errorf("PGID(self) = %d, want %d", self, syscall.Getpgrp())
	}
}

func TestListAndTreeFindAProcessTreeByParent(t *testing.T) {
	marker := testRoot + "/tree-marker"
	cmd := child(t, nil, "sh", "-c", "sleep 30 & sleep 30 & wait", marker)
	pid := cmd.Process.Pid
	var tree []int
	eventually(t, "the shell has two children", func() bool {
		var err error
		tree, err = proc.Tree(pid)
		return err == nil && len(tree) == 3
	})
	if tree[0] != pid {
		t.Errorf("Tree(%d)[0] = %d, want the root first", pid, tree[0])
	}
	list, err := proc.List(func(in proc.Info) bool { return in.PGID == pid })
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, in := range list {
		pids = append(pids, in.PID)
		if in.PID == pid {
			if !strings.Contains(in.Cmdline, marker) || in.PPID != os.Getpid() {
				t.Errorf("List entry of the shell = %+v, want its cmdline to hold %q and ppid %d", in, marker, os.Getpid())
			}
			if st, _ := proc.StartTime(pid); st != in.StartTime {
				t.Errorf("List StartTime = %d, StartTime() = %d", in.StartTime, st)
			}
		}
	}
	all, err := proc.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tree, proc.TreeIn(all, pid)); diff != "" {
		t.Errorf("TreeIn over a List of every process vs Tree (-Tree +TreeIn):\n%s", diff)
	}
	if got := proc.TreeIn(all[:0], pid); got != nil {
		t.Errorf("TreeIn over no process = %v, want nil", got)
	}
	slices.Sort(tree)
	if diff := cmp.Diff(tree, pids); diff != "" {
		t.Errorf("List by process group vs Tree (-tree +list):\n%s", diff)
	}
}

func TestDescendantsWalksParentsBeforeChildren(t *testing.T) {
	procs := []proc.Info{
		{PID: 1, PPID: 0}, {PID: 10, PPID: 1}, {PID: 11, PPID: 10}, {PID: 12, PPID: 10},
		{PID: 13, PPID: 11}, {PID: 20, PPID: 1},
	}
	if diff := cmp.Diff([]int{11, 12, 13}, proc.Descendants(procs, 10)); diff != "" {
		t.Errorf("Descendants (-want +got):\n%s", diff)
	}
	if got := proc.Descendants(procs, 13); len(got) != 0 {
		t.Errorf("Descendants of a leaf = %v, want none", got)
	}
}

func TestUsageCountsCPUAndMemoryOfATree(t *testing.T) {
	// Spend some CPU so the tick counters move.
	start := time.Now()
	for x := 0; time.Since(start) < 50*time.Millisecond; x++ {
		_ = fmt.Sprint(x)
	}
	cpu, rss, pss := proc.Usage([]int{os.Getpid()})
	if cpu <= 0 || rss < 1<<20 || pss == 0 || pss > rss {
		t.Errorf("Usage(self) = cpu %v rss %d pss %d, want cpu > 0, rss >= 1 MiB, 0 < pss <= rss", cpu, rss, pss)
	}
	cpu2, rss2, pss2 := proc.Usage([]int{os.Getpid(), gonePID(t)})
	if cpu2 < cpu || rss2 == 0 || pss2 == 0 {
		t.Errorf("Usage with a vanished pid = %v %d %d, want the live process counted", cpu2, rss2, pss2)
	}
}

func TestKillSignalsOnlyTheProcessThatStartedThen(t *testing.T) {
	cmd := child(t, nil, "sleep", "30")
	pid := cmd.Process.Pid
	st, err := proc.StartTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(pid, st+1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Kill with a wrong start time = %v, want an error wrapping os.ErrNotExist", err)
	}
	if !proc.Alive(pid) {
		t.Fatal("Kill with a wrong start time signalled the process")
	}
	if err := proc.Kill(pid, st); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if err := proc.Kill(pid, st); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Kill of a reaped process = %v, want an error wrapping os.ErrNotExist", err)
	}
	if err := proc.Kill(1, 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Kill(1) = %v, want a refusal", err)
	}
}

func TestKillGroupSignalsOnlyAGroupItsProvenLeaderLeads(t *testing.T) {
	leader := child(t, nil, "sh", "-c", "sleep 30 & wait", testRoot+"/group-marker")
	pid := leader.Process.Pid
	eventually(t, "the shell has its child", func() bool {
		tree, err := proc.Tree(pid)
		return err == nil && len(tree) == 2
	})
	st, _ := proc.StartTime(pid)
	// A member of the group is not its leader: refused.
	tree, _ := proc.Tree(pid)
	member := tree[1]
	mst, _ := proc.StartTime(member)
	if err := proc.KillGroup(member, mst); err == nil || !strings.Contains(err.Error(), "does not lead") {
		t.Errorf("KillGroup(member) = %v, want a refusal naming the group", err)
	}
	if err := proc.KillGroup(pid, st+1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("KillGroup with a wrong start time = %v, want an error wrapping os.ErrNotExist", err)
	}
	if !proc.Alive(pid) || !proc.Alive(member) {
		t.Fatal("a refused KillGroup signalled")
	}
	if err := proc.KillGroup(pid, st); err != nil {
		t.Fatal(err)
	}
	leader.Wait()
	eventually(t, "the whole group is gone", func() bool { return !proc.Alive(member) })
}

// BenchmarkList scans every process on the machine, as a sweep, a
// browser's stop and the tracker's monitor do: B/op and allocs/op grow
// with the number of processes (one Info's command line each).
func BenchmarkList(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := proc.List(nil); err != nil {
			b.Fatal(err)
		}
	}
}
