// Room: tests of the stack's growth. No locks.

package stackroom_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/stackroom"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

// stackPerGoroutine starts n goroutines that each call first and then
// wait, and returns how much the stacks in use grew per goroutine while
// they all waited. The GC is off meanwhile: it would shrink the stacks of
// goroutines that wait with little of their stack in use.
func stackPerGoroutine(n int, first func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var started, done sync.WaitGroup
	release := make(chan struct{})
	for range n {
		started.Add(1)
		done.Go(func() {
			first()
			started.Done()
			<-release
		})
	}
	started.Wait()
	runtime.ReadMemStats(&after)
	close(release)
	done.Wait()
	return (after.StackInuse - before.StackInuse) / uint64(n)
}

func TestEachGoroutineKeepsTheStackItsFirstFrameGrew(t *testing.T) {
	const n = 256 // enough that the stacks the runtime keeps free at hand are a small part
	for _, tc := range []struct {
		name     string
		first    func()
		min, max uint64 // per goroutine, bytes
	}{
		{name: "no call (the runtime's 2 KiB start)", first: func() {}, min: 0, max: 5 << 10},
		{name: "To8K", first: stackroom.To8K, min: 6 << 10, max: 12 << 10},
		{name: "To16K", first: stackroom.To16K, min: 12 << 10, max: 24 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := stackPerGoroutine(n, tc.first)
			if got < tc.min || got > tc.max {
				t.Errorf("%d goroutines grew the stacks in use by %s each, want %s to %s",
					n, kib(got), kib(tc.min), kib(tc.max))
			}
		})
	}
}

func kib(b uint64) string { return fmt.Sprintf("%.1f KiB", float64(b)/1024) }
