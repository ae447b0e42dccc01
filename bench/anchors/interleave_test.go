// Room: how the side-by-side rows take turns: one op per side and
// iteration, in a rotating order, and the order the sides' browsers
// start in. No locks.

package anchors_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// op is one side's operation in an iteration; stop, if not nil, runs
// right after it, untimed (a side that started a browser stops it before
// the next side runs).
type op func() (stop func(), err error)

// keep makes an op of a func that starts nothing.
func keep(f func() error) op { return func() (func(), error) { return nil, f() } }

// interleave4 runs the four sides' ops once per iteration, in a rotating
// order (iteration i starts with side i%4), timing each, and reports
// µs-bare/op, and per library side µs-<side>/op, x-bare-<side> (total ÷
// the floor's total) and x-bare-median-<side> (median of the iterations'
// ratios).
func interleave4(b *testing.B, ops [4]op) {
	var total [4]time.Duration
	var ratios [4][]float64
	timed := func(j int) time.Duration {
		t0 := time.Now()
		stop, err := ops[j]()
		d := time.Since(t0)
		if stop != nil {
			b.StopTimer()
			stop()
			b.StartTimer()
		}
		if err != nil {
			b.Fatal(sideNames[j], ": ", err)
		}
		return d
	}
	i := 0
	for b.Loop() {
		var d [4]time.Duration
		for k := range 4 {
			j := (i + k) % 4
			d[j] = timed(j)
		}
		i++
		for j := range 4 {
			total[j] += d[j]
			ratios[j] = append(ratios[j], d[j].Seconds()/max(d[0].Seconds(), 1e-9))
		}
	}
	n := float64(b.N)
	b.ReportMetric(total[0].Seconds()*1e6/n, "µs-bare/op")
	for j := 1; j < 4; j++ {
		b.ReportMetric(total[j].Seconds()*1e6/n, "µs-"+sideNames[j]+"/op")
		b.ReportMetric(total[j].Seconds()/max(total[0].Seconds(), 1e-9), "x-bare-"+sideNames[j])
		slices.Sort(ratios[j])
		b.ReportMetric(ratios[j][len(ratios[j])/2], "x-bare-median-"+sideNames[j])
	}
}

// startOrder returns the order in which the side-by-side rows (those of
// newEnv) start their browsers and open their tabs, from the value of
// BROWSERPOOL_BENCH_FIRST: the side it names first, then the other three
// in the order of sideNames. The names are bare (or floor, the root's
// name for it), ours (or browserpool), chromedp and rod; empty means bare,
// that is sideNames' order. On a loaded 2-core machine the browser started
// first tends to be the faster one (the root benchmarks measured up to
// ±35 % on the concurrent rows), so bench-anchors runs these rows once per
// first side, and each such row reports first-<side> = 1.
func startOrder(first string) ([4]int, error) {
	aliases := map[string]string{"": "bare", "floor": "bare", "ours": "browserpool"}
	name := first
	if a, ok := aliases[first]; ok {
		name = a
	}
	f := slices.Index(sideNames[:], name)
	if f < 0 {
		return [4]int{}, fmt.Errorf("%s=%q names no side: use bare (or floor), ours (or browserpool), chromedp or rod, or leave it empty for bare", firstEnv, first)
	}
	order := [4]int{f}
	k := 1
	for j := range 4 {
		if j != f {
			order[k] = j
			k++
		}
	}
	return order, nil
}
