// Package launch starts and stops one local Chromium-family browser: its
// flags, its session directory, its process group, its DevTools pipe and
// port, and a shutdown that leaves no process and no file behind.
//
// Room: starting one local browser. The locks are Process's (see
// process.go); Start holds none of them while it does I/O.
//
// A browser is started with --remote-debugging-pipe (fds 3 and 4) as its
// control channel and --remote-debugging-port=0 on 127.0.0.1 as the
// session's DevTools endpoint for other clients. It runs in its own process
// group with a parent-death signal, so a host killed even by SIGKILL takes
// its browsers down: the kernel signals the browser when the host's thread
// that forked it dies, and the pipe reaches EOF.
//
// Every process of the browser inherits BROWSERPOOL_SESSION=<id> and
// XDG_CONFIG_HOME/XDG_CACHE_HOME inside the session directory, so /proc
// proves which processes are ours. Its TMPDIR is inside the session
// directory too, or, when that is too long for Chromium's singleton socket,
// a private one whose path derives from the session directory (see
// PrivateTmpDirs). Measured with Chromium 156: the zygote and
// every process it forks rewrite their title over the memory
// /proc/PID/environ shows, so there only the main process and the two
// crashpad handlers still show the marker; the others carry
// --user-data-dir=<SessionDir>/user-data in their command line instead. The
// crashpad handlers leave the process group (a group kill misses them) and
// name the session directory only through their --database flag under
// XDG_CONFIG_HOME; they exit by themselves shortly after the browser.
package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// SessionEnv is the environment variable that carries the session id into
// the browser and every process it spawns.
const SessionEnv = "BROWSERPOOL_SESSION"

// Names of the directories Start makes inside Options.SessionDir.
const (
	UserDataDirName = "user-data"  // --user-data-dir
	XDGConfigName   = "xdg-config" // XDG_CONFIG_HOME (crashpad's reports land here)
	XDGCacheName    = "xdg-cache"  // XDG_CACHE_HOME
	TmpName         = "tmp"        // TMPDIR when it fits (the browser's org.chromium.Chromium.* singleton dirs land here)
)

// ActivePortFile is the file, inside the user data directory, where the
// browser writes its DevTools port and browser websocket path.
const ActivePortFile = "DevToolsActivePort"

// Bounds of the waits inside Start and Stop.
const (
	// CauseWait bounds how long a connection that reached EOF waits for the
	// browser's exit status to name as the cause.
	CauseWait = 2 * time.Second
	// CloseTimeout bounds Stop's graceful Browser.close and the wait for
	// the browser to exit after it.
	CloseTimeout = 2 * time.Second
	// ReapTimeout bounds the wait for the main process to die after
	// SIGKILL.
	ReapTimeout = 10 * time.Second
	// OutputGrace bounds each wait for the output pipe's EOF (every
	// process that held it has exited): once before and once after Stop
	// kills strays it can prove are ours.
	OutputGrace = time.Second
)

// Options says which browser to start and where. The zero value is not
// usable: SessionDir is required.
type Options struct {
	// Executable is the browser to run, as for Find. "" means Find("").
	Executable string
	// SessionDir is the directory of this browser's files, chosen by the
	// caller: Start creates it (0700) if it is missing, with user-data
	// (the profile), xdg-config, xdg-cache and (when TmpDir fits) tmp
	// inside. Stop removes it whole, and the browser's private TMPDIR
	// when it had one. A relative path is made absolute.
	SessionDir string
	// SessionID is exported to the browser's environment as
	// BROWSERPOOL_SESSION=<id>. "" means the base name of SessionDir. It
	// must match [A-Za-z0-9_-]{1,64}.
	SessionID string
	// ExtraArgs are added after the standard flags, before the initial URL
	// about:blank. With the Debian wrapper /usr/bin/chromium, do not pass
	// its own options (-g, --debug, --temp-profile, --): it consumes them.
	ExtraArgs []string
	// Env is added to the host's environment (os.Environ()) for the
	// browser. XDG_CONFIG_HOME, XDG_CACHE_HOME, TMPDIR and
	// BROWSERPOOL_SESSION are always set by Start, after Env.
	Env []string
	// NoPipe starts the browser without --remote-debugging-pipe and without
	// a parent-death signal, and connects over the websocket named in
	// DevToolsActivePort instead: the browser survives its host. For tests
	// of orphan sweeps; a pool never uses it.
	NoPipe bool
	// NoPort starts the browser without --remote-debugging-port: only the
	// pipe reaches its DevTools, and Start does not wait for
	// DevToolsActivePort (Port is 0). Ignored with NoPipe, which needs the
	// port.
	NoPort bool
	// Profile, if set, is an existing directory the browser keeps as its
	// profile beyond this session: <SessionDir>/user-data is made a symlink
	// to it, so every command line still names the session dir (the sweep's
	// proof) and removing the session dir leaves the profile alone. The
	// caller guarantees that one browser at a time uses it.
	Profile string
	// OnSpawn, if set, is called once the process exists and before Start
	// waits for it to become ready: the caller writes its durable record of
	// the spawn there. If it returns an error, Start kills the browser,
	// cleans up and returns a *StartError wrapping that error.
	OnSpawn func(Spawn) error
}

// Spawn identifies a browser process the moment it exists, for a durable
// record (boot id + pid + start time name it across pid reuse).
type Spawn struct {
	PID        int
	PGID       int    // the browser's own process group (equal to PID)
	StartTime  uint64 // /proc/PID/stat field 22, clock ticks since boot
	BootID     string
	SessionDir string
	Executable string // as started (possibly a wrapper script)
}

// Start starts a browser and returns it once it answered Browser.getVersion
// and (unless Options.NoPort) wrote its DevTools port. ctx bounds the start only; the browser lives
// until Stop (or its own death).
//
// The browser runs with --remote-debugging-pipe (unless Options.NoPipe),
// --remote-debugging-port=0 --remote-debugging-address=127.0.0.1 (unless
// Options.NoPort) --headless
// --no-sandbox --disable-gpu --disable-quic --no-first-run
// --disable-background-networking --disable-component-update --disable-sync
// --no-default-browser-check, the quiet flags (QuietArgs),
// --user-data-dir=<SessionDir>/user-data, then Options.ExtraArgs (a
// --disable-features among them joins the quiet flags' one, see ArgsPort),
// then about:blank.
//
// The browser's TMPDIR is <SessionDir>/tmp (TmpDir) when that is at most
// MaxTmpDir bytes long; else Start makes a private one (0700), the first
// of PrivateTmpDirs that fits and is usable, and Stop removes it. When
// none is, Start fails before it spawns anything, with a *StartError
// wrapping a *TmpDirError (syscall.ENAMETOOLONG) that says what to shorten.
//
// On failure Start kills the process group, reaps the browser, removes what
// it created (SessionDir if it made it, else the directories it made inside,
// and the private TMPDIR) and returns a *StartError carrying the browser's
// exit status and the tail of its output. A missing executable is a
// *NotFoundError; invalid options are reported before anything is created.
func Start(ctx context.Context, opts Options) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launch: start: %w", err)
	}
	exe, err := Find(opts.Executable)
	if err != nil {
		return nil, err
	}
	dir, id, err := opts.validate()
	if err != nil {
		return nil, err
	}
	p := newProcess(exe, dir, id)
	if opts.Profile != "" {
		// A browser killed on this profile earlier left its singleton dir
		// outside its session dir (its session dir was too deep for one of
		// its own); nobody else names it any more.
		RemoveSingletonDir(opts.Profile, dir, -1)
	}
	created, err := prepare(dir, opts.Profile)
	if err != nil {
		return nil, &StartError{Executable: exe, Stage: "preparing the session directory", Err: err}
	}
	// A file system without room for a profile fails here: the browser
	// may still answer on its pipe, with a profile it cannot write.
	if ns := noSpace(dir); ns != nil {
		removeAll(created)
		return nil, &StartError{Executable: exe, Stage: "preparing the session directory", Err: ns}
	}
	// Made after the session dir and removed before it (Stop), so that a
	// private TMPDIR exists only beside its session dir, where a sweep
	// looks for it.
	tmp, private, err := browserTmp(dir)
	if err != nil {
		removeAll(created)
		return nil, &StartError{Executable: exe, Stage: "choosing the browser's TMPDIR", Err: err}
	}
	p.tmpDir = tmp
	if private {
		p.privateTmp = tmp
	}
	if err := p.spawn(opts); err != nil {
		p.removeCreated(created)
		return nil, &StartError{Executable: exe, Stage: "spawning", Err: err}
	}
	if opts.OnSpawn != nil {
		boot, err := proc.BootID()
		if err != nil {
			return nil, p.abort("reading the boot id", err, created)
		}
		sp := Spawn{PID: p.pid, PGID: p.pgid, StartTime: p.startTime, BootID: boot, SessionDir: dir, Executable: exe}
		if err := opts.OnSpawn(sp); err != nil {
			return nil, p.abort("OnSpawn", err, created)
		}
	}
	if stage, err := p.connect(ctx, opts.NoPipe, opts.NoPort && !opts.NoPipe); err != nil {
		return nil, p.abort(stage, err, created)
	}
	return p, nil
}

// validate returns the absolute session directory and the session id.
func (o *Options) validate() (dir, id string, err error) {
	if o.SessionDir == "" {
		return "", "", errors.New("launch: Options.SessionDir is empty: give each browser its own directory")
	}
	dir, err = filepath.Abs(o.SessionDir)
	if err != nil {
		return "", "", fmt.Errorf("launch: Options.SessionDir %q: %w", o.SessionDir, err)
	}
	id = o.SessionID
	field := "Options.SessionID"
	if id == "" {
		id, field = filepath.Base(dir), "Options.SessionID (defaulted to the base name of SessionDir)"
	}
	if !validID(id) {
		return "", "", fmt.Errorf("launch: %s %q is invalid: use 1 to 64 of A-Z a-z 0-9 _ -", field, id)
	}
	return dir, id, nil
}

func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// args returns the browser's command line after the executable.
// Args returns the browser's command-line flags for a profile at
// userDataDir (with --remote-debugging-pipe when pipe is set), extra, and
// the initial about:blank. Start uses exactly these; benchmarks use them to
// start a bare browser the same way.
func Args(userDataDir string, pipe bool, extra []string) []string {
	return ArgsPort(userDataDir, pipe, true, extra)
}

// QuietFeatures are the Chromium features the browser runs without: the
// network time queries (GET clients2.google.com/time), the optimization
// hints' model fetches (optimizationguide-pa.googleapis.com) and the
// autofill server's queries about every page with a form
// (content-autofill.googleapis.com), which --disable-background-networking
// leaves on.
var QuietFeatures = []string{"NetworkTimeServiceQuerying", "OptimizationHints", "AutofillServerCommunication"}

// QuietArgs point the requests no switch turns off at an address Chromium
// refuses to connect to (port 9, discard, is one of its unsafe ports), so
// they fail inside the browser without a packet: the on-demand component
// update (the optimization guide's model manifest, POST
// update.googleapis.com, made despite --disable-component-update) and the
// Google sign-in cookie check (ListAccounts on accounts.google.com).
// Measured on Chromium 156: with these and QuietFeatures off, a browser
// sends nothing of its own in its first minute (8 or 9 requests without),
// nor when it loads a page with a form.
var QuietArgs = []string{
	"--component-updater=url-source=http://127.0.0.1:9/",
	"--gaia-url=http://127.0.0.1:9/",
}

// ArgsPort is Args with the TCP DevTools port (--remote-debugging-port=0
// on 127.0.0.1) only when port is set. Chromium obeys only the last
// --disable-features, so one in extra is joined to QuietFeatures into one
// switch rather than replacing them; any other quiet flag given in extra
// comes after the pool's and wins.
func ArgsPort(userDataDir string, pipe, port bool, extra []string) []string {
	features := slices.Clone(QuietFeatures)
	var rest []string
	for _, arg := range extra {
		if v, ok := strings.CutPrefix(arg, "--disable-features="); ok {
			features = append(features, v)
			continue
		}
		rest = append(rest, arg)
	}
	var a []string
	if pipe {
		a = append(a, "--remote-debugging-pipe")
	}
	if port {
		a = append(a,
			"--remote-debugging-port=0",
			"--remote-debugging-address=127.0.0.1",
		)
	}
	a = append(a,
		"--headless",
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--no-default-browser-check",
		"--disable-features="+strings.Join(features, ","),
	)
	a = append(a, QuietArgs...)
	a = append(a, "--user-data-dir="+userDataDir)
	a = append(a, rest...)
	return append(a, "about:blank")
}

// Environ returns the environment of a browser of session dir and id
// started without Start: the host's, extra, XDG_CONFIG_HOME and
// XDG_CACHE_HOME inside dir, the session marker, and TMPDIR=TmpDir(dir)
// when that fits (else the host's TMPDIR stays, and whoever ends the
// browser removes its singleton dir: see RemoveSingletonDir). TMPDIR keeps
// the browser's temporary files (the org.chromium.Chromium.* singleton
// dirs, which Chromium otherwise leaves in /tmp) with the profile, so
// removing the session dir removes them. Start's browsers get a private
// TMPDIR when TmpDir does not fit.
func Environ(dir, id string, extra []string) []string {
	return environ(dir, id, TmpDir(dir), extra)
}

// environ is Environ with the TMPDIR tmp ("": the host's).
func environ(dir, id, tmp string, extra []string) []string {
	env := append(os.Environ(), extra...)
	env = append(env,
		"XDG_CONFIG_HOME="+filepath.Join(dir, XDGConfigName),
		"XDG_CACHE_HOME="+filepath.Join(dir, XDGCacheName),
		SessionEnv+"="+id,
	)
	if tmp != "" {
		env = append(env, "TMPDIR="+tmp)
	}
	return env
}

// prepare creates the session directory and its subdirectories as needed and
// returns every directory it created, outermost first: removed innermost
// first, each is empty unless a browser wrote in it, and an empty one goes
// with one rmdir, which needs no file descriptor (a start that failed for
// want of them still cleans up). A DevToolsActivePort left by an earlier
// browser is removed, so Start never reads a stale port.
func prepare(dir, profile string) (created []string, err error) {
	if top := missingTop(dir); top != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		for d := dir; ; d = filepath.Dir(d) {
			created = append(created, d)
			if d == top {
				break
			}
		}
		slices.Reverse(created)
	} else if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	for _, name := range []string{UserDataDirName, XDGConfigName, XDGCacheName, TmpName} {
		if name == TmpName && TmpDir(dir) == "" {
			continue // too long to serve: the browser gets a private TMPDIR
		}
		sub := filepath.Join(dir, name)
		var err error
		if name == UserDataDirName && profile != "" {
			err = linkProfile(sub, profile)
		} else {
			err = os.Mkdir(sub, 0o700)
		}
		switch {
		case err == nil:
			created = append(created, sub)
		case errors.Is(err, fs.ErrExist):
			if fi, serr := os.Stat(sub); serr != nil || !fi.IsDir() {
				removeAll(created)
				return nil, fmt.Errorf("%s exists and is not a directory", sub)
			}
		default:
			removeAll(created)
			return nil, err
		}
	}
	stale := filepath.Join(dir, UserDataDirName, ActivePortFile)
	if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
		removeAll(created)
		return nil, err
	}
	return created, nil
}

// linkProfile makes sub a symlink to the profile dir, which must exist.
func linkProfile(sub, profile string) error {
	fi, err := os.Stat(profile)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("profile %s is not a directory", profile)
	}
	if _, err := os.Lstat(sub); err == nil {
		if target, err := os.Readlink(sub); err == nil && target == profile {
			return fs.ErrExist
		}
		return fmt.Errorf("%s exists and is not a link to the profile %s", sub, profile)
	}
	return os.Symlink(profile, sub)
}

// missingTop returns the outermost ancestor of dir (or dir itself) that does
// not exist, or "" when dir exists.
func missingTop(dir string) string {
	top := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			return top
		}
		top = d
		if filepath.Dir(d) == d {
			return top
		}
	}
}

func removeAll(paths []string) {
	for i := len(paths) - 1; i >= 0; i-- {
		_ = removeDir(paths[i])
	}
}

// removeDir removes path and everything below it, retrying with a short
// backoff: a browser process that is still dying may create files for a
// moment. It returns the last error.
func removeDir(path string) error {
	const attempts = 5
	delay := 10 * time.Millisecond
	var err error
	for i := range attempts {
		if i > 0 {
			time.Sleep(delay)
			delay *= 3
		}
		if err = os.RemoveAll(path); err == nil {
			return nil
		}
	}
	return err
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
