// Room: closing the tracker's sessions: one by name, a workflow's, all of
// them, and the tracker itself. Tracker.mu (tracker.go) guards the tables;
// it is never held while a session closes.

package browserpool

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// CloseSession closes the named session of workflow (reason explicit) and
// forgets it. Closing a name the workflow does not hold returns nil.
func (tr *Tracker) CloseSession(ctx context.Context, workflow, name string) error {
	tr.mu.Lock()
	e := tr.entries[trackKey{workflow, name}]
	if e != nil {
		tr.removeLocked(e)
		e.taken = true
	}
	tr.mu.Unlock()
	return tr.closeEntries(ctx, "Tracker.CloseSession", []*tracked{e}, ReasonExplicit)
}

// EndWorkflow closes and forgets every session of workflow (reason
// workflow_end). It is idempotent; calls in flight on those sessions fail
// with ErrSessionClosed.
func (tr *Tracker) EndWorkflow(ctx context.Context, workflow string) error {
	tr.mu.Lock()
	var es []*tracked
	for _, e := range tr.byWF[workflow] {
		es = append(es, e)
	}
	for _, e := range es {
		tr.removeLocked(e)
		e.taken = true
	}
	tr.mu.Unlock()
	return tr.closeEntries(ctx, "Tracker.EndWorkflow", es, ReasonWorkflowEnd)
}

// CloseAll closes and forgets every tracked session (reason explicit).
func (tr *Tracker) CloseAll(ctx context.Context) error {
	tr.mu.Lock()
	es := make([]*tracked, 0, len(tr.entries))
	for _, e := range tr.entries {
		e.taken = true
		es = append(es, e)
	}
	clear(tr.entries)
	clear(tr.byWF)
	tr.mu.Unlock()
	return tr.closeEntries(ctx, "Tracker.CloseAll", es, ReasonExplicit)
}

// closeEntries closes the sessions of es in parallel, waiting for opens
// under way to finish first.
func (tr *Tracker) closeEntries(ctx context.Context, op string, es []*tracked, reason CloseReason) error {
	var wg sync.WaitGroup
	errs := make([]error, len(es))
	for i, e := range es {
		if e == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-e.opened
			tr.mu.Lock()
			s := e.s
			tr.mu.Unlock()
			if s != nil {
				errs[i] = s.closeWith(context.Background(), reason)
			}
		}()
	}
	done := make(chan struct{}) // closed when every close has returned
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return errors.Join(errs...)
	case <-ctx.Done():
		tr.mu.Lock()
		tr.background = slices.DeleteFunc(tr.background, func(c chan struct{}) bool {
			select {
			case <-c:
				return true // done: nothing left to wait for
			default:
				return false
			}
		})
		tr.background = append(tr.background, done)
		tr.mu.Unlock()
		e := newError(op, ctx.Err(), "stopped waiting; the closes go on in the background")
		e.Hint = "nothing to do: the browsers are closed in the background (Tracker.Close waits for them)"
		return e
	}
}

// Close closes every tracked session (each bounded by the pool's
// CloseTimeout), runs queued hooks and stops the tracker. It does not close
// the pool. It is idempotent: a later or concurrent call waits until the
// first has closed every session (not for its hooks), then returns nil.
// Later Opens fail with ErrPoolClosed.
func (tr *Tracker) Close() error {
	tr.mu.Lock()
	if tr.closed {
		done := tr.closeDone
		tr.mu.Unlock()
		<-done
		return nil
	}
	tr.closed = true
	tr.closeDone = make(chan struct{})
	tr.mu.Unlock()
	err := tr.CloseAll(context.Background())
	tr.launches.Wait() // those of entries already forgotten, too
	tr.mu.Lock()
	background := tr.background
	tr.background = nil
	tr.mu.Unlock()
	for _, c := range background {
		<-c // closes their callers stopped waiting for
	}
	close(tr.closeDone) // before the hooks: a hook may call Close
	tr.events.close(tr.pool.closeTimeout())
	return err
}

// closedHow says how a session ended, from its Err: "was closed (reason
// idle)" or "ended: its browser exited".
func closedHow(err error) string {
	var e *Error
	switch {
	case errors.Is(err, ErrBrowserExited):
		return "ended: its browser exited"
	case errors.As(err, &e) && e.Detail != "":
		return "was " + e.Detail
	}
	return "ended: " + err.Error()
}

// trackerClosed is the error of a call on a closed tracker.
func trackerClosed(op string) error {
	e := newError(op, ErrPoolClosed, "the tracker is closed")
	e.Hint = "create a new Tracker (over a Pool that is still open); a closed one cannot be reused"
	return e
}
