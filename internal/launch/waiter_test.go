// Room: tests of a browser's one goroutine: its count, its output reading,
// its descriptors. No locks.

package launch

import (
	"context"
	"os"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/leakcheck"
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
	n0 := goruntime.NumGoroutine()
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
