// Room: the allocator's acquire path: a task asks for a session, takes a
// free slot or waits in the queue, and a launch fills the slot. Allocator.mu
// guards every field it touches (see allocator.go); it is never held while
// a browser launches: the launch runs unlocked and delivers under the lock.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Acquire returns a lease on the task's own session on the computer the task
// is bound to (binding it to opts.Computer first if it is not bound yet).
//
// A task holds at most one session. Acquiring again while it holds a live
// one returns the same lease; if its session ended meanwhile (a crash, idle
// reclaim), a new one is launched in the task's slot without queueing.
//
// When the computer has a free slot and nobody is queued, the slot is taken
// at once and a browser launched. Otherwise, with PolicyReject the call
// fails at once with ErrRejected; with PolicyQueue it joins the computer's
// FIFO queue (ErrQueueFull if MaxQueue waiters are already there) and waits
// until a slot is handed to it, its budget runs out (ErrQueueTimeout) or ctx
// ends. A queued task never preempts a running one: slots free only through
// Finish, a failed launch or an acquire that leaves.
//
// On failure Acquire returns an *Error and the task holds no slot: a slot
// handed to it as it left goes to the next waiter, and a browser launching
// for it goes to the next waiter or is closed; no browser is launched for a
// waiter that has left. ctx bounds the wait only (a session that arrives
// as ctx ends may still be returned). Launches run on the allocator's own
// context, bounded by the pool's LaunchTimeout.
func (a *Allocator) Acquire(ctx context.Context, task string, opts AcquireOptions) (*Lease, error) {
	return a.acquire(ctx, task, opts, nil)
}

// acquire is Acquire; via, when not nil, is the claim AcquireFor shares
// opts.ShareWith's browser through (see shareVia).
func (a *Allocator) acquire(ctx context.Context, task string, opts AcquireOptions, via *shareVia) (*Lease, error) {
	const op = "Allocator.Acquire"
	if err := checkTaskID(op, "task", task); err != nil {
		return nil, err
	}
	if opts.Policy != PolicyQueue && opts.Policy != PolicyReject {
		e := allocError(op, task, ErrInvalidArgument, fmt.Sprintf("unknown policy %v", opts.Policy))
		e.Hint = "use PolicyQueue or PolicyReject"
		return nil, e
	}
	if opts.ShareWith != "" {
		if opts.ShareWith == task {
			e := allocError(op, task, ErrInvalidArgument, "a task cannot share its own session")
			e.Hint = "drop ShareWith to use the task's own session"
			return nil, e
		}
		if err := checkTaskID(op, "task to share with", opts.ShareWith); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		// A context that ended before the call happened before it: fail
		// even if a slot is free (the semaphore's rule).
		return nil, a.ctxErr(op, task, ctx, 0, nil)
	}
	budget := opts.Budget
	if budget == 0 {
		budget = a.cfg.Budget
	}

	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, a.closedErr(op, task)
	}
	if via != nil {
		if a.browsers[via.key] != via.c || !a.ownsLiveLocked(via.c.owner) {
			if a.browsers[via.key] == via.c {
				delete(a.browsers, via.key) // its owner's browser ended and it has not acquired again
			}
			a.mu.Unlock()
			return nil, errClaimVoid
		}
		opts.ShareWith = via.c.owner // the heir, if the browser was handed on meanwhile
	}
	computer := opts.Computer
	if computer == "" && opts.ShareWith != "" && a.tasks[task] == nil {
		if o := a.tasks[opts.ShareWith]; o != nil {
			computer = o.c.name
		}
	}
	t, err := a.bindLocked(op, task, computer)
	if err != nil {
		a.mu.Unlock()
		return nil, err
	}
	if t.w != nil {
		a.mu.Unlock()
		e := allocError(op, task, ErrTaskBusy, fmt.Sprintf("task %s already has an acquire in progress on computer %q", task, t.c.name))
		e.Hint = "wait for that acquire to return (a task runs one at a time), then use its lease"
		return nil, e
	}
	c := t.c
	relaunch := false
	if l := t.lease; l != nil {
		alive := l.s.Err() == nil // Session.mu is a leaf lock: never held while taking ours
		wantOwner := task
		if opts.ShareWith != "" {
			wantOwner = opts.ShareWith
		}
		switch {
		case alive && l.Owner() == wantOwner:
			a.mu.Unlock()
			return l, nil
		case alive:
			a.mu.Unlock()
			what := "its own session " + l.s.ID()
			if l.Shared() {
				what = fmt.Sprintf("session %s shared from task %s", l.s.ID(), l.Owner())
			}
			return nil, allocError(op, task, ErrTaskBusy, fmt.Sprintf("task %s already holds %s", task, what))
		case l.Shared():
			// The owner's session ended under it: the share is over.
			t.lease = nil
			c.sharing--
			a.emitLocked(AuditEvent{Kind: AuditReleased, Task: task, Computer: c.name, Session: l.s.ID(), Owner: l.Owner()})
		default:
			// Its session ended on its own (crash, idle reclaim); the slot
			// is still the task's.
			t.lease = nil
			c.leased--
			a.emitLocked(AuditEvent{Kind: AuditReclaimed, Task: task, Computer: c.name, Session: l.s.ID(), Reason: l.s.usage().ended})
			if opts.ShareWith != "" {
				a.releaseLocked(c)
				break
			}
			relaunch = true
		}
	}
	if opts.ShareWith != "" {
		lease, err := a.shareLocked(op, t, opts.ShareWith)
		if err == nil && via != nil {
			via.c.holders.add(task, struct{}{})
		}
		a.mu.Unlock()
		return lease, err
	}
	w := &t.first
	if t.firstUsed {
		w = new(waiter)
	}
	t.firstUsed = true
	w.t, w.c = t, c
	switch {
	case relaunch:
		w.granted = true // in the task's own slot
	case len(c.orphans) > 0:
		// A launch whose waiter left and that nobody claimed yet: take it
		// over instead of starting another browser. (Orphans exist only
		// while the queue is empty, so this is no barging.)
		l := c.orphans[0]
		c.orphans = slices.Delete(c.orphans, 0, 1)
		w.granted, w.launch, l.claim = true, l, w
	case c.used < c.cap && c.head == nil:
		c.used++
		w.granted = true
	case opts.Policy == PolicyReject:
		c.st.Rejections++
		e := allocError(op, task, ErrRejected, fmt.Sprintf("computer %q has all %d of its sessions in use and the acquire asked for PolicyReject", c.name, c.cap))
		if c.nwait > 0 {
			e.Detail += fmt.Sprintf("; %d tasks are queued", c.nwait)
		}
		a.emitLocked(AuditEvent{Kind: AuditRejected, Task: task, Computer: c.name, Err: e})
		a.mu.Unlock()
		return nil, e
	case a.cfg.MaxQueue > 0 && c.nwait >= a.cfg.MaxQueue:
		c.st.Rejections++
		c.st.QueueFull++
		e := allocError(op, task, ErrQueueFull, fmt.Sprintf("computer %q has all %d of its sessions in use and %d tasks already waiting (MaxQueue %d)", c.name, c.cap, c.nwait, a.cfg.MaxQueue))
		a.emitLocked(AuditEvent{Kind: AuditRejected, Task: task, Computer: c.name, Err: e})
		a.mu.Unlock()
		return nil, e
	default:
		w.enq = time.Now()
		w.ahead = c.nwait
		if budget > 0 {
			w.deadline = w.enq.Add(budget)
			a.watchDeadlineLocked(w.deadline)
		}
		c.pushLocked(w)
		c.st.Waits++
		a.emitLocked(AuditEvent{Time: w.enq, Kind: AuditQueued, Task: task, Computer: c.name, Ahead: w.ahead})
	}
	w.wake = make(chan struct{}, 1)
	t.w = w
	var inline *launchRun
	queued := w.queued
	if !queued {
		inline = a.startLaunchLocked(ctx, w)
	}
	a.mu.Unlock()
	if inline != nil {
		if lease, err, ok := a.runLaunch(inline, w); ok {
			return lease, err
		}
	}
	return a.await(ctx, op, w)
}

// shareLocked gives t a lease on the session of the task named owner.
func (a *Allocator) shareLocked(op string, t *taskRec, owner string) (*Lease, error) {
	o := a.tasks[owner]
	if o != nil && o.c != t.c {
		e := allocError(op, t.name, ErrWrongComputer, fmt.Sprintf("task %s is bound to computer %q, but task %s's session is on %q", t.name, t.c.name, owner, o.c.name))
		e.Hint = fmt.Sprintf("share only with tasks on computer %q, or drop ShareWith to get a session of the task's own", t.c.name)
		return nil, e
	}
	if o == nil || o.lease == nil || o.lease.Shared() || o.lease.s.Err() != nil {
		return nil, allocError(op, t.name, ErrNotShared, fmt.Sprintf("task %s holds no live session of its own on computer %q", owner, t.c.name))
	}
	l := newLease(t.name, t.c.name, owner, o.lease.s, 0)
	t.lease = l
	t.c.sharing++
	t.c.st.Acquires++
	a.emitLocked(AuditEvent{Kind: AuditAllocated, Task: t.name, Computer: t.c.name, Session: l.s.ID(), Owner: owner})
	return l, nil
}

// startLaunchLocked starts the launch of w's slot unless its slot already
// carries one. It returns the launch when the caller must run it on its own
// goroutine: a caller whose context cannot end can only be taken away by
// Finish or Close, which hand the launch on themselves, so it needs no
// goroutine of ours.
func (a *Allocator) startLaunchLocked(ctx context.Context, w *waiter) *launchRun {
	if w.launch != nil {
		return nil
	}
	l := &launchRun{c: w.c, claim: w}
	w.launch = l
	w.c.starting++
	a.wg.Add(1)
	if ctx.Done() == nil {
		return l
	}
	go a.runLaunch(l, nil)
	return nil
}

// await waits until w is answered (a lease or an error), starting the
// launch of a slot handed to it from the queue. ctx bounds the wait; the
// budget sweeper ends it if its budget runs out in the queue, and the
// close of its computer's pool if it is still queued then (a slot would
// only launch into a closed pool). On failure w holds no slot.
func (a *Allocator) await(ctx context.Context, op string, w *waiter) (*Lease, error) {
	shut := w.c.pool.shutting()
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			return a.leave(ctx, op, w)
		case <-shut:
			shut = nil // once: a slot granted meanwhile launches, and that launch says the pool is closed
			a.mu.Lock()
			if !w.done && !w.granted {
				e := allocError(op, w.t.name, ErrPoolClosed, poolClosedDetail(w.c.name, "while the task waited in its queue"))
				e.Hint = poolClosedHint
				a.kickLocked(w, e)
			}
			a.mu.Unlock()
			continue
		}
		a.mu.Lock()
		if w.done {
			lease, err := w.lease, w.err
			a.mu.Unlock()
			return lease, err
		}
		if !w.granted {
			a.mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			// Never launch for a waiter that has left.
			a.mu.Unlock()
			return a.leave(ctx, op, w)
		}
		inline := a.startLaunchLocked(ctx, w)
		a.mu.Unlock()
		if inline != nil {
			if lease, err, ok := a.runLaunch(inline, w); ok {
				return lease, err
			}
		}
	}
}

// leave takes w out after its context ended. A slot handed to it meanwhile
// goes to the next waiter (or back to the computer); so does a launch the
// slot carries. An answer that came first wins.
func (a *Allocator) leave(ctx context.Context, op string, w *waiter) (*Lease, error) {
	c, task := w.c, w.t.name
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.done {
		return w.lease, w.err
	}
	starting := w.granted // a slot, its browser still starting
	waited := a.dropLocked(w)
	c.st.CancelledAcquires++
	err := a.ctxErr(op, task, ctx, waited, c)
	if starting {
		err.(*Error).Detail = fmt.Sprintf("gave up while its browser was starting on computer %q; the task holds no slot", c.name)
	}
	a.emitLocked(AuditEvent{Kind: AuditCancelled, Task: task, Computer: c.name, Wait: waited, Err: err})
	return nil, err
}

func (a *Allocator) ctxErr(op, task string, ctx context.Context, waited time.Duration, c *computer) error {
	detail := "the caller's context ended before the acquire began"
	if c != nil {
		detail = fmt.Sprintf("gave up after %v waiting for a session on computer %q; the task holds no slot", roundWait(waited), c.name)
	}
	e := allocError(op, task, ctx.Err(), detail)
	e.Err = context.Cause(ctx)
	if e.Err == ctx.Err() {
		e.Err = nil
	}
	e.Hint = "retry with a longer deadline if the task still needs a browser"
	return e
}

// poolClosedDetail says that the pool of computer was closed, when, and
// that the task holds no slot.
func poolClosedDetail(computer, when string) string {
	return fmt.Sprintf("the pool of computer %q was closed (Pool.Close) %s; the task holds no slot", computer, when)
}

// poolClosedHint is the hint of an acquire on a computer whose pool closed.
const poolClosedHint = "close the Allocator too: no browser can be launched on that computer any more; give it a new Pool in a new Allocator to go on"

// runLaunch opens one session on the allocator's own context, so a caller
// who leaves does not kill a browser the next waiter can use. The session
// goes to the launch's claimant; if nobody claims it, to the head of the
// queue, or it is closed. When self (the caller running the launch on its
// own goroutine) is the claimant, its answer is returned with ok.
func (a *Allocator) runLaunch(l *launchRun, self *waiter) (lease *Lease, err error, ok bool) {
	defer a.wg.Done()
	s, oerr := a.openFn(a.ctx, l.c)
	a.mu.Lock()
	defer a.mu.Unlock()
	l.s, l.err, l.finished = s, oerr, true
	l.c.starting--
	if w := l.claim; w != nil {
		a.deliverLocked(w, l)
		if w == self {
			return w.lease, w.err, true
		}
		return nil, nil, false
	}
	if i := slices.Index(l.c.orphans, l); i >= 0 {
		l.c.orphans = slices.Delete(l.c.orphans, i, i+1)
	}
	s = a.passOnLocked(l.c, l)
	a.startCloseLocked(l.c, s, "", "", ReasonAbandoned)
	return nil, nil, false
}

// deliverLocked answers w with the finished launch l: a lease on its
// session, or its error (giving the slot back).
func (a *Allocator) deliverLocked(w *waiter, l *launchRun) {
	c, t := w.c, w.t
	w.done = true
	t.w = nil
	switch {
	case errors.Is(l.err, ErrPoolClosed):
		// Not a launch failure: the computer's pool was closed before or
		// as the browser was to start.
		a.releaseLocked(c)
		e := allocError("Allocator.Acquire", t.name, ErrPoolClosed, poolClosedDetail(c.name, "before its browser could start"))
		e.Hint = poolClosedHint
		a.emitLocked(AuditEvent{Kind: AuditCancelled, Task: t.name, Computer: c.name, Wait: w.waited, Err: e})
		w.err = e
	case l.err != nil:
		c.st.LaunchFailures++
		a.releaseLocked(c)
		a.emitLocked(AuditEvent{Kind: AuditLaunchFailed, Task: t.name, Computer: c.name, Wait: w.waited, Err: l.err})
		w.err = retag(l.err, func(e *Error) { e.Op, e.Task = "Allocator.Acquire", t.name })
	default:
		w.lease = newLease(t.name, c.name, t.name, l.s, w.waited)
		t.lease = w.lease
		c.leased++
		c.st.Acquires++
		a.emitLocked(AuditEvent{Kind: AuditAllocated, Task: t.name, Computer: c.name, Session: l.s.ID(), Wait: w.waited})
	}
	w.signalLocked()
}
