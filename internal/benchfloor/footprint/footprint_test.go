package footprint

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/leakcheck"
)

// testRoot holds every browser's files; TestMain proves it empty after.
var testRoot string

// TestMain fails the run if a goroutine, a process or a file of a test
// outlives it.
func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-footprint-test-"})
}

func TestParseReadsTheResultFromTheLastLineTheChildPrinted(t *testing.T) {
	want := Result{RSS: 11676, Anon: 2540, Text: 3392, Pclntab: 2364, Rodata: 1756}
	got, err := Parse("a log line\n" + want.String() + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse(String()) (-want +got):\n%s", diff)
	}
}

func TestMedianTakesEachMeasuresMiddleValueOfThePairsDifferences(t *testing.T) {
	bare := []Result{
		{RSS: 100, Anon: 10, Text: 1, Pclntab: 5, Rodata: 7},
		{RSS: 100, Anon: 10, Text: 1, Pclntab: 5, Rodata: 7},
		{RSS: 200, Anon: 20, Text: 1, Pclntab: 5, Rodata: 7},
	}
	ours := []Result{
		{RSS: 150, Anon: 40, Text: 3, Pclntab: 5, Rodata: 7}, // +50, +30
		{RSS: 190, Anon: 15, Text: 3, Pclntab: 9, Rodata: 7}, // +90, +5
		{RSS: 260, Anon: 70, Text: 3, Pclntab: 5, Rodata: 7}, // +60, +50
	}
	var over []Result
	for i := range bare {
		over = append(over, ours[i].Minus(bare[i]))
	}
	// Each measure's own median: RSS from the third pair, Anon from the
	// first, not the whole middle pair.
	want := Result{RSS: 60, Anon: 30, Text: 2, Pclntab: 0, Rodata: 0}
	if diff := cmp.Diff(want, Median(over)); diff != "" {
		t.Errorf("Median of the differences (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Result{RSS: 190, Anon: 40, Text: 3, Pclntab: 5, Rodata: 7}, Median(ours)); diff != "" {
		t.Errorf("Median of ours (-want +got):\n%s", diff)
	}
}

func TestParseQuotesWhatAChildWithoutAResultPrinted(t *testing.T) {
	_, err := Parse("error launching chromium: no such file\n")
	if err == nil || !strings.Contains(err.Error(), "error launching chromium") {
		t.Errorf("err = %v, want one quoting the child's output", err)
	}
}

func TestMeasureRefusesAnUnknownSide(t *testing.T) {
	_, err := Measure("chromedp", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), `unknown side "chromedp": want bare or ours`) {
		t.Errorf("err = %v, want one naming the side and the two known", err)
	}
}

func TestEachSideMeasuresItsProgramWithTheBrowserAndItsTabsUp(t *testing.T) {
	leakcheck.RequireBrowser(t)
	for _, side := range []string{"bare", "ours"} {
		root, err := os.MkdirTemp(testRoot, side+"-")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Measure(side, root)
		if err != nil {
			t.Fatalf("%s: %v", side, err)
		}
		// A running Go program has heap and stacks, and code and function
		// tables resident; they are part of its RSS.
		if r.Anon <= 0 || r.Text <= 0 || r.Pclntab <= 0 || r.Anon+r.Text+r.Pclntab > r.RSS {
			t.Errorf("%s: %+v: want anonymous memory, .text and .gopclntab above 0 and within the RSS", side, r)
		}
		// Measure stopped the browser: no process of it is left.
		if left, err := leakcheck.Processes(root); err != nil || len(left) > 0 {
			t.Errorf("%s: processes left after Measure: %v %v", side, left, err)
		}
		os.RemoveAll(root)
	}
}
