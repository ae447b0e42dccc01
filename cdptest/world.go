// Room: isolated worlds (Page.createIsolatedWorld) and the execution
// contexts calls name, with Browser.mu held.

package cdptest

import "encoding/json"

// createIsolatedWorld makes an isolated world in the target's current
// document. As in Chromium, it is an execution context of that document
// only: the next navigation ends it, and a call naming it afterwards fails.
func (b *Browser) createIsolatedWorld(s *session, params json.RawMessage) outcome {
	var p struct {
		Frame string `json:"frameId"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	if p.Frame != t.id {
		return outcome{err: &Error{Code: -32000, Message: "No frame for given id found"}}
	}
	id := b.nextLocked("context")
	if t.worlds == nil {
		t.worlds = make(map[int]bool)
	}
	t.worlds[id] = true
	return outcome{result: map[string]any{"executionContextId": id}}
}

// liveContext reports whether the execution context id a call names (0:
// none, the main world) is one of the target's current document: its main
// world or an isolated world made in it.
func (t *target) liveContext(id int) bool {
	return id == 0 || id == t.context || t.worlds[id]
}
