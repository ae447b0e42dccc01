// Room: the reaper. Idle reclaim, what closes left behind (retried by the
// reaper, reported by Pool.Close) and Pool.Orphans; the orphan sweep at
// NewPool is in sweep.go. It takes Pool.mu only to copy tables; closes and
// /proc reads run unlocked.

package browserpool

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// reaperPeriod is how often the reaper looks for idle sessions: a tenth of
// the idle timeout, between 10 ms and 30 s. A session is therefore closed
// between IdleTimeout and IdleTimeout + reaperPeriod after its last call
// ended (the documented lag).
func reaperPeriod(idle time.Duration) time.Duration {
	return min(max(idle/10, 10*time.Millisecond), 30*time.Second)
}

// leftBehindRetry is how often a pool whose idle reclaim is off
// (IdleTimeout < 0) tries again what a close or a failed launch left
// behind; with reclaim on, the reaper does it at each look.
const leftBehindRetry = 5 * time.Second

// reapEvery is the time between two looks of the reaper.
func (p *Pool) reapEvery() time.Duration {
	if p.cfg.IdleTimeout < 0 {
		return leftBehindRetry
	}
	return reaperPeriod(p.cfg.IdleTimeout)
}

// startReaperLocked starts the idle reaper once, when the first session
// goes live, unless idle reclaim is off. The reaper is a timer, not a
// goroutine: each tick runs on the timer's own goroutine and arms the next
// while the pool is open.
func (p *Pool) startReaperLocked() {
	if p.cfg.IdleTimeout >= 0 {
		p.retryLaterLocked()
	}
}

// retryLaterLocked makes sure the reaper runs, so that what a close or a
// failed launch just left behind is tried again: with idle reclaim off,
// or before any session went live (a failed launch), nothing else starts
// it.
func (p *Pool) retryLaterLocked() {
	if p.reaper != nil || p.closed {
		return
	}
	p.reaper = time.AfterFunc(p.reapEvery(), p.reapTick)
}

// reapTick is one look of the reaper. Once the pool is closed it does
// nothing and arms no further tick; Pool.Close waits for one under way.
// With idle reclaim off, it stops once nothing is left to retry (the next
// thing left behind starts it again).
func (p *Pool) reapTick() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	if p.cfg.IdleTimeout >= 0 {
		p.reclaimIdle(time.Now())
	}
	p.retryPendingRemovals()
	p.mu.Lock()
	switch {
	case p.closed:
	case p.cfg.IdleTimeout < 0 && len(p.leaked) == 0 && len(p.pendingRm) == 0 && len(p.strays) == 0:
		p.reaper = nil
	default:
		p.reaper.Reset(p.reapEvery())
	}
	p.mu.Unlock()
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
		// Checked again as the close begins, under the session's lock: a
		// call that began since keeps it (Session.beginClose).
		keep := func() bool {
			last, busy := s.idleSince()
			return busy || now.Sub(last) < p.cfg.IdleTimeout
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.closeSessionUnless(s, ReasonIdle, nil, keep)
		}()
	}
}

// leftBehind returns nil when the pool left nothing behind, else an
// ErrCloseFailed naming the browsers it could not stop (session and pid) and
// the profile dirs it could not remove, as database/sql's DB.Close returns
// the first close error.
func (p *Pool) leftBehind() error {
	p.mu.Lock()
	var what []string
	var errs []error
	leases := 0
	for s := range p.leaked {
		w := "the browser of session " + s.id
		if s.info.PID > 0 {
			w += fmt.Sprintf(" (pid %d)", s.info.PID)
		}
		if s.info.Fleet != "" {
			w = fmt.Sprintf("the %s lease of session %s at %s (not confirmed ended)", s.info.Fleet, s.id, s.info.Endpoint)
			leases++
		}
		what = append(what, w+" could not be stopped")
		if s.closeErr != nil {
			// The cause alone: the close's own hint (the pool retries)
			// no longer holds once the pool is closed.
			cause := s.closeErr
			if e, ok := cause.(*Error); ok && e.Err != nil {
				cause = e.Err
			}
			errs = append(errs, fmt.Errorf("session %s: %w", s.id, cause))
		}
	}
	for id, st := range p.strays {
		w := "the browser of the failed launch of session " + id
		if st.info.PID > 0 {
			w += fmt.Sprintf(" (pid %d)", st.info.PID)
		}
		if st.info.Fleet != "" {
			w = fmt.Sprintf("the %s lease of the failed launch of session %s at %s (not confirmed ended)", st.info.Fleet, id, st.info.Endpoint)
			leases++
		}
		what = append(what, w+" could not be stopped")
		errs = append(errs, fmt.Errorf("session %s: %w", id, st.err))
	}
	for d := range p.pendingRm {
		what = append(what, "profile dir "+d+" could not be removed")
	}
	p.mu.Unlock()
	if len(what) == 0 {
		return nil
	}
	slices.Sort(what)
	e := newError("Pool.Close", ErrCloseFailed, "left behind: "+strings.Join(what, "; "))
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if len(errs) > 0 {
		e.Err = causes(errs)
	}
	e.Hint = "the pool is closed and retries nothing: end those processes and remove those dirs by hand, or let the next NewPool on the same Root sweep them"
	if leases > 0 {
		e.Hint = "the pool is closed and retries nothing: check the fleet (a restarted or unreachable server may have ended its leases already, or may still run their browsers), end what is left there, or let the next NewPool on the same Root with the same fleet launcher end the leases it recorded"
	}
	return e
}

// causes joins errors on one line ("; "), unlike errors.Join's lines: an
// error's text reads as one message.
type causes []error

func (c causes) Error() string {
	parts := make([]string, len(c))
	for i, err := range c {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (c causes) Unwrap() []error { return c }

// Orphan is a browser process or manifest entry under the pool's root that
// is not a live session of this pool.
type Orphan struct {
	Session string // from the manifest entry or the process's command line
	PID     int    // the browser's pid, as recorded or found running; 0 for a remote lease
	Dir     string // its session dir under the root
	Owner   int    // pid of the pool that recorded it, if known
	// Alive says whether its owner still runs: another live process, or a
	// pool of this process whose Close has not finished (another pool's, or
	// this pool's own leftover that it still retries). What a closed pool of
	// this process left is not alive: the next NewPool on the root sweeps it.
	Alive bool
	// Fleet, Endpoint and LeaseID describe a remote lease (see SpawnInfo);
	// empty for a local browser. A remote orphan has no PID.
	Fleet    string // the fleet kind ("browserless", "selenium-grid")
	Endpoint string // the fleet's URL, without credentials or token
	LeaseID  string // the fleet's id for the lease
}

// Orphans lists manifest entries and browser processes under the pool's
// root that are not live sessions of this pool: other pools' sessions
// (Alive set) and leftovers a later sweep would look at.
func (p *Pool) Orphans() ([]Orphan, error) {
	entries, err := p.manifest.Entries()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	live := make(map[string]bool, len(p.sessions))
	for id := range p.sessions {
		live[id] = true
	}
	for op := range p.launches {
		live[op.id] = true
	}
	p.warmIDsLocked(live)
	p.mu.Unlock()
	// The sweep's own test of an owner (sweeper.ownerLive): a pool of this
	// process is alive until its Close has finished.
	sw := &sweeper{self: os.Getpid(), selfSt: p.manifest.Owner().OwnerStart}
	sw.boot, _ = proc.BootID()
	var out []Orphan
	named := map[string]bool{}
	for _, e := range entries {
		named[e.Session] = true
		if live[e.Session] && e.OwnerPID == os.Getpid() {
			continue
		}
		out = append(out, Orphan{Session: e.Session, PID: e.PID, Dir: e.Dir, Owner: e.OwnerPID,
			Alive: sw.ownerLive(e),
			Fleet: e.Fleet, Endpoint: e.Endpoint, LeaseID: e.LeaseID})
	}
	prefix := filepath.Join(p.cfg.Root, "sessions") + string(filepath.Separator)
	procs, _ := proc.List(func(i proc.Info) bool { return namesPath(i.Cmdline, prefix) })
	for _, pi := range procs {
		id := sessionNamed(pi.Cmdline, prefix)
		if id == "" || named[id] || live[id] {
			continue
		}
		named[id] = true
		out = append(out, Orphan{Session: id, PID: pi.PID, Dir: prefix + id})
	}
	return out, nil
}
