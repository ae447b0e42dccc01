package browserpool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// refNamed returns the ref of the element named name in s, whatever its
// role (a date field's differs between Chromium versions), or fails the
// test.
func refNamed(t testing.TB, s browserpool.Snapshot, name string) string {
	t.Helper()
	for _, r := range s.Refs {
		if r.Name == name {
			return r.Ref
		}
	}
	t.Fatalf("nothing named %q in the snapshot:\n%s", name, s.Text)
	return ""
}

// Helper 75's first finding: Type into a focused date field typed its
// keys into whichever part of the field had the focus, in the order the
// locale shows them, and left it empty (or held another date) with a nil
// error.
func TestTypeIntoAFocusedDateTimeSliderOrColourFieldTypesNothingAndNamesFillWithTheValuesForm(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>typed</title>
<label>Day <input type=date id=day></label>
<label>Hour <input type=time id=hour></label>
<label>When <input type=datetime-local id=moment></label>
<label>Month <input type=month id=month></label>
<label>Week <input type=week id=week></label>
<label>Volume <input type=range id=volume value=50></label>
<label>Colour <input type=color id=colour></label>
<script>window.keys = 0; addEventListener('keydown', () => keys++, true)</script>`)
	for _, c := range []struct{ id, text, form string }{
		{"day", "2024-02-29", "YYYY-MM-DD (2024-02-29)"},
		{"hour", "14:05", "HH:MM or HH:MM:SS, 24-hour (14:05)"},
		{"moment", "2024-02-29T14:05", "YYYY-MM-DDTHH:MM (2024-02-29T14:05)"},
		{"month", "2024-02", "YYYY-MM (2024-02)"},
		{"week", "2024-W09", "YYYY-Www (2024-W09)"},
		{"volume", "30", `Tab.Press "ArrowRight"`},
		{"colour", "#1e90ff", "#rrggbb (#1e90ff)"},
	} {
		if err := tab.Evaluate(ctx, "document.getElementById('"+c.id+"').focus()", nil); err != nil {
			t.Fatal(err)
		}
		err := tab.Type(ctx, c.text)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "nothing was typed") || !strings.Contains(err.Error(), "Tab.Fill") || !strings.Contains(err.Error(), c.form) {
			t.Errorf("Type(%q) into the focused #%s: %v; want ErrInvalidArgument saying nothing was typed and naming Tab.Fill and %s", c.text, c.id, err, c.form)
		}
	}
	got := eval[string](t, tab, "[day.value, hour.value, moment.value, month.value, week.value, volume.value, colour.value, keys].join(' ')")
	if want := "     50 #000000 0"; got != want {
		t.Errorf("fields and keys after the refused Types: %q, want %q (untouched, no key pressed)", got, want)
	}

	// What the hint says works.
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Fill(ctx, refNamed(t, s, "Day"), "2024-02-29"); err != nil {
		t.Fatalf("Fill of the date in the form the hint names: %v", err)
	}
	if got := eval[string](t, tab, "day.value"); got != "2024-02-29" {
		t.Errorf("after the Fill the date field holds %q, want 2024-02-29", got)
	}
}

// Helper 75's second finding: Fill of "cats\n" into an input filled
// "cats" with a nil error: the line break, which a caller writes to mean
// Enter or a value of several lines, was gone without a word.
func TestFillWithALineBreakIntoASingleLineFieldIsRefusedAndATextareaKeepsIt(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>lines</title>
<form onsubmit="document.title = 'sent'; return false">
<label>Search <input id=search value=dogs></label>
<label>Secret <input type=password id=secret value=old></label>
<label>Notes <textarea id=notes></textarea></label>
<div contenteditable id=editor role=textbox aria-label=Editor></div>
</form>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	for _, c := range []struct{ name, value string }{{"Search", "cats\n"}, {"Search", "a\r\nb"}, {"Search", "a\rb"}, {"Secret", "hunter2\n"}} {
		err := tab.Fill(ctx, refNamed(t, s, c.name), c.value)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "single-line field") || !strings.Contains(err.Error(), `Tab.Press "Enter"`) {
			t.Errorf("Fill(%s, %q): %v; want ErrInvalidArgument saying the field is single-line and to press Enter after filling", c.name, c.value, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("the refusal of a password repeats it: %v", err)
		}
	}
	if err := tab.Fill(ctx, refNamed(t, s, "Notes"), "one\ntwo\n"); err != nil {
		t.Errorf("Fill of two lines into a textarea: %v", err)
	}
	if err := tab.Fill(ctx, refNamed(t, s, "Editor"), "one\ntwo"); err != nil {
		t.Errorf("Fill of two lines into an editable element: %v", err)
	}
	var got []string
	if err := tab.Evaluate(ctx, "[search.value, secret.value, notes.value, editor.innerText, document.title]", &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"dogs", "old", "one\ntwo\n", "one\ntwo", "lines"}, got); diff != "" {
		t.Errorf("fields and title after the fills (-want +got):\n%s", diff)
	}
	// The trace says each fill on one line, its line breaks escaped.
	fills := traced(tab, "fill")
	if len(fills) < 2 || !strings.HasSuffix(fills[len(fills)-2], `"one\ntwo\n"`) || !strings.HasSuffix(fills[len(fills)-1], `"one\ntwo"`) {
		t.Errorf("the fills' trace args %q; want the last two to end in the values with \\n for each line break", fills)
	}
}

func TestFillWithALineBreakIntoAFakeTextBoxIsRefusedAsInChromium(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "Lines", cdptest.TextBox("Search").WithValue("dogs")).
		Script("search", func(p *cdptest.Page) (any, error) { return p.Values()["Search"], nil })
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	s := snap(t, tab, browserpool.SnapshotOptions{})
	err := tab.Fill(ctx, ref(t, s, "textbox", "Search"), "cats\n")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "single-line field") {
		t.Errorf(`Fill(Search, "cats\n") on the fake: %v; want ErrInvalidArgument saying the field is single-line`, err)
	}
	if got := eval[string](t, tab, "search"); got != "dogs" {
		t.Errorf("the refused fill left the field holding %q, want dogs", got)
	}
}

// Helper 75's third finding: a stale ref's error ended with the browser's
// own words ("...: rpc error: Node is detached from document (code =
// -32000)"), which tell a person or an LLM nothing to act on.
func TestAStaleRefsErrorSaysInWordsWhyTheElementIsGoneAndKeepsTheBrowsersAnswer(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>gone</title>
<label>Name <input id=name></label>
<label>Plan <select id=plan><option>Free<option>Pro</select></label>
<label>Photo <input type=file id=photo></label>
<button id=buy>Buy</button>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Evaluate(ctx, "for (const id of ['name', 'plan', 'photo', 'buy']) document.getElementById(id).remove()", nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "photo.png")
	if err := os.WriteFile(file, []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	name, plan, photo, buy := refNamed(t, s, "Name"), refNamed(t, s, "Plan"), refNamed(t, s, "Photo"), refNamed(t, s, "Buy")
	const removed = " is gone from the page: it was removed from its document"
	for _, c := range []struct {
		act, want string
		do        func() error
	}{
		{"Fill", name + removed + " (hint: take a new snapshot", func() error { return tab.Fill(ctx, name, "Ann") }},
		{"Select", plan + removed + " (hint: take a new snapshot", func() error { _, err := tab.Select(ctx, plan, "Pro"); return err }},
		{"Upload", photo + removed + ", or its frame navigated (hint: take a new snapshot", func() error { return tab.Upload(ctx, photo, file) }},
		{"Click", buy + removed + " (hint: take a new snapshot", func() error { return tab.Click(ctx, buy) }},
		{"Hover", buy + removed + " (hint: take a new snapshot", func() error { return tab.Hover(ctx, buy) }},
	} {
		staleSaysWhy(t, c.act, c.do(), c.want)
	}
}

func TestAStaleRefsErrorOnTheFakeSaysInWordsWhyTheElementIsGone(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "Gone", cdptest.TextBox("Name"))
	page.Add(cdptest.Button("Remove").Does(func(p *cdptest.Page) { p.Remove(p.Find("textbox", "Name")) }))
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Click(ctx, ref(t, s, "button", "Remove")); err != nil {
		t.Fatal(err)
	}
	name := ref(t, s, "textbox", "Name")
	staleSaysWhy(t, "Fill", tab.Fill(ctx, name, "Ann"), name+" is gone from the page: the browser no longer has it (it was removed, or its frame navigated) (hint: take a new snapshot")
}

// staleSaysWhy checks that err, the error of act on a ref whose element
// is gone, is an ErrStaleRef that says want and shows none of the
// browser's protocol text; when the browser's answer showed the element
// gone, the error still holds it for programs.
func staleSaysWhy(t *testing.T, act string, err error, want string) {
	t.Helper()
	if !errors.Is(err, browserpool.ErrStaleRef) {
		t.Errorf("%s on a removed element: %v, want ErrStaleRef", act, err)
		return
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("%s on a removed element says\n%s\nwant it to say %q", act, msg, want)
	}
	for _, raw := range []string{"rpc error", "code =", "-32000", "given id"} {
		if strings.Contains(msg, raw) {
			t.Errorf("%s on a removed element shows the browser's protocol text %q: %s", act, raw, msg)
		}
	}
	var re *rpcc.ResponseError
	if act != "Select" && act != "Upload" && (!errors.As(err, &re) || re.Message == "") { // the page says so for these two
		t.Errorf("%s on a removed element: errors.As finds no *rpcc.ResponseError in %v, want the browser's answer kept for programs", act, err)
	}
}
