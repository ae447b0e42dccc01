// Room: the seam between the policy layers (Tracker, Allocator, Registry)
// and the pool. It owns no lock. closeWith runs the pool's one close path
// (which takes Pool.mu and Session.mu itself, never while the caller's lock
// is held: callers must not hold their own lock either); usage reads two
// atomics and takes Session.mu, a leaf lock, so it may be called under
// Tracker.mu or Allocator.mu; a holderSet has no lock of its own and is
// guarded by the lock of the layer that owns it (Tracker.mu, Allocator.mu
// or Registry.mu).

package browserpool

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// The seam.
//
// Tracker, Allocator and Registry are policy layers: they decide which
// session a caller gets, who holds it and when it ends, and leave the
// session itself to the pool. Besides the exported API of Pool and Session
// (Open, Err, Done, Touch, Info, ID, OpenTab, Tab, Tabs, CloseTab), this
// file is everything they may use of the pool. They never read a Pool or
// Session field, never call Pool.closeSession directly and keep no holder
// table of their own:
//
//   - Session.closeWith(ctx, reason): the one way a policy layer closes a
//     session, with the reason it gives (lru, task_end, unpinned, explicit,
//     workflow_end, shutdown). It runs the pool's one close path; ctx bounds
//     the wait only.
//   - Session.retryCleanup(): tries again what a close left behind (the
//     Allocator's leak retry).
//   - Session.claimIdle(reason) and Session.closeClaimed(reason): a close
//     that happens only if no call is in flight as it begins (the
//     Tracker's LRU eviction); claimIdle is callable under a layer's lock.
//   - Session.usage(): the one busy/idle query: calls in flight, idle since,
//     and why the session ended. Lock-cheap, callable under a layer's lock.
//   - Session.tabCount(ctx): the number of open tabs, without counting as a
//     use of the session (the Tracker's monitor).
//   - Pool.logger(): the pool's logger, for a layer that has none of its
//     own (the Tracker).
//   - Pool.shutting(): a channel closed as Pool.Close begins (the
//     Allocator's queued acquires leave on it).
//   - holderSet: the one holder record, who holds a shared browser, used
//     by all three layers (Tracker.HoldersOf, Allocator.HoldersOf,
//     Registry.Holders).

// closeWith closes s with reason through its pool's one close path
// (Pool.closeSession): the browser is stopped, its profile dir removed and
// exactly one SessionClosed event emitted, whichever layer asks and however
// many ask at once. It returns what the close left behind (an
// ErrCloseFailed error), or nil; closing a closed session returns that
// close's result.
//
// ctx bounds the wait only: if ctx ends first, closeWith returns a
// Session.Close error of ctx's class and the close goes on in the
// background. A context that cannot end (context.Background) waits on the
// caller's goroutine, with no goroutine of ours.
//
// The caller must hold no lock of its own.
func (s *Session) closeWith(ctx context.Context, reason CloseReason) error {
	if ctx.Done() == nil {
		return s.p.closeSession(s, reason, nil)
	}
	done := make(chan struct{})
	var err error
	go func() {
		err = s.p.closeSession(s, reason, nil)
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		e := newError("Session.Close", ctx.Err(), "stopped waiting; the close goes on in the background")
		e.Session = s.id
		e.Hint = "nothing to do: the browser is closed and its profile dir removed in the background (Pool.Close waits for it)"
		return e
	}
}

// retryCleanup tries again to clean up s after a close that left something
// behind (a browser that could not be stopped, a profile dir that could not
// be removed), bounded by the pool's CloseTimeout. It returns nil once
// nothing is left. The caller must hold no lock of its own.
func (s *Session) retryCleanup() error { return s.p.retryClose(s) }

// claimIdle moves s to closing with reason if no call is in flight on it,
// and reports whether it did; it changes nothing for a busy session or one
// no longer live. The check and the move are one step under Session.mu (a
// leaf lock, so a layer may call it under its own): a call that begins
// after it is refused before anything is sent, so the close that follows
// (closeClaimed) cuts no call (the Tracker's LRU eviction).
func (s *Session) claimIdle(reason CloseReason) bool {
	began, _ := s.beginClose(reason, nil, func() bool {
		_, n := s.use()
		return n > 0
	})
	return began
}

// closeClaimed runs the pool's one close path for a session claimIdle
// claimed, and returns what it left behind. Only the claimer calls it, once,
// holding no lock of its own; a concurrent closeWith waits for it.
func (s *Session) closeClaimed(reason CloseReason) error {
	return s.p.closeBegun(s, reason, nil)
}

// sessionUse is the answer to the seam's one busy/idle query. It is a plain
// value.
type sessionUse struct {
	inFlight int         // calls in flight now
	lastUse  time.Time   // when the last call started or ended, or the last Touch (idle since, when not busy)
	ended    CloseReason // why the session ended; empty while it is live
}

// busy reports whether a call is in flight: a busy session is never evicted
// or reclaimed idle.
func (u sessionUse) busy() bool { return u.inFlight > 0 }

// usage returns whether s is busy or idle and since when, and why it ended.
// It takes only Session.mu, a leaf lock, so a layer may ask under its own
// lock.
func (s *Session) usage() sessionUse {
	last, n := s.use()
	return sessionUse{inFlight: n, lastUse: last, ended: s.closeReason()}
}

// tabCount returns the number of the browser's open page tabs. Unlike
// Session.Tabs it does not count as a use of the session, so monitoring
// never keeps a session from being reclaimed idle. The caller must hold no
// lock of its own (it is a CDP call).
func (s *Session) tabCount(ctx context.Context) (int, error) {
	infos, err := s.pageTargets(ctx)
	return len(infos), err
}

// logger returns the pool's logger (silent unless Config.Logger is set).
func (p *Pool) logger() *slog.Logger { return p.log }

// closeTimeout is the pool's Config.CloseTimeout (effective), which bounds
// a layer's own waits at Close (its hooks).
func (p *Pool) closeTimeout() time.Duration { return p.cfg.CloseTimeout }

// shutting returns a channel closed as Close begins: a queued acquire on a
// pool being closed would only launch into a closed pool.
func (p *Pool) shutting() <-chan struct{} { return p.shut }

// holderSet is the one holder record of the policy layers: who holds a
// browser, by holder key (Identity.HolderKey for the Tracker and the
// Registry, the task name for the Allocator), with what the layer keeps per
// holder (nothing, or the Registry's *Holder).
//
// It has no lock of its own: the layer that owns it guards it with its lock
// (Tracker.mu, Allocator.mu or Registry.mu), and every method must be
// called with that lock held. The zero value is empty and ready to use.
type holderSet[V any] struct {
	m map[string]V // guarded by the owning layer's lock
}

// add records key as a holder with v, replacing what was recorded for it.
func (h *holderSet[V]) add(key string, v V) {
	if h.m == nil {
		h.m = make(map[string]V)
	}
	h.m[key] = v
}

// get returns what is recorded for key, and whether key is a holder.
func (h *holderSet[V]) get(key string) (V, bool) {
	v, ok := h.m[key]
	return v, ok
}

// remove forgets key as a holder. Removing a key that holds nothing is a
// no-op.
func (h *holderSet[V]) remove(key string) { delete(h.m, key) }

// len returns the number of holders.
func (h *holderSet[V]) len() int { return len(h.m) }

// keys returns the holder keys, sorted; an empty (never nil) slice when
// there is none.
func (h *holderSet[V]) keys() []string {
	out := make([]string, 0, len(h.m))
	for k := range h.m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// all iterates over the holders in no particular order.
func (h *holderSet[V]) all() iter.Seq2[string, V] { return maps.All(h.m) }
