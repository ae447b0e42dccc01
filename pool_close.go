// Room: the one close path (P8) and the retries of what a close left
// behind. Guarded by Pool.mu (see browser.go); the browser is stopped and
// its dir removed with no lock held.

package browserpool

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"
)

// CloseSession closes the live session with the given id (reason
// explicit). See Session.Close.
func (p *Pool) CloseSession(ctx context.Context, id string) error {
	p.mu.Lock()
	if p.closed {
		// Its sessions are closed or closing with it: nothing to name.
		p.mu.Unlock()
		return newError("Pool.CloseSession", ErrPoolClosed, "")
	}
	s, err := p.lookupLocked("Pool.CloseSession", id)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return s.closeWith(ctx, ReasonExplicit)
}

// closeSession is the one close path (P8): remove from the tables first,
// stop the browser (bounded graceful close, kill of the process group,
// reap, wait for every process), delete the profile dir, drop the manifest
// entry, then emit exactly one SessionClosed event. Concurrent calls for one
// session run it once; the others wait for it. It runs on the pool's
// context, bounded by CloseTimeout, whatever the caller's context.
//
// It returns what the close left behind: an error if the browser could not be
// stopped or its profile dir removed (the dir is retried by the reaper and
// counted in Stats.ProfileDirsPendingDelete). Callers that joined a close
// already under way get that close's error.
func (p *Pool) closeSession(s *Session, reason CloseReason, cause error) error {
	_, err := p.closeSessionUnless(s, reason, cause, nil)
	return err
}

// closeSessionUnless is closeSession unless keep (see Session.beginClose)
// says, as the close begins, that a call keeps the session: then nothing
// is closed and kept is true.
func (p *Pool) closeSessionUnless(s *Session, reason CloseReason, cause error, keep func() bool) (kept bool, _ error) {
	began, kept := s.beginClose(reason, cause, keep)
	if kept {
		return true, nil
	}
	if !began {
		<-s.done
		return false, s.closeErr
	}
	return false, p.closeBegun(s, reason, cause)
}

// closeBegun is the rest of the close path for a session its caller moved
// to closing (Session.beginClose returned began): no other close runs it.
func (p *Pool) closeBegun(s *Session, reason CloseReason, cause error) error {
	p.mu.Lock()
	if p.sessions[s.id] == s {
		delete(p.sessions, s.id)
	}
	if p.attached[s.id] == s {
		delete(p.attached, s.id)
	}
	p.dropWarmLocked(s)
	p.closing[s] = true
	p.mu.Unlock()

	// For a browser we did not launch, Stop only disconnects: it is never
	// killed and its profile is never touched.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), p.cfg.CloseTimeout)
	stopErr := s.b.Stop(ctx)
	cancel()
	s.mux.Close()
	s.stopRecording()   // after the mux: a frame being taken fails at once
	s.profile.release() // the browser is stopped: the next holder may start
	var rmErr error
	dir := s.info.Dir
	if s.ours {
		if dir == "" {
			dir = filepath.Join(p.cfg.Root, "sessions", s.id)
		}
		rmErr = removeDir(dir)
	} else {
		stopErr = nil // a failed disconnect leaves nothing of ours behind
	}

	p.mu.Lock()
	p.stats.Closes[reason]++
	if stopErr != nil || rmErr != nil {
		p.stats.CloseFailures++
	}
	if rmErr != nil {
		p.pendingRm[dir] = time.Now()
	}
	if stopErr != nil {
		p.leaked[s] = true
	}
	if stopErr != nil || rmErr != nil {
		p.retryLaterLocked()
	}
	p.mu.Unlock()
	if s.ours && rmErr == nil && stopErr == nil {
		p.manifest.Remove(s.id)
	}
	if stopErr != nil || rmErr != nil {
		p.log.Warn("browserpool: session close left something behind; it is retried by the reaper", "session", s.id, "stop", stopErr, "remove", rmErr)
		e := newError("Session.Close", ErrCloseFailed, "")
		e.Session, e.Err = s.id, errors.Join(stopErr, rmErr)
		s.closeErr = e
	}
	// The event is queued before the close is done: Pool.Close, which
	// waits for every close under way (closing), then stops the queue.
	ev := SessionEvent{Time: time.Now(), SessionID: s.id, PID: s.info.PID, Reason: reason, Err: cause, Duration: time.Since(s.created)}
	p.events.emit(p.hook(func(h Hooks) {
		if h.SessionClosed != nil {
			h.SessionClosed(ev)
		}
	}))
	s.finishClose()
	p.mu.Lock()
	delete(p.closing, s)
	p.mu.Unlock()
	return s.closeErr
}

// Close closes every session and warm browser (reason shutdown), waits for
// launches under way to end (they are closed too), runs queued hooks and stops every
// goroutine the pool started. It is idempotent: a later or concurrent call
// waits until the first has closed every browser (not for its hooks: a
// hook may call Close), then returns nil.
// Sessions close in parallel. It returns an ErrCloseFailed naming the
// browsers (session, pid) it could not stop and the profile dirs it could not
// remove, or nil when nothing is left behind.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		done := p.closeDone
		p.mu.Unlock()
		<-done
		return nil
	}
	p.closed = true
	p.closeDone = make(chan struct{})
	close(p.shut)
	if p.reaper != nil {
		p.reaper.Stop() // a tick under way finishes; p.wg.Wait waits for it
	}
	live := make([]*Session, 0, len(p.sessions)+len(p.attached))
	for _, s := range p.sessions {
		live = append(live, s)
	}
	for _, s := range p.attached {
		live = append(live, s)
	}
	live = append(live, p.warm.ready...)
	p.warm.ready = nil
	for s := range p.closing {
		live = append(live, s) // closed by another caller: waited for
	}
	p.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.closeSession(s, ReasonShutdown, nil)
		}()
	}
	wg.Wait()
	p.cancel() // ends launches under way
	p.wg.Wait()
	if w, ok := p.launcher.(CleanupWaiter); ok {
		w.WaitCleanups() // e.g. a fleet's leases given up on, ended (bounded)
	}
	p.net.close()       // the network policy's proxy: no browser uses it any more
	p.cdp.conns.Close() // ends its handshakes and closes its parked connections
	p.retryPendingRemovals()
	p.finished.Store(true)
	close(p.closeDone) // before the hooks: a hook may call Close
	p.events.close(p.cfg.CloseTimeout)
	return p.leftBehind()
}

// isShut reports whether Close has begun. It takes no lock: Session.Err,
// a leaf under other locks, asks it.
func (p *Pool) isShut() bool {
	select {
	case <-p.shut:
		return true
	default:
		return false
	}
}

// retryClose tries again to clean up a closed session whose close left
// something behind: stop its browser (bounded by CloseTimeout), remove its
// dir, and drop its manifest entry. It returns nil once nothing is left.
func (p *Pool) retryClose(s *Session) error {
	p.mu.Lock()
	leaked := p.leaked[s]
	p.mu.Unlock()
	if leaked {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), p.cfg.CloseTimeout)
		err := s.b.Stop(ctx)
		cancel()
		if err != nil {
			return err
		}
		p.mu.Lock()
		delete(p.leaked, s)
		p.mu.Unlock()
	}
	if !s.ours {
		return nil
	}
	dir := s.info.Dir
	if dir == "" {
		dir = filepath.Join(p.cfg.Root, "sessions", s.id)
	}
	if err := removeDir(dir); err != nil {
		return err
	}
	p.mu.Lock()
	delete(p.pendingRm, dir)
	p.mu.Unlock()
	return p.manifest.Remove(s.id)
}

// retryPendingRemovals tries again to stop browsers (strays of failed
// launches too) and remove profile dirs a close could not.
func (p *Pool) retryPendingRemovals() {
	p.retryStrays()
	p.mu.Lock()
	leaked := make([]*Session, 0, len(p.leaked))
	for s := range p.leaked {
		leaked = append(leaked, s)
	}
	p.mu.Unlock()
	for _, s := range leaked {
		p.retryClose(s)
	}
	p.mu.Lock()
	dirs := make([]string, 0, len(p.pendingRm))
	for d := range p.pendingRm {
		dirs = append(dirs, d)
	}
	p.mu.Unlock()
	for _, d := range dirs {
		if removeDir(d) == nil {
			p.mu.Lock()
			delete(p.pendingRm, d)
			p.mu.Unlock()
			p.manifest.RemoveDir(d)
		}
	}
}
