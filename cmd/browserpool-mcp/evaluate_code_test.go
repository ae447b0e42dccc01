package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// browser_evaluate calls a function it is given, however it is written.
// A function its start pattern missed (after a comment, with parentheses
// in its parameters, in parentheses, held by a name) used to come back
// as {} uncalled. Statements still run as they are, and code runs once.
func TestEvaluateCallsEveryFunctionAndRunsCodeOnce(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	for _, c := range []struct{ code, want string }{
		{"() => document.title", `"Sign up"`},
		{"// the page's title\n() => document.title", `"Sign up"`},
		{"/* a sum */ (a = Math.max(1, 2), b = (3)) => a + b", "5"},
		{"(() => 7)", "7"},
		{"async function () { return 8 }", "8"},
		{"window.twice = () => 2 * 21", "42"},
		{"twice", "42"},
		{"window.thrice = () => 3; thrice", "{}"}, // statements run as they are
		{"document.title // trailing comment", `"Sign up"`},
		{"let x = 2; x * 3", "6"},
		{"({a: 1})", `{"a":1}`},
		{"window.runs = (window.runs || 0) + 1", "1"},
		{"window.runs", "1"},
		{"Promise.resolve(() => 9)", "{}"}, // a promise's value is not called
	} {
		got := ok(t, cs, "browser_evaluate", map[string]any{"function": c.code})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("browser_evaluate %q (-want +got):\n%s", c.code, diff)
		}
	}
}
