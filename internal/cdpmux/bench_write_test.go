// Room: the coalesced write path's benchmark against real browsers. No
// locks.

package cdpmux_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/browserpool/browserpool/internal/benchfloor"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// unframed hides a pipe transport's batch writes (cdpmux.FrameWriter)
// and keeps its read deadlines: its mux writes every request on its own,
// one write each, serialized by a lock.
type unframed struct {
	cdpmux.Transport
	cdpmux.ReadDeadliner
}

// BenchmarkCoalescedWrites makes 8 goroutines × 8 Runtime.evaluate calls,
// on one tab and spread over 8, on two browsers alternately: one whose mux
// coalesces concurrent writes (the pipe as it is), one whose mux writes
// each request on its own (unframed). x-unframed-median is the median of
// the iterations' ratios (coalesced / unframed). Each row runs twice, the
// browsers started in either order (see BenchmarkCallerReads).
func BenchmarkCoalescedWrites(b *testing.B) {
	leakcheck.RequireBrowser(b)
	same := func(t cdpmux.Transport) cdpmux.Transport { return t }
	hidden := func(t cdpmux.Transport) cdpmux.Transport {
		return unframed{t, t.(cdpmux.ReadDeadliner)}
	}
	for _, tabs := range []int{1, 8} {
		b.Run(fmt.Sprintf("8-goroutines-%d-tabs/coalesced-started-first", tabs), func(b *testing.B) {
			ours, m := benchTabs(b, same, tabs)
			old, _ := benchTabs(b, hidden, tabs)
			benchFanout(b, m, ours, old)
		})
		b.Run(fmt.Sprintf("8-goroutines-%d-tabs/unframed-started-first", tabs), func(b *testing.B) {
			old, _ := benchTabs(b, hidden, tabs)
			ours, m := benchTabs(b, same, tabs)
			benchFanout(b, m, ours, old)
		})
	}
}

// benchFanout times ours (on m) and old alternately; it also reports how
// many of ours' requests went in another's batch.
func benchFanout(b *testing.B, m *cdpmux.Mux, ours, old []*cdpmux.Direct) {
	q0, _ := m.Coalesced()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := []byte(`{"expression":"1+1","returnByValue":true,"awaitPromise":true}`)
	run := func(tabs []*cdpmux.Direct) time.Duration {
		t0 := time.Now()
		err := benchfloor.Fanout(8, 8, func(g int) error {
			_, err := tabs[g%len(tabs)].Call(ctx, "Runtime.evaluate", params)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	alternate(b, "unframed", "coalesced", func() time.Duration { return run(old) }, func() time.Duration { return run(ours) })
	q1, _ := m.Coalesced()
	b.ReportMetric(float64(q1-q0)/float64(b.N), "queued/op")
}
