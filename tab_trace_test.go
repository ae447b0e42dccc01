package browserpool_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestTraceOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("actions are traced with secrets withheld and the recorder sees each entry", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html?token=abcdef0123456789abcdef&lang=en")
		var mu sync.Mutex
		var recorded []browserpool.TraceEntry
		tab.SetRecorder(func(en browserpool.TraceEntry) {
			mu.Lock()
			recorded = append(recorded, en)
			mu.Unlock()
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		name, password := ref(t, s, "textbox", "Name"), ref(t, s, "textbox", "Password")
		const secret = "hunter2-very-secret"
		if err := tab.Fill(ctx, name, "Ann"); err != nil {
			t.Fatal(err)
		}
		if err := tab.Fill(ctx, password, secret); err != nil {
			t.Fatal(err)
		}
		if err := tab.Press(ctx, "Control+A"); err != nil { // still in the password field
			t.Fatal(err)
		}
		if err := tab.Type(ctx, secret+"-typed"); err != nil {
			t.Fatal(err)
		}
		if err := tab.Press(ctx, "S"); err != nil { // a PIN typed key by key
			t.Fatal(err)
		}
		if err := tab.Click(ctx, "@e999"); err == nil {
			t.Fatal("Click(@e999) succeeded")
		}
		if _, err := tab.PageInfo(ctx); err != nil {
			t.Fatal(err)
		}
		long := "true || " + strings.Repeat("x", 400)
		if err := tab.WaitCondition(ctx, long, nil); err != nil {
			t.Fatal(err)
		}

		type entry struct{ Action, Args, Err string }
		var got []entry
		trace := tab.Trace()
		// The tab's first entry is the navigation its OpenTab made, before
		// the recorder was set.
		if len(trace) == 0 || trace[0].Action != "navigate" || !strings.HasSuffix(trace[0].Args, "/form.html?token=REDACTED&lang=en") {
			t.Fatalf("the trace does not start with OpenTab's navigation, its token withheld: %+v", trace)
		}
		trace = trace[1:]
		for _, en := range trace {
			got = append(got, entry{en.Action, en.Args, en.Err})
			if strings.Contains(en.Args, secret) || strings.Contains(en.Err, secret) {
				t.Errorf("a trace entry shows the password: %+v", en)
			}
			if en.Time.IsZero() || en.Duration <= 0 {
				t.Errorf("entry %+v has no time or duration", en)
			}
		}
		want := []entry{
			{"snapshot", "interactive=false max=0 -> 15 lines, 12 refs", ""},
			{"fill", name + ` textbox "Name" "Ann"`, ""},
			{"fill", password + ` textbox "Password" ***`, ""},
			{"press", "Control+A", ""},
			{"type", "***", ""},
			{"press", "***", ""},
			{"click", "@e999", got[6].Err},
			{"page-info", "", ""},
			{"wait-condition", long[:299] + "…", ""},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("trace (-want +got):\n%s", diff)
		}
		if !strings.Contains(got[6].Err, "stale element ref") {
			t.Errorf("the failed click's entry has error %q", got[6].Err)
		}
		if info, _ := tab.PageInfo(ctx); strings.Contains(info.URL, "abcdef0123456789abcdef") {
			t.Errorf("PageInfo.URL shows the token: %s", info.URL)
		}
		waitFor(t, "the recorder to catch up", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(recorded) >= len(trace)
		})
		mu.Lock()
		defer mu.Unlock()
		if diff := cmp.Diff(trace, recorded[:len(trace)]); diff != "" {
			t.Errorf("recorded entries differ from the trace (-trace +recorded):\n%s", diff)
		}
	})
}
