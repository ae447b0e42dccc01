package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// benchOutput is go test -bench output as bench-floor prints it: a row in
// both start orders, twice with ours first, a row with confidence
// half-widths, a log line, a row run without order, and lines that are
// not results.
const benchOutput = `goos: linux
BenchmarkFloor/evaluate-sequential-2   	3000	695800 ns/op	1.000 ours-first	1.040 x-bare	1.052 x-bare-median
BenchmarkFloor/evaluate-sequential-2   	3000	695800 ns/op	1.000 ours-first	1.030 x-bare	1.040 x-bare-median
BenchmarkFloor/evaluate-sequential-2   	3000	672988 ns/op	0 ours-first	0.970 x-bare	0.971 x-bare-median
BenchmarkFloor/navigate-2   	100	153920024 ns/op	1.000 ours-first	1.010 x-bare	0.030 x-bare-ci95
BenchmarkFloor/navigate-2   	100	153920024 ns/op	0 ours-first	0.990 x-bare	0.040 x-bare-ci95
BenchmarkFloor/screenshot-1280x600-2   	100	143147160 ns/op	1.000 ours-first	1.030 x-bare
BenchmarkFloor/screenshot-1280x600-2   	100	143147160 ns/op	0 ours-first	1.040 x-bare
BenchmarkFloorFootprint
    bench_floor_test.go:12: a log line
BenchmarkFloorFootprint-2   	1	15501165437 ns/op	1.770 MiB-rss-over-bare	3.000 goroutines
PASS
ok  	github.com/browserpool/browserpool	100.1s
`

func TestParseKeepsEveryResultLineWithItsMetricsByUnitAndSkipsTheRest(t *testing.T) {
	results, err := parse(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 8 {
		t.Fatalf("parsed %d results, want the 8 result lines", len(results))
	}
	want := result{name: "FloorFootprint", metrics: map[string]float64{"ns/op": 15501165437, "MiB-rss-over-bare": 1.77, "goroutines": 3}}
	if diff := cmp.Diff(want, results[7], cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("the footprint line (-want +got):\n%s", diff)
	}
}

func TestParseRefusesMetricsThatAreNotValueUnitPairs(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkFloor/navigate-2 100 153920024 ns/op 1.000\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("err = %v, want one naming line 1", err)
	}
}

func TestARowIsSummarizedByStartOrderWithTheMedianOfRepeatsAndTheMeanOfBothOrders(t *testing.T) {
	results, err := parse(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		row  row
		want line
	}{{
		// ours first: 1.030 and 1.040 give the median 1.035; both orders:
		// sqrt(1.035 × 0.970) = 1.002.
		row:  row{bench: "Floor/evaluate-sequential", metric: "x-bare", goal: 1.02, ordered: true},
		want: line{oursFirst: "1.035 [1.030–1.040]", floorFirst: "0.970", both: "1.002", met: "both orders"},
	}, {
		// Both orders' ±: 1.000 × sqrt((0.030/1.010)² + (0.040/0.990)²) / 2
		// = 0.025.
		row:  row{bench: "Floor/navigate", metric: "x-bare", goal: 1.02, ordered: true},
		want: line{oursFirst: "1.010 ±0.030", floorFirst: "0.990 ±0.040", both: "1.000 ±0.025", met: "yes"},
	}, {
		row:  row{bench: "Floor/screenshot-1280x600", metric: "x-bare", goal: 1.02, ordered: true},
		want: line{oursFirst: "1.030", floorFirst: "1.040", both: "1.035", met: "no"},
	}, {
		row:  row{bench: "FloorFootprint", metric: "MiB-rss-over-bare", goal: 1, unit: "MiB"},
		want: line{oursFirst: "—", floorFirst: "—", both: "1.77", met: "no"},
	}, {
		row:  row{bench: "FloorFootprint", metric: "goroutines", goal: 13, unit: "goroutines"},
		want: line{oursFirst: "—", floorFirst: "—", both: "3", met: "yes"},
	}, {
		row:  row{bench: "Floor/ax-tree-3000-nodes", metric: "x-bare", goal: 1.02, ordered: true},
		want: line{oursFirst: "not run", floorFirst: "not run", both: "not run in both orders", met: "?"},
	}, {
		row:  row{bench: "FloorColdStart/devtools-port", metric: "x-bare", goal: 1.03},
		want: line{oursFirst: "—", floorFirst: "—", both: "not run", met: "?"},
	}} {
		if diff := cmp.Diff(tc.want, tc.row.summarize(results), cmp.AllowUnexported(line{})); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.row.bench, tc.row.metric, diff)
		}
	}
}

func TestTheTableHasARowForEachOfTheIssuesRowsWithItsGoal(t *testing.T) {
	results, err := parse(strings.NewReader(benchOutput))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf, results); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2+len(issueRows) {
		t.Fatalf("%d lines, want a header, a rule and %d rows:\n%s", len(lines), len(issueRows), buf.String())
	}
	for _, want := range []string{
		"| sequential evaluate | ≤ ×1.02 | 1.035 [1.030–1.040] | 0.970 | 1.002 | both orders |",
		"| Go RSS over bare, 1 browser + 10 tabs (test binary, median of 5 pairs) | ≤ 1 MiB | — | — | 1.77 | no |",
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("no line %q in:\n%s", want, buf.String())
		}
	}
}
