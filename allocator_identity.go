// Room: the allocator's identity keying. Allocator.mu guards the claims and
// their holder records (a holderSet, see pool_seam.go), as it guards the
// tasks.

package browserpool

import (
	"context"
	"errors"
	"fmt"
)

// browserClaim records which task owns the session a browser key names, and
// which tasks hold it. owner and ready are fixed; ready is closed by the
// owner when its acquire has ended.
type browserClaim struct {
	owner   string
	ready   chan struct{}
	holders holderSet[struct{}] // guarded by Allocator.mu; by task name
}

// AcquireFor acquires, for task, the browser that id acts on, keying reuse
// on id.BrowserKey(): the first task with a key gets a session of its own
// (queueing as Acquire does); a later task with the same key shares it, as
// with AcquireOptions.ShareWith naming the first task, and takes no slot. A
// parent and a child that shares its browser (Identity.Child) therefore
// count once against the computer's cap; an isolated child
// (Identity.IsolatedChild) has a key of its own and a session of its own.
//
// The session is its owner's until the owner task finishes. Then, if
// another task still holds it through AcquireFor, the session is handed to
// that task (the first by name) with the owner's slot, instead of being
// closed: finishing one task never destroys a browser another still uses
// (I4). The last holder's Finish reclaims it. A task waiting for the
// owner's own acquire waits at most until ctx ends. When the owner's
// browser has ended (a crash, a reclaim) and it has not acquired again,
// the next task with the key owns a browser of its own. A task acts in one
// browser: AcquireFor with another key for a task that already holds one
// is an ErrTaskBusy error.
func (a *Allocator) AcquireFor(ctx context.Context, task string, id Identity, opts AcquireOptions) (*Lease, error) {
	const op = "Allocator.AcquireFor"
	key := id.BrowserKey()
	if key == "" || opts.ShareWith != "" {
		e := allocError(op, task, ErrInvalidArgument, "AcquireFor needs an identity with a tool session id, and no ShareWith")
		e.Hint = "build the identity with NewIdentity; AcquireFor chooses the share itself"
		return nil, e
	}
	for {
		a.mu.Lock()
		if a.browsers == nil {
			a.browsers = make(map[string]*browserClaim)
		}
		// A task holds one session: one that acts in another browser
		// (its parent's, say) cannot also act in this one.
		for k, other := range a.browsers {
			_, holds := other.holders.get(task)
			if k != key && (other.owner == task || holds) {
				a.mu.Unlock()
				e := allocError(op, task, ErrTaskBusy, fmt.Sprintf("task %s already acts in browser %s, and a task holds one session", task, k))
				e.Hint = "acquire this identity (an isolated child's) under a task of its own, or Finish the task first"
				return nil, e
			}
		}
		c := a.browsers[key]
		if c == nil {
			c = &browserClaim{owner: task, ready: make(chan struct{})}
			a.browsers[key] = c
			a.mu.Unlock()
			l, err := a.Acquire(ctx, task, opts)
			a.mu.Lock()
			if err != nil {
				if a.browsers[key] == c {
					delete(a.browsers, key)
				}
			} else {
				c.holders.add(task, struct{}{})
			}
			close(c.ready)
			a.mu.Unlock()
			return l, err
		}
		owner, ready := c.owner, c.ready
		a.mu.Unlock()
		if owner == task {
			return a.Acquire(ctx, task, opts)
		}
		select {
		case <-ready:
		case <-ctx.Done():
			e := allocError(op, task, ctx.Err(), fmt.Sprintf("gave up waiting for task %s to get the browser %s shares", owner, key))
			e.Hint = "retry; the browser is being opened for its owner task"
			return nil, e
		}
		if testHookBeforeShare != nil {
			testHookBeforeShare()
		}
		share := opts
		share.ShareWith = owner
		l, err := a.acquire(ctx, task, share, &shareVia{key: key, c: c})
		if err == errClaimVoid {
			continue // the owner finished, or its browser ended, before the share: try to own it
		}
		// Errors of the share AcquireFor chose are its own, not a
		// ShareWith the caller set.
		return l, retag(err, func(e *Error) {
			e.Op = op
			if errors.Is(err, ErrWrongComputer) {
				e.Hint = fmt.Sprintf("the browser this identity shares is task %s's, on another computer: acquire with the computer that task is on, or leave Computer empty", owner)
			}
		})
	}
}

// shareVia is the claim an AcquireFor shares its owner's browser through.
// Acquire checks it and joins its holders in the critical section of the
// share itself, so the owner's Finish either sees the task among the
// holders (and hands the browser on to it) or has voided the claim first
// (and the task tries to own the browser): never a lease on a browser
// being closed, nor a spurious ErrNotShared.
type shareVia struct {
	key string
	c   *browserClaim
}

// errClaimVoid is acquire's answer to a share whose claim is gone or whose
// owner's browser has ended; AcquireFor tries again. It never reaches a
// caller.
var errClaimVoid = errors.New("browserpool: the browser claim is void")

// testHookBeforeShare, when set by a test, runs in AcquireFor between
// waiting for the owner's acquire and the share.
var testHookBeforeShare func()

// ownsLiveLocked reports whether task holds a live session of its own.
func (a *Allocator) ownsLiveLocked(task string) bool {
	t := a.tasks[task]
	return t != nil && t.lease != nil && !t.lease.Shared() && t.lease.s.Err() == nil // Session.mu is a leaf lock
}

// HoldersOf returns the tasks holding the browser key through AcquireFor,
// sorted.
func (a *Allocator) HoldersOf(browserKey string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.browsers[browserKey]
	if c == nil {
		return nil
	}
	return c.holders.keys()
}

// handOverLocked hands the session of task's own lease l to the first task
// (by name) a browser claim records as still holding it (AcquireFor), and
// returns that task's name; "" when none holds it. The heir takes the
// claim, the owner's slot and the ownership of every lease of the session.
func (a *Allocator) handOverLocked(task string, l *Lease) string {
	if l == nil || l.Shared() {
		return ""
	}
	for _, cl := range a.browsers {
		if cl.owner != task {
			continue
		}
		heir := ""
		for _, name := range cl.holders.keys() { // sorted
			if t := a.tasks[name]; name != task && t != nil && t.lease != nil && t.lease.s == l.s {
				heir = name
				break
			}
		}
		if heir == "" {
			continue
		}
		cl.owner = heir
		cl.holders.remove(task)
		for _, t := range a.tasks {
			if t.lease != nil && t.lease.s == l.s {
				t.lease.owner.Store(&heir)
			}
		}
		a.tasks[heir].c.sharing-- // it holds the slot now, not a share
		return heir
	}
	return ""
}

// releaseClaimsLocked forgets task as a holder, and the claims it owns.
func (a *Allocator) releaseClaimsLocked(task string) {
	for key, c := range a.browsers {
		c.holders.remove(task)
		if c.owner == task {
			delete(a.browsers, key)
		}
	}
}
