package browserpool_test

import (
	"context"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/fleettest"
)

// fleetBenchPools returns a local pool and one pool per real fleet, all in
// one run so the figures compare (the fleets' browsers run on this machine:
// the difference is the fleet's own cost).
func fleetBenchPools(b *testing.B) []struct {
	name string
	p    *browserpool.Pool
} {
	requireBrowser(b)
	bl := fleettest.StartBrowserless(b, fleettest.BrowserlessOptions{Concurrent: 2, Token: "bench-t0ken"})
	grid := fleettest.StartGrid(b, fleettest.GridOptions{MaxSessions: 2})
	return []struct {
		name string
		p    *browserpool.Pool
	}{
		{"local", newRealPool(b, browserpool.Config{})},
		{"browserless", newFleetPool(b, &browserpool.Browserless{URL: bl.URL, Token: bl.Token}, time.Minute)},
		{"grid", newFleetPool(b, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, time.Minute)},
	}
}

// BenchmarkFleetOpenToFirstEvaluate measures a lease from Open to its first
// page evaluate (ms-to-eval/op) and its close (ms-close/op), on local
// Chromium and on each fleet, in one run.
func BenchmarkFleetOpenToFirstEvaluate(b *testing.B) {
	ctx := context.Background()
	for _, c := range fleetBenchPools(b) {
		b.Run(c.name, func(b *testing.B) {
			var toEval, toClose time.Duration
			for range b.N {
				t0 := time.Now()
				s, err := c.p.Open(ctx)
				if err != nil {
					b.Fatal(err)
				}
				tab, err := s.Tab(ctx, "")
				if err != nil {
					b.Fatal(err)
				}
				var two int
				if err := tab.Evaluate(ctx, "1+1", &two); err != nil || two != 2 {
					b.Fatal(two, err)
				}
				t1 := time.Now()
				toEval += t1.Sub(t0)
				if err := s.Close(ctx); err != nil {
					b.Fatal(err)
				}
				toClose += time.Since(t1)
			}
			b.ReportMetric(toEval.Seconds()*1e3/float64(b.N), "ms-to-eval/op")
			b.ReportMetric(toClose.Seconds()*1e3/float64(b.N), "ms-close/op")
		})
	}
}

// BenchmarkFleetTabOpenClose measures Session.OpenTab(about:blank) and
// CloseTab on one session of local Chromium and of each fleet, in one run.
func BenchmarkFleetTabOpenClose(b *testing.B) {
	ctx := context.Background()
	for _, c := range fleetBenchPools(b) {
		s, err := c.p.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				t, err := s.OpenTab(ctx, "about:blank")
				if err != nil {
					b.Fatal(err)
				}
				if err := s.CloseTab(ctx, t.ID()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
