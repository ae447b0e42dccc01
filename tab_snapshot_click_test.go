package browserpool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// clickablePage is a page whose clickable things have no role that says
// so, as apps write them.
const clickablePage = `<title>clickables</title>
<p id="log"></p>
<div onclick="log.textContent += 'buy '">Buy now</div>
<span style="cursor:pointer" id="menu">Open menu</span>
<div id="listen">Archive</div>
<div style="cursor:pointer" id="card"><h3>Blue mug</h3><p>Holds 300 ml</p></div>
<div style="cursor:pointer" id="dismiss">×</div>
<div id="root"><button>Save</button><div style="cursor:pointer" id="row"><span>Invoice 42</span></div></div>
<a href="#top"><span>Top of page</span></a>
<script>
const note = what => () => log.textContent += what + ' ';
menu.addEventListener('click', note('menu'));
listen.addEventListener('click', note('archive'));
card.addEventListener('click', note('card'));
dismiss.addEventListener('click', note('close'));
row.addEventListener('click', note('row'));
root.addEventListener('click', () => {});          // an app root that listens for every click
document.body.addEventListener('click', () => {}); // and a page that does too
</script>`

func TestASnapshotGivesRefsToWhatThePageMadeClickableWithoutARole(t *testing.T) {
	ctx, tab, _ := htmlTab(t, clickablePage)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+r.Name)
	}
	want := []string{
		"clickable Buy now", "clickable Open menu", "clickable Archive", "clickable Blue mug Holds 300 ml", "clickable ×",
		"button Save", "clickable Invoice 42", "link Top of page",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if !strings.Contains(s.Text, `- clickable "Blue mug Holds 300 ml" @e4`+"\n"+`  - heading "Blue mug" [level=3]`) {
		t.Errorf("the card's line, with its heading under it, is not in the snapshot:\n%s", s.Text)
	}
	for _, name := range []string{"Buy now", "Open menu", "Archive", "Blue mug Holds 300 ml", "×", "Invoice 42"} {
		if err := tab.Click(ctx, ref(t, s, browserpool.ClickableRole, name)); err != nil {
			t.Errorf("Click on %q: %v", name, err)
		}
	}
	if got := eval[string](t, tab, "log.textContent"); got != "buy menu archive card close row " {
		t.Errorf("the page saw the clicks %q, want each once, in order", got)
	}
}

func TestASnapshotWalksAnARIAComboboxAndNamesRefsByTheirText(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>combo</title>
<div role="combobox" aria-expanded="true" aria-owns="cities"><input aria-label="City" value="Pa"></div>
<ul role="listbox" id="cities"><li role="option">Paris</li><li role="option">Parma</li></ul>
<div class="menu"><div tabindex="-1">Strawberry</div><div tabindex="-1">Vanilla</div></div>
<select aria-label="Size"><option>Small</option><option>Large</option></select>
<div role="combobox" tabindex="0" aria-label="Ten" aria-expanded="false">Ten</div>`)
	s := snap(t, tab, browserpool.SnapshotOptions{Interactive: true})
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+r.Name)
	}
	want := []string{"combobox ", "textbox City", "listbox ", "option Paris", "option Parma", "generic Strawberry", "generic Vanilla", "combobox Size", "combobox Ten"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if !strings.Contains(s.Text, `combobox "Size" @e8 value="Small" options=["Small", "Large"]`) {
		t.Errorf("the native select's options are not summarized on its line:\n%s", s.Text)
	}
	err := tab.Fill(ctx, s.Refs[0].Ref, "Lyon")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "fill the textbox the snapshot shows under it") {
		t.Errorf("Fill on the combobox around a text field: %v, want ErrInvalidArgument pointing at the textbox under it", err)
	}
	err = tab.Fill(ctx, s.Find("combobox", "Ten"), "Lyon")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "without a text field") || !strings.Contains(err.Error(), "click it to open its list") {
		t.Errorf("Fill on a custom select: %v, want ErrInvalidArgument saying to click it open", err)
	}
	if err := tab.Fill(ctx, s.Find("textbox", "City"), "Lyon"); err != nil {
		t.Errorf("Fill on the textbox inside the combobox: %v", err)
	}
}

func TestTheLabelOfAHiddenControlGetsARefThatTogglesOrUploadsThroughIt(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>hidden controls</title>
<input type="checkbox" id="dark" style="display:none"><label for="dark">Dark mode</label>
<label><input type="radio" name="plan" id="pro" hidden> Pro plan</label>
<label for="file" style="border:1px solid">Attach file</label><input type="file" id="file" hidden>
<p id="log"></p><script>file.addEventListener('change', () => log.textContent = file.files[0].name)</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	for _, line := range []string{
		`- clickable "Dark mode" @e1 (the label of a hidden checkbox)`,
		`- clickable "Pro plan" @e2 (the label of a hidden radio)`,
		`- clickable "Attach file" @e3 (the label of a hidden file input)`,
	} {
		if !strings.Contains(s.Text, line) {
			t.Errorf("no line %s in the snapshot:\n%s", line, s.Text)
		}
	}
	for _, name := range []string{"Dark mode", "Pro plan"} {
		if err := tab.Click(ctx, ref(t, s, browserpool.ClickableRole, name)); err != nil {
			t.Errorf("Click on the label %q: %v", name, err)
		}
	}
	path := filepath.Join(t.TempDir(), "cv.txt")
	if err := os.WriteFile(path, []byte("cv"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, ref(t, s, browserpool.ClickableRole, "Attach file"), path); err != nil {
		t.Errorf("Upload through the label of a hidden file input: %v", err)
	}
	if got := eval[string](t, tab, "[dark.checked, pro.checked, log.textContent].join(' ')"); got != "true true cv.txt" {
		t.Errorf("checkbox, radio and file: %q, want both checked and cv.txt chosen", got)
	}
	if s := snap(t, tab, browserpool.SnapshotOptions{}); !strings.Contains(s.Text, `- clickable "Dark mode" @e1 (the label of a hidden checkbox, checked)`) {
		t.Errorf("the next snapshot does not say the hidden checkbox is checked:\n%s", s.Text)
	}
}

func TestASnapshotLeavesOutLabelsEditorBlocksAndDelegatingContainers(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>not clickable</title>
<label for="q">Search</label><input id="q">
<div contenteditable="true" aria-label="Editor"><p>para one</p><p>para two</p></div>
<ul id="list"><li>Alpha</li><li>Beta</li><li>Gamma</li></ul>
<div id="card" style="cursor:pointer">Blue mug <span id="x">×</span></div>
<p id="log"></p>
<script>
list.addEventListener('click', e => log.textContent += e.target.textContent + ' ');
card.addEventListener('click', () => log.textContent += 'card ');
x.addEventListener('click', e => { e.stopPropagation(); log.textContent += 'x '; });
</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+r.Name)
	}
	want := []string{"textbox Search", "generic Editor", "clickable Blue mug", "clickable ×"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	for _, name := range []string{"Blue mug", "×"} {
		if err := tab.Click(ctx, ref(t, s, browserpool.ClickableRole, name)); err != nil {
			t.Errorf("Click on %q: %v", name, err)
		}
	}
	if got := eval[string](t, tab, "log.textContent"); got != "card x " {
		t.Errorf("the page saw the clicks %q, want the card's, then the ×'s", got)
	}
}

func TestARowAroundItsControlsKeepsItsRefAndAControlsPartsGetNone(t *testing.T) {
	long := strings.Repeat("Your invoice for June is ready. ", 5)
	ctx, tab, _ := htmlTab(t, `<title>inbox</title><style>.row{cursor:pointer}</style>
<div class="row" id="mail"><input type="checkbox" aria-label="Select"><span id="star">☆</span><b>Acme Billing</b> <span>`+long+`</span> <span>Jun 14</span></div>
<button id="save"><span style="cursor:pointer" id="inner">Save</span></button>
<div style="position:absolute;left:-9999px;cursor:pointer">Offscreen action</div>
<x-chip id="chip">light text</x-chip>
<p id="log"></p>
<script>
const note = what => e => { e.stopPropagation(); log.textContent += what + ' '; };
mail.addEventListener('click', note('mail'));
star.addEventListener('click', note('star'));
const root = chip.attachShadow({mode: 'open'});
root.innerHTML = '<span class="chip" style="cursor:pointer">Chip <slot></slot></span>';
root.querySelector('.chip').addEventListener('click', note('chip'));
</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+cut40(r.Name))
	}
	want := []string{"clickable Acme Billing Your invoice for June is r…", "checkbox Select", "clickable ☆", "button Save", "clickable Chip light text"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if !strings.Contains(s.Text, `Jun 14"`) || strings.Count(s.Text, "Acme Billing") != 1 {
		t.Errorf("the row's text past its name's cut is not printed under it, once:\n%s", s.Text)
	}
	for _, r := range []string{s.Refs[0].Ref, ref(t, s, browserpool.ClickableRole, "☆"), ref(t, s, browserpool.ClickableRole, "Chip light text")} {
		if err := tab.Click(ctx, r); err != nil {
			t.Errorf("Click(%s): %v", r, err)
		}
	}
	if got := eval[string](t, tab, "log.textContent"); got != "mail star chip " {
		t.Errorf("the page saw the clicks %q, want the row's, the star's and the chip's", got)
	}
}

// cut40 shortens a ref's name, for a comparison, to its first 39
// characters and an ellipsis.
func cut40(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}

func TestAnIconWithoutTextIsNamedByItsTitleOrTestID(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>icons</title>
<i id="edit" title="Edit row" style="cursor:pointer">&#xf1f8;</i>
<span id="close" data-testid="close-dialog" style="cursor:pointer;display:inline-block;width:16px;height:16px;background:#333"></span>
<p id="log"></p>
<script>for (const id of ['edit', 'close']) document.getElementById(id).addEventListener('click', () => log.textContent += id + ' ')</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var got []string
	for _, r := range s.Refs {
		got = append(got, r.Role+" "+r.Name)
	}
	if diff := cmp.Diff([]string{"clickable Edit row", "clickable close dialog"}, got); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	for _, name := range []string{"Edit row", "close dialog"} {
		if err := tab.Click(ctx, ref(t, s, browserpool.ClickableRole, name)); err != nil {
			t.Errorf("Click on %q: %v", name, err)
		}
	}
	if got := eval[string](t, tab, "log.textContent"); got != "edit close " {
		t.Errorf("the page saw the clicks %q", got)
	}
}

func TestClickableRefsOnRowsTabsBackdropsAndPanes(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>more</title><style>body{margin:0}</style>
<table><tr id="inv" onclick="log.textContent += 'inv '"><td>Invoice 42</td><td>2024-01-02</td><td>$40</td></tr></table>
<div id="mug" onclick="log.textContent += 'mug '"><p>Blue mug</p><p>300 ml</p><p>$12</p></div>
<div id="debit" style="cursor:pointer" onclick="log.textContent += 'debit '">-45.00 Coffee shop</div>
<div role="tablist"><div role="tab" tabindex="0">main.go <span id="close" onclick="log.textContent += 'close '">×</span></div></div>
<div id="pane" style="height:60px;overflow:auto">`+strings.Repeat(`<div style="cursor:pointer;height:30px" onclick="log.textContent += 'mail '">Mail</div>`, 30)+`</div>
<div id="app"><div id="backdrop" onclick="this.remove()">Delete this file? <button>Cancel</button> <button>Delete</button></div>
<form><label>Email <input></label> <button>Sign in</button> Welcome back</form></div>
<p id="log"></p>
<script>app.addEventListener('click', () => {}); pane.scrollTop = 600;</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var got []string
	for _, r := range s.Refs {
		if r.Name != "Mail" {
			got = append(got, r.Role+" "+r.Name)
		}
	}
	want := []string{
		"clickable Invoice 42 2024-01-02 $40", "clickable Blue mug 300 ml $12", "clickable -45.00 Coffee shop",
		"tab main.go ×", "clickable ×", "button Cancel", "button Delete", "textbox Email", "button Sign in",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("refs (-want +got):\n%s\n%s", diff, s.Text)
	}
	if n := strings.Count(s.Text, `clickable "Mail"`); n != 30 {
		t.Errorf("%d of the pane's 30 rows have refs, want all (rows scrolled out of the pane are still there)", n)
	}
	if strings.Contains(s.Text, `text "-45.00 Coffee shop"`) {
		t.Errorf("the debit's text is repeated under its line:\n%s", s.Text)
	}
	for _, r := range []string{s.Refs[0].Ref, s.Refs[1].Ref, ref(t, s, browserpool.ClickableRole, "×")} {
		if err := tab.Click(ctx, r); err != nil {
			t.Errorf("Click(%s): %v", r, err)
		}
	}
	if got := eval[string](t, tab, "log.textContent"); got != "inv mug close " {
		t.Errorf("the page saw the clicks %q", got)
	}
}
