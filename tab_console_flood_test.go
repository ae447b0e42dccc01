package browserpool_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// pageErrors returns the texts of tab's page errors, oldest first.
func pageErrors(t *testing.T, tab *browserpool.Tab) []string {
	t.Helper()
	msgs, err := tab.Console(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		if m.Level == browserpool.ConsolePageError {
			out = append(out, m.Text)
		}
	}
	return out
}

func TestAThrownObjectLoggedBeforeTheFirstConsoleCallReadsAsALiveOne(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>early</title><script>
setTimeout(() => { window.thrown = true; throw {code: 42, msg: "quota"} });
</script>`)
	waitJS(t, tab, "window.thrown")
	// Console is called for the first time: the browser hands the
	// exception over, without the preview it sends with a live one.
	replayed := pageErrors(t, tab)
	if err := tab.Evaluate(ctx, `setTimeout(() => { throw {code: 42, msg: "quota"} })`, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	waitFor(t, "the live page error", func() bool { got = pageErrors(t, tab); return len(got) >= 2 })
	want := []string{`Uncaught {code: 42, msg: "quota"}`, `Uncaught {code: 42, msg: "quota"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the page errors, logged before the first Console call and then live (-want +got):\n%s", diff)
	}
	if len(replayed) != 1 || replayed[0] != want[0] {
		t.Errorf("the first Console call read the earlier page error as %q; want %q", replayed, want[0])
	}
}

// tracedActions counts tab's trace entries by action, and the console
// messages its "console" entries stand for (one, "(×N)" repeats, or a
// run's count "N more messages: …").
func tracedActions(tab *browserpool.Tab) (byAction map[string]int, messages int) {
	byAction = make(map[string]int)
	for _, e := range tab.Trace() {
		byAction[e.Action]++
		if e.Action != "console" {
			continue
		}
		n := 1
		if num, _, ok := strings.Cut(e.Args, " more message"); ok {
			n, _ = strconv.Atoi(num)
		} else if i := strings.LastIndex(e.Args, " (×"); i >= 0 {
			n, _ = strconv.Atoi(strings.TrimSuffix(e.Args[i+len(" (×"):], ")"))
		}
		messages += n
	}
	return byAction, messages
}

func TestAConsoleFloodLeavesTheAgentsOwnActionsInTheTrace(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>flood</title><button onclick="for (let i = 0; i < 400; i++) { console.log('l' + i); console.warn('w' + i) }">Go</button>`)
	if _, err := tab.Console(ctx); err != nil {
		t.Fatal(err)
	}
	if got := eval[int](t, tab, "40+2"); got != 42 {
		t.Fatalf("40+2 = %d", got)
	}
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Go")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the flood's last message", func() bool {
		msgs, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs) > 0 && msgs[len(msgs)-1].Text == "w399"
	})
	byAction, messages := tracedActions(tab)
	for _, a := range []string{"navigate", "read-console", "evaluate", "snapshot", "click"} {
		if byAction[a] == 0 {
			t.Errorf("the trace lost the agent's %s to the page's console: %v", a, byAction)
		}
	}
	if byAction["console"] > 4 {
		t.Errorf("one run of 800 messages took %d trace entries; want at most 4, the rest counted in the last", byAction["console"])
	}
	if messages != 800 {
		t.Errorf("the trace's console entries stand for %d messages; want the 800 the page logged", messages)
	}
}

func TestPageEventsTakeASmallShareOfTheTraceHoweverOftenTheyCome(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>noisy</title>`)
	if _, err := tab.Console(ctx); err != nil {
		t.Fatal(err)
	}
	// Each step logs at four levels: a run of distinct page events after
	// every action, until the trace is full and wraps.
	const steps = browserpool.TraceLimit + 40
	for i := range steps {
		expr := fmt.Sprintf("/* step %03d */ console.debug(%[1]d); console.log(%[1]d); console.warn(%[1]d); console.error(%[1]d)", i)
		if err := tab.Evaluate(ctx, expr, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the last step's messages", func() bool {
		msgs, err := tab.Console(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs) > 0 && msgs[len(msgs)-1].Text == strconv.Itoa(steps-1) && msgs[len(msgs)-1].Level == browserpool.ConsoleError
	})
	tr := tab.Trace()
	if len(tr) != browserpool.TraceLimit {
		t.Fatalf("the trace holds %d entries; want it full (%d)", len(tr), browserpool.TraceLimit)
	}
	var console, last int
	last = -1
	for _, e := range tr {
		switch e.Action {
		case "console":
			console++
		case "evaluate":
			var n int
			if _, err := fmt.Sscanf(e.Args, "/* step %d */", &n); err != nil {
				t.Fatalf("evaluate entry %q", e.Args)
			}
			if n != last+1 && last >= 0 {
				t.Errorf("the trace skips from step %d to step %d: the page's events pushed an action out, or the ring lost its order", last, n)
			}
			last = n
		}
	}
	if console > browserpool.TraceLimit/8 {
		t.Errorf("page events took %d of the trace's %d entries; want at most %d", console, len(tr), browserpool.TraceLimit/8)
	}
	if last != steps-1 {
		t.Errorf("the trace's last step is %d; want %d", last, steps-1)
	}
}
