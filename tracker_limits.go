// Room: the tracker's limits: the per-workflow and global caps, the
// errors that say which was reached, and eviction of the least recently
// used idle session to make room. Tracker.mu (tracker.go) guards the
// tables; the ...Locked functions run with it held, evict without it.

package browserpool

import (
	"fmt"
	"slices"
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
// flight that may be closed for workflow, skipping those in skip: its own,
// or another workflow's idle for EvictGrace. With none, it returns nil and
// the last use of the oldest idle session the grace protects (zero when
// every session is busy). The seam's usage query takes only Session.mu, a
// leaf lock, so it is safe under Tracker.mu.
func (tr *Tracker) lruLocked(workflow string, skip []*tracked) (victim *tracked, protected time.Time) {
	var bestUsed time.Time
	now := time.Now()
	for _, e := range tr.entries {
		if e.s == nil || slices.Contains(skip, e) {
			continue // still opening, or found busy as its close began
		}
		u := e.s.usage()
		if u.busy() {
			continue
		}
		// With no grace, nothing is protected: a last use a call made after
		// now was read is not one within a grace of zero.
		if e.workflow != workflow && tr.cfg.EvictGrace > 0 && now.Sub(u.lastUse) < tr.cfg.EvictGrace {
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

// claimLRULocked chooses the session to close to make room for forK
// (lruLocked) and begins its close in the same step (Session.claimIdle), so
// a call that begins on it after the choice is refused before anything is
// sent, never cut. A session a call began on since lruLocked read it is
// kept, and the next least-recently-used is tried. It records the eviction
// for Lookup, so a Lookup while the session closes already says why it is
// gone; evict finishes the close. With none, it returns what lruLocked
// returns.
func (tr *Tracker) claimLRULocked(workflow string, forK trackKey) (victim *tracked, protected time.Time) {
	var skip []*tracked
	for {
		v, protected := tr.lruLocked(workflow, skip)
		if v == nil {
			return nil, protected
		}
		if !v.s.claimIdle(ReasonLRU) {
			skip = append(skip, v)
			continue
		}
		if tr.evicted == nil {
			tr.evicted = make(map[trackKey]TrackerEvent)
		}
		if len(tr.evicted) >= evictedMemory {
			clear(tr.evicted) // rare: a memory of the latest is enough
		}
		v.ev = TrackerEvent{Time: time.Now(), Workflow: v.workflow, Name: v.name, SessionID: v.s.ID(), Reason: ReasonLRU, ForWorkflow: forK.workflow, ForName: forK.name}
		tr.evicted[trackKey{v.workflow, v.name}] = v.ev
		return v, time.Time{}
	}
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

// evict finishes the close claimLRULocked began and tells the victim's
// workflow. The caller holds no lock.
func (tr *Tracker) evict(v *tracked, forK trackKey) {
	s, ev := v.s, v.ev
	s.closeClaimed(ReasonLRU)
	if f := tr.cfg.Evicted; f != nil {
		tr.events.emit(func() { f(ev) })
	}
	tr.pool.logger().Info("browserpool: closed the least-recently-used session to make room", "workflow", v.workflow, "name", v.name, "session", s.ID(), "for_workflow", forK.workflow)
}
