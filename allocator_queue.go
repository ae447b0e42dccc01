// Room: the allocator's queue: each computer's slots, its FIFO queue of
// waiters, the budget sweeper and the hand-off of a freed slot to the head
// of the queue. Allocator.mu guards all of it; the sweeper sleeps without
// it.

package browserpool

import (
	"fmt"
	"time"
)

// computer is one Computer's live state. name, pool and cap are fixed; every
// other field is guarded by Allocator.mu.
//
// Slots: used counts every slot taken, whatever holds it: a task's own
// lease, a launch (claimed by a waiter or orphaned), a session being closed,
// or a grant whose waiter has not started its launch yet. used never exceeds
// cap. A freed slot goes straight to the head of the queue (no barging).
type computer struct {
	name string
	pool *Pool
	cap  int

	used       int           // guarded by Allocator.mu
	leased     int           // guarded by Allocator.mu; tasks holding their own session
	starting   int           // guarded by Allocator.mu; launches under way
	closing    int           // guarded by Allocator.mu; sessions being closed
	sharing    int           // guarded by Allocator.mu
	leaked     int           // guarded by Allocator.mu
	head, tail *waiter       // guarded by Allocator.mu; the FIFO queue
	nwait      int           // guarded by Allocator.mu; queue length
	sorted     bool          // guarded by Allocator.mu; queued deadlines are in queue order (no deadline last)
	orphans    []*launchRun  // guarded by Allocator.mu; launches whose waiter left, none waiting for them
	st         ComputerStats // guarded by Allocator.mu; counters
}

// waiter is one acquire in progress, from joining the queue (or taking a
// free slot) until it returns. wake (buffered, capacity 1) is signalled
// under Allocator.mu whenever its state changes: granted a slot, handed a
// launch, done. Every other field but the fixed ones is guarded by
// Allocator.mu.
type waiter struct {
	t        *taskRec
	c        *computer
	enq      time.Time // when it queued (zero if it never queued)
	deadline time.Time // when its budget runs out (zero: no budget)
	ahead    int       // tasks ahead when it queued
	wake     chan struct{}

	prev, next *waiter       // guarded by Allocator.mu; c's queue
	queued     bool          // guarded by Allocator.mu; in c's queue
	granted    bool          // guarded by Allocator.mu; holds a slot
	launch     *launchRun    // guarded by Allocator.mu; the launch its slot carries, if any
	waited     time.Duration // guarded by Allocator.mu; time spent in the queue
	done       bool          // guarded by Allocator.mu; lease or err is the answer
	lease      *Lease        // guarded by Allocator.mu
	err        error         // guarded by Allocator.mu
}

// signalLocked wakes w's Acquire if it is not already due to wake.
func (w *waiter) signalLocked() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// launchRun is one browser launch for a slot. c is fixed; every other field
// is guarded by Allocator.mu.
type launchRun struct {
	c        *computer
	claim    *waiter  // guarded by Allocator.mu; who gets the session; nil once orphaned
	finished bool     // guarded by Allocator.mu; s and err are set
	s        *Session // guarded by Allocator.mu
	err      error    // guarded by Allocator.mu
}

// pushLocked appends w to c's queue.
func (c *computer) pushLocked(w *waiter) {
	if t := c.tail; t != nil && !w.deadline.IsZero() && (t.deadline.IsZero() || w.deadline.Before(t.deadline)) {
		c.sorted = false
	}
	w.prev, w.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = w
	} else {
		c.head = w
	}
	c.tail = w
	w.queued = true
	c.nwait++
}

// removeLocked takes w out of c's queue.
func (c *computer) removeLocked(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		c.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		c.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	c.nwait--
	if c.nwait == 0 {
		c.sorted = true
	}
}

// popLocked takes the head of c's queue, or returns nil.
func (c *computer) popLocked() *waiter {
	w := c.head
	if w != nil {
		c.removeLocked(w)
	}
	return w
}

// watchDeadlineLocked makes sure the budget sweeper wakes by d.
func (a *Allocator) watchDeadlineLocked(d time.Time) {
	if !a.sweeping {
		a.sweeping, a.sweepAt = true, d
		a.wg.Add(1)
		go a.sweepBudgets()
		return
	}
	if d.Before(a.sweepAt) {
		a.sweepAt = d
		select {
		case a.sweepKick <- struct{}{}:
		default:
		}
	}
}

// sweepBudgets ends the queued acquires whose budget ran out, sleeping
// until the earliest deadline left, and exits when no queued acquire has
// one. One goroutine and one timer serve every waiter: a timer per waiter
// costs more than the rest of an acquire under contention.
func (a *Allocator) sweepBudgets() {
	defer a.wg.Done()
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	for {
		a.mu.Lock()
		now := time.Now()
		var next time.Time
		for _, c := range a.order {
			if d := a.expireLocked(c, now); !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		if next.IsZero() || a.closed {
			a.sweeping = false
			a.mu.Unlock()
			return
		}
		a.sweepAt = next
		a.mu.Unlock()
		tm.Reset(next.Sub(now))
		select {
		case <-tm.C:
		case <-a.sweepKick:
			tm.Stop()
		case <-a.ctx.Done():
			tm.Stop()
			a.mu.Lock()
			a.sweeping = false
			a.mu.Unlock()
			return
		}
	}
}

// expireLocked ends c's queued acquires whose deadline is not after now and
// returns the earliest deadline left (zero if none). While c's deadlines
// are in queue order (every acquire with the same budget) it stops at the
// first one not yet due.
func (a *Allocator) expireLocked(c *computer, now time.Time) time.Time {
	var next time.Time
	for w := c.head; w != nil; {
		after := w.next
		switch {
		case w.deadline.IsZero():
			if c.sorted {
				return next // in order, no deadline here means none behind
			}
		case !w.deadline.After(now):
			a.timeoutLocked(w)
		default:
			if next.IsZero() || w.deadline.Before(next) {
				next = w.deadline
			}
			if c.sorted {
				return next
			}
		}
		w = after
	}
	return next
}

// timeoutLocked ends w's acquire with ErrQueueTimeout.
func (a *Allocator) timeoutLocked(w *waiter) {
	c, task := w.c, w.t.name
	still := 0
	for x := w.prev; x != nil; x = x.prev {
		still++
	}
	waited := a.dropLocked(w)
	c.st.QueueTimeouts++
	e := allocError("Allocator.Acquire", task, ErrQueueTimeout, fmt.Sprintf("waited %v for a free slot on computer %q (cap %d, all in use); %d %s ahead when it queued, %d still ahead",
		roundWait(waited), c.name, c.cap, w.ahead, plural(w.ahead, "task was", "tasks were"), still))
	w.err = e
	w.signalLocked()
	a.emitLocked(AuditEvent{Kind: AuditQueueTimeout, Task: task, Computer: c.name, Wait: waited, Ahead: still, Err: e})
}

// dropLocked ends w's acquire without an answer for it: w leaves the queue,
// or the slot it holds (with any launch) is handed on. It returns the time
// w spent in the queue.
func (a *Allocator) dropLocked(w *waiter) time.Duration {
	c := w.c
	w.done = true
	w.t.w = nil
	if w.queued {
		c.removeLocked(w)
		w.waited = time.Since(w.enq)
		c.st.WaitTime += w.waited
	} else if w.granted {
		s := a.passOnLocked(c, w.launch)
		a.startCloseLocked(c, s, "", "", ReasonAbandoned)
	}
	return w.waited
}

// releaseLocked frees one slot of c: it goes to the head of the queue if
// any, else back to the computer.
func (a *Allocator) releaseLocked(c *computer) { a.passOnLocked(c, nil) }

// passOnLocked hands a slot, with the launch l it carries (nil for a bare
// slot), to the head of c's queue, x/sync/semaphore style: the slot never
// becomes free in between, so an arrival cannot barge ahead of the queue.
// Without waiters a bare slot (or a failed launch's) is freed, a launch
// under way is orphaned (the next arrival or its own end takes care of it),
// and a launched session is returned for the caller to close (its slot
// frees when the close ends).
func (a *Allocator) passOnLocked(c *computer, l *launchRun) *Session {
	if l != nil && l.finished && l.err != nil {
		l = nil // a failed launch passes on as a bare slot: nobody inherits its error
	}
	if w := c.popLocked(); w != nil {
		w.granted, w.launch = true, l
		w.waited = time.Since(w.enq)
		c.st.WaitTime += w.waited
		if l == nil {
			w.signalLocked() // it starts the launch itself, unless it has left
			return nil
		}
		l.claim = w
		if l.finished {
			a.deliverLocked(w, l)
		} else {
			w.signalLocked()
		}
		return nil
	}
	switch {
	case l == nil:
		c.used--
	case !l.finished:
		l.claim = nil
		c.orphans = append(c.orphans, l)
	default:
		return l.s
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// roundWait keeps error texts short and stable.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
