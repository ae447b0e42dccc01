package benchfloor_test

import (
	"errors"
	"testing"

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
