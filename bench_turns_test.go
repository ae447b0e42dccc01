// Room: how the side-by-side rows of bench_floor_test.go take turns: once
// both browsers are idle, the floor and ours in turns of about 50 ms, each
// going first every other turn, timing every operation and the CPU each
// side cost. No locks: a row drives both sides from one goroutine.

package browserpool_test

import (
	"slices"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
)

// settle waits until the browsers leading process groups pgids are idle
// (benchfloor.Settle says why): every row (interleaveStop) starts with it.
func settle(b *testing.B, pgids ...int) {
	if err := benchfloor.Settle(500*time.Millisecond, 20*time.Millisecond, 30*time.Second, pgids...); err != nil {
		b.Log(err, "; timing anyway")
	}
}

// interleave runs floor and ours b.N times each, timing every operation,
// and reports both and their ratio: x-bare from the totals, x-bare-median
// the median of the iterations' own ratios (the k-th operation of a side's
// turn against the k-th of the other's; steadier on a shared machine,
// where a load spike hits a few iterations, not the totals' ratio). The
// sides take turns (see interleaveStop).
func interleave(b *testing.B, pg browserGroups, floor, ours func() error) {
	keep := func(f func() error) func() (func(), error) {
		return func() (func(), error) { return nil, f() }
	}
	interleaveStop(b, pg, keep(floor), keep(ours))
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

// turnLength is how long a side's turn lasts at least (one operation at
// least): the side going first runs operations until it passes, the other
// then runs as many. A turn of one operation per side would charge what a
// side leaves running after each call (its timers and goroutines, the
// browser's own after-work) to the other side's call: it hid a tenth of
// our sequential evaluate's time (the reader's idle timer, fixed since),
// which a program making calls one after another pays.
const turnLength = 50 * time.Millisecond

// browserGroups are the process groups of the two sides' browsers, whose
// CPU time a row reports (zero: a row that starts a browser per operation
// reports none).
type browserGroups struct{ floor, ours int }

// interleaveStop is interleave for sides that start something: each side
// returns a stop function, run untimed right after it, so that the other
// side never runs beside what this one left running (a browser busy with
// its own start). The sides take turns of turnLength, each going first
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
func interleaveStop(b *testing.B, pg browserGroups, floor, ours func() (stop func(), err error)) {
	var tf, to time.Duration
	var cf, co time.Duration // this process's CPU during each side's turns
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
	var ratios []float64
	timed := func(f func() (func(), error), side string) time.Duration {
		t0 := time.Now()
		stop, err := f()
		d := time.Since(t0)
		if stop != nil {
			b.StopTimer()
			stop()
			b.StartTimer()
		}
		if err != nil {
			b.Fatal(side, ": ", err)
		}
		return d
	}
	// lead runs f until turnLength passed or left operations ran; follow
	// runs it k times.
	lead := func(f func() (func(), error), side string, left int, cpu *time.Duration) []time.Duration {
		var ds []time.Duration
		c0 := benchfloor.ProcessCPU()
		for t0 := time.Now(); len(ds) < left && (len(ds) == 0 || time.Since(t0) < turnLength); {
			ds = append(ds, timed(f, side))
		}
		*cpu += benchfloor.ProcessCPU() - c0
		return ds
	}
	follow := func(f func() (func(), error), side string, k int, cpu *time.Duration) []time.Duration {
		ds := make([]time.Duration, k)
		c0 := benchfloor.ProcessCPU()
		for j := range ds {
			ds[j] = timed(f, side)
		}
		*cpu += benchfloor.ProcessCPU() - c0
		return ds
	}
	b.ResetTimer()
	for done, turn := 0, 0; done < b.N; turn++ {
		var df, do []time.Duration
		if turn%2 == 0 {
			df = lead(floor, "floor", b.N-done, &cf)
			do = follow(ours, "ours", len(df), &co)
		} else {
			do = lead(ours, "ours", b.N-done, &co)
			df = follow(floor, "floor", len(do), &cf)
		}
		for j := range df {
			tf += df[j]
			to += do[j]
			ratios = append(ratios, do[j].Seconds()/max(df[j].Seconds(), 1e-9))
		}
		done += len(df)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(tf.Seconds()*1e6/n, "µs-bare/op")
	b.ReportMetric(to.Seconds()*1e6/n, "µs-ours/op")
	b.ReportMetric(to.Seconds()/tf.Seconds(), "x-bare")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "x-bare-median")
	b.ReportMetric(cf.Seconds()*1e6/n, "µs-go-cpu-bare/op")
	b.ReportMetric(co.Seconds()*1e6/n, "µs-go-cpu-ours/op")
	b.ReportMetric(co.Seconds()/max(cf.Seconds(), 1e-9), "x-go-cpu")
	if pg.floor != 0 {
		bf, bo := groupCPU(pg.floor)-bf0, groupCPU(pg.ours)-bo0
		b.ReportMetric(bo.Seconds()/max(bf.Seconds(), 1e-9), "x-browser-cpu")
	}
}
