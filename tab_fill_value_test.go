package browserpool_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// valueFieldsPage has fields that take a value but no typing, or only a
// value in one form, each logging the events it gets.
const valueFieldsPage = `<title>values</title>
<label>Volume <input type="range" id="volume" min="0" max="100" value="50"></label>
<label>Colour <input type="color" id="colour" value="#000000"></label>
<label>Birthday <input type="date" id="birthday" value="2000-01-01"></label>
<p id="log"></p>
<script>
for (const el of document.querySelectorAll('input'))
	for (const type of ['input', 'change']) el.addEventListener(type, () => log.textContent += el.id + ':' + type + ' ');
</script>`

func TestFillSetsASliderAndAColourWellAndSaysWhichFormADateTakes(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(valueFieldsPage))
	})
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Fill(ctx, ref(t, s, "slider", "Volume"), "30"); err != nil {
		t.Errorf("Fill on a slider: %v", err)
	}
	if err := tab.Fill(ctx, ref(t, s, "ColorWell", "Colour"), "#1e90ff"); err != nil {
		t.Errorf("Fill on a colour well: %v", err)
	}
	err := tab.Fill(ctx, ref(t, s, "Date", "Birthday"), "02/29/2024")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "YYYY-MM-DD") {
		t.Errorf("Fill of a date in the form the page displays: %v, want ErrInvalidArgument naming YYYY-MM-DD", err)
	}
	got := eval[string](t, tab, "[volume.value, colour.value, birthday.value, log.textContent].join(' | ')")
	want := "30 | #1e90ff | 2000-01-01 | volume:input volume:change colour:input colour:change "
	if got != want {
		t.Errorf("fields and events: %q, want %q (the refused date kept, with no event)", got, want)
	}
	if err := tab.Fill(ctx, ref(t, s, "Date", "Birthday"), "2024-02-29"); err != nil {
		t.Errorf("Fill of a date in ISO form: %v", err)
	}
	if got := eval[string](t, tab, "birthday.value"); got != "2024-02-29" {
		t.Errorf("the date field holds %q, want 2024-02-29", got)
	}
}
