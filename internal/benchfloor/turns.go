// Room: how the side-by-side benchmarks (the root's bench-floor rows and
// bench/anchors') take turns. No locks: one goroutine drives every side.

package benchfloor

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// TurnLength is how long a side's turn lasts at least (one operation at
// least): the side leading a turn runs operations until it passes, the
// others then run as many each. A turn of one operation per side would
// charge what a side leaves running after each call (its timers and
// goroutines, the browser's own after-work) to the next side's call: it
// hid a tenth of browserpool's sequential evaluate time (cdpmux's idle
// timer, fixed since), which a program making calls one after another
// pays.
const TurnLength = 50 * time.Millisecond

// Op is one side's operation. stop, if not nil, runs right after it,
// untimed (a side that started a browser stops it before the next side
// runs).
type Op func() (stop func(), err error)

// Keep makes an Op of a func that starts nothing.
func Keep(f func() error) Op { return func() (func(), error) { return nil, f() } }

// Timer is the part of *testing.B that Turns pauses around stop
// functions.
type Timer interface {
	StopTimer()
	StartTimer()
}

// Taken is what Turns measured, by side (the index in ops).
type Taken struct {
	// Times holds every operation's time, in the order run: the i-th of
	// every side fell in the same turn, at the same place in it.
	Times [][]time.Duration
	// Turn holds how many operations each side ran in each turn, in
	// order: the first Turn[0] of every side's Times fell in the first
	// turn, and so on.
	Turn []int
	// CPU is this process's CPU time during each side's turns, less what
	// its stop functions used (the client's own cost: encoding, decoding,
	// goroutines, timers).
	CPU []time.Duration
}

// Total is side j's time over all its operations.
func (tk Taken) Total(j int) time.Duration {
	var sum time.Duration
	for _, d := range tk.Times[j] {
		sum += d
	}
	return sum
}

// MedianRatio is the median of the ratios of side j's operations to side
// base's at the same place of the same turn: steadier than the totals'
// ratio on a shared machine, where a load spike hits a few operations.
func (tk Taken) MedianRatio(j, base int) float64 {
	ratios := make([]float64, len(tk.Times[j]))
	for i, d := range tk.Times[j] {
		ratios[i] = d.Seconds() / max(tk.Times[base][i].Seconds(), 1e-9)
	}
	return Median(ratios)
}

// RatioCI95 is the half-width of an approximate 95 % confidence interval
// of Total(j) ÷ Total(base), taking each turn as one paired observation
// (the delta method for a ratio of means): a row whose ratio is nearer its
// goal than this has not shown which side of the goal it is on, and needs
// more operations. It is NaN with fewer than 2 turns.
func (tk Taken) RatioCI95(j, base int) float64 {
	nt := len(tk.Turn)
	if nt < 2 {
		return math.NaN()
	}
	sums := func(side int) []float64 {
		out := make([]float64, 0, nt)
		i := 0
		for _, k := range tk.Turn {
			var s time.Duration
			for _, d := range tk.Times[side][i : i+k] {
				s += d
			}
			out = append(out, s.Seconds())
			i += k
		}
		return out
	}
	o, f := sums(j), sums(base)
	var so, sf float64
	for t := range nt {
		so, sf = so+o[t], sf+f[t]
	}
	if sf <= 0 {
		return math.NaN()
	}
	r := so / sf
	var ss float64
	for t := range nt {
		d := o[t] - r*f[t]
		ss += d * d
	}
	se := math.Sqrt(ss/float64(nt*(nt-1))) / (sf / float64(nt))
	return 1.96 * se
}

// Median is the middle value of vs (the mean of the two middle ones for an
// even count), or 0 for none; vs is left as it was.
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Turns runs n operations of each side in turns of TurnLength, turn t in
// order orders[t%len(orders)] (each order names every side once), and
// returns what it measured, or the first error, prefixed with the side's
// name in names.
func Turns(b Timer, n int, orders [][]int, names []string, ops []Op) (Taken, error) {
	tk := Taken{Times: make([][]time.Duration, len(ops)), CPU: make([]time.Duration, len(ops))}
	var opErr error
	timed := func(j int) time.Duration {
		t0 := time.Now()
		stop, err := ops[j]()
		d := time.Since(t0)
		if stop != nil {
			b.StopTimer()
			c0 := ProcessCPU()
			stop()
			tk.CPU[j] -= ProcessCPU() - c0
			b.StartTimer()
		}
		if err != nil && opErr == nil {
			opErr = fmt.Errorf("%s: %w", names[j], err)
		}
		return d
	}
	for done, turn := 0, 0; done < n && opErr == nil; turn++ {
		order := orders[turn%len(orders)]
		first := order[0]
		c0 := ProcessCPU()
		k := 0
		for t0 := time.Now(); k < n-done && (k == 0 || time.Since(t0) < TurnLength) && opErr == nil; k++ {
			tk.Times[first] = append(tk.Times[first], timed(first))
		}
		tk.CPU[first] += ProcessCPU() - c0
		for _, j := range order[1:] {
			c0 := ProcessCPU()
			for range k {
				tk.Times[j] = append(tk.Times[j], timed(j))
			}
			tk.CPU[j] += ProcessCPU() - c0
		}
		tk.Turn = append(tk.Turn, k)
		done += k
	}
	return tk, opErr
}
