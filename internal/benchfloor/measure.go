// Room: what the benchmarks that compare with the floor measure the same
// way on every side (the root package's and bench/anchors'): the big page
// of the AX-tree rows, a fan-out of concurrent calls, the process's
// resident memory, and waiting for fresh tabs' goroutines to settle. No
// locks.

package benchfloor

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// BigDOM is the page expression the AX-tree rows evaluate first: it builds
// about 3,000 accessibility nodes (1,000 divs, each with a button and a
// link) and returns how many elements the page has.
const BigDOM = `(() => { document.body.innerHTML = ""; for (let i = 0; i < 1000; i++) { const d = document.createElement("div"); d.innerHTML = "<button>b" + i + "</button><a href='#'>l" + i + "</a>"; document.body.appendChild(d) } return document.querySelectorAll("*").length })()`

// Fanout runs call from goroutines goroutines, calls times each (g is the
// goroutine's index), and returns the first error (the goroutine that met
// it stops; the others finish).
func Fanout(goroutines, calls int, call func(g int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for range calls {
				if err := call(g); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ResidentKiB reads this process's resident set size (VmRSS) and its
// anonymous part (RssAnon: heap and stacks, what the program allocated,
// not the binary's file-backed pages) from /proc/self/status, in KiB.
func ResidentKiB() (rss, anon int, err error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, err
	}
	out := [2]int{}
	found := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		for i, key := range []string{"VmRSS:", "RssAnon:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &out[i]); err != nil {
					return 0, 0, err
				}
				found++
			}
		}
	}
	if found != 2 {
		return 0, 0, errors.New("no VmRSS or RssAnon in /proc/self/status")
	}
	return out[0], out[1], nil
}

// FootprintPairs is how many pairs of footprint children (the floor's,
// then ours) the footprint row runs per program. One pair's difference
// moves by a few 64 KiB blocks from run to run (which goroutine the
// runtime preempts or scans first, and so which function tables it
// reads), so the row reports the pairs' median.
const FootprintPairs = 5

// SettleGoroutines lets fresh tabs' background work finish (their
// page-event enables; ten fresh renderers can take a second or more): it
// returns once the number of goroutines holds still for a second, or
// after 10 s.
func SettleGoroutines() {
	for n, deadline := -1, time.Now().Add(10*time.Second); time.Now().Before(deadline); {
		time.Sleep(time.Second)
		m := runtime.NumGoroutine()
		if m == n {
			return
		}
		n = m
	}
}
