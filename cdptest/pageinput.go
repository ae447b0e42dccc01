// Room: what a fake page does when it is acted on: the mouse, the
// keyboard, clicks and their effects (a page's Go func, a dialog, a
// download, a navigation), and dialog answers. Built-in methods: they run
// with Browser.mu held; file writes wait for the lock's release
// (Browser.afterUnlock).

package cdptest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	return (e.input != "" || e.Role == "link") && !e.Disabled
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
	if el.input == "checkbox" {
		el.Checked = !el.Checked
		if e := b.changedLocked(t, el); e != nil {
			return outcome{err: e}
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
// Go func asked for, and returns their events.
func (b *Browser) effectsLocked(s *session, el *Element) []event {
	t := s.target
	pg := t.page
	var post []event
	if el != nil && el.download != nil {
		post = append(post, b.downloadLocked(t, el)...)
	}
	to := pg.goTo
	pg.goTo = ""
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

func (b *Browser) dispatchKeyEvent(s *session, params json.RawMessage) outcome {
	var p struct {
		Type      string `json:"type"`
		Key       string `json:"key"`
		Text      string `json:"text"`
		Modifiers int    `json:"modifiers"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if p.Type != "keyDown" && p.Type != "rawKeyDown" {
		return outcome{}
	}
	t := s.target
	pg := t.page
	f := pg.focus
	switch {
	case p.Key == "Enter":
		switch {
		case f != nil && (f.Role == "button" || f.Role == "link") && f.input != "file":
			return b.clickLocked(s, f)
		case f != nil && (f.Role == "textbox" || f.Role == "searchbox"):
			var submit *Element
			walkElements(pg.Body, func(e *Element) bool {
				if e.input == "submit" && submit == nil {
					submit = e
				}
				return submit == nil
			})
			if submit != nil {
				return b.clickLocked(s, submit)
			}
		}
	case p.Key == "Tab":
		var order []*Element
		walkElements(pg.Body, func(e *Element) bool {
			if !e.Hidden && e.focusable() {
				order = append(order, e)
			}
			return true
		})
		if len(order) > 0 {
			next := 0
			for i, e := range order {
				if e == f {
					next = i + 1
				}
			}
			if p.Modifiers&8 != 0 { // Shift
				next -= 2
			}
			pg.focus = order[(next+len(order))%len(order)]
			t.selectAll = false
		}
	case p.Key == "Backspace" || p.Key == "Delete":
		if f != nil && editable(f) {
			if t.selectAll {
				f.Value = ""
			} else if p.Key == "Backspace" && f.Value != "" {
				r := []rune(f.Value)
				f.Value = string(r[:len(r)-1])
			}
			t.selectAll = false
		}
	case strings.EqualFold(p.Key, "a") && p.Modifiers&(2|4) != 0: // Control or Meta
		t.selectAll = f != nil && editable(f)
	case p.Text != "" && p.Type == "keyDown":
		b.typeLocked(t, p.Text)
	}
	return outcome{}
}

func editable(e *Element) bool {
	return (e.Role == "textbox" || e.Role == "searchbox") && !e.Disabled && !e.ReadOnly
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
// selected.
func (b *Browser) typeLocked(t *target, text string) {
	f := t.page.focus
	if f == nil || !editable(f) {
		return
	}
	if t.selectAll {
		f.Value = ""
		t.selectAll = false
	}
	f.Value += text
}

// pendingPoll is a pagejs.Poll waiting for its check to come true.
type pendingPoll struct {
	s     *session
	id    int64
	check func() (any, bool, *Error)
	timer *delayed
}

// pollLocked answers a pagejs.Poll of check for up to ms: at once if check
// holds, else when a later action makes it hold, or {ok: false} after ms.
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
	dl := new(delayed)
	dl.timer = time.AfterFunc(time.Duration(ms)*time.Millisecond, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if _, ok := b.timers[dl]; !ok {
			return
		}
		delete(b.timers, dl)
		b.endPollLocked(t, pp, encodeReply(id, s.id, mustMarshal("poll", byValue(map[string]any{"ok": false}).result), nil))
	})
	b.timers[dl] = struct{}{}
	pp.timer = dl
	t.polls = append(t.polls, pp)
	return outcome{}, false
}

// recheckPollsLocked answers the target's polls whose checks now hold.
func (b *Browser) recheckPollsLocked(t *target) {
	for _, pp := range append([]*pendingPoll(nil), t.polls...) {
		v, ok, e := pp.check()
		switch {
		case e != nil:
			b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, nil, e))
		case ok:
			b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, mustMarshal("poll", byValue(map[string]any{"ok": true, "value": v}).result), nil))
		}
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
	if pp.timer != nil {
		pp.timer.timer.Stop()
		delete(b.timers, pp.timer)
	}
	b.shapeLocked(&batch{name: "Runtime.evaluate", on: pp.s, dropOnCrash: true, msgs: [][]byte{reply}})
}
