package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// These hold the fake to what Chromium was seen to do; the root package's
// TestTheFakeDoesWhatChromiumDoesWhereItOnceDidNot
// runs the same steps on both.

func TestAPageTitleReadsAsDocumentTitleWithItsWhitespaceCollapsed(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "  Hello\n\t  World  \r\n"))
	ctx := testCtx(t)
	info, err := tab.PageInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var title string
	if err := tab.Evaluate(ctx, "document.title", &title); err != nil {
		t.Fatal(err)
	}
	snap := mustSnap(t, tab)
	if diff := cmp.Diff([]string{"Hello World", "Hello World", "Hello World"}, []string{info.Title, title, snap.Title}); diff != "" {
		t.Errorf("PageInfo, document.title and Snapshot's title (-want +got):\n%s", diff)
	}
}

func TestFillingLineBreaksIntoAOneLineFieldIsRefusedAndLeavesItAsItWas(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", cdptest.TextBox("Name").WithValue("x")).
		Script("field", func(p *cdptest.Page) (any, error) { return p.Values()["Name"], nil }))
	ctx := testCtx(t)
	ref := mustSnap(t, tab).Find("textbox", "Name")
	err := tab.Fill(ctx, ref, "a\nb\r\nc\rd")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "single-line field") {
		t.Errorf("Fill of line breaks into a one-line field: %v, want ErrInvalidArgument saying the field is single-line (as an <input> in Chromium)", err)
	}
	var got string
	if err := tab.Evaluate(ctx, "field", &got); err != nil {
		t.Fatal(err)
	}
	if got != "x" {
		t.Errorf("the field holds %q after the refused fill, want %q", got, "x")
	}
}

func TestALegacyOctalLiteralIsOctalAsInSloppyJavaScript(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"))
	ctx := testCtx(t)
	var got []float64
	for _, expr := range []string{"010", "0777", "08", "09.5", "00", "0.5", "-010"} {
		var n float64
		if err := tab.Evaluate(ctx, expr, &n); err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		got = append(got, n)
	}
	if diff := cmp.Diff([]float64{8, 511, 8, 9.5, 0, 0.5, -8}, got); diff != "" {
		t.Errorf("010, 0777, 08, 09.5, 00, 0.5, -010 (-want +got):\n%s", diff)
	}
	// A legacy octal with a fraction is a SyntaxError in JavaScript: not
	// understood, never a guess.
	var n float64
	if err := tab.Evaluate(ctx, "010.5", &n); !errors.Is(err, browserpool.ErrProtocol) {
		t.Errorf("010.5: %v (got %v), want ErrProtocol (not scripted)", err, n)
	}
}

func TestLoadingTheURLATabIsOnReplacesItsHistoryEntryAndKeepsTheForwardOnes(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"), cdptest.NewPage("https://b.test/", "B"))
	ctx := testCtx(t)
	var got []string
	step := func(name string, res browserpool.NavigateResult, err error) {
		if err != nil {
			got = append(got, name+": "+err.Error())
			return
		}
		got = append(got, name+": "+res.URL)
	}
	res, err := tab.Navigate(ctx, "https://a.test/")
	step("a again", res, err)
	_, err = tab.Back(ctx)
	got = append(got, fmt.Sprintf("back fails: %v", err != nil)) // the one entry replaced, none behind
	res, err = tab.Navigate(ctx, "https://b.test/")
	step("b", res, err)
	res, err = tab.Back(ctx)
	step("back", res, err)
	res, err = tab.Navigate(ctx, "https://a.test/")
	step("a at back", res, err)
	res, err = tab.Forward(ctx)
	step("forward", res, err)
	want := []string{"a again: https://a.test/", "back fails: true", "b: https://b.test/", "back: https://a.test/", "a at back: https://a.test/", "forward: https://b.test/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAnEmptyElementIsNotVisibleUntilItShowsSomething(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		cdptest.Group("region", "", cdptest.Text("")).WithID("results"),
		cdptest.Button("Search").Does(func(p *cdptest.Page) {
			p.After(100*time.Millisecond, func(p *cdptest.Page) {
				p.Find("region", "").Children[0].Name = "3 results"
			})
		}),
	))
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := tab.WaitVisible(short, "#results"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitVisible on the empty box: %v; want it to wait out its deadline, as Chromium does (the box has no size)", err)
	}
	if err := tab.Click(ctx, mustSnap(t, tab).Find("button", "Search")); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitVisible(ctx, "#results"); err != nil {
		t.Errorf("WaitVisible once the box shows text: %v", err)
	}
}

func TestTabPastTheLastControlLeavesThePageAndTheNextComesBackAtTheFirst(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", cdptest.TextBox("One"), cdptest.TextBox("Two")).
		Script("fields", func(p *cdptest.Page) (any, error) { v := p.Values(); return v["One"] + "|" + v["Two"], nil }))
	ctx := testCtx(t)
	if err := tab.Click(ctx, mustSnap(t, tab).Find("textbox", "One")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range 3 { // Two, out of the page, One
		if err := tab.Press(ctx, "Tab"); err != nil {
			t.Fatal(err)
		}
		// Out of the page, nothing has the focus: Type refuses.
		if err := tab.Type(ctx, fmt.Sprint(i)); (i == 1) != errors.Is(err, browserpool.ErrFocusLost) || i != 1 && err != nil {
			t.Fatalf("Type after Tab %d: %v", i+1, err)
		}
		var v string
		if err := tab.Evaluate(ctx, "fields", &v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if diff := cmp.Diff([]string{"|0", "|0", "2|0"}, got); diff != "" {
		t.Errorf("the fields after each Tab and a typed digit (-want +got):\n%s", diff)
	}
}

func TestSelectInAListBoxReportsTheOptionsInTheirOrderEachOnce(t *testing.T) {
	many := cdptest.Select("Many", "A", "B", "C")
	many.Multiple, many.Value = true, ""
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", many))
	ctx := testCtx(t)
	got, err := tab.Select(ctx, mustSnap(t, tab).Find("combobox", "Many"), "C", "A", "C")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A", "C"}, got); diff != "" {
		t.Errorf("selected (-want +got):\n%s", diff)
	}
}

func TestAListBoxShowsItsOptionsAndWhichAreSelected(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A", cdptest.ListBox("Many", "A", "B", "C")))
	ctx := testCtx(t)
	if _, err := tab.Select(ctx, mustSnap(t, tab).Find("listbox", "Many"), "B"); err != nil {
		t.Fatal(err)
	}
	want := "- listbox \"Many\" @e1 [focused]\n  - option \"A\"\n  - option \"B\" [selected]\n  - option \"C\"\n"
	if diff := cmp.Diff(want, mustSnap(t, tab).Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestUploadOnALinkNamesTheURLItsClickWouldFollowResolved(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/docs/index.html", "A", cdptest.Link("Next", "next.html")))
	ctx := testCtx(t)
	file := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(file, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := tab.Upload(ctx, mustSnap(t, tab).Find("link", "Next"), file)
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "follows its link to https://a.test/docs/next.html ") {
		t.Errorf("Upload on a link: %v; want ErrInvalidArgument naming https://a.test/docs/next.html, as a.href reads in Chromium", err)
	}
}
