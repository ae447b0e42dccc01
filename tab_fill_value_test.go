package browserpool_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// valueFieldsPage has fields that take a value but no typing, or only a
// value in one form, each logging the events it gets.
const valueFieldsPage = `<title>values</title>
<label>Volume <input type="range" id="volume" min="0" max="100" value="50"></label>
<label>Colour <input type="color" id="colour" value="#000000"></label>
<label>Birthday <input type="date" id="birthday" value="2000-01-01"></label>
<label>Count <input type="number" id="count" value="5"></label>
<p id="log"></p>
<script>
for (const el of document.querySelectorAll('input'))
	for (const type of ['input', 'change']) el.addEventListener(type, () => log.textContent += el.id + ':' + type + ' ');
</script>`

func TestFillSetsASliderAndAColourWellAndSaysWhichFormADateTakes(t *testing.T) {
	ctx, tab, _ := htmlTab(t, valueFieldsPage)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Fill(ctx, ref(t, s, "slider", "Volume"), "30"); err != nil {
		t.Errorf("Fill on a slider: %v", err)
	}
	if err := tab.Fill(ctx, refNamed(t, s, "Colour"), "#1e90ff"); err != nil {
		t.Errorf("Fill on a colour well: %v", err)
	}
	err := tab.Fill(ctx, refNamed(t, s, "Birthday"), "02/29/2024")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "YYYY-MM-DD") {
		t.Errorf("Fill of a date in the form the page displays: %v, want ErrInvalidArgument naming YYYY-MM-DD", err)
	}
	got := eval[string](t, tab, "[volume.value, colour.value, birthday.value, log.textContent].join(' | ')")
	want := "30 | #1e90ff | 2000-01-01 | volume:input volume:change colour:input colour:change "
	if got != want {
		t.Errorf("fields and events: %q, want %q (the refused date kept, with no event)", got, want)
	}
	for _, c := range []struct{ role, name, value string }{{"spinbutton", "Count", "abc"}, {"spinbutton", "Count", "1,5"}, {"slider", "Volume", "loud"}} {
		err := tab.Fill(ctx, ref(t, s, c.role, c.name), c.value)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "is not a number") {
			t.Errorf("Fill of %q into the %s %q: %v, want ErrInvalidArgument saying it is not a number", c.value, c.role, c.name, err)
		}
	}
	if err := tab.Fill(ctx, ref(t, s, "slider", "Volume"), "150"); err != nil {
		t.Errorf("Fill of 150 into a slider up to 100: %v", err)
	}
	if got := eval[string](t, tab, "count.value + ' ' + volume.value"); got != "5 100" {
		t.Errorf("count and volume: %q, want the count kept and the slider at its max", got)
	}
	if got := traced(tab, "fill"); !strings.Contains(got[len(got)-1], `(the slider made it "100": its min, max or step)`) {
		t.Errorf("the slider's fill is traced %q, want it to say the slider made it 100", got[len(got)-1])
	}
	if err := tab.Fill(ctx, refNamed(t, s, "Birthday"), "2024-02-29"); err != nil {
		t.Errorf("Fill of a date in ISO form: %v", err)
	}
	if got := eval[string](t, tab, "birthday.value"); got != "2024-02-29" {
		t.Errorf("the date field holds %q, want 2024-02-29", got)
	}
}

// A number past a field's min or max, or off its step, was filled
// silently: the browser marks the field invalid and its form is not sent.
func TestFillRefusesANumberItsFieldWouldHoldAsInvalid(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>numbers</title>
<label>Guests <input type="number" id="guests" min="1" max="10" step="2" value="3"></label>
<label>Price <input type="number" id="price" step="any" value="1"></label>
<label>Age <input type="number" id="age"></label>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	guests, price, age := ref(t, s, "spinbutton", "Guests"), ref(t, s, "spinbutton", "Price"), ref(t, s, "spinbutton", "Age")
	for _, c := range []struct{ ref, value, says string }{
		{guests, "50", `takes at least 1, at most 10, in steps of 2, and "50" is above its max`},
		{guests, "0", `"0" is below its min`},
		{guests, "4", `"4" is off its step`}, // the steps run from the min: 1, 3, 5, …
		{age, "1.5", `takes whole numbers (no step attribute: steps of 1), and "1.5" is off its step`},
	} {
		err := tab.Fill(ctx, c.ref, c.value)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Fill(%s, %q): %v; want ErrInvalidArgument saying %s", c.ref, c.value, err, c.says)
		}
	}
	for _, c := range []struct{ ref, value string }{{guests, "7"}, {price, "19.99"}, {age, "42"}} {
		if err := tab.Fill(ctx, c.ref, c.value); err != nil {
			t.Errorf("Fill(%s, %q): %v", c.ref, c.value, err)
		}
	}
	if got := eval[string](t, tab, "[guests.value, price.value, age.value].join(' ')"); got != "7 19.99 42" {
		t.Errorf("the fields hold %q, want the values the fields take (7 19.99 42), none of the refused", got)
	}
}

func TestTypePressesEachKeySoKeyListeningWidgetsReact(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>type</title><label>City <input id="city"></label><ul id="hints"></ul><p id="log"></p>
<textarea aria-label="Note" id="note"></textarea>
<script>
const cities = ['Paris', 'Parma', 'Lyon'];
city.addEventListener('keyup', () => hints.innerHTML = cities.filter(c => city.value && c.startsWith(city.value)).map(c => '<li>' + c + '</li>').join(''));
for (const type of ['keydown', 'keypress', 'input', 'keyup']) city.addEventListener(type, e => log.textContent += type + (e.key ? ':' + e.key : '') + ' ');
</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Click(ctx, ref(t, s, "textbox", "City")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Type(ctx, "Pa"); err != nil {
		t.Fatal(err)
	}
	got := eval[string](t, tab, "hints.textContent + ' | ' + log.textContent")
	want := "ParisParma | keydown:P keypress:P input keyup:P keydown:a keypress:a input keyup:a "
	if got != want {
		t.Errorf("after typing Pa: %q, want %q", got, want)
	}
	if err := tab.Click(ctx, ref(t, s, "textbox", "Note")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Type(ctx, "héllo\r\n日本\tx"); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, tab, "note.value + '|' + (document.activeElement === note)"); got != "héllo\n日本|false" {
		t.Errorf("the text area holds %q, want the text up to the tab, the newline as Enter, and the tab moving the focus away", got)
	}
}

// BenchmarkType types 100 characters key by key into a text area (the
// metric keys/s): what typing costs now that each character is a key
// press, sent one at a time (see Type: a key may open a dialog).
func BenchmarkType(b *testing.B) {
	requireBrowser(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>type</title><textarea aria-label="Note" id="note"></textarea>`))
	}))
	defer srv.Close()
	ctx := ctxT(b)
	tab := mustTab(b, ctx, mustOpen(b, ctx, newRealPool(b, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, srv.URL); err != nil {
		b.Fatal(err)
	}
	if err := tab.Click(ctx, ref(b, snap(b, tab, browserpool.SnapshotOptions{}), "textbox", "Note")); err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("abcdefghij", 10)
	for b.Loop() {
		if err := tab.Type(ctx, text); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(text))/b.Elapsed().Seconds(), "keys/s")
}

func TestTypeIntoAPasswordFieldAfterATabNeverReachesTheTrace(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>login</title><label>Email <input id="email"></label><label>Password <input id="pw" type="password"></label>`)
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "textbox", "Email")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Type(ctx, "me@example.com\tS3cret-pw"); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, tab, "email.value + ' ' + pw.value"); got != "me@example.com S3cret-pw" {
		t.Errorf("the fields hold %q, want the email, then the password after the Tab", got)
	}
	if diff := cmp.Diff([]string{"***"}, traced(tab, "type")); diff != "" {
		t.Errorf("the typing's trace (-want +got):\n%s", diff)
	}
}

func TestTypeStopsAtAKeyThatOpensADialogLeftForTheCaller(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>keys</title><label>Word <input id="word"></label>
<script>word.addEventListener('keydown', e => { if (e.key === 'x') confirm('Really x?'); });</script>`)
	tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Defer: time.Minute}
	})
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "textbox", "Word")); err != nil {
		t.Fatal(err)
	}
	if err := tab.Type(ctx, "axbcd"); !errors.Is(err, browserpool.ErrDialogOpen) {
		t.Fatalf("Type into a field whose x opens a confirm: %v, want ErrDialogOpen", err)
	}
	if err := tab.AnswerDialog(ctx, true, ""); err != nil {
		t.Fatal(err)
	}
	if got := eval[string](t, tab, "word.value"); got != "ax" {
		t.Errorf("after the dialog was answered the field holds %q, want %q: no key after the one that opened it", got, "ax")
	}
}

// Helper 67's Fill findings: a field whose input navigates (the fill is
// done, and was an ErrStaleRef inviting a second fill), a real-looking
// date that does not exist (the error blamed its form), and a read-only
// field (whose hint said to wait until it is enabled).
func TestFillIntoAFieldThatNavigatesAnImpossibleDateAndAReadOnlyField(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{
		"/f": `<!doctype html><title>F</title>
<label>Search <input oninput="location.href = '/results?q=' + this.value"></label>
<label>When <input type=date></label>
<label>Code <input readonly value=x></label>`,
		"/results": `<title>Results</title>`,
	})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	tab, err := s.OpenTab(ctx, base+"/f")
	if err != nil {
		t.Fatal(err)
	}
	sn := snap(t, tab, browserpool.SnapshotOptions{})
	var be *browserpool.Error
	err = tab.Fill(ctx, refNamed(t, sn, "When"), "2024-02-30")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !errors.As(err, &be) || !strings.Contains(be.Detail, "no real date") {
		t.Errorf("Fill of 30 February: %v; want ErrInvalidArgument saying it is no real date", err)
	}
	err = tab.Fill(ctx, sn.Find("textbox", "Code"), "y")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !errors.As(err, &be) || strings.Contains(be.Hint, "enabled") {
		t.Errorf("Fill of a read-only field: %v; want ErrInvalidArgument whose hint does not say to wait until it is enabled", err)
	}
	if err := tab.Fill(ctx, sn.Find("textbox", "Search"), "go"); err != nil {
		t.Errorf("Fill of a field whose input navigates: %v; want nil, the value went in", err)
	}
	trace := tab.Trace()
	if last := trace[len(trace)-1]; last.Action != "fill" || !strings.Contains(last.Args, "the page navigated as the value went in") {
		t.Errorf("the fill's trace %+v does not say the page navigated", last)
	}
}
