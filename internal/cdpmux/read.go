// Room: the read path: the reader goroutine, and the routing of every
// message read (by it or by a direct caller holding the read role) to its
// session, its tap or its caller. Mux.mu guards the routing tables
// (pending calls and sessions); it is released before a session's queue,
// a tap, a caller's channel or a batch's done is handed anything.

package cdpmux

import (
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/browserpool/browserpool/internal/stackroom"
)

// readLoop is the reader goroutine: it reads while it holds the read role
// and ends the mux when the transport fails (under it, or under a caller
// holding the role).
func (m *Mux) readLoop() {
	stackroom.To8K() // decoding events takes it there anyway; now the copy walks one frame
	defer m.endNow()
	defer close(m.readerDone)
	defer m.idle.Stop()
	for held := true; ; held = false { // New gave it the role
		if !held {
			if err := m.takeRole(); err != nil {
				m.end(err)
				return
			}
		}
		for {
			data, err := m.t.ReadMessage()
			if err != nil {
				if m.deadline != nil && errors.Is(err, os.ErrDeadlineExceeded) {
					m.clearDeadline() // a caller's interrupt that came late
					continue
				}
				m.end(err)
				return
			}
			if m.handle(data) && m.deadline != nil && m.yieldRole() {
				break
			}
		}
	}
}

// handle dispatches one message read from the transport and reports
// whether it was a direct call's reply.
func (m *Mux) handle(data []byte) (direct bool) {
	msg, err := parseEnvelope(data)
	if err != nil {
		m.malformed.Add(1)
		return false
	}
	if msg.Method == "" {
		return m.dispatchReply(msg)
	}
	m.dispatch(msg)
	return false
}

// dispatch routes an event to its session (and its tap), and handles the
// events that register or end sessions.
func (m *Mux) dispatch(msg *message) {
	var ended []*session
	var reason error
	m.mu.Lock()
	s := m.sessions[msg.SessionID]
	switch msg.Method {
	case "Target.attachedToTarget":
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			m.registerLocked(p.SessionID, p.TargetInfo.TargetID)
		}
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			ended = m.unregisterLocked(p.SessionID)
			reason = ErrDetached
		}
	case "Target.targetCrashed":
		var p struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && p.TargetID != "" {
			// Every session attached to the target, not just the last.
			for sid, cs := range m.sessions {
				if sid != "" && cs.targetID == p.TargetID {
					ended = append(ended, m.unregisterLocked(sid)...)
				}
			}
			reason = ErrTargetCrashed
		}
	case "Inspector.targetCrashed":
		if msg.SessionID != "" {
			ended = m.unregisterLocked(msg.SessionID)
			reason = ErrTargetCrashed
		}
	}
	var tap func(string, json.RawMessage)
	keep := false
	if s != nil {
		tap = s.tap
		keep = s.dialed || !s.lazy // a lazy session's events are kept once its conn is dialed
	}
	m.mu.Unlock()
	if s == nil {
		m.unroutable.Add(1)
	} else {
		if tap != nil {
			tap(msg.Method, msg.Params)
		}
		if keep {
			s.deliver(msg, false)
		}
	}
	for _, e := range ended {
		e.end(&EndError{SessionID: e.id, Reason: reason})
	}
}

// dispatchReply routes a reply to its caller and reports whether that was
// a direct call.
func (m *Mux) dispatchReply(msg *message) bool {
	m.mu.Lock()
	r, ok := m.pending[msg.ID]
	delete(m.pending, msg.ID)
	if ok && r.s.counted && !r.quiet && !r.abandoned {
		m.inflight.Add(-1)
		m.lastUse.Store(time.Now().UnixNano())
	}
	if ok && r.attach && msg.Error == nil {
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(msg.Result, &res) == nil && res.SessionID != "" {
			m.registerLocked(res.SessionID, "")
			if s := m.sessions[res.SessionID]; s != nil && r.reply != nil && !s.dialed {
				// Attached by a direct call (AttachDirect): no conn
				// until asked for one. The browser announced it just
				// before (Target.attachedToTarget), with no events yet.
				s.lazy = true
			}
		}
	}
	m.mu.Unlock()
	if !ok {
		m.unroutable.Add(1)
		return false
	}
	if r.reply != nil {
		r.reply <- msg // capacity 1, one reply per id: never blocks
		return true
	}
	if r.batch != nil {
		if msg.Error != nil {
			r.batch.settle(r.idx, nil, msg.Error)
		} else {
			r.batch.settle(r.idx, msg.Result, nil)
		}
		return false // nobody waits to call again: the reader keeps the role
	}
	msg.ID = r.localID
	r.s.deliver(msg, true)
	return false
}

// registerLocked adds a session unless it is known. targetID may be empty.
func (m *Mux) registerLocked(sessionID, targetID string) {
	if sessionID == "" || m.closed {
		return
	}
	s := m.sessions[sessionID]
	if s == nil {
		s = newSession(m, sessionID, targetID)
		m.sessions[sessionID] = s
	}
	if targetID != "" {
		s.targetID = targetID
	}
}

// unregisterLocked removes a session and its pending routes and returns it
// (as a slice, empty when unknown) for the caller to end after unlocking.
func (m *Mux) unregisterLocked(sessionID string) []*session {
	s := m.sessions[sessionID]
	if s == nil || sessionID == "" {
		return nil
	}
	delete(m.sessions, sessionID)
	for id, r := range m.pending {
		if r.s == s {
			delete(m.pending, id)
			if s.counted && !r.quiet && !r.abandoned {
				m.inflight.Add(-1)
			}
			if r.batch != nil {
				s.unsettled = append(s.unsettled, r) // settled by s.end
			}
		}
	}
	return []*session{s}
}
