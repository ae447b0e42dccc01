// Room: how the side-by-side rows of bench_floor_test.go take turns: once
// both browsers are idle, the floor and ours in turns of about 50 ms, each
// going first every other turn, timing every operation and the CPU each
// side cost. No locks: a row drives both sides from one goroutine.

package browserpool_test

import (
	"math"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
)

// settle waits until the browsers leading process groups pgids are idle
// (benchfloor.Settle says why): every row (interleaveStop) starts with it.
func settle(b *testing.B, pgids ...int) {
	if err := benchfloor.SettleRow(pgids...); err != nil {
		b.Log(err, "; timing anyway")
	}
}

// interleave runs floor and ours b.N times each, timing every operation,
// and reports both and their ratio: x-bare from the totals, x-bare-median
// the median of the iterations' own ratios (the k-th operation of a side's
// turn against the k-th of the other's; steadier on a shared machine,
// where a load spike hits a few iterations, not the totals' ratio), and
// x-bare-ci95 the half-width of x-bare's 95 % confidence interval
// (benchfloor.Taken.RatioCI95): a row whose x-bare is nearer its goal than
// that has not shown which side of the goal it is on. The sides take
// turns (see interleaveStop).
func interleave(b *testing.B, pg browserGroups, floor, ours func() error) {
	interleaveStop(b, pg, benchfloor.Keep(floor), benchfloor.Keep(ours))
}

// interleave is interleave on e's browsers; the row also reports which
// was started first (ours-first: 1 or 0, see floorEnv.oursFirst).
func (e *floorEnv) interleave(b *testing.B, floor, ours func() error) {
	e.interleaveOn(b, e.s, floor, ours)
}

// interleaveOn is interleave with ours on s's browser.
func (e *floorEnv) interleaveOn(b *testing.B, s *browserpool.Session, floor, ours func() error) {
	interleave(b, browserGroups{floor: e.bare.PID(), ours: s.Info().PGID}, floor, ours)
	first := 0.0
	if e.oursFirst {
		first = 1
	}
	b.ReportMetric(first, "ours-first")
}

// browserGroups are the process groups of the two sides' browsers, whose
// CPU time a row reports (zero: a row that starts a browser per operation
// reports none).
type browserGroups struct{ floor, ours int }

// interleaveStop is interleave for sides that start something: each side
// returns a stop function, run untimed right after it, so that the other
// side never runs beside what this one left running (a browser busy with
// its own start). The sides take turns (benchfloor.Turns), each going first
// every other turn, so that neither always meets the machine warmed (or
// loaded) by the other.
//
// Besides the time, it reports the CPU each side cost, which a loaded
// machine disturbs far less than the time: x-go-cpu, this process's CPU
// time during the side's turns (the client: its encoding, decoding,
// goroutines and timers) per operation, ours ÷ the floor's, with both
// figures in µs; and x-browser-cpu, the browser's process group's CPU per
// operation over the row (in 10 ms ticks), ours ÷ the floor's: what the
// client made the browser do (the domains it enabled, its scripts).
func interleaveStop(b *testing.B, pg browserGroups, floor, ours benchfloor.Op) {
	groupCPU := func(pgid int) time.Duration {
		d, err := benchfloor.GroupCPU(pgid)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	var bf0, bo0 time.Duration
	if pg.floor != 0 {
		// What a row before left running (a hundred closed tabs'
		// renderers ending) is not this row's.
		settle(b, pg.floor, pg.ours)
		bf0, bo0 = groupCPU(pg.floor), groupCPU(pg.ours)
	}
	b.ResetTimer()
	tk, err := benchfloor.Turns(b, b.N, [][]int{{0, 1}, {1, 0}}, []string{"floor", "ours"}, []benchfloor.Op{floor, ours})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	tf, to := tk.Total(0), tk.Total(1)
	cf, co := tk.CPU[0], tk.CPU[1]
	n := float64(b.N)
	b.ReportMetric(tf.Seconds()*1e6/n, "µs-bare/op")
	b.ReportMetric(to.Seconds()*1e6/n, "µs-ours/op")
	b.ReportMetric(to.Seconds()/tf.Seconds(), "x-bare")
	b.ReportMetric(tk.MedianRatio(1, 0), "x-bare-median")
	if ci := tk.RatioCI95(1, 0); !math.IsNaN(ci) {
		b.ReportMetric(ci, "x-bare-ci95")
	}
	b.ReportMetric(cf.Seconds()*1e6/n, "µs-go-cpu-bare/op")
	b.ReportMetric(co.Seconds()*1e6/n, "µs-go-cpu-ours/op")
	b.ReportMetric(co.Seconds()/max(cf.Seconds(), 1e-9), "x-go-cpu")
	if pg.floor != 0 {
		bf, bo := groupCPU(pg.floor)-bf0, groupCPU(pg.ours)-bo0
		b.ReportMetric(bo.Seconds()/max(bf.Seconds(), 1e-9), "x-browser-cpu")
	}
}
