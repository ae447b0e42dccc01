package browserpool

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestDropIDRemovesTheTabFromTheOrderAndKeepsTheRestInPlace(t *testing.T) {
	for _, c := range []struct {
		name  string
		order []string
		id    string
		want  []string
	}{
		{name: "in the middle", order: []string{"a", "b", "c"}, id: "b", want: []string{"a", "c"}},
		{name: "first and last", order: []string{"b", "a", "b"}, id: "b", want: []string{"a"}},
		{name: "absent", order: []string{"a", "c"}, id: "b", want: []string{"a", "c"}},
		{name: "empty", order: nil, id: "b", want: nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := dropID(c.order, c.id)
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("dropID(%q) (-want +got):\n%s", c.id, diff)
			}
			for i, x := range c.order[len(got):] {
				if x != "" {
					t.Errorf("slot %d after the kept ids still holds %q: a stale slot keeps its string reachable", len(got)+i, x)
				}
			}
		})
	}
}
