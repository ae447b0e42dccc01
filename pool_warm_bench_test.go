// Room: the warm-acquire benchmark (Config.Warm) against a cold launch, on
// real Chromium, in the same run. No locks.

package browserpool_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// BenchmarkAcquireWarmVsCold measures, in one run, how long a caller waits
// for a session: Pool.Open and Allocator.Acquire served by a warm browser
// (Config.Warm: 1, the refill awaited outside the measurement), and
// Pool.Open launching cold. It reports p50 and p99 of each in microseconds;
// ns/op is meaningless here (it includes the refills and closes). Ask for
// enough samples for a p99, e.g.
//
//	go test -run '^$' -bench AcquireWarmVsCold -benchtime 30x .
func BenchmarkAcquireWarmVsCold(b *testing.B) {
	requireBrowser(b)
	ctx := context.Background()
	warm := newRealPool(b, browserpool.Config{Warm: 1, IdleTimeout: -1})
	cold := newRealPool(b, browserpool.Config{IdleTimeout: -1})
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1", Pool: warm, Cap: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	var warmOpen, warmAcquire, coldOpen []time.Duration
	i := 0
	for b.Loop() {
		i++
		waitWarm(b, warm, 1)
		t0 := time.Now()
		s, err := warm.Open(ctx)
		warmOpen = append(warmOpen, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		s.Close(ctx)

		waitWarm(b, warm, 1)
		task := fmt.Sprintf("t%d", i)
		if err := a.Bind(task, "c1"); err != nil {
			b.Fatal(err)
		}
		t0 = time.Now()
		_, err = a.Acquire(ctx, task, browserpool.AcquireOptions{Computer: "c1"})
		warmAcquire = append(warmAcquire, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Finish(ctx, task, browserpool.TaskCompleted); err != nil {
			b.Fatal(err)
		}

		t0 = time.Now()
		s, err = cold.Open(ctx)
		coldOpen = append(coldOpen, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		s.Close(ctx)
		if st := warm.Stats(); st.WarmClaims != uint64(2*i) {
			b.Fatalf("WarmClaims = %d after %d rounds, want every warm open served warm", st.WarmClaims, i)
		}
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"warm-open", warmOpen}, {"warm-acquire", warmAcquire}, {"cold-open", coldOpen}} {
		b.ReportMetric(pct(m.d, 0.50), m.name+"-p50-µs")
		b.ReportMetric(pct(m.d, 0.99), m.name+"-p99-µs")
	}
}

// pct returns the q-quantile of d in microseconds (nearest rank).
func pct(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(q*float64(len(s)-1)+0.5)]) / float64(time.Microsecond)
}
