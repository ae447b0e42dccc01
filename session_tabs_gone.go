// Room: a session's tabs that are gone: crashed (Session.crashed) or
// closed (Session.gone), and the errors of a call that names one. Both are
// guarded by Session.mu; nothing here calls the browser.

package browserpool

import (
	"fmt"

	"github.com/mafredri/cdp/protocol/target"
)

// crashedTab is the error for a tab whose renderer crashed (Session.crashed).
func (s *Session) crashedTab(op, id string) error {
	e := newError(op, ErrTabClosed, "the tab's renderer crashed; the browser still lists the tab, but it answers no call")
	e.Session, e.Tab, e.notSent = s.id, id, true
	e.Hint = fmt.Sprintf("close it with CloseTab(%s) and open a new tab", echo(id))
	return e
}

// isCrashed reports whether tab id's renderer crashed (Session.crashed).
func (s *Session) isCrashed(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.crashed[id]
}

// noteCrashed records that t's renderer crashed (its session ended with
// Inspector.targetCrashed) and forgets t: later calls naming it get
// crashedTab rather than a fresh attach that nothing would ever answer.
func (s *Session) noteCrashed(t *Tab) {
	s.mu.Lock()
	if s.state == StateLive {
		s.crashed[t.id] = true
	}
	s.mu.Unlock()
	s.forget(t)
}

// notInSession builds the error for a tab id that is not among s's tabs.
func (p *Pool) notInSession(op string, s *Session, id string, infos []target.Info) error {
	owner := ""
	p.mu.Lock()
	for _, other := range p.sessions {
		if other == s {
			continue
		}
		other.mu.Lock()
		_, ok := other.tabs[id]
		other.mu.Unlock()
		if ok {
			owner = other.id
			break
		}
	}
	p.mu.Unlock()
	ids := make([]string, 0, len(infos))
	for _, t := range infos {
		ids = append(ids, string(t.TargetID))
	}
	var e *Error
	if owner != "" {
		e = newError(op, ErrTabNotInSession, fmt.Sprintf("tab %s belongs to session %s, not to this one", echo(id), owner))
		e.Hint = fmt.Sprintf("act on it through session %s, or use one of this session's tabs: %s", owner, fmtIDs(ids))
	} else if how := s.goneHow(id); how != "" {
		e = newError(op, ErrTabNotFound, fmt.Sprintf("tab %s was closed (%s) and is no longer in this session; its tabs: %s", echo(id), how, fmtIDs(ids)))
		e.Hint = "use one of the session's open tabs (Session.Tabs lists them), or open a new one with Session.OpenTab"
	} else {
		e = newError(op, ErrTabNotFound, fmt.Sprintf("no tab %s in this session; its tabs: %s", echo(id), fmtIDs(ids)))
		e.Hint = "tab ids never carry over between sessions; list this session's tabs and use one of their ids"
	}
	e.Session, e.Tab = s.id, id
	return e
}

// goneHow says how the session's tab id, no longer listed by the browser,
// was closed: "by Session.CloseTab", or "by its page, or outside the
// session" for one the session forgot otherwise or still holds; "" for an
// id the session never had (or too long ago to remember).
func (s *Session) goneHow(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.gone) - 1; i >= 0; i-- {
		if g := s.gone[i]; g.id == id {
			if g.byCall {
				return "by Session.CloseTab"
			}
			return "by its page, or outside the session"
		}
	}
	if s.tabs[id] != nil {
		return "by its page, or outside the session"
	}
	return ""
}
