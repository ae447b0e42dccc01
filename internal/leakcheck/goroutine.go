// Room: goroutine snapshots. No locks: the baseline is written once, at
// package initialization, before any test runs.

package leakcheck

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Goroutine is one goroutine as runtime.Stack shows it.
type Goroutine struct {
	ID    uint64
	State string // what it waits on: "chan receive", "select", "IO wait", ...
	Top   string // the function at the top of its stack
	Stack string // the whole trace, header included
}

// String returns the goroutine's header line, its top function and the
// function that created it.
func (g Goroutine) String() string {
	s := "goroutine " + strconv.FormatUint(g.ID, 10) + " [" + g.State + "]: " + g.Top
	if i := strings.LastIndex(g.Stack, "\ncreated by "); i >= 0 {
		line, _, _ := strings.Cut(g.Stack[i+1:], "\n")
		s += " (" + line + ")"
	}
	return s
}

// baseline holds the goroutines that exist when the test binary starts:
// Check reports goroutines beyond these.
var baseline = Goroutines()

// Goroutines returns a snapshot of the goroutines running now, less the
// calling goroutine and those of the runtime and of the testing package
// (test runners, the signal loop, profile writers), in ascending id order.
func Goroutines() []Goroutine {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	blocks := strings.Split(string(buf), "\n\n")
	var out []Goroutine
	for i, b := range blocks {
		if i == 0 {
			continue // runtime.Stack lists the calling goroutine first
		}
		g, ok := parseGoroutine(b)
		if !ok || ignored(g) {
			continue
		}
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b Goroutine) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Since returns the goroutines running now (as Goroutines reports them) that
// are not in before, matched by id.
func Since(before []Goroutine) []Goroutine {
	had := make(map[uint64]bool, len(before))
	for _, g := range before {
		had[g.ID] = true
	}
	var out []Goroutine
	for _, g := range Goroutines() {
		if !had[g.ID] {
			out = append(out, g)
		}
	}
	return out
}

// parseGoroutine parses one block of runtime.Stack output:
//
//	goroutine 7 [chan receive]:
//	main.f(...)
//		/path/f.go:12 +0x1d
//	created by main.main in goroutine 1
//		/path/main.go:5 +0x25
func parseGoroutine(block string) (Goroutine, bool) {
	block = strings.TrimSpace(block)
	header, rest, _ := strings.Cut(block, "\n")
	num, ok := strings.CutPrefix(header, "goroutine ")
	if !ok {
		return Goroutine{}, false
	}
	idText, _, _ := strings.Cut(num, " ")
	id, err := strconv.ParseUint(idText, 10, 64)
	if err != nil {
		return Goroutine{}, false
	}
	g := Goroutine{ID: id, Stack: block}
	if i, j := strings.IndexByte(header, '['), strings.LastIndexByte(header, ']'); i >= 0 && j > i {
		g.State = header[i+1 : j]
	}
	top, _, _ := strings.Cut(rest, "\n")
	if i := strings.LastIndexByte(top, '('); i > 0 {
		top = top[:i]
	}
	g.Top = top
	return g, true
}

// ignoredFrames are functions whose presence in a stack marks a goroutine of
// the test harness or a passing runtime one, not of the code under test. Each ends with "(" so that a
// "created by" line (which has no parenthesis after the name) does not match:
// a goroutine a test started is created by the test, and is reported.
var ignoredFrames = []string{
	"\ntesting.tRunner(",
	"\ntesting.(*T).Run(",
	"\ntesting.runTests(",
	"\ntesting.(*M).Run(",
	"\ntesting.runFuzzing(",
	"\ntesting.runFuzzTests(",
	"\ntesting.(*B).run1(",
	"\ntesting.(*B).doBench(",
	"\ntesting.(*B).launch(",
	"\ntesting.(*B).Run(",
	"\ntesting.(*F).Fuzz(",
	"\nos/signal.signal_recv(",
	"\nos/signal.loop(",
	"\nruntime/pprof.profileWriter(",
	"\nruntime/trace.Start.",
	"\nruntime.ReadTrace(",
	// A context's deadline firing runs its cancel on a goroutine of the
	// timer's for a moment: Check's own deadline does, as it gives up.
	"\ncontext.WithDeadlineCause.func",
}

func ignored(g Goroutine) bool {
	for _, f := range ignoredFrames {
		if strings.Contains(g.Stack, f) {
			return true
		}
	}
	return false
}
