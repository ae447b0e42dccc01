// Room: the allocator's identity keying. Allocator.mu guards the claims and
// their holder records (a holderSet, see pool_seam.go), as it guards the
// tasks.

package browserpool

import (
	"context"
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
// The session stays its owner's: it is reclaimed when the owner task
// reaches a terminal state (finish sharing children first). A task waiting
// for the owner's own acquire waits at most until ctx ends.
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
		a.mu.Lock()
		still := a.browsers[key] == c
		a.mu.Unlock()
		if !still {
			continue // the owner's acquire failed or it finished: try to own it
		}
		opts.ShareWith = owner
		l, err := a.Acquire(ctx, task, opts)
		if err == nil {
			a.mu.Lock()
			c.holders.add(task, struct{}{})
			a.mu.Unlock()
		}
		return l, err
	}
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

// releaseClaimsLocked forgets task as a holder, and the claims it owns.
func (a *Allocator) releaseClaimsLocked(task string) {
	for key, c := range a.browsers {
		c.holders.remove(task)
		if c.owner == task {
			delete(a.browsers, key)
		}
	}
}
