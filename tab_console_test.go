package browserpool_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserpool/browserpool"
)

func TestConsoleKeepsMessagesAndPageErrorsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)
	ctx := ctxT(t)
	tab := e.tab(t, "/console.html")
	page := e.site.URL + "/console.html"
	ignore := cmpopts.IgnoreFields(browserpool.ConsoleMessage{}, "Time", "Column")

	t.Run("what the page logged before the first read is there, with levels and sources", func(t *testing.T) {
		got, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []browserpool.ConsoleMessage{
			{Level: browserpool.ConsoleInfo, Method: "log", Text: "loaded 1 {a: 1} [1, 2] null undefined", URL: page, Line: 9},
			{Level: browserpool.ConsoleDebug, Method: "debug", Text: "debugging", URL: page, Line: 10},
			{Level: browserpool.ConsolePageError, Text: "Uncaught RangeError: at load", URL: page, Line: 11},
		}
		if diff := cmp.Diff(want, got, ignore); diff != "" {
			t.Errorf("Console (-want +got):\n%s", diff)
		}
		for _, m := range got {
			if m.Time.IsZero() || m.Column == 0 {
				t.Errorf("message %q has no time or column: %+v", m.Text, m)
			}
		}
	})

	t.Run("later messages, thrown errors and rejections arrive; clear empties the buffer", func(t *testing.T) {
		if err := tab.ClearConsole(ctx); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, name := range []string{"Log", "Throw", "Reject"} {
			if err := tab.Click(ctx, ref(t, s, "button", name)); err != nil {
				t.Fatal(err)
			}
		}
		var got []browserpool.ConsoleMessage
		waitFor(t, "four messages", func() bool {
			var err error
			got, err = tab.Console(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return len(got) >= 4
		})
		var levels, texts []string
		for _, m := range got {
			levels = append(levels, string(m.Level))
			texts = append(texts, strings.SplitN(m.Text, "\n", 2)[0])
		}
		if diff := cmp.Diff([]string{"warning", "error", "pageerror", "pageerror"}, levels); diff != "" {
			t.Errorf("levels (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"careful 2", "Error: clicked error", "Uncaught TypeError: late failure", "Uncaught (in promise) Error: nobody caught me"}, texts); diff != "" {
			t.Errorf("texts (-want +got):\n%s", diff)
		}
	})

	t.Run("the trace records that messages happened, not their text", func(t *testing.T) {
		var lines []string
		for _, te := range tab.Trace() {
			if te.Action == "console" {
				// Repeats may have been counted into one entry (×2):
				// compare the distinct entries.
				l, _, _ := strings.Cut(te.Args, " (×")
				if !slices.Contains(lines, l) {
					lines = append(lines, l)
				}
			}
			if strings.Contains(te.Args, "careful") || strings.Contains(te.Args, "nobody caught") {
				t.Errorf("the trace shows a message's text: %+v", te)
			}
		}
		want := []string{"info " + page, "debug " + page, "pageerror " + page, "warning " + page, "error " + page}
		if diff := cmp.Diff(want, lines, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
			t.Errorf("console trace entries (-want +got):\n%s", diff)
		}
	})

	t.Run("repeats count in one trace entry so a noisy page keeps the actions in the trace", func(t *testing.T) {
		if err := tab.Evaluate(ctx, "for (let i = 0; i < 300; i++) console.error('noise ' + i)", nil); err != nil {
			t.Fatal(err)
		}
		tr := tab.Trace()
		if len(tr) < 2 {
			t.Fatalf("trace too short: %+v", tr)
		}
		got := [2]string{tr[len(tr)-2].Action + " " + tr[len(tr)-2].Args, tr[len(tr)-1].Action}
		if want := [2]string{"console error (page) (×300)", "evaluate"}; got != want {
			t.Errorf("last two trace entries = %q, want %q", got, want)
		}
		msgs, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(msgs); n < 300 || msgs[n-1].Text != "noise 299" {
			t.Errorf("Console has %d messages ending %+v, want the 300 errors at the end", n, msgs[n-1])
		}
	})
}

// A promise rejected with no handler is reported at once; the page may
// handle it later, and then it was no error (Runtime.exceptionRevoked).
func TestARejectionThePageHandlesLateLeavesNoPageError(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{"/": `<!doctype html><title>Late</title>late`})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Console(ctx); err != nil { // watch from here
		t.Fatal(err)
	}
	js := `window.p = Promise.reject(new Error("late")); new Promise(r => setTimeout(r, 300)).then(() => { window.p.catch(() => {}); return new Promise(r => setTimeout(r, 300)); }).then(() => 1)`
	if err := tab.Evaluate(ctx, js, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the late handling to reach the tab", func() bool {
		got, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if m.Level == browserpool.ConsolePageError {
				return false
			}
		}
		return true
	})
}

func TestConsoleMessagesReadAsTheBrowsersConsolePrintsThem(t *testing.T) {
	ctx := ctxT(t)
	p := newRealPool(t, browserpool.Config{})
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Console(ctx); err != nil { // log from here
		t.Fatal(err)
	}
	cases := []struct{ script, want string }{
		{`console.log('saved', {id: 7, name: 'Ann', tags: ['a'], 'x-y': null, f() {}})`, `saved {id: 7, name: "Ann", tags: Array(1), "x-y": null, f: function}`},
		{`console.log([1, 2, 3], [1, , 3])`, `[1, 2, 3] Array(3) [1, empty, 3]`},
		{`console.log(Array.from({length: 150}, (_, i) => i).slice(0, 120).length, Object.fromEntries(Array.from({length: 9}, (_, i) => ['k' + i, i])))`, `120 {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, …}`},
		{`console.log(new Map([['k', 1], [2, {}]]), new Set(['a', 'b']))`, `Map(2) {"k" => 1, 2 => Object} Set(2) {"a", "b"}`},
		{`class Point { constructor() { this.x = 1; this.y = 2 } }; console.log(new Point(), new Uint8Array([5, 6]))`, `Point {x: 1, y: 2} Uint8Array(2) [5, 6]`},
		{`console.log('%s is %d (%i) and %f; %o %c%s %% %x', 'Ann', 41.9, '7', 1.5, {a: 1}, 'color: red', 'plain', 'left over')`, `Ann is 41 (7) and 1.5; {a: 1} plain % %x left over`},
		{`console.log('%s and %s', 'only one')`, `only one and %s`},
		{`console.log('100%', null, undefined, 12n, document.body)`, `100% null undefined 12n body`},
		{`console.table([{a: 1}, {a: 2}])`, `[{a: 1}, {a: 2}]`}, // the browser previews the rows too
		// Last: the page errors come after the calls above. A thrown
		// object that is no Error reads by its preview, not "Object".
		{`setTimeout(() => { throw {code: 42} })`, `Uncaught {code: 42}`},
		{`setTimeout(() => { throw [1, 'two'] })`, `Uncaught [1, "two"]`},
	}
	for _, c := range cases {
		if err := tab.Evaluate(ctx, "(() => {"+c.script+"})()", nil); err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
	}
	var got []string
	waitFor(t, "every message", func() bool {
		msgs, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = got[:0]
		for _, m := range msgs {
			got = append(got, m.Text)
		}
		return len(got) >= len(cases)
	})
	var want []string
	for _, c := range cases {
		want = append(want, c.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("console texts (-want +got):\n%s", diff)
	}
}
