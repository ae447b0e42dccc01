// Room: what a fake page does when it is acted on: the mouse, clicks and
// their effects (a page's Go func, a dialog, a download, a navigation, a
// form's submit), dialog answers, text input, waits (pagejs.Poll) and a
// page's timers (Page.After). Built-in methods and timer callbacks: they
// run with Browser.mu held; file writes wait for the lock's release
// (Browser.afterUnlock). The keyboard is in pagekeys.go.

package cdptest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// openDialog is a JavaScript dialog open on a target. While it is open
// the renderer answers nothing: the reply of the call that opened it, and
// every later call to the renderer, wait until Page.handleJavaScriptDialog.
type openDialog struct {
	spec      *dialogSpec
	el        *Element // whose click opened it
	heldReply *batch   // the reply of the call that opened it
	held      []heldCall
}

// heldCall is a call made while a dialog was open, answered once it closes.
type heldCall struct {
	s      *session
	id     int64
	method string
	params json.RawMessage
}

// downloadBehavior is Browser.setDownloadBehavior's setting.
type downloadBehavior struct {
	behavior string
	path     string
	events   bool
	on       *session
}

func (b *Browser) dispatchMouseEvent(s *session, params json.RawMessage) outcome {
	var p struct {
		Type   string  `json:"type"`
		X      float64 `json:"x"`
		Y      float64 `json:"y"`
		DeltaY float64 `json:"deltaY"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	pg := t.page
	el := pg.at(p.X, p.Y+pg.scrollY)
	switch p.Type {
	case "mousePressed":
		t.pressed = el
		for a := el; a != nil; a = a.parent {
			for _, w := range a.watches {
				w.pressed = true
			}
		}
		pg.focus = nil
		for a := el; a != nil; a = a.parent {
			if a.focusable() {
				pg.focus = a
				break
			}
		}
		t.selectAll = false
	case "mouseReleased":
		pressed := t.pressed
		t.pressed = nil
		if el != nil && el == pressed {
			return b.clickLocked(s, el)
		}
	case "mouseWheel":
		pg.scrollTo(pg.scrollY + p.DeltaY)
	case "mouseMoved":
	default:
		return outcome{err: errInvalidParams}
	}
	return outcome{}
}

func (e *Element) focusable() bool {
	return (e.kind() != "" || e.Role == "link") && !e.Disabled
}

// clickLocked is a click on el: the watches note it, then el acts.
func (b *Browser) clickLocked(s *session, el *Element) outcome {
	for a := el; a != nil; a = a.parent {
		for _, w := range a.watches {
			w.clicked = true
		}
	}
	if el.Disabled {
		return outcome{}
	}
	return b.actLocked(s, el)
}

// actLocked runs what el does when clicked: a checkbox toggles, the page's
// Go func runs, then a dialog opens, or else the download starts and the
// page navigates.
func (b *Browser) actLocked(s *session, el *Element) outcome {
	t := s.target
	pg := t.page
	switch el.kind() {
	case "checkbox":
		el.Checked = !el.Checked
		if e := b.changedLocked(t, el); e != nil {
			return outcome{err: e}
		}
	case "radio":
		if !el.Checked {
			pg.checkRadio(el)
			if e := b.changedLocked(t, el); e != nil {
				return outcome{err: e}
			}
		}
	}
	if el.onClick != nil {
		if e := b.callGo("Element.Does of "+el.named(), func() { el.onClick(pg) }); e != nil {
			pg.goTo = ""
			return outcome{err: e}
		}
	}
	if d := el.dialog; d != nil {
		t.dialog = &openDialog{spec: d, el: el}
		var post []event
		for _, ts := range t.sessions {
			if ts.page {
				post = append(post, event{ts, "Page.javascriptDialogOpening", map[string]any{
					"url": pg.URL, "frameId": t.id, "message": d.message, "type": d.typ,
					"hasBrowserHandler": false, "defaultPrompt": d.defaultPrompt,
				}})
			}
		}
		return outcome{post: post, hold: true}
	}
	return outcome{post: b.effectsLocked(s, el)}
}

// effectsLocked starts el's download and the navigation el or the page's
// Go func asked for, and returns their events. A submit button submits
// its form, unless a required field of the form is empty: then, as
// Chromium's constraint validation, nothing happens but the focus moving
// to that field.
func (b *Browser) effectsLocked(s *session, el *Element) []event {
	t := s.target
	pg := t.page
	to := pg.goTo
	pg.goTo = ""
	if to == "" && el != nil && el.kind() == "submit" {
		form := formOf(el)
		if focus, blocked := pg.invalid(form); blocked {
			if focus != nil {
				pg.focus, t.selectAll = focus, false
			}
			return nil
		}
		if el.download == nil {
			to = pg.submitURL(el.goTo, form)
		}
	}
	var post []event
	if el != nil && el.download != nil {
		post = append(post, b.downloadLocked(t, el)...)
	}
	if to == "" && el != nil && el.download == nil {
		to = el.goTo
		if to == "" && el.Role == "link" {
			to = el.Href
		}
	}
	if to != "" {
		nav, _, _ := b.followLocked(t, resolveURL(pg.URL, to))
		post = append(post, nav...)
	}
	return post
}

// downloadLocked starts el's download: Browser.downloadWillBegin now, the
// file and Browser.downloadProgress once the lock is released.
func (b *Browser) downloadLocked(t *target, el *Element) []event {
	d := b.downloads
	if d.behavior != "allow" && d.behavior != "allowAndName" || d.on == nil || d.on.ended {
		return nil // Chrome would save it where no one looks
	}
	guid := fmt.Sprintf("GUID-%d", b.nextLocked("download"))
	u := t.page.URL
	if el.Role == "link" && el.Href != "" {
		u = resolveURL(u, el.Href)
	}
	name := guid
	if d.behavior == "allow" {
		name = el.download.name
	}
	data := el.download.data
	var post []event
	if d.events {
		post = append(post, event{d.on, "Browser.downloadWillBegin", map[string]any{
			"frameId": t.id, "guid": guid, "url": u, "suggestedFilename": el.download.name,
		}})
	}
	on := d.on
	b.afterUnlock = append(b.afterUnlock, func() {
		state := "canceled"
		// Like Chromium, the browser makes the download dir when the first
		// download begins.
		if d.path != "" && os.MkdirAll(d.path, 0o700) == nil && os.WriteFile(filepath.Join(d.path, name), data, 0o600) == nil {
			state = "completed"
		}
		if d.events {
			b.Emit(on.id, "Browser.downloadProgress", map[string]any{
				"guid": guid, "totalBytes": len(data), "receivedBytes": len(data), "state": state,
			})
		}
	})
	return post
}

func (b *Browser) handleDialog(s *session, params json.RawMessage) outcome {
	var p struct {
		Accept     bool   `json:"accept"`
		PromptText string `json:"promptText"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	d := t.dialog
	if d == nil {
		return outcome{err: errNoDialog}
	}
	t.dialog = nil
	text := p.PromptText
	if text == "" && p.Accept {
		text = d.spec.defaultPrompt
	}
	if !p.Accept {
		text = ""
	}
	var failed *Error
	if d.spec.then != nil {
		pg := t.page
		failed = b.callGo("the answer to "+d.spec.named(), func() { d.spec.then(pg, p.Accept, text) })
	}
	var post []event
	for _, ts := range t.sessions {
		if ts.page {
			post = append(post, event{ts, "Page.javascriptDialogClosed", map[string]any{"result": p.Accept, "userInput": text}})
		}
	}
	el := d.el
	if !p.Accept && d.spec.typ != "alert" {
		el = nil // a dismissed confirm stops the click's download and navigation
	}
	if failed != nil {
		t.page.goTo = "" // the answer panicked: the click goes no further
	} else {
		post = append(post, b.effectsLocked(s, el)...)
	}
	return outcome{err: failed, post: post, after: func() {
		if d.heldReply != nil {
			b.shapeLocked(d.heldReply)
		}
		for _, c := range d.held {
			if !c.s.ended {
				b.builtinLocked(c.s, c.id, c.method, c.params, false)
			}
		}
	}}
}

func (b *Browser) insertText(s *session, params json.RawMessage) outcome {
	var p struct {
		Text string `json:"text"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	b.typeLocked(s.target, p.Text)
	return outcome{}
}

// typeLocked types text into the focused field, over its content if it is
// selected. The fake's text fields are one-line inputs: as in Chromium, a
// line break typed into one ("\r\n", "\r" or "\n") is a space.
func (b *Browser) typeLocked(t *target, text string) {
	f := t.page.focus
	if f == nil || !editable(f) {
		return
	}
	if t.selectAll {
		f.Value = ""
		t.selectAll = false
	}
	f.Value += oneLine.Replace(text)
}

// oneLine makes each line break a space, as a one-line input does with
// inserted text.
var oneLine = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

// pollInterval is how often a pending poll checks again on its own, as
// pagejs.Poll does in Chromium (a MutationObserver and a timer).
const pollInterval = 50 * time.Millisecond

// pendingPoll is a pagejs.Poll waiting for its check to come true.
type pendingPoll struct {
	s        *session
	id       int64
	check    func() (any, bool, *Error)
	deadline *delayed // answers {ok: false} when the poll's time is up
	tick     *delayed // the next check on its own
}

// pollLocked answers a pagejs.Poll of check for up to ms: at once if check
// holds, else when it comes to hold (checked after every call to the
// target and every pollInterval), or {ok: false} after ms.
func (b *Browser) pollLocked(s *session, id int64, check func() (any, bool, *Error), ms int64) (outcome, bool) {
	v, ok, e := check()
	switch {
	case e != nil:
		return outcome{err: e}, true
	case ok:
		return byValue(map[string]any{"ok": true, "value": v}), true
	}
	t := s.target
	pp := &pendingPoll{s: s, id: id, check: check}
	pp.deadline = b.timerLocked(time.Duration(ms)*time.Millisecond, func() {
		pp.deadline = nil
		b.endPollLocked(t, pp, encodeReply(id, s.id, mustMarshal("poll", byValue(map[string]any{"ok": false}).result), nil))
	})
	b.tickPollLocked(t, pp)
	t.polls = append(t.polls, pp)
	return outcome{}, false
}

// tickPollLocked checks pp again after pollInterval, and so on until it
// ends. A target whose renderer is held by a dialog, or crashed, checks
// nothing.
func (b *Browser) tickPollLocked(t *target, pp *pendingPoll) {
	pp.tick = b.timerLocked(pollInterval, func() {
		pp.tick = nil
		switch {
		case pp.s.ended: // no one to answer: stop checking
			b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, nil, errSessionNotFound))
			return
		case t.dialog == nil && !t.crashed:
			b.recheckPollLocked(t, pp)
		}
		if slices.Contains(t.polls, pp) {
			b.tickPollLocked(t, pp)
		}
	})
}

// recheckPollsLocked answers the target's polls whose checks now hold.
func (b *Browser) recheckPollsLocked(t *target) {
	for _, pp := range slices.Clone(t.polls) {
		if slices.Contains(t.polls, pp) { // a check's Go func may end others
			b.recheckPollLocked(t, pp)
		}
	}
}

// recheckPollLocked answers pp if its check now holds or fails.
func (b *Browser) recheckPollLocked(t *target, pp *pendingPoll) {
	v, ok, e := pp.check()
	switch {
	case e != nil:
		b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, nil, e))
	case ok:
		b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, mustMarshal("poll", byValue(map[string]any{"ok": true, "value": v}).result), nil))
	}
}

// endPollLocked sends a poll's reply and forgets it.
func (b *Browser) endPollLocked(t *target, pp *pendingPoll, reply []byte) {
	for i, x := range t.polls {
		if x == pp {
			t.polls = append(t.polls[:i], t.polls[i+1:]...)
			break
		}
	}
	b.stopTimerLocked(pp.deadline)
	b.stopTimerLocked(pp.tick)
	b.shapeLocked(&batch{name: "Runtime.evaluate", on: pp.s, dropOnCrash: true, msgs: [][]byte{reply}})
}

// adoptLocked makes pg t's page (see target.adopt) and starts its timers
// (Page.After).
func (b *Browser) adoptLocked(t *target, pg *Page) {
	t.adopt(pg)
	pg.b, pg.t = b, t
	for _, a := range pg.afters {
		b.afterLocked(t, pg, a)
	}
}

// afterLocked runs a's func on pg, loaded in t, after a.d (Page.After).
func (b *Browser) afterLocked(t *target, pg *Page, a afterSpec) {
	b.timerLocked(a.d, func() { b.runAfterLocked(t, pg, a) })
}

// runAfterLocked runs a Page.After func on pg if pg is still t's page,
// then follows the navigation it asked for and answers the waits it
// satisfied. While a dialog holds the renderer it tries again later.
func (b *Browser) runAfterLocked(t *target, pg *Page, a afterSpec) {
	if t.page != pg || t.crashed || b.targetLocked(t.id) != t {
		return // the page is gone: its timers went with it
	}
	if t.dialog != nil {
		b.timerLocked(pollInterval, func() { b.runAfterLocked(t, pg, a) })
		return
	}
	// A panic or a t.Fatal in f fails the test (callGo reports a panic to
	// it); no call waits on f, so nothing else is told.
	if e := b.callGo("the Page.After func of "+pg.URL, func() { a.f(pg) }); e != nil {
		pg.goTo = ""
		return
	}
	if to := pg.goTo; to != "" {
		pg.goTo = ""
		post, _, _ := b.followLocked(t, resolveURL(pg.URL, to))
		for _, ev := range post {
			b.emitLocked(ev.on, ev.method, ev.params)
		}
	}
	b.recheckPollsLocked(t)
}
