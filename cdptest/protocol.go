// Room: what the fake browser answers. Built-in methods run with
// Browser.mu held and never block; scripted handlers run without it.

package cdptest

import (
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Chrome's protocol-level errors.
var (
	errSessionNotFound = &Error{Code: -32001, Message: "Session with given id not found."}
	errInvalidParams   = &Error{Code: -32602, Message: "Invalid parameters"}
	errNoTarget        = &Error{Code: -32602, Message: "No target with given id found"}
	errNoSession       = &Error{Code: -32602, Message: "No session with given id"}
)

// errNotFound is Chrome's reply to a method it does not have.
func errNotFound(method string) *Error {
	return &Error{Code: -32601, Message: "'" + method + "' wasn't found"}
}

// errNotImplemented is Chrome's reply to a method the fake does not
// implement, with a word in the data on how to script it.
func errNotImplemented(method string) *Error {
	e := errNotFound(method)
	e.Data = "cdptest does not implement " + method + `: answer it with Browser.Handle("` + method + `", …)`
	return e
}

// receive handles one request written by the client. Every path that
// takes b.mu releases it by defer, so a panic on the way (a bug of the
// fake's; a page's Go funcs are recovered in callGo) cannot leave it held.
func (b *Browser) receive(data []byte) error {
	var req envelope
	decodeErr := json.Unmarshal(data, &req)
	defer b.runAfterUnlock()
	h, s, c, browserSide, err := b.dispatch(&req, decodeErr)
	if h == nil {
		return err
	}

	hc := c
	hc.Params = slices.Clone(c.Params) // the record stays as sent
	result, err := h(&hc)

	b.mu.Lock()
	defer b.mu.Unlock()
	id, method := *req.ID, req.Method
	if errors.Is(err, ErrNotHandled) {
		if !s.ended && (s.target == nil || !s.target.crashed || browserSide) {
			b.builtinLocked(s, id, method, req.Params, browserSide)
		}
		return nil
	}
	var raw json.RawMessage
	var e *Error
	switch {
	case err != nil && errors.As(err, &e):
	case err != nil:
		e = &Error{Code: -32000, Message: err.Error()}
	case result == nil:
		raw = json.RawMessage("{}")
	default:
		if raw, err = json.Marshal(result); err != nil {
			e = &Error{Code: -32603, Message: "cdptest: encoding the handler's result for " + method + ": " + err.Error()}
		}
	}
	b.shapeLocked(&batch{name: method, on: s, dropOnCrash: !browserSide,
		msgs: [][]byte{encodeReply(id, s.id, raw, e)}})
	return nil
}

// dispatch records a request and answers it under b.mu, unless a handler
// set with Browser.Handle is to answer it: then it returns the handler
// (to run without the lock), the call and whether the browser process
// answers the method itself.
func (b *Browser) dispatch(req *envelope, decodeErr error) (h func(*Call) (any, error), s *session, c Call, browserSide bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.connErr != nil {
		return nil, nil, Call{}, false, io.ErrClosedPipe
	}
	var bad *Error
	switch {
	case decodeErr != nil:
		bad = &Error{Code: -32700, Message: "Message must be a valid JSON"}
	case req.ID == nil:
		bad = &Error{Code: -32600, Message: "Message must have integer 'id' property"}
	case req.Method == "":
		bad = &Error{Code: -32600, Message: "Message must have string 'method' property"}
	}
	if bad != nil {
		env := envelope{ID: req.ID, Error: bad, SessionID: req.SessionID}
		msg, _ := json.Marshal(env) // cannot fail: plain fields
		b.deliverLocked(&batch{msgs: [][]byte{msg}})
		return nil, nil, Call{}, false, nil
	}

	id, method := *req.ID, req.Method
	s = b.sessions[req.SessionID]
	c = Call{Method: method, SessionID: req.SessionID, Params: req.Params}
	if s != nil && s.target != nil {
		c.TargetID = s.target.id
	}
	b.calls = append(b.calls, c)

	// The browser process answers Browser.*, Target.*, Inspector.* and
	// Storage.* itself; the rest goes to the renderer, which is gone once
	// the target crashed.
	browserSide = strings.HasPrefix(method, "Browser.") || strings.HasPrefix(method, "Target.") ||
		strings.HasPrefix(method, "Inspector.") || strings.HasPrefix(method, "Storage.")
	switch {
	case s == nil:
		// Chrome's dispatcher answers without a sessionId, unshaped.
		b.deliverLocked(&batch{msgs: [][]byte{encodeReply(id, "", nil, errSessionNotFound)}})
		return nil, s, c, browserSide, nil
	case s.target != nil && s.target.crashed && !browserSide:
		return nil, s, c, browserSide, nil // never answered
	case b.sessionless[method]:
		b.shapeLocked(&batch{name: method, on: s, dropOnCrash: !browserSide,
			msgs: [][]byte{encodeReply(id, "", nil, errSessionNotFound)}})
		return nil, s, c, browserSide, nil
	}
	h = b.handlers[method]
	if h == nil && s.target != nil && s.target.dialog != nil && !browserSide && method != "Page.handleJavaScriptDialog" {
		// A dialog holds the renderer: answered once it closes.
		d := s.target.dialog
		d.held = append(d.held, heldCall{s: s, id: id, method: method, params: slices.Clone(req.Params)})
		return nil, s, c, browserSide, nil
	}
	if h == nil {
		b.builtinLocked(s, id, method, req.Params, browserSide)
	}
	return h, s, c, browserSide, nil
}

// outcome is what a built-in method does after its effects: a reply and
// the events that travel with it.
type outcome struct {
	result any
	err    *Error
	post   []event // sent right after the reply, in the same batch
	self   bool    // the call ended its own session: reply anyway
	after  func()  // runs once the reply is sent or lost with its session

	hold    bool                 // a dialog opened: send post now, the reply once it closes
	noReply bool                 // the reply is sent later (a poll waiting for its check)
	later   func() (any, *Error) // computes the reply once the lock is released
}

type event struct {
	on     *session
	method string
	params any
}

// builtinLocked runs the built-in behaviour of method on session s and
// sends its reply.
func (b *Browser) builtinLocked(s *session, id int64, method string, params json.RawMessage, browserSide bool) {
	f := builtins[method]
	var o outcome
	switch {
	case f == nil:
		o.err = errNotImplemented(method)
	case s.target == nil && !browserSide:
		o.err = errNotFound(method)
	default:
		b.callID = id
		o = f(b, s, params)
	}
	if t := s.target; t != nil && len(t.polls) > 0 && t.dialog == nil {
		defer b.recheckPollsLocked(t)
	}
	if o.noReply {
		return
	}
	if o.later != nil {
		// Slow work (encoding an image) runs once the lock is released.
		later := o.later
		b.afterUnlock = append(b.afterUnlock, func() {
			result, e := later()
			b.mu.Lock()
			defer b.mu.Unlock()
			b.replyLocked(s, id, method, browserSide, outcome{result: result, err: e})
		})
		return
	}
	b.replyLocked(s, id, method, browserSide, o)
}

// replyLocked sends a built-in method's reply and the events of o.
func (b *Browser) replyLocked(s *session, id int64, method string, browserSide bool, o outcome) {
	var raw json.RawMessage
	if o.err == nil {
		raw = mustMarshal(method+" result", o.result)
		if raw == nil {
			raw = json.RawMessage("{}")
		}
	}
	reply := encodeReply(id, s.id, raw, o.err)
	msgs := [][]byte{reply}
	if o.hold {
		// A dialog opened: its events go now, the reply once it closes.
		msgs = nil
		s.target.dialog.heldReply = &batch{name: method, on: s, dropOnCrash: true, msgs: [][]byte{reply}}
	}
	// The events travel with the reply up to the first one a Hold or Delay
	// names: that one and those after it go through their own gates once
	// the reply is sent, so Hold("Page.lifecycleEvent") holds the load
	// events of a navigation too.
	post := o.post
	for len(post) > 0 && !b.shapedLocked(post[0].method) {
		msgs = append(msgs, encodeEvent(post[0].on.id, post[0].method, post[0].params))
		post = post[1:]
	}
	after := o.after
	if len(post) > 0 {
		after = func() {
			for _, ev := range post {
				b.emitLocked(ev.on, ev.method, ev.params)
			}
			if o.after != nil {
				o.after()
			}
		}
	}
	bt := &batch{name: method, on: s, dropOnCrash: !browserSide, msgs: msgs, after: after}
	if o.self {
		bt.on = nil
	}
	b.shapeLocked(bt)
}

// runAfterUnlock releases the lock and runs the work queued for after it
// (file writes, image encoding), in order.
func (b *Browser) runAfterUnlock() {
	for {
		b.mu.Lock()
		work := b.afterUnlock
		b.afterUnlock = nil
		b.mu.Unlock()
		if len(work) == 0 {
			return
		}
		for _, f := range work {
			f()
		}
	}
}

// shapedLocked reports whether a Hold or a Delay applies to method now.
func (b *Browser) shapedLocked(method string) bool {
	return b.gates[method] != nil || b.delays[method] > 0
}

var builtins map[string]func(b *Browser, s *session, params json.RawMessage) outcome

func init() {
	builtins = map[string]func(*Browser, *session, json.RawMessage) outcome{
		"Browser.getVersion": func(*Browser, *session, json.RawMessage) outcome {
			return outcome{result: version{
				ProtocolVersion: "1.3",
				Product:         "HeadlessChrome/156.0.0.0",
				Revision:        "@cdptest",
				UserAgent:       "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
				JSVersion:       "15.6",
			}}
		},
		"Browser.close": func(b *Browser, _ *session, _ json.RawMessage) outcome {
			return outcome{after: func() { b.exitLocked(0) }}
		},
		"Target.setDiscoverTargets": (*Browser).setDiscoverTargets,
		"Target.createTarget":       (*Browser).createTarget,
		"Target.attachToTarget":     (*Browser).attachToTarget,
		"Target.detachFromTarget":   (*Browser).detachFromTarget,
		"Target.closeTarget":        (*Browser).closeTarget,
		"Target.activateTarget":     (*Browser).activateTarget,
		"Target.getTargets":         (*Browser).getTargets,
		"Target.getTargetInfo":      (*Browser).getTargetInfo,
		"Page.enable":               set(func(s *session) { s.page = true }),
		"Page.disable":              set(func(s *session) { s.page = false }),
		"Runtime.enable":            (*Browser).runtimeEnable,
		"Runtime.disable":           set(func(s *session) { s.runtime = false }),
		// Fake pages log nothing to the console: there is nothing to
		// discard (Tab.ClearConsole).
		"Runtime.discardConsoleEntries":  set(func(*session) {}),
		"Inspector.enable":               (*Browser).inspectorEnable,
		"Inspector.disable":              set(func(*session) {}),
		"Page.navigate":                  (*Browser).navigate,
		"Page.getFrameTree":              (*Browser).getFrameTree,
		"Page.setLifecycleEventsEnabled": (*Browser).setLifecycleEventsEnabled,
		"Page.getNavigationHistory":      (*Browser).getNavigationHistory,
		"Page.navigateToHistoryEntry":    (*Browser).navigateToHistoryEntry,
		"Page.reload":                    (*Browser).reload,
		// The fake runs no JavaScript, but knows the library's status
		// script (see statusReport).
		"Page.addScriptToEvaluateOnNewDocument":    (*Browser).addScriptOnNewDocument,
		"Page.removeScriptToEvaluateOnNewDocument": (*Browser).removeScriptOnNewDocument,
		"Performance.enable":                       set(func(s *session) { s.performance = true }),
		"Performance.disable":                      set(func(s *session) { s.performance = false }),
		// Fake pages open no file chooser: a click never reports one.
		"Page.setInterceptFileChooserDialog": set(func(*session) {}),
		"Runtime.evaluate":                   (*Browser).evaluateCall,

		// Every tab of a launched browser sets its viewport
		// (Config.Viewport); fake pages follow it.
		"Emulation.setDeviceMetricsOverride": (*Browser).setDeviceMetrics,

		// The cookie jar (cookies.go).
		"Storage.getCookies":   (*Browser).getCookies,
		"Storage.setCookies":   (*Browser).setCookies,
		"Storage.clearCookies": (*Browser).clearCookies,
	}
	for m, f := range pageBuiltins {
		builtins[m] = f
	}
}

// set makes a built-in method that only changes a session's flags.
func set(f func(*session)) func(*Browser, *session, json.RawMessage) outcome {
	return func(_ *Browser, s *session, _ json.RawMessage) outcome {
		f(s)
		return outcome{}
	}
}

// decode reads params into v; CDP treats absent params as {}.
func decode(params json.RawMessage, v any) *Error {
	if len(params) == 0 {
		return nil
	}
	if json.Unmarshal(params, v) != nil {
		return errInvalidParams
	}
	return nil
}

func (b *Browser) setDiscoverTargets(s *session, params json.RawMessage) outcome {
	var p struct {
		Discover bool `json:"discover"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if p.Discover && !s.discover {
		for _, t := range b.targets {
			b.emitLocked(s, "Target.targetCreated", targetEvent{TargetInfo: b.infoLocked(t)})
		}
	}
	s.discover = p.Discover
	return outcome{}
}

func (b *Browser) createTarget(_ *session, params json.RawMessage) outcome {
	var p struct {
		URL string `json:"url"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := b.newTargetLocked(p.URL)
	return outcome{result: targetIDParams{TargetID: t.id}}
}

func (b *Browser) attachToTarget(s *session, params json.RawMessage) outcome {
	var p struct {
		TargetID string `json:"targetId"`
		Flatten  bool   `json:"flatten"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := b.targetLocked(p.TargetID)
	switch {
	case t == nil:
		return outcome{err: errNoTarget}
	case !p.Flatten:
		return outcome{err: &Error{Code: -32000, Message: "cdptest: only flattened sessions are supported: set flatten to true"}}
	}
	ns := b.attachLocked(s, t)
	return outcome{result: struct {
		SessionID string `json:"sessionId"`
	}{ns.id}}
}

func (b *Browser) detachFromTarget(s *session, params json.RawMessage) outcome {
	var p struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	ds := b.sessions[p.SessionID]
	if p.SessionID == "" {
		ds = nil
		if t := b.targetLocked(p.TargetID); t != nil && len(t.sessions) > 0 {
			ds = t.sessions[0]
		}
	}
	if ds == nil || ds.target == nil {
		return outcome{err: errNoSession}
	}
	b.detachLocked(ds)
	return outcome{self: ds == s}
}

func (b *Browser) closeTarget(s *session, params json.RawMessage) outcome {
	var p targetIDParams
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := b.targetLocked(p.TargetID)
	if t == nil {
		return outcome{err: errNoTarget}
	}
	// Chrome answers first and closes the target after.
	return outcome{
		result: struct {
			Success bool `json:"success"`
		}{true},
		self: s.target == t,
		after: func() {
			if b.targetLocked(t.id) == t {
				b.closeTargetLocked(t)
			}
		},
	}
}

func (b *Browser) activateTarget(_ *session, params json.RawMessage) outcome {
	var p targetIDParams
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if b.targetLocked(p.TargetID) == nil {
		return outcome{err: errNoTarget}
	}
	return outcome{}
}

func (b *Browser) getTargets(*session, json.RawMessage) outcome {
	infos := []targetInfo{}
	for _, t := range b.targets {
		infos = append(infos, b.infoLocked(t))
	}
	return outcome{result: struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}{infos}}
}

// getTargetInfo answers with the info of targetId, or, without one, of
// the session's own target (Chrome's answer on the browser's own session
// is its browser target, which the fake does not model: an error).
func (b *Browser) getTargetInfo(s *session, params json.RawMessage) outcome {
	var p targetIDParams
	if len(params) > 0 {
		if e := decode(params, &p); e != nil {
			return outcome{err: e}
		}
	}
	t := s.target
	if p.TargetID != "" {
		t = b.targetLocked(p.TargetID)
	}
	if t == nil {
		return outcome{err: errNoTarget}
	}
	return outcome{result: struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}{b.infoLocked(t)}}
}

func (b *Browser) runtimeEnable(s *session, _ json.RawMessage) outcome {
	if !s.runtime {
		// Chrome reports the existing contexts before it answers.
		b.emitLocked(s, "Runtime.executionContextCreated", contextEvent{Context: b.contextLocked(s.target)})
	}
	s.runtime = true
	return outcome{}
}

func (b *Browser) inspectorEnable(s *session, _ json.RawMessage) outcome {
	if s.target.crashed {
		// Chrome repeats the news to a session that enables late.
		b.emitLocked(s, "Inspector.targetCrashed", struct{}{})
	}
	return outcome{}
}

// loadedPhases are the lifecycle events of a page that has finished
// loading, in Chrome's order.
var loadedPhases = []string{"commit", "DOMContentLoaded", "load", "networkAlmostIdle", "networkIdle"}

func (b *Browser) setLifecycleEventsEnabled(s *session, params json.RawMessage) outcome {
	var p struct {
		Enabled bool `json:"enabled"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	s.lifecycle = p.Enabled
	if p.Enabled {
		// Chrome replays the phases the current document has reached
		// (all of them, here) before it answers.
		t := s.target
		for _, name := range loadedPhases {
			b.emitLocked(s, "Page.lifecycleEvent", b.lifecycleLocked(t, name))
		}
	}
	return outcome{}
}

func (b *Browser) lifecycleLocked(t *target, name string) lifecycleEvent {
	return lifecycleEvent{FrameID: t.id, LoaderID: t.loaderID, Name: name, Timestamp: time.Since(b.start).Seconds()}
}

func (b *Browser) getFrameTree(s *session, _ json.RawMessage) outcome {
	return outcome{result: struct {
		FrameTree struct {
			Frame frame `json:"frame"`
		} `json:"frameTree"`
	}{struct {
		Frame frame `json:"frame"`
	}{b.frameLocked(s.target)}}}
}

func (b *Browser) frameLocked(t *target) frame {
	return frame{
		ID:                             t.id,
		LoaderID:                       t.loaderID,
		URL:                            t.url,
		DomainAndRegistry:              "",
		SecurityOrigin:                 origin(t.url),
		MimeType:                       "text/html",
		SecureContextType:              "InsecureScheme",
		CrossOriginIsolatedContextType: "NotIsolated",
		GatedAPIFeatures:               []string{},
	}
}

func (b *Browser) contextLocked(t *target) executionContext {
	c := executionContext{ID: t.context, Origin: origin(t.url), UniqueID: t.loaderID + "." + t.id}
	c.AuxData.IsDefault = true
	c.AuxData.Type = "default"
	c.AuxData.FrameID = t.id
	return c
}

func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "://"
	}
	return u.Scheme + "://" + u.Host
}

// setDeviceMetrics records a tab's viewport; its fake pages, loaded now or
// later, lay out and report that size, and its screenshots have
// deviceScaleFactor device pixels per CSS pixel.
func (b *Browser) setDeviceMetrics(s *session, params json.RawMessage) outcome {
	var p struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
		Scale  float64 `json:"deviceScaleFactor"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if s.target == nil {
		return outcome{err: &Error{Code: -32000, Message: "Emulation.setDeviceMetricsOverride needs a page session"}}
	}
	s.target.vw, s.target.vh, s.target.dsf = p.Width, p.Height, p.Scale
	if pg := s.target.page; pg != nil {
		pg.vw, pg.vh = p.Width, p.Height
	}
	return outcome{}
}
