// Room: the tracker's limits: the per-workflow and global caps, the
// errors that say which was reached, and eviction of the least recently
// used idle session to make room. Tracker.mu (tracker.go) guards the
// tables; the ...Locked functions run with it held, evict without it.

package browserpool

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// limitErr is the per-workflow limit error, written for an LLM to act on.
func (tr *Tracker) limitErr(k trackKey, active []string) error {
	plural := "s"
	if len(active) == 1 {
		plural = ""
	}
	e := newError("Tracker.Open", ErrSessionLimit, fmt.Sprintf(
		"cannot open browser session %q: workflow %s already has %d active browser session%s (max %d per workflow); active sessions: [%s]",
		k.name, k.workflow, len(active), plural, tr.cfg.PerWorkflow, strings.Join(active, ", ")))
	e.Name, e.Workflow = k.name, k.workflow
	quoted := make([]string, len(active))
	for i, a := range active {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	e.Hint = fmt.Sprintf("close %s first, then open again; or keep using %s", strings.Join(quoted, " or "), strings.Join(quoted, " or "))
	return e
}

// pruneLocked forgets entries whose session ended on its own (idle reclaim,
// crash), so they count against no limit.
func (tr *Tracker) pruneLocked() {
	for _, e := range tr.entries {
		if e.s == nil {
			continue
		}
		select {
		case <-e.s.Done():
			tr.removeLocked(e)
		default:
		}
	}
}

// lruLocked returns the least-recently-used open session with no call in
// flight that may be closed for workflow: its own, or another workflow's
// idle for EvictGrace. With none, it returns nil and the last use of the
// oldest idle session the grace protects (zero when every session is
// busy). The seam's usage query takes only Session.mu, a leaf lock, so it
// is safe under Tracker.mu.
func (tr *Tracker) lruLocked(workflow string) (victim *tracked, protected time.Time) {
	var bestUsed time.Time
	now := time.Now()
	for _, e := range tr.entries {
		if e.s == nil {
			continue // still opening: busy
		}
		u := e.s.usage()
		if u.busy() {
			continue
		}
		if e.workflow != workflow && now.Sub(u.lastUse) < tr.cfg.EvictGrace {
			if protected.IsZero() || u.lastUse.Before(protected) {
				protected = u.lastUse
			}
			continue
		}
		if victim == nil || u.lastUse.Before(bestUsed) {
			victim, bestUsed = e, u.lastUse
		}
	}
	if victim != nil {
		return victim, time.Time{}
	}
	return nil, protected
}

// noRoomErr is Open's error at the global limit when no session may be
// closed: ErrAllBusy when all n have a call in flight, or ErrNoRoom when
// the idle ones are other workflows' within the grace (protected is the
// last use of the oldest). It names no other workflow: the caller may be
// another tenant.
func (tr *Tracker) noRoomErr(k trackKey, n int, protected time.Time) error {
	const op = "Tracker.Open"
	var e *Error
	if protected.IsZero() {
		e = newError(op, ErrAllBusy, fmt.Sprintf("the global limit of %d browser sessions is reached and all %d have a call in flight", tr.cfg.Global, n))
		e.Hint = "wait for a running browser step to finish and open again, or close a session you no longer need"
	} else {
		ago := time.Since(protected)
		wait := max(tr.cfg.EvictGrace-ago, 0)
		e = newError(op, ErrNoRoom, fmt.Sprintf(
			"the global limit of %d browser sessions is reached, and the idle ones belong to other workflows that used them within the last %v (EvictGrace), the least recently used %s ago",
			tr.cfg.Global, tr.cfg.EvictGrace, roundAgo(ago)))
		e.Hint = fmt.Sprintf("open again in %v or later (another workflow's session idle for %v is closed to make room), or close a session you no longer need", roundUp(wait), tr.cfg.EvictGrace)
	}
	e.Name, e.Workflow = k.name, k.workflow
	return e
}

// roundAgo writes how long ago d was for an error: whole seconds, or less
// than a second.
func roundAgo(d time.Duration) string {
	if d < time.Second {
		return "less than a second"
	}
	return d.Round(time.Second).String()
}

// roundUp rounds a wait up to a whole second (at least one), so a retry
// at the time an error gives is never early.
func roundUp(d time.Duration) time.Duration {
	return max(((d+time.Second-1)/time.Second)*time.Second, time.Second)
}

// evict closes a victim's session and tells its workflow.
func (tr *Tracker) evict(v *tracked, reason CloseReason, forK trackKey) {
	tr.mu.Lock()
	s := v.s
	tr.mu.Unlock()
	if s == nil {
		return
	}
	// Recorded before the close, so a Lookup while it closes already says
	// why the session is gone.
	ev := TrackerEvent{Time: time.Now(), Workflow: v.workflow, Name: v.name, SessionID: s.ID(), Reason: reason, ForWorkflow: forK.workflow, ForName: forK.name}
	tr.mu.Lock()
	if tr.evicted == nil {
		tr.evicted = make(map[trackKey]TrackerEvent)
	}
	if len(tr.evicted) >= evictedMemory {
		clear(tr.evicted) // rare: a memory of the latest is enough
	}
	tr.evicted[trackKey{v.workflow, v.name}] = ev
	tr.mu.Unlock()
	s.closeWith(context.Background(), reason)
	if f := tr.cfg.Evicted; f != nil {
		tr.events.emit(func() { f(ev) })
	}
	tr.pool.logger().Info("browserpool: closed the least-recently-used session to make room", "workflow", v.workflow, "name", v.name, "session", s.ID(), "for_workflow", forK.workflow)
}
