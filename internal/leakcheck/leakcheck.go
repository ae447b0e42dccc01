// Package leakcheck is the leak gate every package's TestMain runs after its
// tests: no browser process, no profile directory and no goroutine may
// outlive them.
//
// Room: the leak gate. No locks; a Check polls and holds nothing between
// polls.
//
//	var testRoot string // every browser's files of this test binary
//
//	func TestMain(m *testing.M) {
//		leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-mypkg-test-"})
//	}
package leakcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// Timeout bounds a Check whose context has no earlier deadline, and Interval
// is how often it looks again.
const (
	Timeout  = 5 * time.Second
	Interval = 20 * time.Millisecond
)

// SessionEnv is the environment variable a launched browser and every process
// it spawns carry (see internal/launch).
const SessionEnv = "BROWSERPOOL_SESSION"

// Error lists what leaked. Its fields are what the last look found.
type Error struct {
	Waited     time.Duration
	Processes  []proc.Info // processes that belong to a root
	Entries    []string    // paths left directly under a root
	Goroutines []Goroutine // goroutines beyond those present at start
	ScanErrors []error     // roots or /proc that could not be read
	Roots      []string
}

// Error lists each leaked process, entry and goroutine, then the
// goroutines' stacks.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "leakcheck: still leaking after %v (roots %s):", e.Waited.Round(time.Millisecond), strings.Join(e.Roots, ", "))
	if n := len(e.Processes); n > 0 {
		fmt.Fprintf(&b, "\n%d process(es):", n)
		for _, p := range e.Processes {
			fmt.Fprintf(&b, "\n  pid %d ppid %d pgid %d: %s", p.PID, p.PPID, p.PGID, cut(p.Cmdline, 200))
		}
	}
	if n := len(e.Entries); n > 0 {
		fmt.Fprintf(&b, "\n%d entr(ies) under the roots:", n)
		for _, p := range e.Entries {
			fmt.Fprintf(&b, "\n  %s", p)
		}
	}
	if n := len(e.Goroutines); n > 0 {
		fmt.Fprintf(&b, "\n%d goroutine(s):", n)
		for _, g := range e.Goroutines {
			fmt.Fprintf(&b, "\n  %s", g)
		}
		for _, g := range e.Goroutines {
			fmt.Fprintf(&b, "\n\n%s", g.Stack)
		}
	}
	for _, err := range e.ScanErrors {
		fmt.Fprintf(&b, "\nscan error: %v", err)
	}
	return b.String()
}

func (e *Error) empty() bool {
	return len(e.Processes) == 0 && len(e.Entries) == 0 && len(e.Goroutines) == 0 && len(e.ScanErrors) == 0
}

// Check waits until nothing leaked, polling every Interval, bounded by ctx
// and by Timeout. Nothing leaked when:
//
//   - no process (other than this one) has a command line containing a root,
//     or carries SessionEnv with XDG_CONFIG_HOME or XDG_CACHE_HOME inside a
//     root (Chromium's crashpad handlers, which name no profile directory);
//   - every root is empty or absent;
//   - no goroutine runs beyond those that ran when the test binary started,
//     less the runtime's and the testing package's own (see Goroutines).
//
// On failure it returns an *Error naming each leaked process, entry and
// goroutine as the last look found them. Check kills and removes nothing.
func Check(ctx context.Context, roots ...string) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	clean := make([]string, 0, len(roots))
	for _, r := range roots {
		if r == "" {
			return errors.New("leakcheck: empty root")
		}
		clean = append(clean, filepath.Clean(r))
	}
	start := time.Now()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for {
		e := look(clean)
		if e.empty() {
			return nil
		}
		select {
		case <-ctx.Done():
			e.Waited = time.Since(start)
			return e
		case <-tick.C:
		}
	}
}

// look takes one look at processes, roots and goroutines.
func look(roots []string) *Error {
	e := &Error{Roots: roots}
	procs, err := Processes(roots...)
	if err != nil {
		e.ScanErrors = append(e.ScanErrors, err)
	}
	e.Processes = procs
	for _, r := range roots {
		ents, err := os.ReadDir(r)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			e.ScanErrors = append(e.ScanErrors, err)
		}
		for _, ent := range ents {
			e.Entries = append(e.Entries, filepath.Join(r, ent.Name()))
		}
	}
	e.Goroutines = Since(baseline)
	return e
}

// Processes returns the live processes, other than this one, that belong to
// one of roots: their command line contains a root, or they carry SessionEnv
// and their XDG_CONFIG_HOME or XDG_CACHE_HOME lies inside a root.
func Processes(roots ...string) ([]proc.Info, error) {
	self := os.Getpid()
	return proc.List(func(p proc.Info) bool {
		if p.PID == self || p.State == 'Z' || p.State == 'X' {
			return false
		}
		for _, r := range roots {
			if strings.Contains(p.Cmdline, r) {
				return true
			}
		}
		return marked(p.PID, roots)
	})
}

// marked reports whether pid carries SessionEnv and an XDG directory inside
// one of roots. Unreadable environments count as unmarked.
func marked(pid int, roots []string) bool {
	if _, ok, err := proc.Environ(pid, SessionEnv); err != nil || !ok {
		return false
	}
	for _, name := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		v, ok, err := proc.Environ(pid, name)
		if err != nil || !ok {
			continue
		}
		if slices.ContainsFunc(roots, func(r string) bool { return inside(v, r) }) {
			return true
		}
	}
	return false
}

func inside(path, root string) bool {
	rel, err := filepath.Rel(root, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
