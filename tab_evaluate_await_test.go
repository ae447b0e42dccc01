// Room: tests of Evaluate with an await at the expression's top level. No
// locks.

package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// An await at an expression's top level, as agents write it after the
// browser's console, was a SyntaxError whose hint said only to fix the
// expression. It runs as in the console now; everything else is as before.
func TestEvaluateTakesAnAwaitAtTheTopLevelAsTheConsoleDoes(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>t</title>`)
	var n int
	if err := tab.Evaluate(ctx, `const r = await Promise.resolve(41); r + 1`, &n); err != nil || n != 42 {
		t.Errorf("a const bound by an await, then used: %d, %v; want 42", n, err)
	}
	var s string
	if err := tab.Evaluate(ctx, `await new Promise(r => setTimeout(() => r("late"), 20))`, &s); err != nil || s != "late" {
		t.Errorf("an awaited timer: %q, %v; want \"late\"", s, err)
	}
	// A promise returned without an await of its own is still awaited.
	if err := tab.Evaluate(ctx, `Promise.resolve(7)`, &n); err != nil || n != 7 {
		t.Errorf("a returned promise: %d, %v; want 7", n, err)
	}
	err := tab.Evaluate(ctx, `await Promise.reject(new Error("no such user"))`, nil)
	var js *browserpool.JSError
	if !errors.As(err, &js) || js.Message != "Error: no such user" {
		t.Errorf("an awaited rejection: %v; want ErrJavaScript \"Error: no such user\"", err)
	}
	// A real syntax error reads as before, awaits or not.
	for _, expr := range []string{`1 +`, `await (`} {
		err := tab.Evaluate(ctx, expr, nil)
		if !errors.As(err, &js) || !strings.HasPrefix(js.Message, "SyntaxError: ") || strings.Contains(js.Message, "await is only valid") {
			t.Errorf("Evaluate(%q) = %v; want the SyntaxError of the code as written", expr, err)
		}
	}
	// One traced action per call, whichever way it ran.
	var got []string
	for _, e := range tab.Trace() {
		if e.Action == "evaluate" {
			got = append(got, e.Args)
		}
	}
	want := []string{`const r = await Promise.resolve(41); r + 1`, `await new Promise(r => setTimeout(() => r("late"), 20))`,
		`Promise.resolve(7)`, `await Promise.reject(new Error("no such user"))`, `1 +`, `await (`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the trace (-want +got):\n%s", diff)
	}
}
