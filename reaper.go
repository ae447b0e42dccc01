// Room: the reaper. Idle reclaim and retries of profile dirs a close could
// not remove (the orphan sweep at NewPool is in sweep.go). It takes Pool.mu
// only to copy tables; closes run unlocked.

package browserpool

import (
	"time"
)

// reaperPeriod is how often the reaper looks for idle sessions: a tenth of
// the idle timeout, between 10 ms and 30 s. A session is therefore closed
// between IdleTimeout and IdleTimeout + reaperPeriod after its last call
// ended (the documented lag).
func reaperPeriod(idle time.Duration) time.Duration {
	return min(max(idle/10, 10*time.Millisecond), 30*time.Second)
}

// startReaper starts the idle reaper once, when the first session goes live.
func (p *Pool) startReaperLocked() {
	if p.reaperOn || p.cfg.IdleTimeout < 0 {
		return
	}
	p.reaperOn = true
	p.wg.Add(1)
	go p.reap()
}

func (p *Pool) reap() {
	defer p.wg.Done()
	tick := time.NewTicker(reaperPeriod(p.cfg.IdleTimeout))
	defer tick.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-tick.C:
			p.reclaimIdle(now)
			p.retryPendingRemovals()
		}
	}
}

// reclaimIdle closes every session with no call in flight whose last call
// ended IdleTimeout or more before now. Calls in flight keep a session
// alive however long they take; page events never touch it.
func (p *Pool) reclaimIdle(now time.Time) {
	var idle []*Session
	for _, s := range p.Sessions() {
		last, busy := s.idleSince()
		if !busy && now.Sub(last) >= p.cfg.IdleTimeout {
			idle = append(idle, s)
		}
	}
	for _, s := range idle {
		// Re-check: a call may have started since.
		if last, busy := s.idleSince(); busy || now.Sub(last) < p.cfg.IdleTimeout {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.closeSession(s, ReasonIdle, nil)
		}()
	}
}
