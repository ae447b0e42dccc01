// Room: launchers, the plug-in seam between a Pool and where its browsers
// come from. No locks of its own.

package browserpool

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"

	"github.com/browserpool/browserpool/internal/launch"
	"github.com/browserpool/browserpool/internal/proc"
)

// A Launcher starts browsers for a Pool. The local launcher (*LocalLauncher)
// starts Chromium processes; cdptest provides an in-memory one for tests; a
// remote fleet would lease browsers over a websocket. Implementations must be
// safe for concurrent use.
//
// This is the one seam between a Pool and its browsers: the local launcher
// and Pool.Attach use it exactly as a third-party launcher does (the pool
// builds its CDP connection on LaunchedBrowser.Transport and watches
// Exited), so a launcher whose Transport is a websocket gets the same
// Session semantics as a local browser.
type Launcher interface {
	// Launch starts one browser for spec and returns it once it accepts
	// CDP messages. It must call spec.OnSpawn (when set) as soon as the
	// process exists (for a remote lease: as soon as the fleet granted it,
	// with SpawnInfo.Fleet, Endpoint and LeaseID filled) and before waiting
	// for it to become ready; if OnSpawn fails, it must stop the browser
	// (end the lease) and return that error. On any error nothing may be
	// left running.
	Launch(ctx context.Context, spec LaunchSpec) (LaunchedBrowser, error)
}

// LaunchSpec is what the pool asks of a launcher.
type LaunchSpec struct {
	SessionID string // the session's id (valid path part)
	// Dir is the session's own directory under the pool's root (profile,
	// caches). The launcher creates it 0700; the pool removes it after Stop.
	Dir string
	// Profile, when set, is a persistent profile dir (Pool.OpenProfile)
	// the browser must use as its user data dir instead of a fresh one in
	// Dir; the pool guarantees one browser at a time uses it. The local
	// launcher links <Dir>/user-data to it; a launcher that cannot keep
	// a local profile should fail the launch.
	Profile string
	// NetworkProxy, when set, is the host:port of the pool's network-policy
	// proxy (Config.Network): the browser's every request must go through
	// it, loopback included. The local launcher passes
	// --proxy-server=http://<NetworkProxy> --proxy-bypass-list=<-loopback>.
	NetworkProxy string
	// OnSpawn records the spawn durably before the launcher waits for
	// readiness (the pool writes its manifest here).
	OnSpawn func(SpawnInfo) error
}

// SpawnInfo identifies a launched browser: a local process, or a lease from
// a remote fleet. Remote and in-memory browsers leave the process fields
// zero; local and in-memory ones leave the lease fields empty. The pool
// records it in its manifest (<Root>/manifest.json) through
// LaunchSpec.OnSpawn, so a later pool can sweep what a crashed host left.
type SpawnInfo struct {
	PID       int    // the browser's pid (the real binary, after any wrapper's exec)
	PGID      int    // its process group
	StartTime uint64 // /proc/PID/stat field 22, clock ticks since boot
	BootID    string // /proc/sys/kernel/random/boot_id at spawn
	Dir       string // the session dir
	Port      int    // DevTools port on 127.0.0.1 (0 until ready)
	Version   string // browser product, e.g. "HeadlessChrome/156.0.0.0" (after ready)

	// Fleet is the kind of fleet a remote lease comes from (FleetBrowserless,
	// FleetSeleniumGrid, or a third-party launcher's own name); "" for a
	// browser that is not a lease. SessionInfo.Fleet shows it.
	Fleet string
	// Endpoint is the fleet's URL as scheme://host/path: no credentials,
	// query (no token) or fragment, because it is written to the manifest
	// and shown in SessionInfo.Endpoint. The sweep matches it against
	// LeaseEnder.LeaseFleet.
	Endpoint string
	// LeaseID is the fleet's own id of the lease, by which it can be ended
	// after its host died (Selenium Grid: the WebDriver session id, ended
	// with DELETE /session/{id}). "" when the fleet has no such id: a
	// browserless lease is one websocket, and it ends when that socket
	// does, which a host's crash (even SIGKILL) closes.
	LeaseID string
}

// LeaseEnder is implemented by a Launcher whose browsers are remote leases
// that can outlive the process holding them (a Selenium Grid session stays
// on the Grid until it is deleted or idles out, even after its host was
// SIGKILLed). The built-in fleet launchers (*SeleniumGrid, *Browserless)
// implement it.
//
// The pool records every lease in its manifest when the launcher calls
// LaunchSpec.OnSpawn with SpawnInfo.Fleet, Endpoint and LeaseID. The sweep
// at NewPool never touches a local process or dir for such an entry; for
// an entry whose owner is gone it calls EndLease of the pool's own launcher
// when LeaseFleet equals the entry's Fleet and Endpoint, and drops the entry
// once EndLease says ended (counted in Stats.OrphanLeasesEnded). An entry
// it cannot end (another fleet, a launcher without LeaseEnder, an error)
// stays in the manifest for a later pool on that fleet, and is counted in
// Stats.OrphansSkipped and logged.
type LeaseEnder interface {
	// LeaseFleet returns the Fleet and Endpoint this launcher gives its
	// leases' SpawnInfo: the leases it can end.
	LeaseFleet() (kind, endpoint string)
	// EndLease ends the lease info describes (only Fleet, Endpoint and
	// LeaseID are set), bounded by ctx. ended reports that the lease is
	// gone, now or already before (a fleet that no longer knows it); with
	// ended false the entry is kept and err says why.
	EndLease(ctx context.Context, info SpawnInfo) (ended bool, err error)
}

// LaunchedBrowser is a browser a Launcher started, as the pool drives it.
type LaunchedBrowser interface {
	// Transport carries the browser's CDP messages. The pool builds its
	// connection on it and owns its reads from then on; it numbers its
	// calls from 1, so a launcher that checked readiness with a call of its
	// own must have read that call's reply first. Transport is called once
	// per launch.
	Transport() Transport
	// Info describes the browser.
	Info() SpawnInfo
	// Exited is closed when the browser has ended on its own or by Stop.
	// A browser that cannot report this returns nil (never closed).
	Exited() <-chan struct{}
	// ExitErr says how the browser ended (for example "browser exited with
	// status 1"), or nil while it runs.
	ExitErr() error
	// Stop ends the browser: a bounded graceful close, then a kill of
	// everything it started, and waits until all of it has exited. It must
	// be idempotent and safe after a crash. The pool calls Stop before it
	// closes the Transport; a Stop that writes to the Transport (the local
	// launcher writes Browser.close) must serialize that write with the
	// pool's own. It may remove Dir; the pool
	// removes it after Stop either way (and counts a failure once).
	Stop(ctx context.Context) error
}

// CleanupWaiter is implemented by a Launcher that finishes work in the
// background after a launch was given up on (for example a fleet lease
// granted after its caller left, which must still be ended). Pool.Close
// calls WaitCleanups after every session has closed, so nothing a launch
// started outlives the pool. WaitCleanups must return once that work is
// done, bounded by the launcher's own timeouts.
type CleanupWaiter interface {
	WaitCleanups()
}

// Transport carries whole CDP messages, one JSON object each. ReadMessage is
// called from one goroutine; WriteMessage from one goroutine at a time;
// Close must unblock a ReadMessage in progress.
type Transport interface {
	ReadMessage() ([]byte, error)
	WriteMessage([]byte) error
	Close() error
}

// LocalLauncher starts Chromium-family browsers as local processes: each in
// its own process group with its own profile, controlled over
// --remote-debugging-pipe (so the browser exits when its host dies, even by
// SIGKILL), with its DevTools port on 127.0.0.1 for other clients, headless.
// Its browsers make no requests of their own: beyond
// --disable-background-networking they run without the network time,
// optimization hints and autofill server features, and their component
// updates and Google sign-in check go to a port Chromium refuses, so only
// the pages' own traffic goes through the network policy. The zero value
// searches PATH for a browser.
type LocalLauncher struct {
	// Executable is the browser's path. Zero means search (see
	// Config.Executable).
	Executable string
	// Args are extra command-line flags (see Config.BrowserArgs: a
	// --disable-features joins the launcher's own).
	Args []string
	// NoDevToolsPort starts the browser without its TCP DevTools port:
	// the pool drives it over the pipe either way, and the launch does not
	// wait for the port file (a little faster cold start). The default
	// (false) keeps the port on 127.0.0.1, reported in SessionInfo.Port,
	// because other clients (Playwright's connectOverCDP, the MCP server's
	// attach, a person's DevTools) connect to a pool session through it;
	// with NoDevToolsPort, SessionInfo.Port is 0. The port asks for no
	// credential: any process of any user on this machine that finds it
	// controls the browser (its cookies, its pages, where its downloads go).
	// On a machine other people use, set NoDevToolsPort.
	NoDevToolsPort bool
	// Env are extra environment variables, each KEY=VALUE, added to this
	// process's environment for the browser (see Config.BrowserEnv for the
	// names the pool owns; NewPool rejects them). Zero means none.
	Env []string

	// noPipe controls the browser over its websocket only. Such a browser
	// survives a SIGKILLed host until the next pool's sweep; only the
	// sweep's tests set it (export_test.go).
	noPipe bool
}

// Launch implements Launcher.
func (l *LocalLauncher) Launch(ctx context.Context, spec LaunchSpec) (LaunchedBrowser, error) {
	exe, err := launch.Find(l.Executable)
	if err != nil {
		e := newError("Pool.Open", ErrBrowserNotFound, "")
		e.Session, e.Err = spec.SessionID, err
		return nil, e
	}
	var spawn launch.Spawn
	proc, err := launch.Start(ctx, launch.Options{
		Executable: exe,
		SessionDir: spec.Dir,
		SessionID:  spec.SessionID,
		ExtraArgs:  withProxyArgs(l.Args, spec.NetworkProxy),
		NoPipe:     l.noPipe,
		NoPort:     l.NoDevToolsPort,
		Profile:    spec.Profile,
		// The owner marker lets a later sweep prove whose strays these are;
		// it comes after the caller's variables so it always wins.
		Env: append(slices.Clip(l.Env), "BROWSERPOOL_OWNER="+ownerMarker()),
		OnSpawn: func(s launch.Spawn) error {
			spawn = s
			if spec.OnSpawn == nil {
				return nil
			}
			return spec.OnSpawn(SpawnInfo{PID: s.PID, PGID: s.PGID, StartTime: s.StartTime, BootID: s.BootID, Dir: s.SessionDir})
		},
	})
	if err != nil {
		return nil, err
	}
	return &localBrowser{p: proc, bootID: spawn.BootID}, nil
}

// ownerMarker is "pid:starttime" of this process. It reads /proc/self/stat
// each time (once per launch, nothing beside a browser start) rather than
// caching it in package state.
func ownerMarker() string {
	st, _ := proc.StartTime(os.Getpid())
	return strconv.Itoa(os.Getpid()) + ":" + strconv.FormatUint(st, 10)
}

// localBrowser adapts *launch.Process. Readiness was its first
// Browser.getVersion, on the bare transport; the pool builds its mux on
// Transport like any launcher's.
type localBrowser struct {
	p      *launch.Process
	bootID string
}

func (b *localBrowser) Transport() Transport    { return b.p.Transport() }
func (b *localBrowser) Exited() <-chan struct{} { return b.p.Exited() }
func (b *localBrowser) exitEndsConn()           {}
func (b *localBrowser) ExitErr() error          { return b.p.ExitErr() }
func (b *localBrowser) Info() SpawnInfo {
	return SpawnInfo{PID: b.p.PID(), PGID: b.p.PGID(), StartTime: b.p.StartTime(), BootID: b.bootID,
		Dir: b.p.SessionDir(), Port: b.p.Port(), Version: b.p.Version()}
}

// Stop implements LaunchedBrowser; the pool removes the dir itself, after
// Stop, so a failure to remove is counted once.
func (b *localBrowser) Stop(ctx context.Context) error {
	err := b.p.Stop(ctx)
	if errors.Is(err, launch.ErrDirNotRemoved) && !errors.Is(err, launch.ErrLingering) {
		return nil // the pool retries the removal and counts it
	}
	return err
}
