// Room: tests of page JavaScript by identity. No locks.

package pagejs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEveryConstantHasItsNameAndTheBuiltExpressionsReadBack(t *testing.T) {
	if diff := cmp.Diff(len(sources), len(Names)); diff != "" {
		t.Errorf("Names has a different number of entries than the constants (-want +got):\n%s", diff)
	}
	for name, src := range sources {
		if Names[src] != name {
			t.Errorf("Names[%s] = %q", name, Names[src])
		}
	}
	check := VisibleCheck(`a[href="x"], #b`)
	sel, ok := ParseVisibleCheck(check)
	if diff := cmp.Diff(`a[href="x"], #b`, sel); diff != "" || !ok {
		t.Errorf("ParseVisibleCheck (ok %v) (-want +got):\n%s", ok, diff)
	}
	cond := Condition("window.x, 1")
	gotCheck, ms, ok := ParsePollCall(PollCall(cond, 1234))
	if !ok || ms != 1234 || gotCheck != cond {
		t.Errorf("ParsePollCall = %q, %d, %v", gotCheck, ms, ok)
	}
	expr, ok := ParseCondition(gotCheck)
	if diff := cmp.Diff("window.x, 1", expr); diff != "" || !ok {
		t.Errorf("ParseCondition (ok %v) (-want +got):\n%s", ok, diff)
	}
	if _, ok := ParseCondition(check); ok {
		t.Errorf("ParseCondition took a visibility check")
	}
	if got, want := Condition("window.x ;; \n"), Condition("window.x"); got != want {
		t.Errorf("Condition kept the semicolons ending the expression: %q, want %q", got, want)
	}
}
