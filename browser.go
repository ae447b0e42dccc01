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
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/devtools"
	"github.com/browserpool/browserpool/internal/manifest"
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
	// share a Root. Use a stable Root (not a fresh temp dir per run): what
	// a host killed by SIGKILL leaves behind (profile dirs, browsers) is
	// cleaned by the orphan sweep NewPool runs, and that sweep only visits
	// the Root it is given, so a root that is never used again is never
	// cleaned. NewPool refuses a Root (or its sessions dir) that another
	// user owns or may write in.
	Root string
	// Executable is the browser to start. Zero means: search PATH for
	// chromium, chromium-browser, google-chrome, google-chrome-stable,
	// microsoft-edge, brave-browser, then the usual install paths. Ignored
	// when Launcher is set.
	Executable string
	// BrowserArgs are extra command-line flags for local browsers. They
	// come after the pool's own, so a flag given here wins, except that
	// a --disable-features joins the features the pool turns off
	// (Chromium's own background requests, see LocalLauncher) instead of
	// replacing them.
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
	// DefaultIdleTimeout; negative means never (what a close left behind is
	// still retried, every 5 s). IdleTimeoutEnv overrides it.
	// The reaper looks every IdleTimeout/10 (10 ms to 30 s), so a session
	// closes between IdleTimeout and that much later.
	IdleTimeout time.Duration
	// NavigationTimeout bounds a navigation's wait for the load event. Zero
	// means DefaultNavigationTimeout; negative is invalid.
	NavigationTimeout time.Duration
	// OutputDir is where artifacts (screenshots, downloads) land, one
	// subdirectory per session (<OutputDir>/<session id>), made on first
	// use only: a session that writes no artifact leaves nothing here.
	// Zero means <Root>/output. Artifacts are the caller's: they are kept
	// after the session and the pool close, and no sweep removes them.
	// Prune them yourself, e.g. remove SessionInfo.OutputDir once you have
	// read the files, or delete <OutputDir>/<id> dirs older than a day.
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
	// TabsShareWindow opens the tabs of a session the pool launched (local
	// or remote) in the browser's one window, as a person's new tabs open,
	// instead of a window each (Session.OpenTab). A tab then opens faster
	// (about 90 ms less in Chromium on a 2-core machine: no window to
	// make), but only the tab opened last is visible: the others are hidden
	// pages, which run no requestAnimationFrame, throttle their timers,
	// load no lazy images and get less of the renderer's time (8
	// concurrent evaluates on a hidden tab took about 20 % longer here).
	// False, the zero value, gives every tab a window of its own, so that
	// each acts as the page a person is looking at. Tabs of a browser the
	// pool attached to always open where that browser puts them.
	TabsShareWindow bool
	// BrowserEnv are extra environment variables for local browsers, each
	// KEY=VALUE, added to this process's environment (a later entry wins).
	// The pool owns XDG_CONFIG_HOME, XDG_CACHE_HOME, TMPDIR and every
	// BROWSERPOOL_* name: NewPool rejects them. Zero means none. Ignored
	// when Launcher is set (set LocalLauncher.Env instead).
	BrowserEnv []string
	// Warm is how many launched, unclaimed browsers the pool keeps ready:
	// Pool.Open (and so Tracker.Open and Allocator.Acquire) takes one
	// without waiting for a launch, and the pool launches a replacement in
	// the background, one at a time. Warm browsers are in the manifest and
	// in Stats.SessionsWarm; they are not sessions until claimed (not in
	// Pool.Sessions, not seen by empty-id resolution, not counted against
	// a workflow's limit or a computer's cap, never reclaimed idle). One
	// that dies is replaced; one older than WarmMaxAge is closed (reason
	// warm_expired), its replacement started shortly before (twice the
	// last launch's time), so a claim then does not wait for a launch;
	// Pool.Close closes them all. Zero means none; negative is invalid.
	Warm int
	// WarmMaxAge is how long a warm browser waits to be claimed before it
	// is replaced by a fresh one. Zero means DefaultWarmMaxAge; negative
	// means never.
	WarmMaxAge time.Duration
	// Recording, if set, records every session the pool launches from its
	// start, as Session.StartRecording(ctx, *Recording) would (a failure
	// to start is logged, the session works without). Attached browsers
	// are not recorded by default. Nil means off.
	Recording *RecordingOptions
	// Network is the network policy: which hosts the browsers may reach,
	// enforced by the browser's own network stack through a loopback proxy
	// the pool owns (see NetworkPolicy). The zero value allows every host
	// but link-local and cloud-metadata addresses; loopback is allowed.
	// The pool hands the proxy to its Launcher (LaunchSpec.NetworkProxy):
	// LocalLauncher routes the browser through it; a Launcher of your own
	// must do the same, or nothing enforces the policy. NewPool refuses
	// Allow and Block rules with a fleet's launcher, whose browsers reach
	// the network from the fleet's machines.
	Network NetworkPolicy
}

// Stats is a snapshot of a Pool's gauges and counters. Counters never reset.
type Stats struct {
	SessionsStarting int // launches under way
	SessionsInUse    int // live sessions with a call in flight (a raw CDP call included)
	SessionsIdle     int // live sessions with no call in flight
	CallsInFlight    int // calls in flight over all sessions (SessionInfo.InFlight summed)
	SessionsWarm     int // launched browsers ready to be claimed (Config.Warm); not sessions yet

	Launches       uint64                 // launches started
	LaunchFailures uint64                 // launches that did not produce a session
	Closes         map[CloseReason]uint64 // sessions closed, by reason
	CloseFailures  uint64                 // closes that left something behind (dir retried later)

	ProfileDirsPendingDelete int    // profile dirs that could not be removed yet
	Leaked                   int    // closed sessions whose browser could not be stopped yet, and browsers or fleet leases of failed launches that could not be ended (all retried)
	OrphansSwept             uint64 // orphan browser processes or process groups killed by the sweep
	OrphansSkipped           uint64 // things the sweep left alone: live owners' entries, manifest entries that do not verify (malformed), processes not proven ours, paths that are not session dirs, remote leases not ended
	OrphanDirsRemoved        uint64 // profile dirs removed by the sweep
	WarmClaims               uint64 // opens served by a warm browser (Config.Warm)
	OrphanLeasesEnded        uint64 // remote leases of hosts that are gone, ended by the sweep (see LeaseEnder)
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
	manifest *manifest.File
	cdp      cdpProbe // DevTools probes and the pool's own connection table (attach.go)

	ctx    context.Context // the pool's lifetime; launches and closes run on it
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the pool starts

	mu        sync.Mutex
	sessions  map[string]*Session  // guarded by mu; live sessions by id
	launches  map[*launchOp]bool   // guarded by mu; launches under way
	joinable  *launchOp            // guarded by mu; a launch Resolve("") may join
	closed    bool                 // guarded by mu
	closeDone chan struct{}        // guarded by mu; made by the first Close, closed when it returns
	shut      chan struct{}        // closed by the first Close as it begins (under mu): an allocator's queued acquires on the pool leave at once
	finished  atomic.Bool          // set by the first Close once every browser is stopped and every retry made, as it closes closeDone; read without a lock (closeFinished)
	stats     Stats                // guarded by mu; counters (gauges are computed)
	pendingRm map[string]time.Time // guarded by mu; profile dirs to retry removing
	leaked    map[*Session]bool    // guarded by mu; sessions whose browser could not be stopped, retried
	strays    map[string]stray     // guarded by mu; browsers or leases of failed launches that could not be ended, by session id, retried
	attached  map[string]*Session  // guarded by mu; sessions attached to browsers we did not launch, by id
	closing   map[*Session]bool    // guarded by mu; sessions whose close is under way (closeSession), which Pool.Close waits for
	attaching map[int]*attachOp    // guarded by mu; attaches under way, by port
	reaper    *time.Timer          // guarded by mu; the reaper's next tick (reaper.go): nil until the first session goes live or something is left behind to retry
	warm      warmSet              // guarded by mu; warm browsers (pool_warm.go)
	net       *netProxy            // the network policy's proxy (netproxy.go); nil when Network.Unrestricted or the launcher is not local; set once by the first launch (netOnce), closed by Close
	netOnce   sync.Once            // starts net on the first launch, so an idle pool runs no goroutine
	netErr    error                // set by netOnce
	netLocal  bool                 // the launcher is local (the proxy applies); set by NewPool
}

// NewPool returns a pool configured by cfg. It validates cfg, creates the
// root, and sweeps what earlier runs left in it (see Pool.Orphans). It launches
// no browser itself: sessions start on first use, and with Config.Warm set
// the warm browsers start in the background.
func NewPool(cfg Config) (*Pool, error) {
	eff, err := cfg.effective()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(eff.Root, "sessions"), 0o700); err != nil {
		return nil, &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Root: cannot create " + eff.Root, Err: err, Hint: "set Config.Root to a writable directory"}
	}
	for _, dir := range []string{eff.Root, filepath.Join(eff.Root, "sessions")} {
		if err := checkPrivateDir(dir); err != nil {
			return nil, err
		}
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
		strays:    make(map[string]stray),
		attached:  make(map[string]*Session),
		closing:   make(map[*Session]bool),
		attaching: make(map[int]*attachOp),
		shut:      make(chan struct{}),
		cdp:       cdpProbe{conns: devtools.NewTable(CDPPromptPatience, CDPParkTimeout)},
	}
	if p.launcher == nil {
		p.launcher = &LocalLauncher{Executable: eff.Executable, Args: eff.BrowserArgs, Env: eff.BrowserEnv}
	}
	_, p.netLocal = p.launcher.(*LocalLauncher)
	m, err := openManifest(eff.Root)
	if err != nil {
		cancel()
		p.cdp.conns.Close()
		hint := "set Config.Root to a writable directory"
		if ve := (*manifest.VersionError)(nil); errors.As(err, &ve) {
			hint = "the manifest was left untouched: use a browserpool release that reads its version for this Root, or set Config.Root to another directory"
		}
		return nil, &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Root: cannot open the manifest", Err: err, Hint: hint}
	}
	p.manifest = m
	p.sweep()
	p.startWarmer()
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
	switch {
	case cfg.Warm < 0:
		return cfg, bad("Warm", fmt.Sprintf("must not be negative (got %d); zero means no warm browsers", cfg.Warm))
	case cfg.WarmMaxAge == 0:
		cfg.WarmMaxAge = DefaultWarmMaxAge
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
	if err := checkOwnedFlags("BrowserArgs", cfg.BrowserArgs); err != nil {
		return cfg, err
	}
	if err := checkBrowserEnv("BrowserEnv", cfg.BrowserEnv); err != nil {
		return cfg, err
	}
	if policy, err := cfg.Network.compile(); err != nil {
		return cfg, err
	} else if kind := fleetLauncherKind(cfg.Launcher); kind != "" && (len(cfg.Network.Allow) > 0 || len(cfg.Network.Block) > 0) {
		// Rules the pool cannot enforce must not look enforced.
		return cfg, &Error{Op: "NewPool", Class: ErrInvalidConfig,
			Detail: fmt.Sprintf("Network: Allow and Block rules cannot be enforced on browsers leased from %s: the policy proxy runs on this machine, and a leased browser reaches the network from the fleet's", kind),
			Hint:   "enforce the rules on the fleet's side (its proxy or firewall) and drop them from Config.Network, or run these browsers with the local launcher"}
	} else if policy != nil {
		if err := checkProxyFlags("BrowserArgs", cfg.BrowserArgs); err != nil {
			return cfg, err
		}
		if l, ok := cfg.Launcher.(*LocalLauncher); ok && l != nil {
			if err := checkProxyFlags("LocalLauncher.Args", l.Args); err != nil {
				return cfg, err
			}
		}
	}
	if l, ok := cfg.Launcher.(*LocalLauncher); ok && l != nil {
		if err := checkOwnedFlags("LocalLauncher.Args", l.Args); err != nil {
			return cfg, err
		}
		if err := checkBrowserEnv("LocalLauncher.Env", l.Env); err != nil {
			return cfg, err
		}
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
	st.SessionsStarting = len(p.launches) + len(p.warm.starting)
	st.SessionsWarm = len(p.warm.ready)
	st.ProfileDirsPendingDelete = len(p.pendingRm)
	st.Leaked = len(p.leaked) + len(p.strays)
	live := make([]*Session, 0, len(p.sessions))
	for _, s := range p.sessions {
		live = append(live, s)
	}
	p.mu.Unlock()
	for _, s := range live {
		_, n := s.use()
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
// With Config.Warm set it takes a warm browser instead when one is ready
// (well under a millisecond) and the pool launches its replacement in the
// background. ctx bounds the wait only: if ctx ends first, the launch still
// completes on the pool's own context and the browser is closed (reason
// abandoned), so no half-started browser is left behind. A ctx that has
// already ended opens nothing: no launch starts and no warm browser is
// taken.
func (p *Pool) Open(ctx context.Context) (*Session, error) {
	if err := ctx.Err(); err != nil {
		// It ended before the call: as Tracker.Open and Allocator.Acquire
		// refuse, nothing is launched (a whole browser for nobody) or
		// claimed.
		e := newError("Pool.Open", err, "the context had ended before the call: no browser was launched or taken")
		e.Hint = "call again with a context that has not ended"
		return nil, e
	}
	op, s, err := p.startLaunch(false)
	if err != nil || s != nil {
		return s, err
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
	return p.session(ctx, "Pool.Session", id)
}

// session is Session for the operation op (Pool.ResolveTab, Pool.OpenTab
// name themselves in its errors).
func (p *Pool) session(ctx context.Context, op, id string) (*Session, error) {
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
	} else if s := p.claimWarmLocked(); s != nil {
		p.mu.Unlock()
		return s, nil
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
	e := newError(op, ErrSessionNotFound, fmt.Sprintf("no live session has id %q; live sessions: %s", echo(id), fmtIDs(p.liveIDsLocked())))
	e.Session = id
	return nil, e
}

func fmtIDs(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return "[" + strings.Join(ids, ", ") + "]"
}

// checkPrivateDir refuses a root directory (Config.Root, its sessions dir)
// that another user owns or may write in: that user could replace the
// manifest, or plant links where the pool makes session dirs. The
// directory's target is checked, so a Root that is a symlink to a private
// directory is fine.
func checkPrivateDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Root: cannot read " + dir, Err: err, Hint: "set Config.Root to a writable directory"}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid := os.Getuid()
	switch {
	case int(st.Uid) != uid && st.Uid != 0:
		return &Error{Op: "NewPool", Class: ErrInvalidConfig,
			Detail: fmt.Sprintf("Root: %s belongs to another user (uid %d; this process runs as uid %d)", dir, st.Uid, uid),
			Hint:   "set Config.Root to a directory of your own; another user's could replace the manifest or plant links in it"}
	case fi.Mode().Perm()&0o022 != 0:
		return &Error{Op: "NewPool", Class: ErrInvalidConfig,
			Detail: fmt.Sprintf("Root: %s is writable by other users (mode %v)", dir, fi.Mode().Perm()),
			Hint:   "run chmod 700 on it, or set Config.Root to a directory only you can write"}
	}
	return nil
}
