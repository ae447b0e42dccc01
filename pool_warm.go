// Room: warm sessions (Config.Warm): launched browsers nobody has claimed
// yet, kept ready so Pool.Open (and through it Tracker.Open and
// Allocator.Acquire) takes one without waiting for a launch. The warm set
// is guarded by Pool.mu (see browser.go); one goroutine, the warmer,
// launches, replaces and expires warm browsers with no lock held.

package browserpool

import (
	"context"
	"slices"
	"time"
)

// DefaultWarmMaxAge is how long a warm browser waits to be claimed before
// it is replaced by a fresh one (Config.WarmMaxAge).
const DefaultWarmMaxAge = 10 * time.Minute

// ReasonWarmExpired closes a warm browser nobody claimed within
// Config.WarmMaxAge; a fresh one replaces it.
const ReasonWarmExpired CloseReason = "warm_expired"

// Backoff of the warmer after a failed launch: it doubles from
// warmRetryMin up to warmRetryMax and resets on the next success, so a
// missing browser costs one launch a minute, not a busy loop.
const (
	warmRetryMin = time.Second
	warmRetryMax = time.Minute
)

// warmSet is the pool's warm browsers. All of it is guarded by Pool.mu.
//
// A warm browser is a launched session that has not been handed out: it is
// in the manifest (so a crash of the host leaves no orphan the next sweep
// cannot prove), watched like any session (a browser that dies is closed
// with reason crashed and replaced), but not in Pool.sessions, so empty-id
// resolution, Pool.Sessions, idle reclaim and every policy layer's limits
// never see it until it is claimed.
type warmSet struct {
	ready    []*Session      // guarded by Pool.mu; ready to claim, oldest first
	starting map[string]bool // guarded by Pool.mu; ids of warm launches under way
	kick     chan struct{}   // buffered (1): wakes the warmer; sent to without blocking
	// lastLaunch is how long the last warm launch took; guarded by
	// Pool.mu. A replacement starts twice that before a browser expires.
	lastLaunch time.Duration
}

// startWarmer makes the warm set and starts the warmer when Config.Warm
// asks for warm browsers. It runs from NewPool before the pool is shared.
func (p *Pool) startWarmer() {
	p.warm.starting = make(map[string]bool)
	p.warm.kick = make(chan struct{}, 1)
	if p.cfg.Warm <= 0 {
		return
	}
	p.wg.Add(1)
	go p.warmer()
}

// kickWarmerLocked wakes the warmer (a claim, a death or a close changed
// the warm set). It never blocks, so it may be called under p.mu.
func (p *Pool) kickWarmerLocked() {
	select {
	case p.warm.kick <- struct{}{}:
	default:
	}
}

// claimWarmLocked hands out the oldest warm browser that is still alive:
// it becomes a live session (in Pool.sessions, under idle reclaim, counted
// by the policy layers from now on). It returns nil when none is ready.
// p.mu must be held and the pool open. It takes Session.mu, below Pool.mu
// in the lock order, and does nothing slow.
func (p *Pool) claimWarmLocked() *Session {
	for len(p.warm.ready) > 0 {
		s := p.warm.ready[0]
		p.warm.ready = slices.Delete(p.warm.ready, 0, 1)
		p.kickWarmerLocked()
		if !s.warmAlive() {
			continue // its watch closes it (reason crashed)
		}
		s.Touch()
		p.sessions[s.id] = s
		p.stats.WarmClaims++
		p.startReaperLocked()
		return s
	}
	return nil
}

// warmAlive reports whether a warm session can be handed out: still live,
// its browser running and its connection up. It takes Session.mu (a leaf
// lock).
func (s *Session) warmAlive() bool {
	select {
	case <-s.b.Exited():
		return false
	case <-s.mux.Done():
		return false
	default:
	}
	return s.closeReason() == ""
}

// dropWarmLocked forgets s as a warm browser (it is closing) and wakes the
// warmer to replace it. p.mu must be held.
func (p *Pool) dropWarmLocked(s *Session) {
	if i := slices.Index(p.warm.ready, s); i >= 0 {
		p.warm.ready = slices.Delete(p.warm.ready, i, i+1)
		p.kickWarmerLocked()
	}
}

// warmIDsLocked adds the ids of warm browsers, ready or starting, to live.
// p.mu must be held.
func (p *Pool) warmIDsLocked(live map[string]bool) {
	for _, s := range p.warm.ready {
		live[s.id] = true
	}
	for id := range p.warm.starting {
		live[id] = true
	}
}

// warmer keeps Config.Warm browsers ready until the pool closes: it
// launches one at a time (a refill never competes with itself for the
// machine), closes those older than WarmMaxAge, and backs off after a
// failed launch. It is joined by Pool.Close through p.wg.
func (p *Pool) warmer() {
	defer p.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var retryAt time.Time // no launch before this, after a failure
	backoff := time.Duration(0)
	for {
		now := time.Now()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		expired := p.takeExpiredLocked(now)
		lead := p.renewLeadLocked()
		// A browser about to expire is replaced before it goes, so a
		// claim meanwhile never waits for a cold launch.
		fresh, renewAt := p.freshLocked(now, lead)
		need := p.cfg.Warm - fresh - len(p.warm.starting)
		next := p.nextExpiryLocked()
		if !renewAt.IsZero() && (next.IsZero() || renewAt.Before(next)) {
			next = renewAt
		}
		p.mu.Unlock()

		for _, s := range expired {
			p.closeSession(s, ReasonWarmExpired, nil)
		}
		if len(expired) > 0 {
			continue // recount: closing took time
		}
		if need > 0 && !now.Before(retryAt) {
			if err := p.launchWarm(); err != nil {
				backoff = min(max(2*backoff, warmRetryMin), warmRetryMax)
				retryAt = time.Now().Add(backoff)
				p.log.Warn("browserpool: a warm browser did not start; retrying later", "retry_in", backoff, "err", err)
			} else {
				backoff, retryAt = 0, time.Time{}
			}
			continue
		}
		wake := next
		if need > 0 && (wake.IsZero() || retryAt.Before(wake)) {
			wake = retryAt
		}
		timer.Stop()
		if !wake.IsZero() {
			timer.Reset(time.Until(wake))
		}
		select {
		case <-p.ctx.Done():
			return
		case <-p.warm.kick:
		case <-timer.C:
		}
	}
}

// takeExpiredLocked removes and returns the warm browsers older than
// WarmMaxAge at now. p.mu must be held.
func (p *Pool) takeExpiredLocked(now time.Time) []*Session {
	if p.cfg.WarmMaxAge < 0 {
		return nil
	}
	var out []*Session
	p.warm.ready = slices.DeleteFunc(p.warm.ready, func(s *Session) bool {
		old := now.Sub(s.created) >= p.cfg.WarmMaxAge
		if old {
			out = append(out, s)
		}
		return old
	})
	return out
}

// renewLeadLocked is how long before a warm browser expires its
// replacement starts: twice the last warm launch, at least a second, at
// most half of WarmMaxAge. p.mu must be held.
func (p *Pool) renewLeadLocked() time.Duration {
	if p.cfg.WarmMaxAge < 0 {
		return 0
	}
	return min(max(2*p.warm.lastLaunch, time.Second), p.cfg.WarmMaxAge/2)
}

// freshLocked counts the warm browsers ready at now that do not expire
// within lead, and returns when the first of them enters that window (zero
// when none will). p.mu must be held.
func (p *Pool) freshLocked(now time.Time, lead time.Duration) (n int, renewAt time.Time) {
	if p.cfg.WarmMaxAge < 0 {
		return len(p.warm.ready), time.Time{}
	}
	for _, s := range p.warm.ready {
		at := s.created.Add(p.cfg.WarmMaxAge - lead)
		if !now.Before(at) {
			continue
		}
		n++
		if renewAt.IsZero() || at.Before(renewAt) {
			renewAt = at
		}
	}
	return n, renewAt
}

// nextExpiryLocked returns when the oldest warm browser expires, or zero
// when none will. p.mu must be held.
func (p *Pool) nextExpiryLocked() time.Time {
	if p.cfg.WarmMaxAge < 0 || len(p.warm.ready) == 0 {
		return time.Time{}
	}
	oldest := p.warm.ready[0].created
	for _, s := range p.warm.ready[1:] {
		if s.created.Before(oldest) {
			oldest = s.created
		}
	}
	return oldest.Add(p.cfg.WarmMaxAge)
}

// launchWarm launches one warm browser on the pool's context, bounded by
// LaunchTimeout, and adds it to the warm set; a browser that finishes
// starting after Pool.Close began is closed (reason shutdown).
func (p *Pool) launchWarm() error {
	id := newSessionID()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.warm.starting[id] = true
	p.stats.Launches++
	p.mu.Unlock()

	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.LaunchTimeout)
	s, err := p.launch(ctx, id, nil) // warm browsers never hold a named profile
	cancel()

	p.mu.Lock()
	delete(p.warm.starting, id)
	closed := p.closed
	if err != nil {
		p.stats.LaunchFailures++
	} else if !closed {
		p.warm.ready = append(p.warm.ready, s)
		p.warm.lastLaunch = time.Since(start)
	}
	p.mu.Unlock()

	if err != nil {
		if closed {
			return nil // Pool.Close ended the launch
		}
		p.events.emit(p.hook(func(h Hooks) {
			if h.LaunchFailed != nil {
				h.LaunchFailed(LaunchFailedEvent{Time: time.Now(), SessionID: id, Err: err})
			}
		}))
		return err
	}
	p.emitCreated(s, time.Since(start))
	if closed {
		p.closeSession(s, ReasonShutdown, nil)
		return nil
	}
	p.wg.Add(1)
	p.watch(s)
	return nil
}
