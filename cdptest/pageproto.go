// Room: the page protocol of fake pages: the DOM, Input, Runtime and
// Page methods the library's Tab actions use, answered from a target's
// loaded Page. Built-in methods: they run with Browser.mu held, as every
// built-in does (see protocol.go), and so do the page's Go funcs they
// call.

package cdptest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/browserpool/browserpool/internal/pagejs"
)

// Chrome's errors for nodes and objects that are gone.
var (
	errNoNode   = &Error{Code: -32000, Message: "No node with given id found"}
	errNoObject = &Error{Code: -32000, Message: "Could not find object with given id"}
	errNoLayout = &Error{Code: -32000, Message: "Node does not have a layout object"}
	errNoQuads  = &Error{Code: -32000, Message: "Could not compute content quads."}
	errNoDialog = &Error{Code: -32000, Message: "No dialog is showing"}
)

// The fake's viewport, in CSS pixels: what the library's headless
// Chromium shows of its default 800×600 window.
const (
	viewportW = 780
	viewportH = 493
)

// object is a JavaScript object a client holds by id: a DOM node or a
// click watch.
type object struct {
	el    *Element
	watch *clickWatch
	group string
}

// clickWatch is a click watch armed by pagejs.ClickArm on an element.
type clickWatch struct {
	el               *Element
	pressed, clicked bool
	stopped          bool
}

// pageBuiltins are the page methods, merged into builtins.
var pageBuiltins = map[string]func(*Browser, *session, json.RawMessage) outcome{
	"Accessibility.getFullAXTree":     (*Browser).getFullAXTree,
	"DOMSnapshot.captureSnapshot":     (*Browser).captureSnapshot,
	"DOM.scrollIntoViewIfNeeded":      (*Browser).scrollIntoView,
	"DOM.getContentQuads":             (*Browser).getContentQuads,
	"DOM.getBoxModel":                 (*Browser).getBoxModel,
	"DOM.getNodeForLocation":          (*Browser).getNodeForLocation,
	"DOM.describeNode":                (*Browser).describeNode,
	"DOM.resolveNode":                 (*Browser).resolveNode,
	"Page.createIsolatedWorld":        (*Browser).createIsolatedWorld,
	"DOM.setFileInputFiles":           (*Browser).setFileInputFiles,
	"Runtime.callFunctionOn":          (*Browser).callFunctionOn,
	"Runtime.releaseObjectGroup":      (*Browser).releaseObjectGroup,
	"Page.getLayoutMetrics":           (*Browser).getLayoutMetrics,
	"Page.captureScreenshot":          (*Browser).captureScreenshot,
	"Page.handleJavaScriptDialog":     (*Browser).handleDialog,
	"Input.dispatchMouseEvent":        (*Browser).dispatchMouseEvent,
	"Input.dispatchKeyEvent":          (*Browser).dispatchKeyEvent,
	"Input.insertText":                (*Browser).insertText,
	"Browser.setDownloadBehavior":     (*Browser).setDownloadBehavior,
	"Network.enable":                  set(func(*session) {}),
	"Network.disable":                 set(func(*session) {}),
	"Runtime.runIfWaitingForDebugger": set(func(*session) {}),
}

type nodeParams struct {
	Backend  int    `json:"backendNodeId"`
	ObjectID string `json:"objectId"`
	Group    string `json:"objectGroup"`
	Context  int    `json:"executionContextId"` // DOM.resolveNode's world (0: the main world)
}

// nodeLocked finds the element a call names by backend id (or object id)
// in the target's current page.
func (b *Browser) nodeLocked(s *session, params json.RawMessage) (*Element, *nodeParams, *Error) {
	var p nodeParams
	if e := decode(params, &p); e != nil {
		return nil, nil, e
	}
	pg := s.target.page
	if p.ObjectID != "" {
		o := s.target.objects[p.ObjectID]
		if o == nil || o.el == nil {
			return nil, &p, errNoObject
		}
		return o.el, &p, nil
	}
	if el := pg.byBackend(p.Backend); el != nil {
		return el, &p, nil
	}
	return nil, &p, errNoNode
}

// boxLocked is the page and layout box of the node params names, or
// noBox when the node has no box (not rendered).
func (b *Browser) boxLocked(s *session, params json.RawMessage, noBox *Error) (*Page, box, *Error) {
	el, _, e := b.nodeLocked(s, params)
	if e != nil {
		return nil, box{}, e
	}
	pg := s.target.page
	bx, ok := pg.layout()[el]
	if !ok {
		return nil, box{}, noBox
	}
	return pg, bx, nil
}

func (b *Browser) scrollIntoView(s *session, params json.RawMessage) outcome {
	pg, bx, e := b.boxLocked(s, params, errNoLayout)
	if e != nil {
		return outcome{err: e}
	}
	_, vh := pg.viewport()
	if bx.y < pg.scrollY || bx.y+bx.h > pg.scrollY+vh {
		pg.scrollTo(bx.y + bx.h/2 - vh/2)
	}
	return outcome{}
}

func (b *Browser) getContentQuads(s *session, params json.RawMessage) outcome {
	pg, bx, e := b.boxLocked(s, params, errNoQuads)
	if e != nil {
		return outcome{err: e}
	}
	y := bx.y - pg.scrollY
	q := []float64{bx.x, y, bx.x + bx.w, y, bx.x + bx.w, y + bx.h, bx.x, y + bx.h}
	return outcome{result: map[string]any{"quads": [][]float64{q}}}
}

func (b *Browser) getBoxModel(s *session, params json.RawMessage) outcome {
	pg, bx, e := b.boxLocked(s, params, &Error{Code: -32000, Message: "Could not compute box model."})
	if e != nil {
		return outcome{err: e}
	}
	y := bx.y - pg.scrollY
	q := []float64{bx.x, y, bx.x + bx.w, y, bx.x + bx.w, y + bx.h, bx.x, y + bx.h}
	return outcome{result: map[string]any{"model": map[string]any{
		"content": q, "padding": q, "border": q, "margin": q, "width": bx.w, "height": bx.h,
	}}}
}

func (b *Browser) getNodeForLocation(s *session, params json.RawMessage) outcome {
	var p struct {
		X, Y float64
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	pg := s.target.page
	el := pg.at(p.X, p.Y) // document coordinates
	id := 1               // the document's body: nothing else is there
	if el != nil {
		id = pg.idOf(el)
	}
	return outcome{result: map[string]any{"backendNodeId": id, "frameId": s.target.id}}
}

func (b *Browser) describeNode(s *session, params json.RawMessage) outcome {
	el, _, e := b.nodeLocked(s, params)
	if e != nil {
		return outcome{err: e}
	}
	name, attrs := el.tag()
	return outcome{result: map[string]any{"node": map[string]any{
		"nodeId": 0, "backendNodeId": s.target.page.idOf(el), "nodeType": 1,
		"nodeName": name, "localName": strings.ToLower(name), "nodeValue": "", "attributes": attrs,
	}}}
}

// tag returns the HTML tag name and attributes an element stands for.
func (e *Element) tag() (string, []string) {
	attrs := []string{}
	if e.ID != "" {
		attrs = append(attrs, "id", e.ID)
	}
	switch {
	case e.kind() == "select":
		if e.Multiple {
			attrs = append(attrs, "multiple", "")
		}
		return "SELECT", attrs
	case e.kind() == "button" || e.kind() == "submit":
		return "BUTTON", attrs
	case e.kind() != "":
		attrs = append(attrs, "type", e.kind())
		if e.Multiple {
			attrs = append(attrs, "multiple", "")
		}
		return "INPUT", attrs
	case e.Role == "link":
		return "A", append(attrs, "href", e.Href)
	case e.Role == "heading":
		return fmt.Sprintf("H%d", max(e.Level, 1)), attrs
	case e.Role == "paragraph":
		return "P", attrs
	case e.Role == "table":
		return "TABLE", attrs
	case e.Role == "row":
		return "TR", attrs
	case e.Role == "cell":
		return "TD", attrs
	case e.Role == "columnheader":
		return "TH", attrs
	}
	return "DIV", attrs
}

func (b *Browser) resolveNode(s *session, params json.RawMessage) outcome {
	el, p, e := b.nodeLocked(s, params)
	if e != nil {
		return outcome{err: e}
	}
	if !s.target.liveContext(p.Context) {
		// Chromium's answer for a world its document took with it.
		return outcome{err: &Error{Code: -32000, Message: "Node with given id does not belong to the document"}}
	}
	id := b.newObjectLocked(s.target, &object{el: el, group: p.Group})
	name, _ := el.tag()
	return outcome{result: map[string]any{"object": map[string]any{
		"type": "object", "subtype": "node", "className": "HTML" + name + "Element", "objectId": id,
	}}}
}

func (b *Browser) newObjectLocked(t *target, o *object) string {
	id := fmt.Sprintf("OBJECT_%d", b.nextLocked("object"))
	t.objects[id] = o
	return id
}

func (b *Browser) releaseObjectGroup(s *session, params json.RawMessage) outcome {
	var p struct {
		Group string `json:"objectGroup"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	for id, o := range s.target.objects {
		if o.group == p.Group {
			delete(s.target.objects, id)
		}
	}
	return outcome{}
}

func (b *Browser) setFileInputFiles(s *session, params json.RawMessage) outcome {
	el, _, e := b.nodeLocked(s, params)
	if e != nil {
		return outcome{err: e}
	}
	var p struct {
		Files []string `json:"files"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if el.kind() != "file" {
		return outcome{err: &Error{Code: -32000, Message: "Node is not a file input element"}}
	}
	el.Files = nil
	for _, f := range p.Files {
		el.Files = append(el.Files, baseName(f))
	}
	return outcome{err: b.changedLocked(s.target, el)}
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// changedLocked runs el's OnChange; a panic in it is the call's error.
func (b *Browser) changedLocked(t *target, el *Element) *Error {
	if el.onChange == nil {
		return nil
	}
	pg := t.page
	return b.callGo("Element.OnChange of "+el.named(), func() { el.onChange(pg) })
}

// callArg is one argument of Runtime.callFunctionOn.
type callArg struct {
	Value    json.RawMessage `json:"value"`
	ObjectID string          `json:"objectId"`
}

func (b *Browser) callFunctionOn(s *session, params json.RawMessage) outcome {
	var p struct {
		Fn       string    `json:"functionDeclaration"`
		ObjectID string    `json:"objectId"`
		Args     []callArg `json:"arguments"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	this := t.objects[p.ObjectID]
	name := pagejs.Names[p.Fn]
	if name == "" {
		return outcome{err: unknownFunction(p.Fn)}
	}
	if this == nil {
		return outcome{err: errNoObject}
	}
	arg := func(i int) json.RawMessage {
		if i < len(p.Args) {
			return p.Args[i].Value
		}
		return nil
	}
	pg := t.page
	switch name {
	case "ClickArm":
		if this.el == nil {
			break
		}
		if this.el.Disabled {
			return byValue("disabled")
		}
		w := &clickWatch{el: this.el}
		this.el.watches = append(this.el.watches, w)
		id := b.newObjectLocked(t, &object{watch: w, group: this.group})
		return outcome{result: map[string]any{"result": map[string]any{"type": "object", "className": "Object", "objectId": id}}}
	case "ClickReport":
		w := this.watch
		if w == nil {
			break
		}
		var stop bool
		json.Unmarshal(arg(0), &stop)
		if stop {
			w.stop()
		}
		_, shown := pg.layout()[w.el]
		return byValue(map[string]any{
			"pressed": w.pressed, "clicked": w.clicked, "pressOn": "", "releaseOn": "",
			"connected": pg.has(w.el), "shown": shown, "disabled": w.el.Disabled,
		})
	case "ClickDisarm":
		if this.watch == nil {
			break
		}
		this.watch.stop()
		return outcome{result: map[string]any{"result": undefined}}
	case "Cover":
		var h *Element
		if len(p.Args) > 0 {
			if o := t.objects[p.Args[0].ObjectID]; o != nil {
				h = o.el
			}
		}
		if this.el == nil {
			break
		}
		if h == this.el || h != nil && this.el.contains(h) {
			return byValue(map[string]any{"ok": true})
		}
		_, shown := pg.layout()[this.el]
		return byValue(map[string]any{"ok": false, "visible": shown, "cover": h.describe()})
	case "Fill":
		if this.el == nil {
			break
		}
		el := this.el
		kind := "other"
		switch el.kind() {
		case "text", "password", "search", "email":
			kind = "text"
		case "checkbox", "radio", "file", "submit", "button":
			kind = el.kind()
		case "select":
			kind = "select"
		}
		res := map[string]any{"kind": kind, "secret": el.Secret}
		if kind != "text" {
			return byValue(res)
		}
		if el.Disabled {
			res["kind"] = "disabled"
			return byValue(res)
		}
		if el.ReadOnly {
			res["kind"] = "readonly"
			return byValue(res)
		}
		pg.focus = el
		t.selectAll = true
		return byValue(res)
	case "FillDone":
		if this.el == nil {
			break
		}
		// Typing (Input.insertText, or Delete over the selection) has
		// set the value; as in Chromium, what it left is the field's
		// value, also when it differs from what was asked (a line break
		// typed into a one-line field is a space).
		if e := b.changedLocked(t, this.el); e != nil {
			return outcome{err: e}
		}
		return byValue(map[string]any{"ok": true, "why": "", "value": this.el.Value})
	case "Shown":
		if this.el == nil {
			break
		}
		// The fake's elements are in the one document its page shows.
		return byValue(true)
	case "Disabled":
		if this.el == nil {
			break
		}
		return byValue(this.el.Disabled)
	case "ScrollBox":
		if this.el == nil {
			break
		}
		return byValue(nil) // fake pages have no scroll boxes: the page scrolls
	case "NumberFits":
		if this.el == nil {
			break
		}
		return byValue(map[string]any{"why": "", "min": "", "max": "", "step": ""}) // fake fields have no min, max or step
	case "ClickDefault":
		// What a click does besides the page's funcs: a submit button
		// sends its form, a link leaves the page.
		switch el := this.el; {
		case el == nil:
			break
		case el.input == "submit":
			return byValue("submits its form")
		case el.Href != "" && !strings.HasPrefix(el.Href, "#") && !strings.HasPrefix(strings.ToLower(el.Href), "javascript:"):
			return byValue("follows its link to " + resolveURL(pg.URL, el.Href)) // a.href: resolved
		default:
			return byValue("")
		}
	case "Select":
		if this.el == nil {
			break
		}
		var vals []string
		json.Unmarshal(arg(0), &vals)
		res, e := b.selectLocked(t, this.el, vals)
		if e != nil {
			return outcome{err: e}
		}
		return byValue(res)
	}
	return outcome{err: &Error{Code: -32000, Message: fmt.Sprintf("cdptest: pagejs.%s called on an object it does not apply to", name)}}
}

// selectLocked is pagejs.Select on a fake select box.
func (b *Browser) selectLocked(t *target, el *Element, vals []string) (map[string]any, *Error) {
	if el.kind() != "select" {
		return map[string]any{"err": "not-select"}, nil
	}
	if el.Disabled {
		return map[string]any{"err": "disabled"}, nil
	}
	chosen := make([]bool, len(el.Options))
	for _, v := range vals {
		found := false
		for i, o := range el.Options {
			if o == v || strings.Join(strings.Fields(o), " ") == strings.Join(strings.Fields(v), " ") {
				chosen[i], found = true, true
				break
			}
		}
		if !found {
			// As pagejs.Select: the first 30 labels, their count, and up
			// to 5 like v but for case, or holding it, or held by it.
			low := strings.ToLower(strings.Join(strings.Fields(v), " "))
			near := []string{}
			for _, o := range el.Options {
				k := strings.ToLower(o)
				if low != "" && k != "" && (k == low || strings.Contains(k, low) || strings.Contains(low, k)) && len(near) < 5 {
					near = append(near, o)
				}
			}
			return map[string]any{"err": "missing", "missing": v, "options": el.Options[:min(len(el.Options), 30)], "count": len(el.Options), "near": near}, nil
		}
	}
	// What is selected, as Chromium reports it: in the options' order,
	// each once, whatever order the values were given in.
	var pick []string
	for i, o := range el.Options {
		if chosen[i] {
			pick = append(pick, o)
		}
	}
	if !el.Multiple && len(vals) != 1 {
		return map[string]any{"err": "single"}, nil
	}
	t.page.focus = el
	if v := strings.Join(pick, ","); v != el.Value {
		el.Value = v
		if e := b.changedLocked(t, el); e != nil {
			return nil, e
		}
	} // choosing what is chosen fires no change, as in a browser
	return map[string]any{"selected": pick}, nil
}

func (w *clickWatch) stop() {
	if w.stopped {
		return
	}
	w.stopped = true
	el := w.el
	for i, x := range el.watches {
		if x == w {
			el.watches = append(el.watches[:i], el.watches[i+1:]...)
			break
		}
	}
}

// describe is pagejs.Describe of a fake element.
func (e *Element) describe() string {
	if e == nil {
		return ""
	}
	name, _ := e.tag()
	d := strings.ToLower(name)
	if e.ID != "" {
		d += "#" + e.ID
	}
	if e.Name != "" {
		d += fmt.Sprintf(" %q", e.Name)
	}
	return d
}

// byValue is a Runtime result returned by value.
func byValue(v any) outcome {
	return outcome{result: map[string]any{"result": valueObject(v)}}
}

// valueObject is the RemoteObject of a JSON value returned by value.
func valueObject(v any) remoteObject {
	switch x := v.(type) {
	case nil:
		return remoteObject{Type: "object", Subtype: "null", Value: json.RawMessage("null")}
	case string:
		return remoteObject{Type: "string", Value: x}
	case bool:
		return remoteObject{Type: "boolean", Value: x}
	case int, int64, float64, float32, int32:
		return remoteObject{Type: "number", Value: x, Description: fmt.Sprint(x)}
	}
	return remoteObject{Type: "object", Value: v}
}

// unknownFunction is the error for a Runtime.callFunctionOn of a function
// that is not one of the library's page functions.
func unknownFunction(fn string) *Error {
	return &Error{Code: -32000, Message: fmt.Sprintf("cdptest: the fake page does not know the function %q "+
		"(only the library's page JavaScript, internal/pagejs, is built in); "+
		"answer it with Browser.Handle(\"Runtime.callFunctionOn\", …), returning cdptest.ErrNotHandled for the calls it should leave alone",
		cutText(fn, 80))}
}

// cutText cuts s to n bytes with an ellipsis, on one line.
func cutText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (b *Browser) getLayoutMetrics(s *session, _ json.RawMessage) outcome {
	pg := s.target.page
	w, h := pg.size()
	vw, vh := pg.viewport()
	vp := map[string]any{"pageX": 0, "pageY": pg.scrollY, "clientWidth": vw, "clientHeight": vh}
	vv := map[string]any{"offsetX": 0, "offsetY": 0, "pageX": 0, "pageY": pg.scrollY,
		"clientWidth": vw, "clientHeight": vh, "scale": 1, "zoom": 1}
	cs := map[string]any{"x": 0, "y": 0, "width": w, "height": h}
	return outcome{result: map[string]any{
		"layoutViewport": vp, "visualViewport": vv, "contentSize": cs,
		"cssLayoutViewport": vp, "cssVisualViewport": vv, "cssContentSize": cs,
	}}
}

func (b *Browser) setDownloadBehavior(s *session, params json.RawMessage) outcome {
	var p struct {
		Behavior      string `json:"behavior"`
		DownloadPath  string `json:"downloadPath"`
		EventsEnabled bool   `json:"eventsEnabled"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	switch p.Behavior {
	case "allow", "allowAndName", "deny", "default":
	default:
		return outcome{err: errInvalidParams}
	}
	b.downloads = downloadBehavior{behavior: p.Behavior, path: p.DownloadPath, events: p.EventsEnabled, on: s}
	return outcome{}
}
