// Room: form fields and upload (Fill, Select, Upload). No lock: each
// action reads and writes the page only; a file chooser the page opens
// reaches Upload through tabExt.choosers.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool/internal/axtext"
	kb "github.com/browserpool/browserpool/internal/keys"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// Fill replaces the content of the text field (input, textarea or
// contenteditable element) a ref names with value, the way React and Vue
// notice: it focuses the field, selects its content, types value over it
// (an empty value deletes it), which fires one input event as a paste
// does, then fires change, so listeners of either see the new value at
// once (the browser fires its own change too when the field loses focus,
// as after a person's edit). A slider or a colour well (input type range
// or color) takes value as it is, with the same events; a slider keeps it
// within its min, max and step, which the trace shows. A value that is
// not a number, for a number field or a slider, is an ErrInvalidArgument
// before anything is typed, and so is a value longer than a text field's
// maxlength (the browser would cut it), one outside a number field's
// min, max or step (the browser would mark it invalid), or one with a
// line break for a single-line field (an input: the browser would drop
// it or make it a space; to submit, Fill, then Press "Enter"). A
// textarea or an editable element keeps line breaks. A field that
// formats what is typed (a phone mask, uppercase) keeps the page's form
// of it, which the trace shows; a
// text field whose page cancels the insertion (in beforeinput or input:
// it accepts only some characters) keeps its value, and Fill is an
// ErrInvalidArgument saying so. As a paste does, Fill fires no key events:
// a page that filters keydown does not see it (use Tab.Type, which
// presses each key). A page that navigates as the value goes in (a search
// box that loads its results page on input) ends the fill, done: the
// trace says so. Text filled into password and one-time-code fields never
// reaches the trace.
func (t *Tab) Fill(ctx context.Context, ref, value string) error {
	const op = "Tab.Fill"
	return t.inputOnRef(ctx, op, "fill", ref, "(value withheld)", func(ctx context.Context, x *tabExt, tg refTarget, args *string) error {
		if err := tg.f.d.Invoke(ctx, "DOM.scrollIntoViewIfNeeded", nodeArgs(tg.node), nil); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		var info struct {
			Kind   string `json:"kind"`
			Type   string `json:"type"`
			Secret bool   `json:"secret"`
			Field  bool   `json:"field"` // an element that is no field holds one
			Max    *int   `json:"maxLength"`
		}
		if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.Fill, nil, &info); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		if info.Secret {
			*args = ref + " " + tg.role + " " + axtext.Quote(tg.name) + " ***"
		} else {
			*args = ref + " " + tg.role + " " + axtext.Quote(tg.name) + " " + axtext.Quote(value)
		}
		switch info.Kind {
		case "text", "editable", "value":
		case "select":
			return x.badTarget(op, ref, tg, "a select box", "use Tab.Select to choose its option")
		case "checkbox", "radio":
			return x.badTarget(op, ref, tg, "a "+info.Kind, "use Tab.Click to toggle it")
		case "file":
			return x.badTarget(op, ref, tg, "a file input", "use Tab.Upload to choose files")
		case "disabled", "readonly":
			hint := "it cannot be edited now; take a new snapshot to see when it is enabled"
			if info.Kind == "readonly" {
				hint = "the page does not let it be typed into (read-only): look for another control that sets it, such as a picker button next to it"
			}
			return x.badTarget(op, ref, tg, info.Kind, hint)
		default:
			switch {
			case tg.role == "combobox" && info.Field:
				return x.badTarget(op, ref, tg, "not a text field but a combobox around one", "fill the textbox the snapshot shows under it, or click the combobox to open its list")
			case tg.role == "combobox":
				return x.badTarget(op, ref, tg, "a combobox without a text field (a custom select)", "click it to open its list, take a new snapshot, and click the option")
			}
			return x.badTarget(op, ref, tg, "not a text field", "fill a textbox, searchbox or editable element; click buttons with Tab.Click")
		}
		if n := len(utf16.Encode([]rune(strings.ReplaceAll(value, "\r\n", "\n")))); info.Max != nil && *info.Max >= 0 && n > *info.Max {
			// The browser would cut it, and the field would hold part of
			// it in place of what it held.
			return x.badTarget(op, ref, tg, fmt.Sprintf("a field that takes at most %d characters (its maxlength), and the value has %d", *info.Max, n), fmt.Sprintf("fill a value of at most %d characters; the field is unchanged", *info.Max))
		}
		if info.Kind == "text" && info.Type != "textarea" && strings.ContainsAny(value, "\r\n") {
			// An input holds one line: the browser would make each line
			// break a space, or drop a last one, and a caller who wrote
			// one meant Enter or a value of several lines.
			return x.badTarget(op, ref, tg, "a single-line field, and the value holds a line break, which the field cannot hold (the browser would drop it, or make it a space)",
				`to submit the field, fill the value without the line break, then press Enter (Tab.Press "Enter"); text of several lines goes into a multi-line field (a textarea); the field is unchanged`)
		}
		if (info.Type == "number" || info.Type == "range") && value != "" && !htmlNumber.MatchString(value) {
			// Typed or set, the browser would empty the field or move the
			// slider to its middle, and call that a value.
			return x.badTarget(op, ref, tg, fmt.Sprintf("a %s field, and %s is not a number", info.Type, axtext.Quote(value)), "fill "+valueFormats[info.Type])
		}
		if info.Type == "number" && value != "" {
			if err := x.numberFits(ctx, op, ref, tg, value); err != nil {
				return err
			}
		}
		switch {
		case info.Kind == "value":
			// A slider or a colour well takes no typing: FillDone sets it.
		case value == "":
			events, _ := kb.Events("Delete")
			for _, ev := range events {
				if err := x.key(ctx, ev, new(bool)); err != nil {
					return x.fail(op, ctx, ref, err)
				}
			}
		default:
			if err := x.insertText(ctx, tg.f, value); err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
		}
		var done struct {
			OK    bool   `json:"ok"`
			Why   string `json:"why"`
			Value string `json:"value"`
		}
		if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.FillDone, []any{value}, &done); err != nil {
			ferr := x.fail(op, ctx, ref, frameErr(tg.f, err))
			if info.Kind != "value" && (errors.Is(ferr, ErrStaleRef) || strings.Contains(err.Error(), "Execution context was destroyed") || strings.Contains(err.Error(), "Inspected target navigated or closed")) {
				// The value was typed, and the page left the field's
				// document in answer (a search box that navigates on
				// input): the fill is done, not to be done again.
				*args += " (the page navigated as the value went in)"
				return nil
			}
			return ferr
		}
		if done.OK && done.Value != value && !info.Secret {
			if info.Type == "range" {
				*args += " (the slider made it " + axtext.Quote(done.Value) + ": its min, max or step)"
			} else {
				*args += " (the page made it " + axtext.Quote(done.Value) + ")"
			}
		}
		if !done.OK {
			detail := ref + " did not take the whole value (a maxlength, pattern or input type may limit it)"
			hint := "take a new snapshot to see the field's value, and fill a value the field accepts"
			if f, ok := valueFormats[info.Type]; ok {
				detail = fmt.Sprintf("%s (a %s field) did not take %s: it takes %s, whatever the page displays", ref, info.Type, axtext.Quote(value), f)
				hint = "fill the value in that form"
				if shape, ok := valueShapes[info.Type]; ok && shape.MatchString(value) {
					// In the form already: the value itself is refused.
					detail = fmt.Sprintf("%s (a %s field) did not take %s: it is in the field's form (%s) but is no real %s, or is outside the field's min and max", ref, info.Type, axtext.Quote(value), f, info.Type)
					hint = "fill a value that exists (no 30 February, no hour 24) within the field's min and max; take a new snapshot to see the field"
				}
			} else if done.Why == "refused" {
				detail = ref + " refused the typed text: the page cancelled the insertion (a field that accepts only some characters) and kept its value"
			}
			e := newError(op, ErrInvalidArgument, detail)
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = hint
			return e
		}
		return nil
	})
}

// numberFits refuses, before anything is typed, a value a number field
// would hold as invalid (the browser marks it, and a form will not send
// it): below its min, above its max, or off its step (1 when it has no
// step attribute: whole numbers).
func (x *tabExt) numberFits(ctx context.Context, op, ref string, tg refTarget, value string) error {
	var fit struct{ Why, Min, Max, Step string }
	if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.NumberFits, []any{value}, &fit); err != nil {
		return x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	if fit.Why == "" {
		return nil
	}
	var takes []string
	if fit.Min != "" {
		takes = append(takes, "at least "+fit.Min)
	}
	if fit.Max != "" {
		takes = append(takes, "at most "+fit.Max)
	}
	switch {
	case strings.EqualFold(fit.Step, "any"):
	case fit.Step != "":
		takes = append(takes, "in steps of "+fit.Step)
	default:
		takes = append(takes, "whole numbers (no step attribute: steps of 1)")
	}
	off := map[string]string{"under": "below its min", "over": "above its max", "step": "off its step"}[fit.Why]
	return x.badTarget(op, ref, tg, fmt.Sprintf("a number field that takes %s, and %s is %s", strings.Join(takes, ", "), axtext.Quote(value), off),
		"fill a number the field takes (the browser would mark this one invalid and a form would not send it); the field is unchanged")
}

// valueFormats are the forms of value the input types with a fixed one
// take (HTML's value sanitization empties anything else), for Fill's
// error.
var valueFormats = map[string]string{
	"date":           "YYYY-MM-DD (2024-02-29)",
	"time":           "HH:MM or HH:MM:SS, 24-hour (14:05)",
	"datetime-local": "YYYY-MM-DDTHH:MM (2024-02-29T14:05)",
	"month":          "YYYY-MM (2024-02)",
	"week":           "YYYY-Www (2024-W09)",
	"color":          "a lowercase hex colour #rrggbb (#1e90ff)",
	"number":         "a number written with a dot and no grouping (1.5, -3, 2e3)",
	"range":          "a number written with a dot (0.5, 40); the slider keeps it within its min, max and step",
}

// valueShapes are the shapes of valueFormats' date and time forms: a
// value of that shape that the field still refuses is no real date or
// time (2024-02-30), or outside the field's min and max.
var valueShapes = map[string]*regexp.Regexp{
	"date":           regexp.MustCompile(`^[0-9]{4,}-[0-9]{2}-[0-9]{2}$`),
	"time":           regexp.MustCompile(`^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?$`),
	"datetime-local": regexp.MustCompile(`^[0-9]{4,}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?$`),
	"month":          regexp.MustCompile(`^[0-9]{4,}-[0-9]{2}$`),
	"week":           regexp.MustCompile(`^[0-9]{4,}-W[0-9]{2}$`),
}

// htmlNumber is HTML's valid floating-point number: what a number or range
// field takes as its value.
var htmlNumber = regexp.MustCompile(`^-?([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][-+]?[0-9]+)?$`)

func (x *tabExt) badTarget(op, ref string, tg refTarget, what, hint string) error {
	e := newError(op, ErrInvalidArgument, fmt.Sprintf("%s (%s %s) is %s", ref, tg.role, axtext.Quote(tg.name), what))
	e.Session, e.Tab = x.t.s.id, x.t.id
	e.Hint = hint
	return e
}

// Select chooses options of the select box a ref names, by value or else by
// visible label, fires input and change (none when the choice is what was
// chosen already, as in a browser), and returns the values now selected.
// A single select takes exactly one value; a multiple one gets exactly the
// values given (the others are unselected). An option a user cannot
// choose (disabled, or in a disabled group) is refused, and a value no
// option has is an error listing the options, with those like it but for
// case or length.
func (t *Tab) Select(ctx context.Context, ref string, values ...string) (selected []string, err error) {
	const op = "Tab.Select"
	err = t.onRef(ctx, op, "select", ref, strings.Join(values, ", "), func(ctx context.Context, x *tabExt, tg refTarget, _ *string) error {
		if values == nil {
			values = []string{}
		}
		var res struct {
			Err      string   `json:"err"`
			Missing  string   `json:"missing"`
			Options  []string `json:"options"`
			Count    int      `json:"count"` // options in all
			Near     []string `json:"near"`  // labels like Missing
			Selected []string `json:"selected"`
		}
		if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.Select, []any{values}, &res); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		switch res.Err {
		case "":
			selected = res.Selected
			return nil
		case "gone":
			return x.goneErr(op, ref, "it was removed from its document", nil)
		case "not-select":
			return x.badTarget(op, ref, tg, "not a select box", "for a custom dropdown, click it open with Tab.Click, take a snapshot, and click the option")
		case "disabled":
			return x.badTarget(op, ref, tg, "disabled", "it cannot be changed now")
		case "missing":
			what := fmt.Sprintf("without an option %q", res.Missing)
			if len(res.Near) > 0 {
				what += fmt.Sprintf(" (options like it: %s)", quoteAll(res.Near))
			}
			list := quoteAll(res.Options)
			if more := res.Count - len(res.Options); more > 0 {
				list += fmt.Sprintf(", +%d more", more)
			}
			what += fmt.Sprintf("; its %d options: %s", res.Count, list)
			return x.badTarget(op, ref, tg, what, "pass an option's label exactly as listed (or its value attribute)")
		case "option-disabled":
			return x.badTarget(op, ref, tg, fmt.Sprintf("a select whose option %q is disabled", res.Missing), "choose an enabled option")
		default:
			return x.badTarget(op, ref, tg, fmt.Sprintf("a single select, given %d values", len(values)), "pass exactly one value")
		}
	})
	return selected, err
}

// Upload sets the files of the file input a ref names, as if the user
// chose them, and fires its input and change events. Paths must be
// absolute and name existing regular files on this machine; several files
// need an input with the multiple attribute; a disabled input is refused.
// Its accept filter is not checked (a user may pick any file too). The ref may also name what
// opens a file chooser (a "Choose file" button or label over a hidden
// input, in the tab's top frame): Upload clicks it and gives the chooser
// the files, or gives them to the chooser a Click on that ref just opened; one that opens no chooser within 5 seconds is an
// ErrInvalidArgument error, and so, without a click, is a control a click
// would change (a checkbox, a text box) or one whose click does something
// of its own (a form's submit or reset button, a link to another page).
//
// On a local browser the browser reads the files itself
// (DOM.setFileInputFiles). On a remote browser (a Browserless or
// SeleniumGrid session) their bytes are sent over CDP and set on the input
// as File objects with the same names, sizes, types (from the extension)
// and modification times; the total is limited to MaxRemoteUploadBytes,
// and more is an ErrFileTransfer error before anything is sent.
func (t *Tab) Upload(ctx context.Context, ref string, paths ...string) error {
	const op = "Tab.Upload"
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	bad := func(detail, hint string) error {
		e := newError(op, ErrInvalidArgument, detail)
		e.Session, e.Tab, e.Hint = t.s.id, t.id, hint
		return e
	}
	var tg refTarget
	// The paths and the ref are checked before a dialog refusal, with the
	// caller's ctx (as before the prologue was shared).
	check := func() error {
		if len(paths) == 0 {
			return bad("no file given", "pass the absolute paths of the files to upload")
		}
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				return bad(fmt.Sprintf("%q is not an absolute path", p), "pass absolute paths; relative ones would depend on the process's working directory")
			}
			fi, err := os.Stat(p)
			if err != nil {
				return bad(fmt.Sprintf("%q does not exist or cannot be read", p), "check the path")
			}
			if !fi.Mode().IsRegular() {
				return bad(fmt.Sprintf("%q is not a regular file", p), "pass files, not directories")
			}
		}
		if t.s.remote() {
			if err := t.s.checkRemoteUpload(op, t.id, paths); err != nil {
				return err
			}
		}
		var err error
		tg, err = t.ext().resolve(ctx, op, ref)
		return err
	}
	return t.act(ctx, op, "upload", ref+" "+strings.Join(names, ", "), check, func(ctx context.Context, x *tabExt, _ *string) error {
		var desc struct {
			Node struct {
				NodeName   string   `json:"nodeName"`
				Attributes []string `json:"attributes"`
			} `json:"node"`
		}
		if err := tg.f.d.Invoke(ctx, "DOM.describeNode", nodeArgs(tg.node), &desc); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		attrs := map[string]string{}
		for i := 0; i+1 < len(desc.Node.Attributes); i += 2 {
			attrs[strings.ToLower(desc.Node.Attributes[i])] = desc.Node.Attributes[i+1]
		}
		_, multiple := attrs["multiple"]
		if desc.Node.NodeName == "INPUT" && strings.EqualFold(attrs["type"], "file") {
			// The browser gives files to an input removed since the
			// snapshot, and the page never sees them: refuse.
			var shown bool
			if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.Shown, nil, &shown); err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
			if !shown {
				return x.goneErr(op, ref, "it was removed from its document, or its frame navigated", nil)
			}
			// A disabled input takes no files from a user: refuse, as
			// Click refuses a disabled control.
			var disabled bool
			if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.Disabled, nil, &disabled); err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
			if disabled {
				return x.badTarget(op, ref, tg, "a disabled file input", "it takes no files now: do what the page asks first (a checkbox, another field), then take a new snapshot")
			}
		}
		switch {
		case desc.Node.NodeName != "INPUT" || !strings.EqualFold(attrs["type"], "file"):
			// A button or label that opens a (often hidden) file input's
			// chooser: take the chooser a click on it left open, or
			// click it and take the chooser.
			if p := x.pending.Load(); p != nil && p.at == tg.in() && p.node == tg.node && x.pending.CompareAndSwap(p, nil) {
				input, err := x.chooserInput(op, ref, tg, p.ev, len(paths))
				if err != nil {
					return err
				}
				tg, multiple = input, true // the chooser's mode was checked
				break
			}
			input, err := x.chooser(ctx, op, ref, tg, len(paths))
			if err != nil {
				return err
			}
			tg, multiple = input, true // the chooser's mode was checked
		case len(paths) > 1 && !multiple:
			return x.badTarget(op, ref, tg, "a file input that takes one file", "pass one path")
		}
		if t.s.remote() {
			if err := x.uploadRemote(ctx, op, tg, paths); err != nil {
				return x.fail(op, ctx, ref, frameErr(tg.f, err))
			}
			return nil
		}
		if err := tg.f.d.Invoke(ctx, "DOM.setFileInputFiles", dom.NewSetFileInputFilesArgs(paths).SetBackendNodeID(tg.node), nil); err != nil {
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		return nil
	})
}

// defaultFileChooserWait bounds how long Tab.Upload waits, after clicking
// an element that is not a file input, for the page to open a file
// chooser; fileChooserWait, in nanoseconds, replaces it when not zero
// (tests shorten it while others may read it).
const defaultFileChooserWait = 5 * time.Second

var fileChooserWait atomic.Int64

// changedByClick are the roles of controls a click changes (or focuses
// for typing): Upload refuses them without clicking.
var changedByClick = map[string]bool{
	"checkbox": true, "radio": true, "switch": true, "textbox": true, "searchbox": true, "combobox": true,
	"listbox": true, "option": true, "slider": true, "spinbutton": true, "menuitemcheckbox": true, "menuitemradio": true, "tab": true,
}

// chooserInput is the file input of chooser ev, which the element tg (ref)
// opened, for files files: a chooser of one file refuses more.
func (x *tabExt) chooserInput(op, ref string, tg refTarget, ev *fileChooser, files int) (refTarget, error) {
	if ev.BackendNodeID == 0 {
		return refTarget{}, x.badTarget(op, ref, tg, "a button that opens the browser's file picker of its own (showOpenFilePicker, the File System Access API), which names no file input: Upload cannot give it files",
			"look for an <input type=file> the page also offers (a snapshot shows it as a button, often labelled Choose File or Browse), or a way to upload without that picker")
	}
	if files > 1 && ev.Mode != "selectMultiple" {
		return refTarget{}, x.badTarget(op, ref, tg, "a button whose file chooser takes one file", "pass one path")
	}
	return refTarget{f: tg.f, frame: ev.FrameID, node: ev.BackendNodeID, chain: tg.chain, role: "file input", name: tg.name}, nil
}

// pendingChooser is a file chooser a Click opened, left open for an
// Upload on the same element (node in at: its ref however written, "e5"
// or "@e5", or a later snapshot's ref for it).
type pendingChooser struct {
	at   where
	node dom.BackendNodeID
	ev   *fileChooser
}

// fileChooser is a Page.fileChooserOpened event: the input whose chooser
// the page opened.
type fileChooser struct {
	Mode          string            `json:"mode"` // selectSingle or selectMultiple
	FrameID       string            `json:"frameId"`
	BackendNodeID dom.BackendNodeID `json:"backendNodeId"`
}

// chooserOpened hands a Page.fileChooserOpened event to a waiting Upload
// (on the mux's reader; never blocks: one that nobody waits for is
// dropped).
func (x *tabExt) chooserOpened(params json.RawMessage) {
	ev := new(fileChooser)
	if json.Unmarshal(params, ev) != nil {
		return
	}
	x.lastChooser.Store(ev)
	x.chooserCount.Add(1)
	select {
	case x.choosers <- ev:
	default:
	}
}

// chooser clicks the element tg, which is not a file input, with the
// browser's file choosers intercepted (Page.setInterceptFileChooserDialog),
// and returns the input whose chooser the click opened.
func (x *tabExt) chooser(ctx context.Context, op, ref string, tg refTarget, files int) (refTarget, error) {
	none := func(why string) error {
		return x.badTarget(op, ref, tg, "not a file input, and "+why,
			"use the ref of the file input, or of the button or label that opens its file chooser (often labelled Choose File, Browse or Upload)")
	}
	if changedByClick[tg.role] {
		// Never click a control to see whether it opens a chooser: the
		// click would change it.
		return refTarget{}, none("a click would change it rather than open a file chooser")
	}
	// Nor one whose click does something of its own: a form's submit
	// button would send the form, a link would leave the page.
	var does string
	if err := x.callOn(ctx, op, tg.in(), tg.node, pagejs.ClickDefault, nil, &does); err != nil {
		return refTarget{}, x.fail(op, ctx, ref, frameErr(tg.f, err))
	}
	if does != "" {
		return refTarget{}, none("a click " + echo(does) + " rather than open a file chooser")
	}
	if tg.f != x.refs.top {
		return refTarget{}, x.badTarget(op, ref, tg, "not a file input, and in a frame of another site, where Upload cannot take a file chooser",
			"use the ref of the file input itself; if it is hidden (no ref), its page must be driven in a tab of its own: open the frame's URL with Session.OpenTab")
	}
	d := x.t.direct
	if err := x.t.pageEvents(ctx); err != nil { // the chooser comes as a Page event
		return refTarget{}, x.fail(op, ctx, ref, err)
	}
	for len(x.choosers) > 0 {
		<-x.choosers // a chooser an earlier click opened
	}
	// On already in the pool's own browsers (connect asks for it), unless
	// the browser refused then; in a browser the user runs, only for this
	// click: the user's own choosers must open.
	if err := d.Invoke(ctx, "Page.setInterceptFileChooserDialog", page.NewSetInterceptFileChooserDialogArgs(true), nil); err != nil {
		return refTarget{}, x.fail(op, ctx, ref, err)
	}
	if !x.t.s.ours {
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			d.Invoke(cctx, "Page.setInterceptFileChooserDialog", page.NewSetInterceptFileChooserDialogArgs(false), nil)
		}()
	}
	done, err := x.take(ctx, op)
	if err != nil {
		return refTarget{}, err
	}
	px, py, err := x.point(ctx, op, ref, tg, true)
	if err == nil {
		if err = x.click(ctx, px, py); err != nil {
			err = x.fail(op, ctx, ref, err)
		}
	}
	done()
	if err != nil {
		return refTarget{}, err
	}
	stop := d.Listen() // the chooser comes as an event
	defer stop()
	wait := time.Duration(fileChooserWait.Load())
	if wait == 0 {
		wait = defaultFileChooserWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ev := <-x.choosers:
		return x.chooserInput(op, ref, tg, ev, files)
	case <-timer.C:
		return refTarget{}, none(fmt.Sprintf("clicking it opened no file chooser within %v", wait))
	case <-ctx.Done():
		return refTarget{}, x.fail(op, ctx, ref, ctx.Err())
	}
}

// quoteAll quotes each of ss as a snapshot quotes names (axtext.Quote)
// and joins them with commas.
func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = axtext.Quote(s)
	}
	return strings.Join(q, ", ")
}
