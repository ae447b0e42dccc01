// Room: how the side-by-side rows take turns: turns of about 50 ms per
// side, each turn in another of the sides' 24 orders, and the order the
// sides' browsers start in.
// No locks.

package anchors_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/browserpool/browserpool/internal/benchfloor"
)

// op is one side's operation (benchfloor.Op: stop, if not nil, runs right
// after it, untimed); keep makes one of a func that starts nothing.
type op = benchfloor.Op

var keep = benchfloor.Keep

// interleave4 runs the four sides' ops b.N times each in turns
// (benchfloor.Turns), each turn in the next of the 24 orders of the sides
// (sideOrders), and reports µs-bare/op, and per library side
// µs-<side>/op, x-bare-<side> (total ÷ the floor's total) and
// x-bare-median-<side> (median of the ratios of the k-th op of a side's
// turn to the k-th of the floor's) and x-bare-ci95-<side> (the half-width
// of x-bare-<side>'s 95 % confidence interval, benchfloor.Taken.RatioCI95).
func interleave4(b *testing.B, ops [4]op) {
	b.ResetTimer()
	tk, err := benchfloor.Turns(b, b.N, sideOrders(), sideNames[:], ops[:])
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	n := float64(b.N)
	bare := tk.Total(0)
	b.ReportMetric(bare.Seconds()*1e6/n, "µs-bare/op")
	for j := 1; j < 4; j++ {
		total := tk.Total(j)
		b.ReportMetric(total.Seconds()*1e6/n, "µs-"+sideNames[j]+"/op")
		b.ReportMetric(total.Seconds()/max(bare.Seconds(), 1e-9), "x-bare-"+sideNames[j])
		b.ReportMetric(tk.MedianRatio(j, 0), "x-bare-median-"+sideNames[j])
		if ci := tk.RatioCI95(j, 0); !math.IsNaN(ci) {
			b.ReportMetric(ci, "x-bare-ci95-"+sideNames[j])
		}
	}
}

// sideOrders returns the 24 orders of the four sides. A turn leaves the
// next side what it left running (a navigation's after-work, a closed
// tab's renderer ending): in a rotating order each side follows the same
// side in three turns of four (browserpool the floor, the floor rod), so
// a slow side's after-work fell on one side more than on the others. Over
// the 24 orders each side follows each other side equally often.
func sideOrders() [][]int {
	var out [][]int
	var perm func(prefix []int, rest []int)
	perm = func(prefix, rest []int) {
		if len(rest) == 0 {
			out = append(out, prefix)
			return
		}
		for i, j := range rest {
			others := append(append([]int(nil), rest[:i]...), rest[i+1:]...)
			perm(append(append([]int(nil), prefix...), j), others)
		}
	}
	perm(nil, []int{0, 1, 2, 3})
	return out
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
