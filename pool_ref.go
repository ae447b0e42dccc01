// Room: tool-call references: a session and tab named the way an agent's
// tool call names them, resolved by the pool's rules. No locks of its own.

package browserpool

import (
	"context"
	"fmt"
)

// Ref names a session and a tab the way an agent's tool call does.
type Ref struct {
	// SessionID names the session; empty follows Pool.Session's rule.
	SessionID string
	// TabID names a tab of that session; empty means its active tab.
	TabID string
	// NewInstance starts a brand-new independent session for this call.
	// A TabID in the same call can never refer to a tab of that new
	// session, so giving both is an error.
	NewInstance bool
}

func (p *Pool) refSession(ctx context.Context, op string, ref Ref) (*Session, error) {
	if ref.NewInstance {
		if ref.TabID != "" {
			e := newError(op, ErrTabNotInSession, fmt.Sprintf("tab %s cannot belong to the new session this call starts", echo(ref.TabID)))
			e.Tab = ref.TabID
			e.Hint = "drop the tab id to act on the new session's first tab, or drop NewInstance to use the tab's own session"
			return nil, e
		}
		if ref.SessionID != "" {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("session %s given together with NewInstance", echo(ref.SessionID)))
			e.Session = ref.SessionID
			e.Hint = "give either a session id or NewInstance, not both"
			return nil, e
		}
		return p.Open(ctx)
	}
	return p.session(ctx, op, ref.SessionID)
}

// ResolveTab returns the tab ref names: its session by the resolution rule
// of Pool.Session (or a new session for NewInstance), then the tab by id
// (checked to belong to that session) or the session's active tab.
func (p *Pool) ResolveTab(ctx context.Context, ref Ref) (*Tab, error) {
	const op = "Pool.ResolveTab"
	s, err := p.refSession(ctx, op, ref)
	if err != nil {
		return nil, err
	}
	return s.tab(ctx, op, ref.TabID)
}

// OpenTab opens url (http, https or about:blank) in a new tab of the session
// ref names (ref.TabID must be empty). With NewInstance the tab opens in a
// brand-new session.
func (p *Pool) OpenTab(ctx context.Context, ref Ref, url string) (*Tab, error) {
	const op = "Pool.OpenTab"
	if url == "" {
		url = "about:blank"
	}
	if err := checkOpenURL(op, url); err != nil {
		return nil, err
	}
	if ref.TabID != "" && !ref.NewInstance {
		e := newError(op, ErrInvalidArgument, "a tab id was given to open a new tab")
		e.Tab, e.Hint = ref.TabID, "drop the tab id: opening always makes a new tab"
		return nil, e
	}
	s, err := p.refSession(ctx, op, ref)
	if err != nil {
		return nil, err
	}
	return s.OpenTab(ctx, url)
}
