// Room: the fast test of the side-by-side rows' start order. No locks.

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
