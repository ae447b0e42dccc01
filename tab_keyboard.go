// Room: the keyboard (Press, Type). No lock: the key table is a read-only
// literal (internal/keys).

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool/internal/axtext"
	kb "github.com/browserpool/browserpool/internal/keys"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// Press presses a key or a chord on the focused element, with the key
// codes of a US keyboard: "Enter", "Tab", "Escape", "ArrowDown", "a", "A",
// "F5", "Control+A", "Shift+Tab", "Control+Shift+K", "Meta+Enter". Key
// names are those of KeyboardEvent.key; modifiers are Control (Ctrl), Shift,
// Alt (Option) and Meta (Cmd, Command). A key that types a character into
// a password or one-time-code field, or into an iframe, reaches the trace
// as "***".
func (t *Tab) Press(ctx context.Context, keys string) error {
	const op = "Tab.Press"
	events, perr := kb.Events(keys)
	types := false // a key types a character: it may be a secret's
	for _, ev := range events {
		types = types || (ev.Text != nil && *ev.Text != "")
	}
	check := func() error {
		if perr == "" {
			return nil
		}
		e := newError(op, ErrInvalidArgument, perr)
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = `name keys as KeyboardEvent.key does ("Enter", "ArrowDown", "a") and join modifiers with "+" ("Control+Shift+K")`
		return e
	}
	return t.inputAct(ctx, op, "press", keys, check, func(ctx context.Context, x *tabExt, args *string) error {
		if types && x.secretFocus(ctx) {
			*args = "***"
		}
		var entered bool
		for _, ev := range events {
			if err := x.key(ctx, ev, &entered); err != nil {
				return x.fail(op, ctx, "", err)
			}
		}
		return nil
	})
}

// key dispatches ev. Before the action's first Enter (entered: whether
// it came), it notes whether the focused element is a javascript: link:
// Chromium runs the link's script a moment after the key, as after a
// click, and follow gives it scriptLinkWait to ask for a navigation.
func (x *tabExt) key(ctx context.Context, ev *input.DispatchKeyEventArgs, entered *bool) error {
	if !*entered && ev.Key != nil && *ev.Key == "Enter" && (ev.Type == "keyDown" || ev.Type == "rawKeyDown") {
		*entered = true
		var link bool
		reply, err := invoke[runtime.EvaluateReply](ctx, x.t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs(pagejs.ScriptLinkFocus).SetReturnByValue(true))
		if err == nil && reply.ExceptionDetails == nil && reply.Result.Value != nil && json.Unmarshal(reply.Result.Value, &link) == nil && link {
			x.input.scriptLink = true
		}
	}
	return x.t.direct.Invoke(ctx, "Input.dispatchKeyEvent", ev, nil)
}

// Type types text into the focused element key by key, as a person does:
// each character is a key press (keydown, its input, keyup) of the US
// keyboard, with the Shift modifier for capitals and symbols; a character
// the layout lacks (é, 日) is typed as itself, without a key code. Widgets
// that listen for keys (an autocomplete's suggestions, search as you type)
// react as they do to a person. A newline presses Enter, which in a
// single-line field submits its form and in a chat box may send the
// message (for a line break in a rich editor, Press "Shift+Enter" between
// lines), and a tab presses Tab, which moves the focus on. To replace a
// field's content at once, use Fill. Text typed into a password or
// one-time-code field, or into an iframe, never reaches the trace. When ctx
// ends part way, the error says how many characters reached the page.
// A focused date or time field (input type date, time, datetime-local,
// month or week) takes keys part by part in the order its locale shows,
// not its value as text, and a slider or a colour well takes no typed
// text: Type types nothing into one and returns ErrInvalidArgument, whose
// hint gives the value's form for Fill. With nothing focused (the keys
// would go to the page itself, where a site may bind shortcuts to
// letters) Type types nothing and returns ErrFocusLost; so it does, after
// typing, when the page took the focus away part way (a field redrawn on
// each key), saying how many keys up to the first Tab or Enter reached
// the field.
func (t *Tab) Type(ctx context.Context, text string) error {
	const op = "Tab.Type"
	text = strings.ReplaceAll(text, "\r\n", "\n")
	total, typed := utf8.RuneCountInString(text), 0
	// The keys up to the first Tab or Enter (which may move the focus on)
	// must reach the element that has the focus when typing starts.
	watched := total
	if i := strings.IndexAny(text, "\n\t"); i >= 0 {
		watched = utf8.RuneCountInString(text[:i]) + 1
	}
	err := t.inputAct(ctx, op, "type", "(text withheld)", nil, func(ctx context.Context, x *tabExt, args *string) error {
		// A Tab or an Enter may move the focus (a username, Tab, then a
		// password): the focus is judged again after each, and the trace
		// withholds the whole text if any of it went to a secret field.
		*args = axtext.Quote(text)
		watch, field, secret := x.typeWatchArm(ctx)
		if secret {
			*args = "***"
		}
		if watch == "value" {
			return untypable(t, op, field)
		}
		if watch == "none" {
			e := newError(op, ErrFocusLost, "nothing on the page has the keyboard focus, so the keys would go to the page itself (where a site may bind shortcuts to letters); nothing was typed")
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "click the field first (Tab.Click on its ref) and type again, or use Tab.Fill with its ref; to press a page's shortcut key, use Tab.Press"
			return e
		}
		var entered bool
		for _, r := range text {
			key := string(r)
			switch r {
			case '\n', '\r':
				key = "Enter"
			case '\t':
				key = "Tab"
			}
			// One key at a time: a key that opens a dialog holds its
			// event until the dialog closes, and one left for the caller
			// (DialogReply.Defer) ends the typing there, with no key
			// after it waiting to land once it is answered.
			events, _ := kb.Events(key) // one character always names a key
			for _, ev := range events {
				if err := x.key(ctx, ev, &entered); err != nil {
					return x.fail(op, ctx, "", err)
				}
			}
			typed++
			if key != string(r) && !secret && x.secretFocus(ctx) {
				secret, *args = true, "***"
			}
		}
		if watch != "ok" {
			return nil
		}
		keys, now, ok := x.typeWatchRead(ctx)
		if !ok || keys >= min(watched, typed) {
			return nil // all reached it, or the page navigated (an Enter)
		}
		e := newError(op, ErrFocusLost, fmt.Sprintf("the focus left the field while typing: %d of the first %d keys reached it, the others went to %s, which has the focus now", keys, min(watched, typed), now))
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "read the field (a snapshot shows its value): the page moved the focus away, perhaps redrawing the field on each key; use Tab.Fill, which sets the whole value at once, or click the field and type the rest"
		return e
	})
	return partlyTyped(err, typed, total)
}

// ErrFocusLost: Tab.Type's keys did not reach the element that had the
// keyboard focus: nothing had it (the keys would have gone to the page
// itself, where a site may bind shortcuts to letters; nothing is typed
// then), or the page moved the focus away part way (a field it redraws
// on each key, a script). The detail says how many keys reached it.
var ErrFocusLost = errors.New("the keys did not reach the focused element")

// typeWatchArm evaluates pagejs.TypeWatchArm and returns its state: "ok",
// "none", "frame", or "value" (field is then the focused input's type),
// "" when the page could not say (no check is made); and whether the
// focus may be a secret field (secretFocus), true when the page could not
// say.
func (x *tabExt) typeWatchArm(ctx context.Context) (state, field string, secret bool) {
	var arm struct {
		State  string
		Type   string
		Secret bool
	}
	if !x.evalValue(ctx, pagejs.TypeWatchArm, &arm) {
		return "", "", true
	}
	return arm.State, arm.Type, arm.Secret
}

// untypable is Type's refusal when the focused element is an input of
// type field that takes no typed text. A date or time field takes keys
// part by part (month, day, year: in the order and form the browser's
// locale shows, from the part that has the focus), so text in the value's
// form leaves it empty or holding another date, with no error from the
// page; a slider or a colour well ignores typed characters.
func untypable(t *Tab, op, field string) error {
	parts := map[string]string{
		"date": "month, day and year", "time": "hours, minutes and maybe AM/PM", "datetime-local": "month, day, year, hours and minutes",
		"month": "month and year", "week": "week and year",
	}
	var detail, hint string
	switch field {
	case "range":
		detail = "the focused element is a slider (input type=range), which takes no typed text, only keys that move it; nothing was typed"
		hint = `use Tab.Fill on the slider's ref with the number to set (a snapshot shows the ref), or Tab.Press "ArrowRight" or "ArrowLeft" to move it a step`
	case "color":
		detail = "the focused element is a colour well (input type=color), which takes no typed text; nothing was typed"
		hint = "use Tab.Fill on its ref (a snapshot shows it) with the colour as " + valueFormats[field]
	default:
		what := strings.ReplaceAll(field, "datetime-local", "date and time")
		detail = fmt.Sprintf("the focused element is a %s field (input type=%s), which takes keys part by part (%s, in the order and form the page shows them, from the part that has the focus) rather than its value as text: typing would leave it empty or holding another %s; nothing was typed", what, field, parts[field], what)
		hint = fmt.Sprintf("use Tab.Fill on the field's ref (a snapshot shows it) with the value as %s, whatever the page displays; to step through its parts, use Tab.Press", valueFormats[field])
	}
	e := newError(op, ErrInvalidArgument, detail)
	e.Session, e.Tab, e.Hint = t.s.id, t.id, hint
	return e
}

// typeWatchRead evaluates pagejs.TypeWatchRead: the keys that reached the
// watched element and what has the focus now; ok is false when the page
// could not say (it navigated).
func (x *tabExt) typeWatchRead(ctx context.Context) (keys int, now string, ok bool) {
	var got struct {
		Keys int
		Now  string
	}
	if !x.evalValue(ctx, pagejs.TypeWatchRead, &got) {
		return 0, "", false
	}
	return got.Keys, got.Now, true
}

// evalValue evaluates expr in the page's main world and decodes its value
// into out; false when it threw, was null or could not be read.
func (x *tabExt) evalValue(ctx context.Context, expr string, out any) bool {
	reply, err := invoke[runtime.EvaluateReply](ctx, x.t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs(expr).SetReturnByValue(true))
	if err != nil || reply.ExceptionDetails != nil || len(reply.Result.Value) == 0 || string(reply.Result.Value) == "null" {
		return false
	}
	return json.Unmarshal(reply.Result.Value, out) == nil
}

// partlyTyped adds to err, the error of a Type that stopped at character
// typed+1 of total, what reached the page, when the call ran out of time
// or was cancelled after a first character: typing the whole text again
// would add that part a second time. Other errors (a dialog the text
// opened, a closed tab) keep their own hint.
func partlyTyped(err error, typed, total int) error {
	var e *Error
	if typed == 0 || !errors.As(err, &e) || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return err
	}
	e.Detail = strings.TrimSpace(fmt.Sprintf("%s (it stopped at character %d of %d: the first %d reached the page, and that one may have)", e.Detail, typed+1, total, typed))
	hint := "read the field before typing again: typing the whole text again adds what was typed a second time; type only the rest, or clear the field and type it all"
	if strings.HasSuffix(e.Hint, busyPageHint) { // givenUp's: the page may be busy
		hint += "; " + busyPageHint
	}
	e.Hint = hint
	return e
}

// secretFocus reports whether what is typed now may be a secret: the
// focused element is a password or one-time-code field or an iframe, or
// the page could not say.
func (x *tabExt) secretFocus(ctx context.Context) bool {
	var secret bool
	reply, err := invoke[runtime.EvaluateReply](ctx, x.t.direct, "Runtime.evaluate", runtime.NewEvaluateArgs(pagejs.SecretFocus).SetReturnByValue(true))
	if err == nil && reply.ExceptionDetails == nil && reply.Result.Value != nil {
		err = json.Unmarshal(reply.Result.Value, &secret)
	}
	return err != nil || secret
}

// insertText types text into the focused element of frame f's page.
// Keyboard input goes to the page's focused frame, so the tab's own session
// carries it.
func (x *tabExt) insertText(ctx context.Context, f *frameSess, text string) error {
	return x.t.direct.Invoke(ctx, "Input.insertText", input.NewInsertTextArgs(text), nil)
}
