// Command floortable reads what `make bench-floor` printed (go test -bench
// output, on standard input) and prints issue 14's table: each row's
// figure by the side whose browser started first, both orders together,
// the issue's goal and whether it is met.
//
// The side-by-side rows run once with browserpool's browser started first
// and once with the floor's (the ours-first metric, 1 or 0). Which browser
// started first moves a row by a few per cent on this 2-core machine, not
// always the same way (sequential evaluate and navigate move in opposite
// directions), so one order alone is biased; "both orders" is the
// geometric mean of the two orders' figures, which cancels that bias as a
// counterbalanced design does. A row is "yes" when each order meets its
// goal, "both orders" when only their mean does, "no" otherwise. With go
// test -count N, every figure is the median of the N runs, the range in
// brackets.
//
// make bench-floor runs it last on the output it kept (FLOOR_OUT). To
// print the table again:
//
//	go run ./internal/benchfloor/floortable < "${TMPDIR:-/tmp}/browserpool-bench-floor.out"
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

func main() {
	results, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floortable:", err)
		os.Exit(1)
	}
	if err := write(os.Stdout, results); err != nil {
		fmt.Fprintln(os.Stderr, "floortable:", err)
		os.Exit(1)
	}
}

// write prints the table of results (markdown).
func write(w io.Writer, results []result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "| row | goal | ours first | floor first | both orders | met? |")
	fmt.Fprintln(bw, "|---|---|---|---|---|---|")
	for _, r := range issueRows {
		l := r.summarize(results)
		fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s |\n", r.title, r.goalText(), l.oursFirst, l.floorFirst, l.both, l.met)
	}
	return bw.Flush()
}
