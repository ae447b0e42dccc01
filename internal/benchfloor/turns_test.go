package benchfloor_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/benchfloor"
)

// timer counts the pauses Turns makes around stop functions.
type timer struct{ stopped, started int }

func (t *timer) StopTimer()  { t.stopped++ }
func (t *timer) StartTimer() { t.started++ }

func TestTurnsRunsEverySideNTimesInTheOrdersGivenAndStopsUntimed(t *testing.T) {
	var log []int // the sides, in the order their ops ran
	stops := 0
	ops := make([]benchfloor.Op, 3)
	for j := range ops {
		ops[j] = func() (func(), error) {
			log = append(log, j)
			if j == 2 {
				return func() { stops++ }, nil
			}
			return nil, nil
		}
	}
	var tm timer
	orders := [][]int{{0, 1, 2}, {2, 0, 1}}
	tk, err := benchfloor.Turns(&tm, 7, orders, []string{"a", "b", "c"}, ops)
	if err != nil {
		t.Fatal(err)
	}
	for j := range ops {
		if len(tk.Times[j]) != 7 {
			t.Errorf("side %d ran %d ops, want 7", j, len(tk.Times[j]))
		}
	}
	var ran int
	for _, k := range tk.Turn {
		ran += k
	}
	if ran != 7 {
		t.Errorf("Turn = %v: %d ops a side over its turns, want 7", tk.Turn, ran)
	}
	if stops != 7 || tm.stopped != 7 || tm.started != 7 {
		t.Errorf("side 2's stop ran %d times with the timer stopped %d and started %d times, want 7 each", stops, tm.stopped, tm.started)
	}
	// The log is turns of k ops per side, in each turn's order.
	var got [][]int
	for turn, i := 0, 0; i < len(log); turn++ {
		k := 1
		for i+k < len(log) && log[i+k] == log[i] {
			k++
		}
		for _, side := range orders[turn%len(orders)] {
			for range k {
				if i >= len(log) || log[i] != side {
					t.Fatalf("turn %d: log %v breaks the order %v at %d", turn, log, orders[turn%len(orders)], i)
				}
				i++
			}
		}
		got = append(got, orders[turn%len(orders)])
	}
	if diff := cmp.Diff(orders[0], got[0]); diff != "" {
		t.Errorf("first turn's order (-want +got):\n%s", diff)
	}
}

func TestTurnsReportsTheFirstErrorWithItsSidesName(t *testing.T) {
	boom := errors.New("boom")
	ops := []benchfloor.Op{
		benchfloor.Keep(func() error { return nil }),
		benchfloor.Keep(func() error { return boom }),
	}
	_, err := benchfloor.Turns(&timer{}, 5, [][]int{{0, 1}}, []string{"floor", "ours"}, ops)
	if !errors.Is(err, boom) || err.Error() != "ours: boom" {
		t.Errorf("Turns = %v, want ours: boom", err)
	}
}

func TestTurnsDoesNotChargeWhatASidesStopUsesToItsCPU(t *testing.T) {
	// Each stop of side 1 burns 30 ms of this process's CPU (waiting for it
	// to accrue, not for a wall time); its ops themselves do nothing.
	const burn = 30 * time.Millisecond
	spin := func() {
		for c0 := benchfloor.ProcessCPU(); benchfloor.ProcessCPU()-c0 < burn; {
		}
	}
	ops := []benchfloor.Op{
		benchfloor.Keep(func() error { return nil }),
		func() (func(), error) { return spin, nil },
	}
	tk, err := benchfloor.Turns(&timer{}, 3, [][]int{{0, 1}}, []string{"floor", "ours"}, ops)
	if err != nil {
		t.Fatal(err)
	}
	// The stops used 90 ms; the ops next to nothing.
	if tk.CPU[1] >= burn {
		t.Errorf("side 1's CPU = %v, want under %v: its stops (3 × %v) are not its operations' cost", tk.CPU[1], burn, burn)
	}
}

// ms makes durations of milliseconds.
func ms(vs ...int) []time.Duration {
	var out []time.Duration
	for _, v := range vs {
		out = append(out, time.Duration(v)*time.Millisecond)
	}
	return out
}

func TestTakenTotalsASidesTimesAndTakesTheMedianOfItsRatiosToTheBase(t *testing.T) {
	tk := benchfloor.Taken{Times: [][]time.Duration{ms(10, 10, 10, 20), ms(20, 5, 30, 20)}}
	if got := tk.Total(1); got != 75*time.Millisecond {
		t.Errorf("Total(1) = %v, want 75ms", got)
	}
	// Ratios 2, 0.5, 3, 1: the median of an even count is the mean of the
	// middle two, (1 + 2) / 2.
	if got := tk.MedianRatio(1, 0); got != 1.5 {
		t.Errorf("MedianRatio(1, 0) = %v, want 1.5", got)
	}
	for _, tc := range []struct {
		vs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), tc.vs...)
		if got := benchfloor.Median(tc.vs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", in, got, tc.want)
		}
		if diff := cmp.Diff(in, tc.vs); diff != "" {
			t.Errorf("Median changed its input (-before +after):\n%s", diff)
		}
	}
}

func TestRatioCI95TakesEachTurnAsOnePairAndIsNaNWithOneTurn(t *testing.T) {
	// Two turns of two ops a side: turn sums floor 20, 40 and ours 30, 50.
	// R = 80 / 60 = 4/3; d = 30 - 80/3 = 10/3 and 50 - 160/3 = -10/3;
	// se = sqrt((100/9 + 100/9) / (2 · 1)) / 30 = (10/3) / 30 = 1/9.
	tk := benchfloor.Taken{Turn: []int{2, 2}, Times: [][]time.Duration{ms(10, 10, 20, 20), ms(15, 15, 25, 25)}}
	want := 1.96 / 9
	if got := tk.RatioCI95(1, 0); math.Abs(got-want) > 1e-12 {
		t.Errorf("RatioCI95(1, 0) = %v, want %v", got, want)
	}
	// The same ops in turns of one each: four pairs, each ours = floor + 5.
	// R = 80/60; d = 15 - 40/3, 15 - 40/3, 25 - 80/3, 25 - 80/3 = ±5/3.
	// se = sqrt(4 · 25/9 / 12) / 15 = (5/(3·sqrt 3)) / 15.
	tk.Turn = []int{1, 1, 1, 1}
	want = 1.96 * 5 / (3 * math.Sqrt(3)) / 15
	if got := tk.RatioCI95(1, 0); math.Abs(got-want) > 1e-12 {
		t.Errorf("RatioCI95(1, 0) in turns of one = %v, want %v", got, want)
	}
	tk.Turn = []int{4}
	if got := tk.RatioCI95(1, 0); !math.IsNaN(got) {
		t.Errorf("RatioCI95 of one turn = %v, want NaN", got)
	}
}
