package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// pageTab opens a pool of fake browsers serving pages (its own, so the
// test can read the browser's calls) and returns the browser and a tab on
// the first page.
func pageTab(t *testing.T, pages ...*cdptest.Page) (*cdptest.Browser, *browserpool.Tab) {
	t.Helper()
	l := cdptest.NewLauncher(t, cdptest.WithPages(pages...))
	tab := launchTab(t, l, pages[0].URL)
	return l.Browsers()[0], tab
}

// launchTab opens a pool of l's browsers, closed when the test ends, and
// returns a tab at url.
func launchTab(t *testing.T, l *cdptest.Launcher, url string) *browserpool.Tab {
	t.Helper()
	p, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := testCtx(t)
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.Tab(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	return tab
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustSnap(t *testing.T, tab *browserpool.Tab) browserpool.Snapshot {
	t.Helper()
	s, err := tab.Snapshot(testCtx(t), browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAWaitOnAFakePageEndsWhenAnActionMakesItsCheckTrue(t *testing.T) {
	b, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		cdptest.Button("Load").Does(func(p *cdptest.Page) {
			p.Add(cdptest.Text("Done").WithID("done"))
		}),
	))
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	errc := make(chan error, 1)
	go func() { errc <- tab.WaitVisible(ctx, "#done") }()
	// Click once the poll is in the page, so the click is what ends it.
	for !polled(b) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := tab.Click(ctx, snap.Find("button", "Load")); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("WaitVisible: %v", err)
	}
}

// polled reports whether b received a Runtime.evaluate of a poll.
func polled(b *cdptest.Browser) bool {
	for _, c := range b.Calls() {
		if c.Method == "Runtime.evaluate" && strings.Contains(string(c.Params), "MutationObserver") {
			return true
		}
	}
	return false
}

func TestAWaitOnAFakePageRunsOutWhenItsCheckStaysFalse(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A").Script("window.ready", func(*cdptest.Page) (any, error) {
		return false, nil
	}))
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	err := tab.WaitCondition(ctx, "window.ready", nil)
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, browserpool.ErrTimeout) {
		t.Errorf("WaitCondition = %v, want a deadline error", err)
	}
}

func TestAWaitForASelectorTheFakeCannotMatchSaysSo(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"))
	err := tab.WaitVisible(testCtx(t), "div.results > a")
	if err == nil || !strings.Contains(err.Error(), "only #id selectors") {
		t.Errorf("WaitVisible(div.results > a) = %v, want an error saying the fake matches only #id selectors", err)
	}
}

func TestAClickThatOpensADialogReturnsWithTheDialogAlreadyListed(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", cdptest.Button("Hello").Alerts("Hi!")))
	ctx := testCtx(t)
	if err := tab.Click(ctx, mustSnap(t, tab).Find("button", "Hello")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range tab.Dialogs() {
		got = append(got, fmt.Sprintf("%s %s %s closed=%v", d.Type, d.Message, d.By, !d.Closed.IsZero()))
	}
	if diff := cmp.Diff([]string{"alert Hi! dismissed closed=true"}, got); diff != "" {
		t.Errorf("dialogs as Click returns (-want +got):\n%s", diff)
	}
}

func TestAlertsAndPromptsAreAnsweredByTheHandlerAndTheirAnswersReachThePage(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		cdptest.Button("Hello").Alerts("Hi!"),
		cdptest.Button("Rename").Prompts("New name?", "Ann", func(p *cdptest.Page, ok bool, text string) {
			if ok {
				p.Add(cdptest.Text("Renamed to " + text))
			}
		}),
	))
	ctx := testCtx(t)
	tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Accept: true, PromptText: "Bo"}
	})
	snap := mustSnap(t, tab)
	for _, name := range []string{"Hello", "Rename"} {
		if err := tab.Click(ctx, snap.Find("button", name)); err != nil {
			t.Fatal(err)
		}
	}
	for len(tab.Dialogs()) < 2 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	var got []string
	for _, d := range tab.Dialogs() {
		got = append(got, d.Type+" "+d.Message+" "+d.DefaultPrompt)
	}
	if diff := cmp.Diff([]string{"alert Hi! ", "prompt New name? Ann"}, got); diff != "" {
		t.Errorf("dialogs (-want +got):\n%s", diff)
	}
	if snap := mustSnap(t, tab); !strings.Contains(snap.Text, `text "Renamed to Bo"`) {
		t.Errorf("the prompt's answer did not reach the page:\n%s", snap.Text)
	}
}

func TestKeysTypeDeleteMoveFocusAndSubmit(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("https://a.test/", "Search",
			cdptest.SearchBox("Query"),
			cdptest.Checkbox("Exact", false),
			cdptest.Button("Go").Submits("/results"),
		),
		cdptest.NewPage("https://a.test/results", "Results", cdptest.Heading(1, "Results")),
	)
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	if err := tab.Fill(ctx, snap.Find("searchbox", "Query"), "cats"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return tab.Type(ctx, "!") },
		func() error { return tab.Press(ctx, "Backspace") },
		func() error { return tab.Press(ctx, "s") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustSnap(t, tab).Text; !strings.Contains(got, `searchbox "Query" @e1 value="catss" [focused]`) {
		t.Errorf("after typing:\n%s", got)
	}
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if got := mustSnap(t, tab).Text; !strings.Contains(got, `checkbox "Exact" @e2 [focused]`) {
		t.Errorf("after Tab:\n%s", got)
	}
	if err := tab.Press(ctx, "Shift+Tab"); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitNavigation(ctx, func(ctx context.Context) error { return tab.Press(ctx, "Enter") }); err != nil {
		t.Fatalf("Enter in the search box did not submit: %v", err)
	}
	info, err := tab.PageInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("https://a.test/results?Query=catss Results", info.URL+" "+info.Title); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
}

func TestAScriptErrorIsAJavaScriptExceptionAndADisabledButtonRefusesClicks(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		cdptest.Button("Pay").Disable(),
		cdptest.Button("Gone").Hide(),
	).Script("boom()", func(*cdptest.Page) (any, error) { return nil, errors.New("boom failed") }))
	ctx := testCtx(t)
	err := tab.Evaluate(ctx, "boom()", nil)
	var js *browserpool.JSError
	if !errors.As(err, &js) || js.Message != "Error: boom failed" {
		t.Errorf("Evaluate(boom()) = %v, want a JSError Error: boom failed", err)
	}
	snap := mustSnap(t, tab)
	if diff := cmp.Diff("- button \"Pay\" @e1 [disabled]\n", snap.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if err := tab.Click(ctx, snap.Find("button", "Pay")); !errors.Is(err, browserpool.ErrInvalidArgument) {
		t.Errorf("Click on a disabled button = %v, want ErrInvalidArgument", err)
	}
}
