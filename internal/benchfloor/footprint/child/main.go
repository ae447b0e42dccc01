// Command child is the footprint row's child as a program of its own: it
// links what the row calls (footprint.Measure) and nothing else, as a
// user's program would, where the root's test binary also links the rest
// of the package and its tests.
//
// Usage:
//
//	child bare|ours ROOT
//
// It prints footprint.Result's line last, or an error and exits 1.
package main

import (
	"fmt"
	"os"

	"github.com/browserpool/browserpool/internal/benchfloor/footprint"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: child bare|ours ROOT")
		os.Exit(2)
	}
	r, err := footprint.Measure(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(r)
}
