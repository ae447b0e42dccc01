// Room: the allocator's reclaim path: terminal states (Finish), closes
// through the seam (pool_seam.go), leaks and their retry, stats, audit
// events and Close. Allocator.mu guards the counters and the leak table; it
// is never held while a session closes or a leak is retried.

package browserpool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ComputerStats is a snapshot of one computer's slots and counters (or of
// their total). Counters never reset. It is a plain value.
type ComputerStats struct {
	Cap        int           // concurrent sessions allowed
	InUse      int           // tasks holding a session of their own
	Starting   int           // slots whose browser is being launched
	Closing    int           // slots whose session is being closed
	Waiting    int           // acquires in the queue now
	OldestWait time.Duration // how long the head of the queue has waited
	Sharing    int           // tasks using another task's session (no slot)
	Leaked     int           // sessions that could not be closed and await a retry

	Acquires          uint64               // acquires that returned a session (own or shared)
	Waits             uint64               // acquires that queued
	WaitTime          time.Duration        // total time spent in the queue, over all waits that ended
	CancelledAcquires uint64               // acquires that left the queue or a launch: context, Finish or Close
	QueueTimeouts     uint64               // acquires whose budget ran out
	Rejections        uint64               // acquires refused at once: PolicyReject or a full queue
	QueueFull         uint64               // of Rejections, those refused by MaxQueue
	LaunchFailures    uint64               // acquires whose browser did not start
	Reclaims          map[TaskState]uint64 // sessions closed at Finish, by terminal state
	ShutdownReclaims  uint64               // sessions closed by Allocator.Close
	Leaks             uint64               // sessions ever counted as leaked
	LeaksRecovered    uint64               // leaked sessions a retry closed later
}

// AllocatorStats is a snapshot of an Allocator: each computer's stats and
// their total (Total.Cap is the sum of the caps, Total.OldestWait the
// longest head-of-queue wait).
type AllocatorStats struct {
	Total     ComputerStats            // every computer's figures summed
	Computers map[string]ComputerStats // by computer name
}

// leak is a session whose close failed. Its fields are fixed; the record
// lives in Allocator.leaks, guarded by Allocator.mu.
type leak struct {
	c     *computer
	task  string
	state TaskState
}

// Finish records that task reached a terminal state (TaskCompleted,
// TaskFailed or TaskCancelled) and forgets the task and its binding. Its own
// session is reclaimed through the pool's close path (reason task_end) and
// its slot handed to the head of the queue once the close ends; a session
// it only shared is left to its owner. An acquire of the task still in
// progress ends with ErrTaskFinished, giving back its slot.
//
// Finish returns nil once the session is closed, an ErrLeaked error if it
// could not be closed (it is counted in Stats and retried), ErrNotBound for
// a task the allocator does not know, or ctx's error if ctx ends first (the
// close goes on).
func (a *Allocator) Finish(ctx context.Context, task string, state TaskState) error {
	const op = "Allocator.Finish"
	switch state {
	case TaskCompleted, TaskFailed, TaskCancelled:
	default:
		e := allocError(op, task, ErrInvalidArgument, fmt.Sprintf("%q is not a terminal task state", state))
		e.Hint = "use TaskCompleted, TaskFailed or TaskCancelled"
		return e
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return a.closedErr(op, task)
	}
	t := a.tasks[task]
	if t == nil {
		a.mu.Unlock()
		e := allocError(op, task, ErrNotBound, fmt.Sprintf("task %s is not known: never bound, or already finished", task))
		e.Hint = "nothing to finish: a task is known from its first Bind or Acquire until its Finish; check the task's name"
		return e
	}
	delete(a.tasks, task)
	heir := a.handOverLocked(task, t.lease)
	a.releaseClaimsLocked(task)
	c := t.c
	if t.w != nil {
		kerr := allocError("Allocator.Acquire", task, ErrTaskFinished, fmt.Sprintf("Finish(%s) ended the task while it waited for a session on computer %q", state, c.name))
		a.kickLocked(t.w, kerr)
	}
	l := t.lease
	t.lease = nil
	switch {
	case l == nil:
		a.mu.Unlock()
		return nil
	case l.Shared():
		c.sharing--
		a.emitLocked(AuditEvent{Kind: AuditReleased, Task: task, Computer: c.name, Session: l.s.ID(), Owner: l.Owner(), State: state})
		a.mu.Unlock()
		return nil
	case heir != "":
		// I4: the session lives on as heir's, in this task's slot.
		a.emitLocked(AuditEvent{Kind: AuditReleased, Task: task, Computer: c.name, Session: l.s.ID(), Owner: heir, State: state})
		a.mu.Unlock()
		return nil
	}
	c.leased--
	c.closing++
	a.wg.Add(1)
	a.mu.Unlock()

	if ctx.Done() == nil {
		defer a.wg.Done()
		return a.reclaim(c, l.s, task, state, ReasonTaskEnd)
	}
	done := make(chan error, 1)
	go func() {
		defer a.wg.Done()
		done <- a.reclaim(c, l.s, task, state, ReasonTaskEnd)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		e := allocError(op, task, ctx.Err(), fmt.Sprintf("stopped waiting for session %s to close; the close goes on", l.s.ID()))
		e.Session = l.s.ID()
		e.Hint = "nothing to do: the session is reclaimed in the background"
		return e
	}
}

// kickLocked ends w's acquire for Finish or Close with err: it leaves the
// queue, or hands on the slot (and launch) it holds.
func (a *Allocator) kickLocked(w *waiter, err error) {
	waited := a.dropLocked(w)
	w.err = err
	w.signalLocked()
	w.c.st.CancelledAcquires++
	a.emitLocked(AuditEvent{Kind: AuditCancelled, Task: w.t.name, Computer: w.c.name, Wait: waited, Err: err})
}

// startCloseLocked closes s (when not nil) on a goroutine of the
// allocator; its slot is freed when the close ends.
func (a *Allocator) startCloseLocked(c *computer, s *Session, task string, state TaskState, reason CloseReason) {
	if s == nil {
		return
	}
	c.closing++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.reclaim(c, s, task, state, reason)
	}()
}

// reclaim closes s through the pool's close path, frees its slot (handing
// it to the head of the queue) and accounts for the result. It returns the
// leak error, if any. c.closing was counted by the caller.
func (a *Allocator) reclaim(c *computer, s *Session, task string, state TaskState, reason CloseReason) error {
	cerr := a.closeFn(s, reason)
	a.mu.Lock()
	c.closing--
	a.releaseLocked(c)
	ev := AuditEvent{Task: task, Computer: c.name, Session: s.ID(), State: state, Reason: reason}
	if cerr != nil {
		c.leaked++
		c.st.Leaks++
		a.leaks[s] = &leak{c: c, task: task, state: state}
		e := allocError("Allocator.Finish", task, ErrLeaked, fmt.Sprintf("session %s on computer %q", s.ID(), c.name))
		e.Session, e.Err = s.ID(), cerr
		if a.cfg.LeakRetry > 0 {
			e.Hint = fmt.Sprintf("nothing to do for this task: the allocator retries the close every %v and reports it in Allocator.Stats (Leaked); check the computer if the count keeps growing", a.cfg.LeakRetry)
		}
		ev.Kind, ev.Err = AuditLeaked, e
		a.emitLocked(ev)
		if !a.retrying && !a.closed && a.cfg.LeakRetry > 0 {
			a.retrying = true
			a.wg.Add(1)
			go a.retryLeaks()
		}
		a.mu.Unlock()
		// Logged after the unlock: a log handler may write to a file.
		a.log.Warn("browserpool: a task's session could not be closed; counted as leaked", "task", task, "computer", c.name, "session", s.ID(), "err", cerr)
		return e
	}
	defer a.mu.Unlock()
	if task == "" {
		return nil // a browser launched for a waiter who left: no task to account to
	}
	switch reason {
	case ReasonShutdown:
		c.st.ShutdownReclaims++
	default:
		c.st.Reclaims[state]++
	}
	ev.Kind = AuditReclaimed
	a.emitLocked(ev)
	return nil
}

// retryLeaks tries again, every LeakRetry, to close the leaked sessions,
// until none is left or the allocator closes.
func (a *Allocator) retryLeaks() {
	defer a.wg.Done()
	tick := time.NewTicker(a.cfg.LeakRetry)
	defer tick.Stop()
	for {
		select {
		case <-a.ctx.Done():
			a.mu.Lock()
			a.retrying = false
			a.mu.Unlock()
			return
		case <-tick.C:
		}
		if a.retryLeaksOnce() == 0 {
			return
		}
	}
}

// retryLeaksOnce tries each leaked session once and returns how many are
// left; at zero it marks the retry loop stopped.
func (a *Allocator) retryLeaksOnce() int {
	a.mu.Lock()
	todo := make([]*Session, 0, len(a.leaks))
	for s := range a.leaks {
		todo = append(todo, s)
	}
	a.mu.Unlock()
	slices.SortFunc(todo, func(x, y *Session) int { return strings.Compare(x.ID(), y.ID()) })
	for _, s := range todo {
		if err := a.retryFn(s); err != nil {
			a.log.Warn("browserpool: a leaked session still cannot be closed", "session", s.ID(), "err", err)
			continue
		}
		a.mu.Lock()
		if lk := a.leaks[s]; lk != nil {
			delete(a.leaks, s)
			lk.c.leaked--
			lk.c.st.LeaksRecovered++
			a.emitLocked(AuditEvent{Kind: AuditLeakRecovered, Task: lk.task, Computer: lk.c.name, Session: s.ID(), State: lk.state})
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.leaks)
	if n == 0 {
		a.retrying = false
	}
	return n
}

// Stats returns a snapshot of every computer's slots and counters, and
// their total.
func (a *Allocator) Stats() AllocatorStats {
	now := time.Now()
	out := AllocatorStats{Computers: make(map[string]ComputerStats, len(a.order))}
	out.Total.Reclaims = make(map[TaskState]uint64)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.order {
		st := c.st
		st.Reclaims = make(map[TaskState]uint64, len(c.st.Reclaims))
		for k, v := range c.st.Reclaims {
			st.Reclaims[k] = v
			out.Total.Reclaims[k] += v
		}
		st.Cap, st.InUse, st.Starting, st.Closing = c.cap, c.leased, c.starting, c.closing
		st.Waiting, st.Sharing, st.Leaked = c.nwait, c.sharing, c.leaked
		if c.head != nil {
			st.OldestWait = now.Sub(c.head.enq)
		}
		out.Computers[c.name] = st

		tt := &out.Total
		tt.Cap += st.Cap
		tt.InUse += st.InUse
		tt.Starting += st.Starting
		tt.Closing += st.Closing
		tt.Waiting += st.Waiting
		tt.OldestWait = max(tt.OldestWait, st.OldestWait)
		tt.Sharing += st.Sharing
		tt.Leaked += st.Leaked
		tt.Acquires += st.Acquires
		tt.Waits += st.Waits
		tt.WaitTime += st.WaitTime
		tt.CancelledAcquires += st.CancelledAcquires
		tt.QueueTimeouts += st.QueueTimeouts
		tt.Rejections += st.Rejections
		tt.QueueFull += st.QueueFull
		tt.LaunchFailures += st.LaunchFailures
		tt.ShutdownReclaims += st.ShutdownReclaims
		tt.Leaks += st.Leaks
		tt.LeaksRecovered += st.LeaksRecovered
	}
	return out
}

// Close ends every acquire in progress (they return an ErrPoolClosed
// error), closes the sessions tasks still hold (reason shutdown, in
// parallel), waits for launches and closes under way, tries leaked sessions
// once more, runs queued audit events and stops every goroutine the
// allocator started. It does not close the computers' pools. It is
// idempotent: a later or concurrent call waits until the first has
// closed every session (not for its audit events), then returns nil. Leaks stay visible in Stats.
func (a *Allocator) Close() error {
	a.mu.Lock()
	if a.closed {
		done := a.closeDone
		a.mu.Unlock()
		<-done
		return nil
	}
	a.closed = true
	a.closeDone = make(chan struct{})
	names := make([]string, 0, len(a.tasks))
	for name := range a.tasks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := a.tasks[name]
		if t.w != nil {
			a.kickLocked(t.w, a.closedErr("Allocator.Acquire", name))
		}
		switch l := t.lease; {
		case l == nil:
		case l.Shared():
			t.c.sharing--
		default:
			t.c.leased--
			a.startCloseLocked(t.c, l.s, name, "", ReasonShutdown)
		}
	}
	clear(a.tasks)
	a.mu.Unlock()

	a.cancel() // launches under way stop waiting; the pool closes their browsers
	a.wg.Wait()
	a.mu.Lock()
	leaked := len(a.leaks)
	a.mu.Unlock()
	if leaked > 0 && a.cfg.LeakRetry > 0 {
		a.retryLeaksOnce()
	}
	close(a.closeDone) // before the audit events: a hook may call Close
	if a.events != nil {
		a.events.close(DefaultCloseTimeout)
	}
	return nil
}

// emitLocked queues ev for the Audit hook. Queueing under a.mu keeps events
// in transition order; the hook itself runs later, without the lock.
func (a *Allocator) emitLocked(ev AuditEvent) {
	if a.events != nil {
		a.queueLocked(&ev)
	}
}

// queueLocked copies ev into the event queue. It is apart from emitLocked
// so that without an Audit hook no event reaches the heap.
func (a *Allocator) queueLocked(p *AuditEvent) {
	ev := *p
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	audit := a.cfg.Audit
	a.events.emit(func() { audit(ev) })
}
