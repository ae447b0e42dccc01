// Room: tests that what a failing Evaluate's code threw is released in the
// page. No locks.

package browserpool_test

import (
	"errors"
	"testing"

	"github.com/browserpool/browserpool"
)

// The value an expression throws reaches us by reference, and the page
// kept it for the document's life: an agent whose script failed again and
// again on one page grew the page's memory (found by helper 86's audit).
// A thrown object is collectable once Evaluate has returned.
func TestAValueThrownByEvaluateIsReleasedInThePage(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>t</title>`)
	err := tab.Evaluate(ctx, `(() => { const o = {payload: "x".repeat(1000)}; window.thrownRef = new WeakRef(o); throw o })()`, nil)
	if !errors.Is(err, browserpool.ErrJavaScript) {
		t.Fatalf("Evaluate of a throw = %v, want ErrJavaScript", err)
	}
	if err := tab.Client().HeapProfiler.CollectGarbage(ctx); err != nil {
		t.Fatal(err)
	}
	if gone := eval[bool](t, tab, `window.thrownRef.deref() === undefined`); !gone {
		t.Errorf("the thrown object is still alive after a garbage collection: the page still holds it for us")
	}
}
