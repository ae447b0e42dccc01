package browserpool

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestTheTraceRingKeepsTheLatestEntriesInOrder(t *testing.T) {
	x := &tabExt{}
	start := time.Now()
	for i := range TraceLimit + 10 {
		var err error
		if i%2 == 1 {
			err = errors.New("boom")
		}
		x.record("act", fmt.Sprint(i), start, &err)
	}
	x.record("long", strings.Repeat("a", 1000), start, nil)
	r := &x.trace
	if r.n != TraceLimit {
		t.Fatalf("the ring holds %d entries, want %d", r.n, TraceLimit)
	}
	var got []string
	for i := range r.n {
		e := r.ring[(r.start+i)%TraceLimit]
		got = append(got, e.Args[:min(len(e.Args), 4)]+"/"+e.Err)
	}
	want := []string{"11/boom", "12/"}
	if diff := cmp.Diff(want, got[:2]); diff != "" {
		t.Errorf("oldest entries (-want +got):\n%s", diff)
	}
	if last := r.ring[(r.start+r.n-1)%TraceLimit]; len([]rune(last.Args)) != TraceArgLimit || !strings.HasSuffix(last.Args, "…") {
		t.Errorf("a 1000-character argument is kept as %d characters", len([]rune(last.Args)))
	}
}
