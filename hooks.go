// Room: hooks and events. eventQueue.mu guards its pending events; hooks run
// on the queue's one goroutine, never under any other lock of ours.

package browserpool

import (
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// CloseReason says why a session was closed. The text is stable.
type CloseReason string

// Close reasons.
const (
	ReasonExplicit    CloseReason = "explicit"     // Session.Close or Pool.CloseSession
	ReasonIdle        CloseReason = "idle"         // idle reclaim (Config.IdleTimeout)
	ReasonLRU         CloseReason = "lru"          // Tracker's global limit
	ReasonWorkflowEnd CloseReason = "workflow_end" // Tracker.EndWorkflow
	ReasonTaskEnd     CloseReason = "task_end"     // Allocator.Finish
	ReasonCrashed     CloseReason = "crashed"      // the browser exited on its own
	ReasonShutdown    CloseReason = "shutdown"     // Pool.Close, or Allocator.Close for a task's session
	ReasonAbandoned   CloseReason = "abandoned"    // launched for a caller who left
	ReasonUnpinned    CloseReason = "unpinned"     // Identity: last holder detached
)

// SessionEvent describes a session being created or closed.
type SessionEvent struct {
	Time      time.Time     // when it happened
	SessionID string        // the session's id
	PID       int           // the browser's pid; 0 for a remote, attached or in-memory browser
	Reason    CloseReason   // for SessionClosed
	Err       error         // for SessionClosed: why the browser ended, if it crashed
	Duration  time.Duration // launch time (created) or lifetime (closed)
}

// LaunchFailedEvent describes a launch that did not produce a session.
type LaunchFailedEvent struct {
	Time      time.Time // when the launch gave up
	SessionID string    // the id the session would have had
	Err       error     // why it failed
}

// SweepEvent reports what the orphan sweep at NewPool found.
type SweepEvent struct {
	Time        time.Time // when the sweep began
	Swept       int       // orphan browser processes or process groups killed
	Skipped     int       // left alone: entries of a live owner, manifest entries that do not verify (malformed), processes not proven ours, paths that are not session dirs, remote leases not ended
	DirsRemoved int       // profile dirs removed
	Err         error     // the manifest could not be read: orphans were found by their command lines alone
	LeasesEnded int       // remote leases of hosts that are gone, ended through the pool's LeaseEnder
}

// Hooks are optional functions the pool calls on events. A nil func is not
// called. Hooks run one at a time on a goroutine of the pool's, in event
// order, never with a lock of ours held; a slow hook delays only later hooks
// and a panicking hook is recovered and logged. Pool.Close waits for queued
// hooks to run, for at most Config.CloseTimeout: a hook still running then
// is left to finish on its own (its goroutine outlives Close) and the hooks
// queued after it are dropped.
type Hooks struct {
	SessionCreated func(SessionEvent)      // a session's browser is up: launched (a warm one too), leased or attached
	SessionClosed  func(SessionEvent)      // a session ended: closed, reclaimed, or its browser exited
	LaunchFailed   func(LaunchFailedEvent) // a launch produced no session
	OrphansSwept   func(SweepEvent)        // NewPool's sweep of the root ended
}

// none reports that no hook is set (a new field must be added here).
func (h Hooks) none() bool {
	return h.SessionCreated == nil && h.SessionClosed == nil && h.LaunchFailed == nil && h.OrphansSwept == nil
}

// eventQueue runs hooks on one goroutine, in order, without blocking the
// caller.
type eventQueue struct {
	log *slog.Logger

	mu      sync.Mutex
	pending []func()      // guarded by mu
	closed  bool          // guarded by mu
	drained chan struct{} // guarded by mu; while a drain goroutine is live, closed when it exits; else nil
}

func newEventQueue(log *slog.Logger) *eventQueue {
	return &eventQueue{log: log}
}

// emit queues f. It never blocks on f.
func (q *eventQueue) emit(f func()) {
	if f == nil {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.pending = append(q.pending, f)
	start := q.drained == nil
	if start {
		q.drained = make(chan struct{})
	}
	q.mu.Unlock()
	if start {
		go q.drain()
	}
}

// drain runs queued hooks until none are left, then exits; emit starts a new
// one when needed, so an idle pool holds no hook goroutine.
func (q *eventQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			close(q.drained)
			q.drained = nil
			q.mu.Unlock()
			return
		}
		f := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		q.mu.Unlock()
		q.run(f)
	}
}

func (q *eventQueue) run(f func()) {
	defer func() {
		if r := recover(); r != nil && q.log != nil {
			q.log.Error("browserpool: a hook panicked", "panic", fmt.Sprint(r))
		}
	}()
	f()
}

// close runs what is queued, refuses later events and returns when the drain
// goroutine has exited, or after limit: then a hook still running is left
// to finish on its own, the hooks queued after it are dropped, and close
// reports false. A slow hook never stalls a Close for longer (DESIGN: a
// slow hook never stalls the pool).
func (q *eventQueue) close(limit time.Duration) bool {
	q.mu.Lock()
	q.closed = true
	drained := q.drained
	q.mu.Unlock()
	if drained == nil {
		return true
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-drained:
		return true
	case <-t.C:
	}
	q.mu.Lock()
	dropped := len(q.pending)
	q.pending = nil
	q.mu.Unlock()
	if q.log != nil {
		q.log.Warn("browserpool: a hook did not return in time; Close went on without it", "limit", limit, "dropped_hooks", dropped)
	}
	return false
}
