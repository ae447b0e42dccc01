// Room: the pool's launches: one launch under way per Pool.Open (joined by
// empty-id resolvers), handed on or closed if its caller leaves, and the
// watch that reclaims a session whose browser ended. Guarded by Pool.mu
// (see browser.go); nothing slow is called with it held.

package browserpool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/stackroom"
)

// launchOp is one launch under way. Its fields after done are set before
// done is closed; waiters and finished are guarded by Pool.mu.
type launchOp struct {
	id       string
	done     chan struct{}
	s        *Session
	err      error
	waiters  int          // guarded by Pool.mu
	finished bool         // guarded by Pool.mu
	profile  *profileHold // the named profile to launch on (profile.go), nil for a fresh one; set before the launch starts
}

// startLaunch claims a warm browser if one is ready (returned as s), or
// starts a launch.
func (p *Pool) startLaunch(joinable bool) (_ *launchOp, s *Session, _ error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, newError("Pool.Open", ErrPoolClosed, "")
	}
	if s := p.claimWarmLocked(); s != nil {
		return nil, s, nil
	}
	return p.startLaunchLocked(joinable), nil, nil
}

// startLaunchLocked starts a launch with one waiter. p.mu must be held and
// the pool open.
func (p *Pool) startLaunchLocked(joinable bool) *launchOp {
	return p.startOpLocked(&launchOp{id: newSessionID()}, joinable)
}

// startProfileLaunch starts a launch on the held profile h.
func (p *Pool) startProfileLaunch(h *profileHold) (*launchOp, error) {
	op := &launchOp{id: newSessionID(), profile: h}
	h.record(op.id)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, newError("Pool.OpenProfile", ErrPoolClosed, "")
	}
	return p.startOpLocked(op, false), nil
}

func (p *Pool) startOpLocked(op *launchOp, joinable bool) *launchOp {
	op.done, op.waiters = make(chan struct{}), 1
	p.launches[op] = true
	if joinable {
		p.joinable = op
	}
	p.stats.Launches++
	p.wg.Add(1)
	go p.runLaunch(op)
	return op
}

// await waits for op on behalf of one caller.
func (p *Pool) await(ctx context.Context, opName string, op *launchOp) (*Session, error) {
	select {
	case <-op.done:
		return op.s, op.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	if op.finished {
		p.mu.Unlock()
		<-op.done
		return op.s, op.err
	}
	op.waiters--
	p.mu.Unlock()
	e := newError(opName, ctx.Err(), "gave up waiting for the browser to start; the launch goes on and its browser is closed if nobody claims it")
	if e.Err = context.Cause(ctx); e.Err == ctx.Err() {
		e.Err = nil // the class says it
	}
	e.Hint = "retry with a longer deadline; a cold browser start takes about half a second, more on a loaded machine"
	if le, ok := p.launcher.(LeaseEnder); ok {
		kind, endpoint := le.LeaseFleet()
		e.Hint = fmt.Sprintf("retry with a longer deadline: the %s fleet at %s has given no browser yet (it may be full and have queued the request, or be slow to answer)", kind, endpoint)
	}
	return nil, e
}

func newSessionID() string {
	var b [6]byte
	rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

func (p *Pool) runLaunch(op *launchOp) {
	// The launch's deepest calls (os/exec, the manifest's JSON, the
	// proxy's listener) take the stack to 16 KiB: grow it now, while a
	// copy walks one frame (stackroom).
	stackroom.To16K()
	defer p.wg.Done()
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.LaunchTimeout)
	s, err := p.launch(ctx, op.id, op.profile)
	cancel()
	if err != nil {
		op.profile.discard()
	}

	p.mu.Lock()
	delete(p.launches, op)
	if p.joinable == op {
		p.joinable = nil
	}
	op.finished = true
	abandoned := op.waiters <= 0
	closed := p.closed
	if err == nil && !abandoned && !closed {
		p.sessions[s.id] = s
		p.startReaperLocked()
	}
	if err != nil {
		p.stats.LaunchFailures++
	}
	p.mu.Unlock()

	switch {
	case err != nil:
		if closed {
			// Close cut the launch short: say so, and only that. What
			// the launch itself saw follows from the cancellation (a
			// cancelled start looks like a failed one, with the
			// browser's stderr).
			e := newError("Pool.Open", ErrPoolClosed, "the pool was closed while the browser started")
			e.Session = op.id
			err = e
		}
		op.err = err
		p.events.emit(p.hook(func(h Hooks) {
			if h.LaunchFailed != nil {
				h.LaunchFailed(LaunchFailedEvent{Time: time.Now(), SessionID: op.id, Err: err})
			}
		}))
	case abandoned || closed:
		reason := ReasonAbandoned
		if closed {
			reason = ReasonShutdown
			op.err = newError("Pool.Open", ErrPoolClosed, "the pool was closed while the browser started")
		} else {
			op.err = newError("Pool.Open", ErrSessionClosed, "launched for a caller who left")
		}
		p.emitCreated(s, time.Since(start))
		p.closeSession(s, reason, nil)
	default:
		op.s = s
		p.emitCreated(s, time.Since(start))
		p.wg.Add(1)
		p.watch(s)
	}
	close(op.done)
}

// hook returns the event's call of f on the pool's hooks, for
// eventQueue.emit; nil when no hook is set.
func (p *Pool) hook(f func(Hooks)) func() {
	h := p.cfg.Hooks
	if h.none() {
		return nil // nothing to run: no goroutine (eventQueue.emit)
	}
	return func() { f(h) }
}

func (p *Pool) emitCreated(s *Session, d time.Duration) {
	ev := SessionEvent{Time: time.Now(), SessionID: s.id, PID: s.info.PID, Duration: d}
	p.events.emit(p.hook(func(h Hooks) {
		if h.SessionCreated != nil {
			h.SessionCreated(ev)
		}
	}))
}

// startNet starts the policy proxy, once, before the first local launch.
func (p *Pool) startNet() error {
	p.netOnce.Do(func() {
		if p.netLocal {
			p.netErr = p.startNetPolicy()
		}
	})
	return p.netErr
}

// launch starts one browser and builds its session. On error nothing is
// left running and the session dir is removed.
func (p *Pool) launch(ctx context.Context, id string, profile *profileHold) (*Session, error) {
	dir := filepath.Join(p.cfg.Root, "sessions", id)
	if err := p.startNet(); err != nil {
		return nil, err
	}
	if err := p.manifest.Reserve(id, dir); err != nil {
		e := newError("Pool.Open", ErrLaunchFailed, "cannot record the launch in the manifest")
		e.Session, e.Err = id, err
		e.Hint = "check that Config.Root is writable and not full"
		return nil, e
	}
	var spawned atomic.Pointer[SpawnInfo] // what OnSpawn recorded
	spec := LaunchSpec{
		SessionID:    id,
		Dir:          dir,
		Profile:      profile.userData(),
		NetworkProxy: p.net.proxyAddr(),
		OnSpawn: func(info SpawnInfo) error {
			if err := p.manifest.Add(entryFor(id, info)); err != nil {
				return err
			}
			spawned.Store(&info)
			return nil
		},
	}
	b, err := p.launcher.Launch(ctx, spec)
	if err != nil {
		var held *leaseHeld
		if info := spawned.Load(); info != nil && errors.As(err, &held) {
			// The fleet may still hold what the launcher recorded: its
			// entry stays, and the pool tries to end it again.
			p.keepStray(id, *info, held.end, held.err)
			err = held.err
		} else {
			p.manifest.Remove(id)
		}
		os.RemoveAll(dir)
		if errors.As(err, new(*Error)) {
			return nil, err
		}
		e := newError("Pool.Open", ErrLaunchFailed, "")
		e.Session, e.Err = id, err
		if ctx.Err() != nil && p.ctx.Err() == nil {
			e.Class, e.Detail = ErrTimeout, fmt.Sprintf("the browser was not ready within LaunchTimeout (%v)", p.cfg.LaunchTimeout)
			e.Hint = "raise Config.LaunchTimeout on a loaded machine, or check that the browser starts by hand"
		}
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			e.Hint = outOfFilesHint
		}
		if errors.Is(err, syscall.ENOSPC) {
			// The browser never becomes ready on a full disk: waiting
			// longer would not help, whatever ended the wait.
			e.Class, e.Detail = ErrLaunchFailed, ""
			e.Hint = fmt.Sprintf("free space on the file system of Config.Root (%s), or point Root at a disk with room", p.cfg.Root)
		}
		if errors.Is(err, syscall.ENAMETOOLONG) {
			e.Hint = "shorten Config.Root or TMPDIR as the error says: Chromium's singleton socket path must fit in 107 bytes"
		}
		return nil, e
	}
	info := b.Info()
	if info.Dir != "" && info.Dir != dir {
		// A launcher may keep its own dir; the manifest records what it gave.
		dir = info.Dir
	}
	mux, err := browserMux(b)
	if err != nil {
		p.stopFailedLaunch(ctx, id, b)
		e := newError("Pool.Open", ErrLaunchFailed, "")
		e.Session, e.Err = id, err
		return nil, e
	}
	p.manifest.Update(entryFor(id, info))
	s := newSession(p, id, b, mux, info)
	p.startConfiguredRecording(ctx, s)
	s.profile = profile
	// Downloads land in the session's output dir from the start, never in
	// the browser's default dir.
	if err := s.ensureDownloads(ctx); err != nil {
		p.log.Warn("browserpool: cannot route downloads; they are routed on first use", "session", id, "err", err)
	}
	// Never hand out a browser that is already gone: one that exited (or
	// dropped its connection) while it started is a failed launch.
	if exited := chanClosed(b.Exited()); exited || chanClosed(mux.Done()) {
		gone := mux.Err()
		if exited {
			gone = b.ExitErr()
		}
		mux.Close()
		p.stopFailedLaunch(ctx, id, b)
		os.RemoveAll(filepath.Join(p.cfg.Root, "sessions", id))
		e := newError("Pool.Open", ErrLaunchFailed, "the browser exited as it started")
		e.Session, e.Err = id, gone
		return nil, e
	}
	return s, nil
}

// stopFailedLaunch stops the browser of session id's launch, which failed
// after the launcher returned it, bounded by CloseTimeout as every close
// is: the launch's own deadline may be spent, and a fleet's release
// confirmation (Browserless polls its session list) would otherwise wait
// for ever on a server that keeps failing, holding up Open and Pool.Close
// with it. Its manifest entry goes once it is stopped; one that could not
// be stopped is kept as a stray, retried.
func (p *Pool) stopFailedLaunch(ctx context.Context, id string, b LaunchedBrowser) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.CloseTimeout)
	err := b.Stop(sctx)
	cancel()
	if err != nil {
		p.keepStray(id, b.Info(), b.Stop, err)
		return
	}
	p.manifest.Remove(id)
}

// stray is the browser or fleet lease of a launch that failed and could
// not be ended: its manifest entry stays, so that the next NewPool on the
// Root ends it should this process die first; the reaper and Pool.Close
// try end again, and Pool.Close names what is still left.
type stray struct {
	info SpawnInfo
	end  func(ctx context.Context) error // stops the browser, or ends the lease
	err  error                           // why the last try failed
}

// keepStray records session id's failed launch as a stray (see stray).
func (p *Pool) keepStray(id string, info SpawnInfo, end func(ctx context.Context) error, err error) {
	p.log.Warn("browserpool: a failed launch left its browser or lease behind; it is retried", "session", id, "fleet", info.Fleet, "pid", info.PID, "err", err)
	p.mu.Lock()
	p.strays[id] = stray{info: info, end: end, err: err}
	p.retryLaterLocked()
	p.mu.Unlock()
}

// retryStrays tries once more to end each stray, each bounded by
// CloseTimeout, and drops the manifest entries of those it ended.
func (p *Pool) retryStrays() {
	p.mu.Lock()
	ids := make([]string, 0, len(p.strays))
	for id := range p.strays {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		p.mu.Lock()
		st, ok := p.strays[id]
		p.mu.Unlock()
		if !ok {
			continue
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), p.cfg.CloseTimeout)
		err := st.end(ctx)
		cancel()
		p.mu.Lock()
		if err != nil {
			st.err = err
			p.strays[id] = st
		} else {
			delete(p.strays, id)
		}
		p.mu.Unlock()
		if err == nil {
			p.manifest.Remove(id)
		}
	}
}

// outOfFilesHint is the hint of a launch that failed for want of file
// descriptors (EMFILE, ENFILE): no browser output explains it.
const outOfFilesHint = "this process (or the system) has run out of file descriptors; each local browser holds about seven of them: close the sessions you no longer need, or raise the limit (ulimit -n, RLIMIT_NOFILE), then retry"

// chanClosed reports whether c is closed.
func chanClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// watch reclaims s the moment its browser exits or its connection drops
// (R2: a process wait, not polling). The caller has added s to p.wg; the
// watch releases it once s is closed. For the pool's own launchers the end
// of the browser ends its connection (a local browser's exit closes the
// pipe, only the browser holds it; an attached or leased browser is its
// socket), so the watch is a callback on the mux's end and holds no
// goroutine; a browser from another Launcher may report its exit without
// its transport ending, and keeps one goroutine waiting on both.
func (p *Pool) watch(s *Session) {
	reclaim := func() {
		defer p.wg.Done()
		cause := s.mux.Err()
		if exit := s.b.ExitErr(); exit != nil {
			cause = exit
		}
		p.closeSession(s, ReasonCrashed, cause)
	}
	if _, ok := s.b.(exitEndsConn); ok || s.b.Exited() == nil {
		// The close path closes the mux too, so the callback always runs;
		// for a session already closing it only waits for that close.
		s.mux.AfterEnd(reclaim)
		return
	}
	go func() {
		select {
		case <-s.b.Exited():
			defer p.wg.Done()
			p.closeSession(s, ReasonCrashed, s.b.ExitErr())
		case <-s.mux.Done():
			reclaim()
		case <-s.done:
			p.wg.Done()
		}
	}()
}

// exitEndsConn marks the pool's own LaunchedBrowsers, whose end always
// ends their transport (see Pool.watch).
type exitEndsConn interface{ exitEndsConn() }

// browserMux builds the pool's connection to a launched browser on its
// Transport: the one seam every browser goes through, local, attached or a
// third party's. A read error's cause is the browser's exit, if it exits
// within two seconds.
func browserMux(b LaunchedBrowser) (*cdpmux.Mux, error) {
	t := b.Transport()
	if t == nil {
		return nil, errors.New("launcher returned no transport")
	}
	pid := b.Info().PID
	return cdpmux.New(t, cdpmux.Options{Cause: func(readErr error) error {
		timer := time.NewTimer(2 * time.Second)
		defer timer.Stop()
		select {
		case <-b.Exited():
			if e := b.ExitErr(); e != nil {
				return e
			}
		case <-timer.C:
			if pid > 0 {
				return fmt.Errorf("the browser (pid %d) closed its DevTools connection (%v) and is still running", pid, readErr)
			}
		}
		return readErr
	}})
}
