package main

import (
	"strings"
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

// browser_evaluate's result reads as JSON.stringify writes it, where the
// browser's by-value copy gave {} (a Date, a DOMRect, an element, a Map)
// or refused (a BigInt): what JSON has no form for is described. With a
// ref too. An error's line is still the code's.
func TestEvaluateReturnsWhatJSONMakesOfDatesElementsAndCollections(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	ok(t, cs, "browser_evaluate", map[string]any{"function": `() => { const b = document.createElement('button'); b.id = 'probe'; b.className = 'big red'; b.textContent = '  Send   now '; b.style.cssText = 'position:absolute;left:10px;top:20px;width:30px;height:40px'; document.body.append(b) }`})
	for _, c := range []struct{ code, want string }{
		{"() => new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"() => document.getElementById('probe')", `"<button id=\"probe\" class=\"big red\">Send now"`},
		{"() => document.getElementById('probe').getBoundingClientRect().toJSON().width", "30"},
		{"() => { const r = document.getElementById('probe').getBoundingClientRect(); return {x: r.x, y: r.y} }", `{"x":10,"y":20}`},
		{"() => [...document.querySelectorAll('#probe')].length", "1"},
		{"() => document.querySelectorAll('#probe')", `["<button id=\"probe\" class=\"big red\">Send now"]`},
		{"() => ({m: new Map([['k', 1]]), s: new Set([1, 2]), n: 12n})", `{"m":{"k":1},"s":[1,2],"n":"12n"}`},
		{"async () => new Date(86400000)", `"1970-01-02T00:00:00.000Z"`},
		{"(() => new Date(0))", `"1970-01-01T00:00:00.000Z"`},
		{"() => undefined", "undefined"},
	} {
		got := ok(t, cs, "browser_evaluate", map[string]any{"function": c.code})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("browser_evaluate %q (-want +got):\n%s", c.code, diff)
		}
	}
	snap := ok(t, cs, "browser_snapshot", nil)
	probe := find(t, `button "Send now" (@e\d+)`, snap)
	for _, c := range []struct{ code, want string }{
		{"el => el", `"<button id=\"probe\" class=\"big red\">Send now"`},
		{"el => el.getBoundingClientRect()", `{"x":10,"y":20,"width":30,"height":40,"top":20,"right":40,"bottom":60,"left":10}`},
		{"function () { return this.id }", `"probe"`},
	} {
		got := ok(t, cs, "browser_evaluate", map[string]any{"function": c.code, "ref": probe})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("browser_evaluate %q on %s (-want +got):\n%s", c.code, probe, diff)
		}
	}
	for _, c := range []struct {
		args map[string]any
		at   string
	}{
		{map[string]any{"function": "() => {\n  const a = 1;\n  a.b.c = 2;\n}"}, "(line 3, column 9)"},
		{map[string]any{"function": "el => {\n  el.b.c = 2;\n}", "ref": probe}, "(line 2, column 10)"},
	} {
		if msg := fails(t, cs, "browser_evaluate", c.args); !strings.Contains(msg, c.at) {
			t.Errorf("browser_evaluate %q: %s; want the error at %s", c.args["function"], msg, c.at)
		}
	}
}
