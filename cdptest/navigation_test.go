package cdptest_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestAScriptSetFromAGoFuncChangesOnlyThatLoadedCopy(t *testing.T) {
	page := func() *cdptest.Page {
		return cdptest.NewPage("https://a.test/", "A",
			cdptest.Button("Count").Does(func(p *cdptest.Page) {
				p.Script("window.count", func(*cdptest.Page) (any, error) { return 1, nil })
			}),
		).Script("window.count", func(*cdptest.Page) (any, error) { return 0, nil })
	}
	_, tab := pageTab(t, page())
	ctx := testCtx(t)
	count := func() int {
		t.Helper()
		var n int
		if err := tab.Evaluate(ctx, "window.count", &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := tab.Click(ctx, mustSnap(t, tab).Find("button", "Count")); err != nil {
		t.Fatal(err)
	}
	clicked := count()
	if _, err := tab.Navigate(ctx, "https://a.test/"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 0}, []int{clicked, count()}); diff != "" {
		t.Errorf("window.count after the click, then on a fresh load (-want +got):\n%s", diff)
	}

	// Two browsers of one launcher load one template and script their
	// copies at once (the race detector watches).
	tmpl := page()
	l := cdptest.NewLauncher(t, cdptest.WithPages(tmpl))
	p, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			s, err := p.Open(ctx)
			if err != nil {
				errs[i] = err
				return
			}
			tab, err := s.Tab(ctx, "")
			if err == nil {
				_, err = tab.Navigate(ctx, tmpl.URL)
			}
			if err == nil {
				var snap browserpool.Snapshot
				if snap, err = tab.Snapshot(ctx, browserpool.SnapshotOptions{}); err == nil {
					err = tab.Click(ctx, snap.Find("button", "Count"))
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestAQueryStringLoadsThePageDefinedWithoutOneUnlessOneIsDefinedWithIt(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("https://a.test/form", "Form", cdptest.Heading(1, "Form")),
		cdptest.NewPage("https://a.test/form?step=2", "Step 2", cdptest.Heading(1, "Step 2")),
	)
	ctx := testCtx(t)
	var got []string
	for _, u := range []string{"https://a.test/form?q=1", "https://a.test/form?step=2", "https://a.test/form?step=2#top"} {
		if _, err := tab.Navigate(ctx, u); err != nil {
			t.Fatal(err)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, info.Title)
	}
	if diff := cmp.Diff([]string{"Form", "Step 2", "Step 2"}, got); diff != "" {
		t.Errorf("titles (-want +got):\n%s", diff)
	}
}

func TestAFragmentOfTheCurrentPageIsASameDocumentNavigationThatKeepsThePage(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/form", "Form", cdptest.TextBox("Name")))
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	if err := tab.Fill(ctx, snap.Find("textbox", "Name"), "kept"); err != nil {
		t.Fatal(err)
	}

	res, err := tab.Navigate(ctx, "https://a.test/form#part")
	if err != nil {
		t.Fatal(err)
	}
	var href string
	if err := tab.Evaluate(ctx, "location.href", &href); err != nil {
		t.Fatal(err)
	}
	type got struct {
		LoaderID, Href string
		Status         int
		Snapshot       string
	}
	want := got{"", "https://a.test/form#part", 0, `- textbox "Name" @e1 value="kept" [focused]` + "\n"}
	if diff := cmp.Diff(want, got{res.LoaderID, href, res.Status, mustSnap(t, tab).Text}); diff != "" {
		t.Errorf("after Navigate to #part (-want +got):\n%s", diff)
	}
}

func TestNavigateReportsThePagesHTTPStatus(t *testing.T) {
	broken := cdptest.NewPage("https://a.test/broken", "Oops")
	broken.Status = 500
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"), broken)
	ctx := testCtx(t)
	var got []string
	for _, u := range []string{"https://a.test/", "https://a.test/broken", "https://a.test/missing"} {
		res, err := tab.Navigate(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %d", u, res.Status))
	}
	want := []string{"https://a.test/ 200", "https://a.test/broken 500", "https://a.test/missing 404"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestBackForwardAndReloadMoveThroughTheHistoryAsInChromium(t *testing.T) {
	pages := []*cdptest.Page{
		cdptest.NewPage("https://a.test/1", "One", cdptest.TextBox("Name")),
		cdptest.NewPage("https://a.test/2", "Two"),
		cdptest.NewPage("https://a.test/3", "Three"),
	}
	_, tab := pageTab(t, pages...)
	ctx := testCtx(t)
	if err := tab.Fill(ctx, mustSnap(t, tab).Find("textbox", "Name"), "typed"); err != nil {
		t.Fatal(err)
	}
	var steps []string
	note := func(what string, res browserpool.NavigateResult, err error) {
		t.Helper()
		if err != nil {
			steps = append(steps, what+": "+err.Error())
			return
		}
		steps = append(steps, fmt.Sprintf("%s: %s %d", what, res.FinalURL, res.Status))
	}
	reload := func() {
		res, err := tab.Reload(ctx)
		note("reload", res, err)
	}
	reload()
	for _, u := range []string{"https://a.test/2", "https://a.test/3"} {
		res, err := tab.Navigate(ctx, u)
		note("navigate", res, err)
	}
	res, err := tab.Back(ctx)
	note("back", res, err)
	res, err = tab.Back(ctx)
	note("back", res, err)
	res, err = tab.Forward(ctx)
	note("forward", res, err)
	res, err = tab.Navigate(ctx, "https://a.test/1")
	note("navigate", res, err)
	if _, err := tab.Forward(ctx); !errors.Is(err, browserpool.ErrNoHistory) {
		steps = append(steps, fmt.Sprintf("forward after a new navigation: %v, want ErrNoHistory", err))
	}
	want := []string{
		"reload: https://a.test/1 200",
		"navigate: https://a.test/2 200",
		"navigate: https://a.test/3 200",
		"back: https://a.test/2 200",
		"back: https://a.test/1 200",
		"forward: https://a.test/2 200",
		"navigate: https://a.test/1 200",
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("history moves (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(`- textbox "Name" @e2`+"\n", mustSnap(t, tab).Text); diff != "" {
		t.Errorf("the page after moving back to it is a fresh copy (-want +got):\n%s", diff)
	}
}

func TestTitlesAndURLsOfBlankUndefinedFailedAndBareHostPagesAreChromiums(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test:8443", "Home"))
	ctx := testCtx(t)
	type page struct{ URL, Title, TabTitle string }
	look := func() page {
		t.Helper()
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tabs, err := tab.Session().Tabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return page{info.URL, info.Title, tabs[0].Title}
	}
	got := []page{look()}
	for _, u := range []string{"https://a.test/undefined", "http://fail.invalid/x"} {
		tab.Navigate(ctx, u) // fail.invalid fails: the error page shows
		got = append(got, look())
	}
	blank, err := tab.Session().OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	var title string
	if err := blank.Evaluate(ctx, "document.title", &title); err != nil {
		t.Fatal(err)
	}
	want := []page{
		{"https://a.test:8443/", "Home", "Home"},
		{"https://a.test/undefined", "", "https://a.test/undefined"},
		{"chrome-error://chromewebdata/", "fail.invalid", "fail.invalid"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if title != "" {
		t.Errorf("about:blank's document.title = %q, want \"\"", title)
	}
}

func TestAScreenshotHasTheViewportsDevicePixels(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", cdptest.Text("x")))
	ctx := testCtx(t)
	if err := tab.SetViewport(ctx, 400, 300, 2); err != nil {
		t.Fatal(err)
	}
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{NoFile: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([2]int{800, 600}, [2]int{shot.Width, shot.Height}); diff != "" {
		t.Errorf("screenshot size of a 400x300 viewport at scale 2 (-want +got):\n%s", diff)
	}
}
