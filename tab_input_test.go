package browserpool_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestInputOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("a covered button is refused naming what covers it, and clicked once uncovered", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		buy, accept := ref(t, s, "button", "Buy now"), ref(t, s, "button", "Accept cookies")
		err := tab.Click(ctx, buy)
		if !errors.Is(err, browserpool.ErrCovered) {
			t.Fatalf("Click(covered) error = %v, want ErrCovered", err)
		}
		for _, want := range []string{buy, `button "Buy now"`, `div#banner.cookie-banner "We use cookies`, "hint: "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		}
		if got := eval[string](t, tab, "document.title"); got != "Covered" {
			t.Fatalf("a refused click clicked anyway: title %q", got)
		}
		if err := tab.Click(ctx, accept); err != nil {
			t.Fatal(err)
		}
		if err := tab.Click(ctx, buy); err != nil {
			t.Fatalf("Click after the banner left: %v", err)
		}
		if got := eval[string](t, tab, "document.title"); got != "bought" {
			t.Errorf("title after clicking Buy now = %q, want bought", got)
		}
	})

	t.Run("clicks scroll far elements into view and accept a link's inner spans", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		if err := tab.Evaluate(ctx, "document.getElementById('banner').remove()", nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Far away")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.title"); got != "far clicked" {
			t.Errorf("title = %q, want far clicked", got)
		}
		if err := tab.Click(ctx, ref(t, s, "link", "Link with spans")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.title"); got != "span link" {
			t.Errorf("title = %q, want span link", got)
		}
		if err := tab.Hover(ctx, ref(t, s, "button", "Hover me")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.title"); got != "hovered" {
			t.Errorf("title after Hover = %q, want hovered", got)
		}
	})

	t.Run("an element hidden after the snapshot is not visible and a removed one is stale", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		vanish := ref(t, s, "button", "Vanishing")
		for _, hide := range []string{"display = 'none'", "visibility = 'hidden'", "width = '0px'; el.style.height = '0px'; el.style.padding = '0'; el.style.border = '0'"} {
			js := "(() => { const el = document.getElementById('vanish'); el.removeAttribute('style'); el.style." + hide + " })()"
			if err := tab.Evaluate(ctx, js, nil); err != nil {
				t.Fatal(err)
			}
			if err := tab.Click(ctx, vanish); !errors.Is(err, browserpool.ErrNotVisible) {
				t.Errorf("Click after style.%s: error = %v, want ErrNotVisible", hide, err)
			}
		}
		if err := tab.Evaluate(ctx, "document.getElementById('vanish').remove()", nil); err != nil {
			t.Fatal(err)
		}
		err := tab.Click(ctx, vanish)
		if !errors.Is(err, browserpool.ErrStaleRef) || !strings.Contains(err.Error(), "take a new snapshot") {
			t.Errorf("Click on a removed element: error = %v, want ErrStaleRef telling to take a new snapshot", err)
		}
	})

	t.Run("a click at coordinates hits whatever is there", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		if err := tab.ClickAt(ctx, 150, 140); err != nil { // the banner, over Buy now
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.title"); got != "Covered" {
			t.Errorf("a click on the banner reached the button under it: title %q", got)
		}
		if err := tab.Evaluate(ctx, "document.getElementById('banner').remove()", nil); err != nil {
			t.Fatal(err)
		}
		if err := tab.ClickAt(ctx, 150, 140); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.title"); got != "bought" {
			t.Errorf("title = %q, want bought", got)
		}
		if err := tab.ClickAt(ctx, -1, 5); !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("ClickAt(-1, 5) error = %v, want ErrInvalidArgument", err)
		}
	})

	t.Run("fill updates React-style controlled fields that assignment does not", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		// The page's value tracker hides scripted assignments, as React's does.
		if err := tab.Evaluate(ctx, "(() => { const el = document.getElementById('name'); el.value = 'Script'; el.dispatchEvent(new Event('input', {bubbles: true})); })()", nil); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('state').textContent"); got != "{}" {
			t.Fatalf("the page noticed a scripted assignment (%s): it does not mimic React", got)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, f := range []struct{ name, value string }{
			{"Name", "Ann Example"}, {"Email", "ann@example.com"}, {"Password", "hunter2!"}, {"Bio", "line one\nline two"}, {"Notes", "new notes"},
		} {
			if err := tab.Fill(ctx, ref(t, s, "textbox", f.name), f.value); err != nil {
				t.Fatalf("Fill(%s): %v", f.name, err)
			}
		}
		var state map[string]any
		if err := tab.Evaluate(ctx, "JSON.parse(document.getElementById('state').textContent)", &state); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"name": "Ann Example", "email": "ann@example.com", "password": "hunter2!", "bio": "line one\nline two", "editor": "new notes"}
		if diff := cmp.Diff(want, state); diff != "" {
			t.Errorf("page state after Fill (-want +got):\n%s", diff)
		}
		if err := tab.Fill(ctx, ref(t, s, "textbox", "Name"), ""); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('name').value + '|' + JSON.parse(document.getElementById('state').textContent).name"); got != "|" {
			t.Errorf("after Fill with empty text: value|state = %q, want |", got)
		}
	})

	t.Run("fill fires one input event, typing's, and one change", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		count := `(() => { window.fired = []; for (const id of ['name', 'editor']) for (const type of ['input', 'change'])
			document.getElementById(id).addEventListener(type, ev => window.fired.push(id + ' ' + type + (ev.isTrusted ? '' : ' (script)'))); })()`
		if err := tab.Evaluate(ctx, count, nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, f := range []struct {
			name, value string
			want        []string
		}{
			{"Name", "Ann", []string{"name input", "name change (script)"}},
			{"Name", "", []string{"name input", "name change (script)"}},
			{"Notes", "new notes", []string{"editor input", "editor change (script)"}},
		} {
			if err := tab.Evaluate(ctx, "window.fired = []", nil); err != nil {
				t.Fatal(err)
			}
			if err := tab.Fill(ctx, ref(t, s, "textbox", f.name), f.value); err != nil {
				t.Fatalf("Fill(%s, %q): %v", f.name, f.value, err)
			}
			// Focus left Name for Notes: the browser's own change of Name
			// is not Fill's.
			got := eval[[]string](t, tab, "window.fired.filter(f => f !== 'name change')")
			if diff := cmp.Diff(f.want, got); diff != "" {
				t.Errorf("events Fill(%s, %q) fired (-want +got):\n%s", f.name, f.value, diff)
			}
		}
	})

	t.Run("fill refuses a value past a field's maxlength, saying the limit, and leaves the field as it was", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.Evaluate(ctx, "document.getElementById('name').maxLength = 5; document.getElementById('name').value = 'Ann'", nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		name := ref(t, s, "textbox", "Name")
		err := tab.Fill(ctx, name, "1234567")
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "takes at most 5 characters (its maxlength), and the value has 7") {
			t.Errorf("Fill of 7 characters into a maxlength of 5: error = %v, want ErrInvalidArgument saying the limit", err)
		}
		if got := eval[string](t, tab, "document.getElementById('name').value"); got != "Ann" {
			t.Errorf("the field holds %q, want what it held before the refused fill", got)
		}
		// The limit counts as the browser does (UTF-16 code units): 5 fit.
		if err := tab.Fill(ctx, name, "😀abc"); err != nil {
			t.Errorf("Fill of 5 code units into a maxlength of 5: %v", err)
		}
		if err := tab.Fill(ctx, name, "😀😀😀"); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "the value has 6") {
			t.Errorf("Fill of 6 code units (3 emoji) into a maxlength of 5: %v, want ErrInvalidArgument", err)
		}
		if got := eval[string](t, tab, "document.getElementById('name').value"); got != "😀abc" {
			t.Errorf("the field holds %q, want 😀abc", got)
		}
	})

	t.Run("fill refuses what is not a text field and says what to use", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, c := range []struct{ role, name, hint string }{
			{"checkbox", "I agree to the terms", "Tab.Click"},
			{"combobox", "Color", "Tab.Select"},
			{"button", "Create account", "Tab.Click"},
		} {
			err := tab.Fill(ctx, ref(t, s, c.role, c.name), "x")
			if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), c.hint) {
				t.Errorf("Fill(%s %q) error = %v, want ErrInvalidArgument pointing to %s", c.role, c.name, err, c.hint)
			}
		}
	})

	t.Run("type refuses with nothing focused and says when the page took the focus away part way", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		add := `document.body.insertAdjacentHTML('beforeend', '<div id=lossy><label>Lossy <input id=li></label></div>');
			window.bodyKeys = 0; window.addEventListener('keydown', e => { if (e.target === document.body) bodyKeys++ });
			// A field redrawn on each key, the focus not put back.
			lossy.addEventListener('input', e => { const v = e.target.value; lossy.innerHTML = '<label>Lossy <input id=li></label>'; li.value = v; });
			document.activeElement.blur(); 1`
		if err := tab.Evaluate(ctx, add, nil); err != nil {
			t.Fatal(err)
		}
		if err := tab.Type(ctx, "gs"); !errors.Is(err, browserpool.ErrFocusLost) || !strings.Contains(err.Error(), "nothing was typed") || eval[int](t, tab, "bodyKeys") != 0 {
			t.Errorf("Type with nothing focused: %v, %d keys at the body; want ErrFocusLost saying nothing was typed, and none", err, eval[int](t, tab, "bodyKeys"))
		}
		if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "textbox", "Lossy")); err != nil {
			t.Fatal(err)
		}
		err := tab.Type(ctx, "hello")
		if !errors.Is(err, browserpool.ErrFocusLost) || !strings.Contains(err.Error(), "1 of the first 5 keys reached it, the others went to body") {
			t.Errorf("Type into a field the page redraws on each key: %v (the field holds %q); want ErrFocusLost saying 1 of 5 keys reached it", err, eval[string](t, tab, "li.value"))
		}
	})

	t.Run("type and press send text and US key codes to the focused field", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		name := ref(t, s, "textbox", "Name")
		if err := tab.Click(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := tab.Type(ctx, "héllo wörld"); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('name').value"); got != "héllo wörld" {
			t.Errorf("value after Type = %q", got)
		}
		if err := tab.Evaluate(ctx, "keylog.length = 0", nil); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"Control+A", "Backspace", "A", "!", "Shift+b", "ArrowLeft"} {
			if err := tab.Press(ctx, k); err != nil {
				t.Fatalf("Press(%q): %v", k, err)
			}
		}
		if got := eval[string](t, tab, "document.getElementById('name').value"); got != "A!B" {
			t.Errorf("value after the keys = %q, want A!B", got)
		}
		// key code ctrl shift alt meta
		want := []string{
			"Control ControlLeft 17 true false false false",
			"a KeyA 65 true false false false",
			"Backspace Backspace 8 false false false false",
			"A KeyA 65 false true false false",
			"! Digit1 49 false true false false",
			"Shift ShiftLeft 16 false true false false",
			"B KeyB 66 false true false false",
			"ArrowLeft ArrowLeft 37 false false false false",
		}
		if diff := cmp.Diff(want, eval[[]string](t, tab, "keylog")); diff != "" {
			t.Errorf("keydown events (-want +got):\n%s", diff)
		}
		if err := tab.Press(ctx, "Enter"); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "JSON.parse(document.getElementById('state').textContent).submitted")
		for _, bad := range []string{"", "Hyper+a", "NoSuchKey", "Control+"} {
			if err := tab.Press(ctx, bad); !errors.Is(err, browserpool.ErrInvalidArgument) {
				t.Errorf("Press(%q) error = %v, want ErrInvalidArgument", bad, err)
			}
		}
	})

	t.Run("select chooses options by value or label and lists them when none matches", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		color, toppings := ref(t, s, "combobox", "Color"), ref(t, s, "listbox", "Toppings")
		got, err := tab.Select(ctx, color, "Blue")
		if err != nil || !cmp.Equal(got, []string{"b"}) {
			t.Errorf("Select(Color, Blue) = %v, %v; want [b]", got, err)
		}
		got, err = tab.Select(ctx, toppings, "Cheese", "Olives")
		if err != nil || !cmp.Equal(got, []string{"Cheese", "Olives"}) {
			t.Errorf("Select(Toppings, Cheese, Olives) = %v, %v", got, err)
		}
		var state map[string]any
		if err := tab.Evaluate(ctx, "JSON.parse(document.getElementById('state').textContent)", &state); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"color": "b", "toppings": []any{"Cheese", "Olives"}}, state); diff != "" {
			t.Errorf("page state (-want +got):\n%s", diff)
		}
		_, err = tab.Select(ctx, color, "Purple")
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), `its 3 options: "Red", "Green", "Blue"`) {
			t.Errorf("Select(Purple) error = %v, want ErrInvalidArgument listing the options", err)
		}
		if _, err := tab.Select(ctx, color, "r", "g"); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "given 2 values") {
			t.Errorf("two values for a single select: error = %v, want ErrInvalidArgument saying 2 were given", err)
		}
	})

	t.Run("select refuses what a user cannot choose, names options like a missing one, and fires nothing for no change", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		add := `document.body.insertAdjacentHTML('beforeend', '<label>Car <select id=car><option>Volvo</option><optgroup label=German disabled><option>Audi</option></optgroup></select></label>' +
			'<label>Country <select id=country>' + Array.from({length: 40}, (_, i) => '<option>' + (i === 37 ? 'United States' : 'Country ' + i) + '</option>').join('') + '</select></label>');
			window.changes = 0; car.addEventListener('change', () => changes++); 1`
		if err := tab.Evaluate(ctx, add, nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		car, country := ref(t, s, "combobox", "Car"), ref(t, s, "combobox", "Country")
		if _, err := tab.Select(ctx, car, "Audi"); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), `option "Audi" is disabled`) {
			t.Errorf("Select of an option in a disabled optgroup: %v; want ErrInvalidArgument saying it is disabled", err)
		}
		if got, err := tab.Select(ctx, car, "Volvo"); err != nil || !cmp.Equal(got, []string{"Volvo"}) || eval[float64](t, tab, "changes") != 0 {
			t.Errorf("Select of the option chosen already = %v, %v, with %v change events; want [Volvo] and none", got, err, eval[float64](t, tab, "changes"))
		}
		_, err := tab.Select(ctx, country, "united states")
		for _, want := range []string{`options like it: "United States"`, `its 40 options: "Country 0", `, `"Country 29", +10 more`} {
			if !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("Select(united states) = %v; want it to say %s", err, want)
			}
		}
	})

	t.Run("scroll turns the wheel and the page scrolls", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		if err := tab.Scroll(ctx, browserpool.ScrollOptions{DeltaY: 400}); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "scrollY >= 400")
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.ScrollY < 400 || info.PageHeight != 2400 {
			t.Errorf("PageInfo after scrolling = %+v, want ScrollY >= 400 and PageHeight 2400", info)
		}
	})

	t.Run("scroll by a ref turns the wheel over its scroll box as it is, and nothing else scrolls", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		add := `document.body.insertAdjacentHTML('afterbegin', '<div id=box style="height:100px;overflow:auto">' +
			Array.from({length: 10}, (_, i) => '<div style="height:35px">Row ' + i + (i === 9 ? ' <button>Last row</button>' : '') + '</div>').join('') + '</div>'); 1`
		if err := tab.Evaluate(ctx, add, nil); err != nil {
			t.Fatal(err)
		}
		last := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Last row")
		for _, c := range []struct{ dy, want float64 }{{100, 100}, {-50, 50}} {
			if err := tab.Scroll(ctx, browserpool.ScrollOptions{Ref: last, DeltaY: c.dy}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, fmt.Sprintf("the box scrolled by %g to %g", c.dy, c.want), func() bool { return eval[float64](t, tab, "box.scrollTop") == c.want })
			if y := eval[float64](t, tab, "scrollY"); y != 0 {
				t.Errorf("the page scrolled to %g as the box did; want it left at 0", y)
			}
		}
	})

	t.Run("upload sets files and refuses relative, missing and extra paths", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/upload.html")
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.csv")
		os.WriteFile(a, []byte("hello"), 0o600)
		os.WriteFile(b, []byte("1,2,3"), 0o600)
		s := snap(t, tab, browserpool.SnapshotOptions{})
		one, many := ref(t, s, "button", "One file"), ref(t, s, "button", "Many files")
		if err := tab.Upload(ctx, one, a); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'one: a.txt/5'")
		if err := tab.Upload(ctx, many, a, b); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'many: a.txt/5, b.csv/5'")
		// A button that opens a hidden input's file chooser: the input
		// has no ref (hidden), the button does.
		if err := tab.Upload(ctx, ref(t, s, "button", "Choose photos"), b, a); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'hidden: b.csv/5, a.txt/5'")
		// An agent that clicked the button first: the chooser it opened
		// takes the files, and the button is not clicked again, however
		// the agent writes the ref ("e5" or "@e5").
		picks := eval[int](t, tab, "window.picks")
		photos := ref(t, s, "button", "Choose photos")
		if err := tab.Click(ctx, photos); err != nil {
			t.Fatal(err)
		}
		if got := traced(tab, "click"); len(got) == 0 || !strings.Contains(got[len(got)-1], "opened a file chooser") {
			t.Errorf("the click's trace %q does not say it opened a file chooser", got)
		}
		if p, ok := strings.CutPrefix(photos, "@"); ok {
			photos = p
		} else {
			photos = "@" + photos
		}
		if err := tab.Upload(ctx, photos, a); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'hidden: a.txt/5'")
		if n := eval[int](t, tab, "window.picks"); n != picks+1 {
			t.Errorf("the button was clicked %d times for one Click and one Upload; want once", n-picks)
		}
		defer browserpool.SetFileChooserWait(500 * time.Millisecond)()
		for _, c := range []struct {
			ref   string
			paths []string
		}{
			{one, []string{"a.txt"}},
			{one, []string{filepath.Join(dir, "missing.txt")}},
			{one, []string{dir}},
			{one, []string{a, b}},
			{one, nil},
			{ref(t, s, "button", "Not a file input"), []string{a}},
			{ref(t, s, "button", "Send"), []string{a}},    // a click would send its form
			{ref(t, s, "link", "Elsewhere"), []string{a}}, // a click would leave the page
		} {
			if err := tab.Upload(ctx, c.ref, c.paths...); !errors.Is(err, browserpool.ErrInvalidArgument) {
				t.Errorf("Upload(%s, %q) error = %v, want ErrInvalidArgument", c.ref, c.paths, err)
			}
		}
		if info, err := tab.PageInfo(ctx); err != nil || !strings.HasSuffix(info.URL, "/upload.html") {
			t.Errorf("the page after refused uploads: %+v, %v; want it where it was (no form sent, no link followed)", info, err)
		}
	})

	t.Run("upload refuses a disabled file input and a button of the browser's own file picker, saying so", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/upload.html")
		add := `document.body.insertAdjacentHTML('beforeend', '<label>Locked <input type=file id=locked disabled></label>' +
			'<button id=picker>Open with picker</button>');
			window.changed = 0; locked.addEventListener('change', () => changed++);
			picker.onclick = () => showOpenFilePicker().then(() => picker.textContent = 'picked', e => picker.dataset.err = e.name); 1`
		if err := tab.Evaluate(ctx, add, nil); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "a.txt")
		os.WriteFile(f, []byte("hello"), 0o600)
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Upload(ctx, ref(t, s, "button", "Locked"), f); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "a disabled file input") || eval[int](t, tab, "changed") != 0 {
			t.Errorf("Upload into a disabled file input: %v, %d change events; want ErrInvalidArgument saying it is disabled, and none", err, eval[int](t, tab, "changed"))
		}
		picker := ref(t, s, "button", "Open with picker")
		if err := tab.Click(ctx, picker); err != nil {
			t.Fatal(err)
		}
		if got := traced(tab, "click"); len(got) == 0 || !strings.Contains(got[len(got)-1], "showOpenFilePicker, which Tab.Upload cannot fill") {
			t.Errorf("the trace of a click that opened the browser's own picker: %q; want it to say Upload cannot fill it", got)
		}
		for _, after := range []string{"a click on it", "no click"} {
			err := tab.Upload(ctx, picker, f)
			if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "showOpenFilePicker") {
				t.Errorf("Upload on a button of the browser's own picker, after %s: %v; want ErrInvalidArgument naming showOpenFilePicker, not a stale ref", after, err)
			}
		}
	})

	t.Run("refs of a same-site frame that navigated are stale, not hidden", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/frames.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		old := ref(t, s, "button", "Press same")
		if err := tab.Evaluate(ctx, "document.getElementById('same').src = '/frame-inner.html?who=again'", nil); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "(d => d.location.search === '?who=again' && d.readyState === 'complete')(document.getElementById('same').contentDocument)")
		err := tab.Click(ctx, old)
		if !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("Click on a ref of the frame's old document: error = %v, want ErrStaleRef (the hint of ErrNotVisible sends an agent to wait for it)", err)
		}
	})

	t.Run("upload on a button of an out-of-process frame is refused without a click, saying what to do", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/frames.html")
		f := filepath.Join(t.TempDir(), "a.txt")
		os.WriteFile(f, []byte("hello"), 0o600)
		err := tab.Upload(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press cross"), f)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "frame of another site") || !strings.Contains(err.Error(), "Session.OpenTab") {
			t.Errorf("Upload on a cross-site frame's button: error = %v, want ErrInvalidArgument naming the frame and what to do", err)
		}
		if log := eval[string](t, tab, "document.getElementById('log').textContent"); strings.Contains(log, "clicked") {
			t.Errorf("the refused Upload clicked the button: log %q", log)
		}
	})

	t.Run("clicks and fills reach iframes of other origins and out-of-process iframes", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/frames.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, who := range []string{"same", "other", "cross"} {
			if err := tab.Click(ctx, ref(t, s, "button", "Press "+who)); err != nil {
				t.Fatalf("Click(Press %s): %v", who, err)
			}
			waitJS(t, tab, "document.getElementById('log').textContent.includes('clicked-"+who+"')")
			if err := tab.Fill(ctx, ref(t, s, "textbox", "Field "+who), "hi "+who); err != nil {
				t.Fatalf("Fill(Field %s): %v", who, err)
			}
			waitJS(t, tab, "document.getElementById('log').textContent.includes('changed-"+who+"-hi "+who+"')")
		}
	})

	t.Run("a click lands on the next aim when the press moves the button in an out-of-process iframe", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/frames.html")
		// The cross-site frame's button jumps 40px down at its first
		// press: the release then lands above it, and the browser sends
		// the click to neither.
		if err := tab.Evaluate(ctx, "new Promise(r => { const f = document.getElementById('cross'); f.onload = r; f.src += '&hop=1'; })", nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Press cross")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('log').textContent.includes('clicked-cross')")
		var click browserpool.TraceEntry
		for _, te := range tab.Trace() {
			if te.Action == "click" {
				click = te
			}
		}
		// Attempt 2 lands as a rule. On a 2-core AMD EPYC machine the
		// second press also missed the moved button in 3 of 12 runs, at
		// this test's code of stop 30 too (the out-of-process frame's
		// hit test behind its layout); the third then landed.
		if !(strings.Contains(click.Args, "landed on attempt 2") || strings.Contains(click.Args, "landed on attempt 3")) || click.Err != "" {
			t.Errorf("the click's trace entry = %+v, want it noting that it landed on a later aim (attempt 2, or 3)", click)
		}
	})

	t.Run("a click on an element that keeps moving away from the press is ErrClickMissed, not a silent success", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		// Buy now jumps between two places at every press.
		js := `(() => {
			document.getElementById('banner').remove();
			const b = document.getElementById('buy');
			window.clicks = 0;
			b.onclick = () => clicks++;
			b.addEventListener('mousedown', () => { b.style.top = b.style.top === '600px' ? '120px' : '600px'; });
		})()`
		if err := tab.Evaluate(ctx, js, nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		buy := ref(t, s, "button", "Buy now")
		err := tab.Click(ctx, buy)
		if !errors.Is(err, browserpool.ErrClickMissed) {
			t.Fatalf("Click on a button that moves at each press: error = %v, want ErrClickMissed", err)
		}
		for _, want := range []string{buy, `button "Buy now"`, "moved before the release", "aimed and clicked 3 times", "hint: "} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
		}
		if n := eval[int](t, tab, "clicks"); n != 0 {
			t.Errorf("the button counted %d clicks", n)
		}
	})

	t.Run("a press the page answers by removing the element is a click, as is a link followed, and a disabled button is refused", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		// A menu item acting on mousedown: it is gone before the release.
		js := `(() => {
			document.getElementById('banner').remove();
			const b = document.getElementById('buy');
			b.addEventListener('mousedown', () => { document.title = 'pressed'; b.remove(); });
			document.getElementById('far').disabled = true;
			document.getElementById('linkbox').insertAdjacentHTML('beforeend', ' <a href="/form.html">Sign up</a>');
		})()`
		if err := tab.Evaluate(ctx, js, nil); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Buy now")); err != nil {
			t.Fatalf("Click on a button removed by its mousedown: %v", err)
		}
		if got := eval[string](t, tab, "document.title"); got != "pressed" {
			t.Errorf("title = %q, want pressed", got)
		}
		err := tab.Click(ctx, ref(t, s, "button", "Far away"))
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "disabled") {
			t.Errorf("Click on a disabled button: error = %v, want ErrInvalidArgument saying it is disabled", err)
		}
		if got := eval[string](t, tab, "document.title"); got != "pressed" {
			t.Errorf("a refused click clicked anyway: title %q", got)
		}
		if err := tab.Click(ctx, ref(t, s, "link", "Sign up")); err != nil {
			t.Fatalf("Click on a link to another page: %v", err)
		}
		waitJS(t, tab, "location.pathname === '/form.html' && document.readyState === 'complete'")
	})

	t.Run("refs that are malformed, unknown or from another document are refused", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		for _, r := range []string{"", "e", "@x1", "#buy", "@e0", "@e-1"} {
			if err := tab.Click(ctx, r); !errors.Is(err, browserpool.ErrInvalidArgument) {
				t.Errorf("Click(%q) error = %v, want ErrInvalidArgument", r, err)
			}
		}
		if err := tab.Click(ctx, "@e999"); !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("Click(@e999) error = %v, want ErrStaleRef", err)
		}
		buy := ref(t, s, "button", "Buy now")
		if _, err := tab.Navigate(ctx, e.site.URL+"/covered.html"); err != nil {
			t.Fatal(err)
		}
		if err := tab.Click(ctx, buy); !errors.Is(err, browserpool.ErrStaleRef) {
			t.Errorf("Click with a ref from before a navigation: error = %v, want ErrStaleRef", err)
		}
	})
}
