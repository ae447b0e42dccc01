// Room: the pool. Pool.mu guards the session and launch tables and the
// counters; it is never held across a launch, a CDP call, a process call,
// file I/O or a hook. All sessions end in Pool.closeSession, the one close
// path.
//
// Lock order of the package, written once here. A goroutine holding a lock
// may take only locks further down the list, never one above it:
//
//  1. Tracker.mu, Allocator.mu, Registry.mu: the policy layers. Never two
//     of them at once; never held while a session opens or closes.
//  2. Pool.mu.
//  3. Session.mu.
//  4. Leaf locks, taken last and never two at once: Tab.mu,
//     attachedBrowser.mu, eventQueue.mu, Manifest.mu (with its flock), the
//     DevTools connection table's mutex (internal/devtools), and the mux's
//     own locks (internal/cdpmux), which only CDP calls take and no CDP
//     call runs under a lock of ours.
//
// attachedBrowser.port is a semaphore, not a mutex: it is held across the
// CDP calls of one page action by design and taken with no mutex held.

package browserpool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/devtools"
)

// Defaults for zero Config fields.
const (
	// DefaultIdleTimeout is how long a session may go without a call before
	// the reaper closes it (reason idle).
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultLaunchTimeout bounds one browser launch, from exec to ready.
	DefaultLaunchTimeout = 30 * time.Second
	// DefaultCloseTimeout bounds closing one session: graceful close, kill,
	// reap and profile removal.
	DefaultCloseTimeout = 10 * time.Second
	// DefaultNavigationTimeout bounds Tab.Navigate and Session.OpenTab when
	// the caller's context has no earlier deadline.
	DefaultNavigationTimeout = 30 * time.Second
	// IdleTimeoutEnv, when set to a number of milliseconds, overrides
	// Config.IdleTimeout (for tests and sandboxes). It is the only
	// environment variable the package reads.
	IdleTimeoutEnv = "BROWSERPOOL_IDLE_TIMEOUT_MS"
)

// Config configures a Pool. The zero value is a complete configuration:
// local Chromium found on PATH, profiles under the user's cache directory,
// a 10-minute idle timeout, no hooks and no logging.
type Config struct {
	// Root holds the profile dirs (<Root>/sessions/<id>) and the manifest
	// (<Root>/manifest.json). Zero means <user cache dir>/browserpool, or
	// <temp dir>/browserpool-<uid> when there is no cache dir. Two pools may
	// share a Root.
	Root string
	// Executable is the browser to start. Zero means: search PATH for
	// chromium, chromium-browser, google-chrome, google-chrome-stable,
	// microsoft-edge, brave-browser, then the usual install paths. Ignored
	// when Launcher is set.
	Executable string
	// BrowserArgs are extra command-line flags for local browsers.
	BrowserArgs []string
	// Launcher starts browsers. Zero means local processes (a *LocalLauncher
	// built from Executable and BrowserArgs). Use cdptest's launcher in
	// tests.
	Launcher Launcher
	// LaunchTimeout bounds one launch. Zero means DefaultLaunchTimeout;
	// negative is invalid.
	LaunchTimeout time.Duration
	// CloseTimeout bounds closing one session. Zero means
	// DefaultCloseTimeout; negative is invalid.
	CloseTimeout time.Duration
	// IdleTimeout closes sessions with no call for this long. Zero means
	// DefaultIdleTimeout; negative means never. IdleTimeoutEnv overrides it.
	IdleTimeout time.Duration
	// NavigationTimeout bounds a navigation's wait for the load event. Zero
	// means DefaultNavigationTimeout; negative is invalid.
	NavigationTimeout time.Duration
	// OutputDir is where artifacts (screenshots, downloads) land, one
	// subdirectory per session. Zero means <Root>/output.
	OutputDir string
	// Hooks receive events. The zero value has none.
	Hooks Hooks
	// Logger receives the pool's log lines. Nil means silent.
	Logger *slog.Logger
	// Viewport is the viewport every tab of a session the pool launched
	// (local or remote) gets when it is connected, including tabs the
	// page opens (window.open) once they are first used. Zero fields mean
	// DefaultViewportWidth x DefaultViewportHeight (1280x720) at device
	// scale factor 1; negative ones are invalid. Tab.SetViewport changes
	// one tab's. Tabs of a browser the pool attached to keep their size.
	Viewport Viewport
}

// Stats is a snapshot of a Pool's gauges and counters. Counters never reset.
type Stats struct {
	SessionsStarting int // launches under way
	SessionsInUse    int // live sessions with a call in flight
	SessionsIdle     int // live sessions with no call in flight
	CallsInFlight    int // calls in flight over all sessions

	Launches       uint64                 // launches started
	LaunchFailures uint64                 // launches that did not produce a session
	Closes         map[CloseReason]uint64 // sessions closed, by reason
	CloseFailures  uint64                 // closes that left something behind (dir retried later)

	ProfileDirsPendingDelete int    // profile dirs that could not be removed yet
	Leaked                   int    // closed sessions whose browser could not be stopped yet (retried)
	OrphansSwept             uint64 // orphan process groups killed by the sweep
	OrphansSkipped           uint64 // manifest entries left alone (unverified or owner alive)
	OrphanDirsRemoved        uint64 // profile dirs removed by the sweep
}

// Pool is a set of isolated browser sessions. Each session is its own
// browser process with its own profile dir and DevTools port; nothing is
// shared between sessions. A Pool is safe for concurrent use. Create it with
// NewPool; the creator must call Close, which closes every session.
type Pool struct {
	cfg      Config // effective values
	launcher Launcher
	log      *slog.Logger
	events   *eventQueue
	manifest *Manifest
	cdp      cdpProbe // DevTools probes and the pool's own connection table (attach.go)

	ctx    context.Context // the pool's lifetime; launches and closes run on it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the pool starts

	mu        sync.Mutex
	sessions  map[string]*Session  // guarded by mu; live sessions by id
	launches  map[*launchOp]bool   // guarded by mu; launches under way
	joinable  *launchOp            // guarded by mu; a launch Resolve("") may join
	closed    bool                 // guarded by mu
	stats     Stats                // guarded by mu; counters (gauges are computed)
	pendingRm map[string]time.Time // guarded by mu; profile dirs to retry removing
	leaked    map[*Session]bool    // guarded by mu; sessions whose browser could not be stopped, retried
	attached  map[string]*Session  // guarded by mu; sessions attached to browsers we did not launch, by id
	attaching map[int]*attachOp    // guarded by mu; attaches under way, by port
	reaperOn  bool                 // guarded by mu; the idle reaper is running
}

// NewPool returns a pool configured by cfg. It validates cfg, creates the
// root, and sweeps what earlier runs left in it (see Manifest). It launches
// no browser: sessions start on first use.
func NewPool(cfg Config) (*Pool, error) {
	eff, err := cfg.effective()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(eff.Root, "sessions"), 0o700); err != nil {
		return nil, &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Root: cannot create " + eff.Root, Err: err, Hint: "set Config.Root to a writable directory"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		cfg:       eff,
		launcher:  eff.Launcher,
		log:       eff.Logger,
		events:    newEventQueue(eff.Logger),
		ctx:       ctx,
		cancel:    cancel,
		sessions:  make(map[string]*Session),
		launches:  make(map[*launchOp]bool),
		stats:     Stats{Closes: make(map[CloseReason]uint64)},
		pendingRm: make(map[string]time.Time),
		leaked:    make(map[*Session]bool),
		attached:  make(map[string]*Session),
		attaching: make(map[int]*attachOp),
		cdp:       cdpProbe{conns: devtools.NewTable(CDPPromptPatience, CDPParkTimeout)},
	}
	if p.launcher == nil {
		p.launcher = &LocalLauncher{Executable: eff.Executable, Args: eff.BrowserArgs}
	}
	m, err := openManifest(eff.Root)
	if err != nil {
		cancel()
		p.cdp.conns.Close()
		return nil, &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Root: cannot open the manifest", Err: err, Hint: "set Config.Root to a writable directory"}
	}
	p.manifest = m
	p.sweep()
	return p, nil
}

func (cfg Config) effective() (Config, error) {
	bad := func(field, why string) error {
		return &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: field + ": " + why, Hint: hints[ErrInvalidConfig]}
	}
	if cfg.Root == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cfg.Root = filepath.Join(dir, "browserpool")
		} else {
			cfg.Root = filepath.Join(os.TempDir(), "browserpool-"+strconv.Itoa(os.Getuid()))
		}
	}
	root, err := filepath.Abs(cfg.Root)
	if err != nil {
		return cfg, bad("Root", err.Error())
	}
	cfg.Root = root
	if cfg.OutputDir == "" {
		cfg.OutputDir = filepath.Join(cfg.Root, "output")
	}
	if cfg.OutputDir, err = filepath.Abs(cfg.OutputDir); err != nil {
		return cfg, bad("OutputDir", err.Error())
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"LaunchTimeout", &cfg.LaunchTimeout, DefaultLaunchTimeout},
		{"CloseTimeout", &cfg.CloseTimeout, DefaultCloseTimeout},
		{"NavigationTimeout", &cfg.NavigationTimeout, DefaultNavigationTimeout},
	} {
		switch {
		case *d.v < 0:
			return cfg, bad(d.name, fmt.Sprintf("must not be negative (got %v); zero means the default %v", *d.v, d.def))
		case *d.v == 0:
			*d.v = d.def
		}
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if v := os.Getenv(IdleTimeoutEnv); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cfg, bad(IdleTimeoutEnv, fmt.Sprintf("%q is not a number of milliseconds", v))
		}
		cfg.IdleTimeout = time.Duration(ms) * time.Millisecond
		if ms <= 0 {
			cfg.IdleTimeout = -1
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Viewport, err = effectiveViewport(cfg.Viewport); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Config returns the pool's effective configuration (defaults filled in).
func (p *Pool) Config() Config { return p.cfg }

// Stats returns a snapshot of the pool's gauges and counters.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	st := p.stats
	st.Closes = make(map[CloseReason]uint64, len(p.stats.Closes))
	for k, v := range p.stats.Closes {
		st.Closes[k] = v
	}
	st.SessionsStarting = len(p.launches)
	st.ProfileDirsPendingDelete = len(p.pendingRm)
	st.Leaked = len(p.leaked)
	live := make([]*Session, 0, len(p.sessions))
	for _, s := range p.sessions {
		live = append(live, s)
	}
	p.mu.Unlock()
	for _, s := range live {
		n := int(s.inflight.Load())
		st.CallsInFlight += n
		if n > 0 {
			st.SessionsInUse++
		} else {
			st.SessionsIdle++
		}
	}
	return st
}

// Sessions returns the live sessions, ordered by id.
func (p *Pool) Sessions() []*Session {
	p.mu.Lock()
	out := make([]*Session, 0, len(p.sessions))
	for _, s := range p.sessions {
		out = append(out, s)
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b *Session) int { return strings.Compare(a.id, b.id) })
	return out
}

// liveIDsLocked returns the sorted ids of live sessions. p.mu must be held.
func (p *Pool) liveIDsLocked() []string {
	ids := make([]string, 0, len(p.sessions))
	for id := range p.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Open launches a new, independent session (its own browser process,
// profile dir and DevTools port) and returns it once the browser is ready.
// ctx bounds the wait only: if ctx ends first, the launch still completes on
// the pool's own context and the browser is closed (reason abandoned), so no
// half-started browser is left behind.
func (p *Pool) Open(ctx context.Context) (*Session, error) {
	op, err := p.startLaunch(false)
	if err != nil {
		return nil, err
	}
	return p.await(ctx, "Pool.Open", op)
}

// Session returns the live session with the given id. With an empty id it
// follows the resolution rule: the only live session if there is exactly
// one; a newly launched session if there is none (a launch already under way
// for another empty-id caller is joined, not duplicated); and an
// ErrAmbiguousSession error listing the live ids if there are several. It
// never guesses.
func (p *Pool) Session(ctx context.Context, id string) (*Session, error) {
	const op = "Pool.Session"
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, newError(op, ErrPoolClosed, "")
	}
	if id != "" {
		s, err := p.lookupLocked(op, id)
		p.mu.Unlock()
		return s, err
	}
	switch len(p.sessions) {
	case 1:
		for _, s := range p.sessions {
			p.mu.Unlock()
			return s, nil
		}
	case 0:
	default:
		ids := p.liveIDsLocked()
		p.mu.Unlock()
		e := newError(op, ErrAmbiguousSession, "live sessions: "+fmtIDs(ids))
		e.Hint = "pass one of the live session ids: " + strings.Join(ids, ", ")
		return nil, e
	}
	launch := p.joinable
	if launch != nil {
		launch.waiters++
	} else {
		launch = p.startLaunchLocked(true)
	}
	p.mu.Unlock()
	return p.await(ctx, op, launch)
}

// lookupLocked returns the live (launched or attached) session id, or an
// ErrSessionNotFound error listing the live ones. p.mu must be held.
func (p *Pool) lookupLocked(op, id string) (*Session, error) {
	if s := p.sessions[id]; s != nil {
		return s, nil
	}
	if s := p.attached[id]; s != nil {
		return s, nil
	}
	e := newError(op, ErrSessionNotFound, fmt.Sprintf("no live session has id %q; live sessions: %s", id, fmtIDs(p.liveIDsLocked())))
	e.Session = id
	return nil, e
}

func fmtIDs(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return "[" + strings.Join(ids, ", ") + "]"
}

// launchOp is one launch under way. Its fields after done are set before
// done is closed; waiters and finished are guarded by Pool.mu.
type launchOp struct {
	id       string
	done     chan struct{}
	s        *Session
	err      error
	waiters  int  // guarded by Pool.mu
	finished bool // guarded by Pool.mu
}

func (p *Pool) startLaunch(joinable bool) (*launchOp, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, newError("Pool.Open", ErrPoolClosed, "")
	}
	return p.startLaunchLocked(joinable), nil
}

// startLaunchLocked starts a launch with one waiter. p.mu must be held and
// the pool open.
func (p *Pool) startLaunchLocked(joinable bool) *launchOp {
	op := &launchOp{id: newSessionID(), done: make(chan struct{}), waiters: 1}
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
	e.Err = context.Cause(ctx)
	e.Hint = "retry with a longer deadline; a cold browser start takes about half a second, more on a loaded machine"
	return nil, e
}

func newSessionID() string {
	var b [6]byte
	rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

func (p *Pool) runLaunch(op *launchOp) {
	defer p.wg.Done()
	start := time.Now()
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.LaunchTimeout)
	s, err := p.launch(ctx, op.id)
	cancel()

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
		go p.watch(s)
	}
	close(op.done)
}

func (p *Pool) hook(f func(Hooks)) func() {
	h := p.cfg.Hooks
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

// launch starts one browser and builds its session. On error nothing is
// left running and the session dir is removed.
func (p *Pool) launch(ctx context.Context, id string) (*Session, error) {
	dir := filepath.Join(p.cfg.Root, "sessions", id)
	if err := p.manifest.Reserve(id, dir); err != nil {
		e := newError("Pool.Open", ErrLaunchFailed, "cannot record the launch in the manifest")
		e.Session, e.Err = id, err
		e.Hint = "check that Config.Root is writable and not full"
		return nil, e
	}
	spec := LaunchSpec{
		SessionID: id,
		Dir:       dir,
		OnSpawn: func(info SpawnInfo) error {
			return p.manifest.Add(entryFor(id, info))
		},
	}
	b, err := p.launcher.Launch(ctx, spec)
	if err != nil {
		p.manifest.Remove(id)
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
		return nil, e
	}
	info := b.Info()
	if info.Dir != "" && info.Dir != dir {
		// A launcher may keep its own dir; the manifest records what it gave.
		dir = info.Dir
	}
	mux, err := browserMux(b)
	if err != nil {
		b.Stop(context.WithoutCancel(ctx))
		p.manifest.Remove(id)
		e := newError("Pool.Open", ErrLaunchFailed, "")
		e.Session, e.Err = id, err
		return nil, e
	}
	p.manifest.Update(entryFor(id, info))
	s := newSession(p, id, b, mux, info)
	// Downloads land in the session's output dir from the start, never in
	// the browser's default dir.
	if err := s.ensureDownloads(ctx); err != nil {
		p.log.Warn("browserpool: cannot route downloads; they are routed on first use", "session", id, "err", err)
	}
	return s, nil
}

// watch reclaims s the moment its browser exits or its connection drops
// (R2: a process wait, not polling).
func (p *Pool) watch(s *Session) {
	defer p.wg.Done()
	select {
	case <-s.b.Exited():
		p.closeSession(s, ReasonCrashed, s.b.ExitErr())
	case <-s.mux.Done():
		cause := s.mux.Err()
		if exit := s.b.ExitErr(); exit != nil {
			cause = exit
		}
		p.closeSession(s, ReasonCrashed, cause)
	case <-s.done:
	}
}

// CloseSession closes the live session with the given id (reason
// explicit). See Session.Close.
func (p *Pool) CloseSession(ctx context.Context, id string) error {
	p.mu.Lock()
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
	if !s.beginClose(reason, cause) {
		<-s.done
		return s.closeErr
	}
	p.mu.Lock()
	if p.sessions[s.id] == s {
		delete(p.sessions, s.id)
	}
	if p.attached[s.id] == s {
		delete(p.attached, s.id)
	}
	p.mu.Unlock()

	// For a browser we did not launch, Stop only disconnects: it is never
	// killed and its profile is never touched.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), p.cfg.CloseTimeout)
	stopErr := s.b.Stop(ctx)
	cancel()
	s.mux.Close()
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
	s.finishClose()
	ev := SessionEvent{Time: time.Now(), SessionID: s.id, PID: s.info.PID, Reason: reason, Err: cause, Duration: time.Since(s.created)}
	p.events.emit(p.hook(func(h Hooks) {
		if h.SessionClosed != nil {
			h.SessionClosed(ev)
		}
	}))
	return s.closeErr
}

// removeDir removes dir, retrying briefly: a browser's last child may still
// be writing when the group dies.
func removeDir(dir string) error {
	var err error
	for i := range 5 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(time.Duration(10<<i) * time.Millisecond)
	}
	return err
}

// Close closes every session (reason shutdown), waits for launches under
// way to end (they are closed too), runs queued hooks and stops every
// goroutine the pool started. It is idempotent; later calls return nil.
// Sessions close in parallel.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	live := make([]*Session, 0, len(p.sessions)+len(p.attached))
	for _, s := range p.sessions {
		live = append(live, s)
	}
	for _, s := range p.attached {
		live = append(live, s)
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
	p.cancel() // ends launches under way and the reaper
	p.wg.Wait()
	p.cdp.conns.Close() // ends its handshakes and closes its parked connections
	p.retryPendingRemovals()
	p.events.close()
	return nil
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

// retryPendingRemovals tries again to stop browsers and remove profile dirs
// a close could not.
func (p *Pool) retryPendingRemovals() {
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
		if os.RemoveAll(d) == nil {
			p.mu.Lock()
			delete(p.pendingRm, d)
			p.mu.Unlock()
			p.manifest.RemoveDir(d)
		}
	}
}

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

// Ref names a session and a tab the way an agent's tool call does.
type Ref struct {
	// SessionID names the session; empty follows Pool.Session's rule.
	SessionID string
	// TabID names a tab of that session; empty means its active tab.
	TabID string
	// NewInstance starts a brand-new independent session for this call.
	// A TabID in the same call can never refer to a tab of that new
	// session, so giving both is an error.
	NewInstance bool
}

func (p *Pool) refSession(ctx context.Context, op string, ref Ref) (*Session, error) {
	if ref.NewInstance {
		if ref.TabID != "" {
			e := newError(op, ErrTabNotInSession, fmt.Sprintf("tab %s cannot belong to the new session this call starts", ref.TabID))
			e.Tab = ref.TabID
			e.Hint = "drop the tab id to act on the new session's first tab, or drop NewInstance to use the tab's own session"
			return nil, e
		}
		if ref.SessionID != "" {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("session %s given together with NewInstance", ref.SessionID))
			e.Session = ref.SessionID
			e.Hint = "give either a session id or NewInstance, not both"
			return nil, e
		}
		return p.Open(ctx)
	}
	return p.Session(ctx, ref.SessionID)
}

// ResolveTab returns the tab ref names: its session by the resolution rule
// of Pool.Session (or a new session for NewInstance), then the tab by id
// (checked to belong to that session) or the session's active tab.
func (p *Pool) ResolveTab(ctx context.Context, ref Ref) (*Tab, error) {
	s, err := p.refSession(ctx, "Pool.ResolveTab", ref)
	if err != nil {
		return nil, err
	}
	return s.Tab(ctx, ref.TabID)
}

// OpenTab opens url (http, https or about:blank) in a new tab of the session
// ref names (ref.TabID must be empty). With NewInstance the tab opens in a
// brand-new session.
func (p *Pool) OpenTab(ctx context.Context, ref Ref, url string) (*Tab, error) {
	const op = "Pool.OpenTab"
	if url == "" {
		url = "about:blank"
	}
	if err := checkOpenURL(op, url); err != nil {
		return nil, err
	}
	if ref.TabID != "" && !ref.NewInstance {
		e := newError(op, ErrInvalidArgument, "a tab id was given to open a new tab")
		e.Tab, e.Hint = ref.TabID, "drop the tab id: opening always makes a new tab"
		return nil, e
	}
	s, err := p.refSession(ctx, op, ref)
	if err != nil {
		return nil, err
	}
	return s.OpenTab(ctx, url)
}
