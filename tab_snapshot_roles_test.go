package browserpool_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// TestASnapshotNamesDateTimeAndColourFieldsAsTextboxesOfTheirType: Chromium
// calls these fields Date, InputTime, DateTime and ColorWell; an agent
// reads a textbox that says its type, and fills it by that ref.
func TestASnapshotNamesDateTimeAndColourFieldsAsTextboxesOfTheirType(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>fields</title>
<label>Birthday <input type="date" id="birthday" value="2000-01-01"></label>
<label>Start <input type="time" value="14:05"></label>
<label>Arrival <input type="datetime-local"></label>
<label>Card expiry <input type="month" value="2027-03"></label>
<label>Week <input type="week"></label>
<label>Colour <input type="color" value="#1e90ff"></label>
<details><summary>Extras</summary>Meals and bags.</details>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := `- textbox "Birthday" @e1 value="2000-01-01" type=date
- textbox "Start" @e2 value="14:05" type=time
- textbox "Arrival" @e3 type=datetime-local
- textbox "Card expiry" @e4 value="2027-03" type=month
- textbox "Week" @e5 type=week
- textbox "Colour" @e6 value="#1e90ff" type=color
- button "Extras" @e7 [collapsed]
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}
	if err := tab.Fill(ctx, ref(t, s, "textbox", "Birthday"), "2024-02-29"); err != nil {
		t.Fatalf("Fill of the date field by its textbox ref: %v", err)
	}
	if got := snap(t, tab, browserpool.SnapshotOptions{}).Find("textbox", "Birthday"); got != "@e1" {
		t.Errorf("the date field's ref after Fill is %q, want @e1", got)
	}
	if got := eval[string](t, tab, "birthday.value"); got != "2024-02-29" {
		t.Errorf("the date field holds %q, want 2024-02-29", got)
	}
}

// TestASnapshotPrintsNoInternalRoleOfChromium: a video, a clickable
// canvas, a clickable cell of a layout table and a focusable figure
// caption print roles an agent knows, never Chromium's own names (Video,
// Canvas, LayoutTableCell, Figcaption).
func TestASnapshotPrintsNoInternalRoleOfChromium(t *testing.T) {
	_, tab, _ := htmlTab(t, `<title>media</title>
<video controls aria-label="Trailer"></video>
<canvas width="50" height="50" aria-label="Map" onclick="void 0"></canvas>
<table><tr><td onclick="void 0">Pay later</td></tr></table>
<figure><figcaption tabindex="0">A caption</figcaption></figure>`)
	s := snap(t, tab, browserpool.SnapshotOptions{Interactive: true})
	for _, line := range strings.Split(strings.TrimSpace(s.Text), "\n") {
		role, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), " ")
		if strings.ToLower(role) != role {
			t.Errorf("the line %q has Chromium's internal role %q", line, role)
		}
	}
	// A video without a source is named by its error ("Unable to play
	// media."). The refs' numbers depend on how many of the video's own
	// controls Chromium has built by then: not compared.
	for _, line := range []string{`- video "`, `- canvas "Map" @e\d+ \[clickable\]`, `- clickable "Pay later" @e\d+`, `- caption "A caption" @e\d+`} {
		if !regexp.MustCompile(line).MatchString(s.Text) {
			t.Errorf("no line matching %q in the snapshot:\n%s", line, s.Text)
		}
	}
}

// TestASnapshotMarksAFileInputSoItsRefGoesToUpload: Chromium calls a file
// input a button; its line says type=file and what it holds, and Upload
// takes its ref.
func TestASnapshotMarksAFileInputSoItsRefGoesToUpload(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>upload</title>
<label>Passport scan <input type="file" id="scan"></label>
<button>Send</button>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := `- button "Passport scan" @e1 value="No file chosen" type=file
- button "Send" @e2
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}
	path := filepath.Join(t.TempDir(), "passport.png")
	if err := os.WriteFile(path, []byte("not really a picture"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, ref(t, s, "button", "Passport scan"), path); err != nil {
		t.Fatalf("Upload by the file input's ref: %v", err)
	}
	if got := eval[string](t, tab, "scan.files[0].name"); got != "passport.png" {
		t.Errorf("the file input holds %q, want passport.png", got)
	}
	after := snap(t, tab, browserpool.SnapshotOptions{})
	if !strings.Contains(after.Text, `- button "Passport scan" @e1 value="passport.png" type=file`) {
		t.Errorf("the snapshot after Upload does not show the file the input holds:\n%s", after.Text)
	}
}

// TestASnapshotMarksAContentEditableElementEditable: a contenteditable
// element (a rich text editor) says it is editable, once, on its own
// line and not on the blocks inside it, and Fill takes its ref.
func TestASnapshotMarksAContentEditableElementEditable(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>editor</title>
<div contenteditable="true" id="notes" aria-label="Notes"><p>Window seat</p></div>
<p contenteditable="plaintext-only" id="plain">Plain</p>
<div role="textbox" contenteditable="true" aria-label="Comment">Hi</div>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := `- generic "Notes" @e1 [editable]
  - text "Window seat"
- paragraph "Plain" @e2 [editable]
- textbox "Comment" @e3 value="Hi"
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Fatalf("snapshot (-want +got):\n%s", diff)
	}
	if err := tab.Fill(ctx, ref(t, s, "generic", "Notes"), "Aisle seat"); err != nil {
		t.Fatalf("Fill of the editable element by its ref: %v", err)
	}
	if got := eval[string](t, tab, "notes.textContent"); got != "Aisle seat" {
		t.Errorf("the editor holds %q, want Aisle seat", got)
	}
}
