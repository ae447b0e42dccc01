// Room: the fast tests of the side-by-side rows' start order and turn
// orders. No locks.

package anchors_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBenchFirstPutsTheNamedSideFirstAndKeepsTheOthersInOrder checks
// startOrder for every value BROWSERPOOL_BENCH_FIRST may take, and that a
// value naming no side is an error rather than a silent default.
func TestBenchFirstPutsTheNamedSideFirstAndKeepsTheOthersInOrder(t *testing.T) {
	want := map[string][4]string{
		"":            {"bare", "browserpool", "chromedp", "rod"},
		"bare":        {"bare", "browserpool", "chromedp", "rod"},
		"floor":       {"bare", "browserpool", "chromedp", "rod"},
		"ours":        {"browserpool", "bare", "chromedp", "rod"},
		"browserpool": {"browserpool", "bare", "chromedp", "rod"},
		"chromedp":    {"chromedp", "bare", "browserpool", "rod"},
		"rod":         {"rod", "bare", "browserpool", "chromedp"},
	}
	got := map[string][4]string{}
	for first := range want {
		order, err := startOrder(first)
		if err != nil {
			t.Fatalf("startOrder(%q): %v", first, err)
		}
		var names [4]string
		for k, j := range order {
			names[k] = sideNames[j]
		}
		got[first] = names
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("start orders (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"Bare", "cdp", "ours,rod"} {
		if _, err := startOrder(bad); err == nil {
			t.Errorf("startOrder(%q) = nil error, want one naming the accepted values", bad)
		}
	}
}

func TestTheTurnOrdersAreAllTwentyFourAndEachSideFollowsEachOtherEquallyOften(t *testing.T) {
	orders := sideOrders()
	seen := map[[4]int]bool{}
	follows := map[[2]int]int{}
	for _, o := range orders {
		seen[[4]int(o)] = true
		for k := 1; k < 4; k++ {
			follows[[2]int{o[k-1], o[k]}]++
		}
	}
	if len(orders) != 24 || len(seen) != 24 {
		t.Fatalf("%d orders, %d distinct, want 24 and 24", len(orders), len(seen))
	}
	for a := range 4 {
		for b := range 4 {
			if want := map[bool]int{true: 0, false: 6}[a == b]; follows[[2]int{a, b}] != want {
				t.Errorf("side %d follows side %d in %d turns, want %d", b, a, follows[[2]int{a, b}], want)
			}
		}
	}
}
