// Room: the four sides the anchors measure (the bare floor, browserpool,
// chromedp, rod): how each one starts its browser, opens a tab and stops.
// No locks: each side is driven by one benchmark goroutine at a time (the
// concurrent rows call only the libraries' own concurrent-safe calls).

package anchors_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
	"github.com/browserpool/browserpool/internal/launch"
)

// sideNames are the four sides; index 0 is the floor every ratio divides
// by.
var sideNames = [4]string{"bare", "browserpool", "chromedp", "rod"}

// launchTimeout is a ceiling for a cold start on a loaded 2-core machine,
// never a figure anything asserts.
const launchTimeout = 2 * time.Minute

// findExe returns the executable every side starts: the floor's (chromium
// on PATH, as bench_floor_test.go uses it).
func findExe() (string, error) { return exec.LookPath("chromium") }

// makeSessionDir makes dir and the four directories the launcher makes
// inside a session directory (profile, XDG config and cache, TMPDIR), so
// that the chromedp and rod browsers get the same layout and environment
// as the floor's and browserpool's.
func makeSessionDir(dir string) error {
	for _, d := range []string{launch.UserDataDirName, launch.XDGConfigName, launch.XDGCacheName, launch.TmpName} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// killGroup kills the process group pgid (a side's browser started with
// Setpgid, so its pid is its group) and everything still in it. It never
// names a process by its name.
func killGroup(pgid int) {
	if pgid > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// ---- the bare floor ----

// bareSide is the floor (internal/benchfloor) with one attached tab whose
// Page domain is enabled (for navigations).
type bareSide struct {
	b        *benchfloor.Bare
	tid, sid string
}

// startBare starts the floor's browser in dir and does its first evaluate.
func startBare(exe, dir string) (*bareSide, error) {
	b, err := benchfloor.Start(exe, dir)
	if err != nil {
		return nil, err
	}
	s := &bareSide{b: b}
	if err := b.FirstEvaluate(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// openTab creates and attaches the side's tab and enables its Page domain.
func (s *bareSide) openTab() error {
	var err error
	if s.tid, s.sid, err = s.b.NewTab(); err != nil {
		return err
	}
	return s.b.Call(s.sid, "Page.enable", nil, nil)
}

func (s *bareSide) stop() { s.b.Stop() }

// evaluate is the floor's Runtime.evaluate, with the parameters
// browserpool's Tab.Evaluate sends.
func (s *bareSide) evaluate(sessionID, expr string, out any) error {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	r.Result.Value = out
	return s.b.Call(sessionID, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
}

// navigate is the floor's navigation: Page.navigate, then reading up to
// Page.loadEventFired.
func (s *bareSide) navigate(url string) error {
	if err := s.b.Call(s.sid, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		return err
	}
	return s.b.Until(s.sid, "Page.loadEventFired")
}

// screenshot is the floor's PNG Page.captureScreenshot.
func (s *bareSide) screenshot() ([]byte, error) {
	var r struct {
		Data []byte `json:"data"`
	}
	err := s.b.Call(s.sid, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	return r.Data, err
}

// setViewport sets the tab's viewport (device scale factor 1).
func (s *bareSide) setViewport(w, h int) error {
	return s.b.Call(s.sid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}, nil)
}

// ---- browserpool ----

// bpSide is a browserpool Pool with one session and one tab.
type bpSide struct {
	p   *browserpool.Pool
	s   *browserpool.Session
	tab *browserpool.Tab
}

// newPool returns a pool of local browsers (the library's own launcher:
// its flags, environment and session directories) under root, starting
// exe.
func newPool(exe, root string) (*browserpool.Pool, error) {
	return browserpool.NewPool(browserpool.Config{Root: root, Executable: exe, LaunchTimeout: launchTimeout})
}

// startBP opens a session of a new pool under root.
func startBP(ctx context.Context, exe, root string) (*bpSide, error) {
	p, err := newPool(exe, root)
	if err != nil {
		return nil, err
	}
	s := &bpSide{p: p}
	if s.s, err = p.Open(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// openTab opens the side's tab (about:blank).
func (s *bpSide) openTab(ctx context.Context) error {
	var err error
	s.tab, err = s.s.OpenTab(ctx, "about:blank")
	return err
}

func (s *bpSide) stop() { s.p.Close() }

// ---- chromedp ----

// cdpSide is a chromedp browser (its exec allocator, over the pipe) and
// its first tab's context.
type cdpSide struct {
	ctx         context.Context // the first tab's (the browser's) context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	cmd         *exec.Cmd // set by the allocator's ModifyCmdFunc before the start
	dir         string
}

// chromedpOptions are the exec allocator options that start exe with the
// launcher's flag list for a session in dir (launch.Args with the pipe),
// the launcher's environment (launch.Environ, and nothing inherited
// beyond what it copies), and the browser in its own process group.
//
// chromedp adds to the flags itself only what the list already has
// (--remote-debugging-pipe, --no-sandbox as root, --user-data-dir when
// none is given) and the initial about:blank, which is dropped from the
// list here so that it is not given twice. The list's TCP DevTools port
// flags (--remote-debugging-port=0, --remote-debugging-address) would
// switch chromedp to its websocket mode, which needs the remote package's
// dialer; they are appended to the command line by ModifyCmdFunc instead,
// so that the browser opens the same port as the floor's and
// browserpool's while chromedp drives it over the pipe, its default.
// ModifyCmdFunc replaces chromedp's default SysProcAttr (Pdeathsig only):
// it keeps Pdeathsig and adds Setpgid, so that stop can kill the group.
func chromedpOptions(exe, dir string, cmdOut **exec.Cmd) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.NoInheritEnv,
		chromedp.Env(launch.Environ(dir, filepath.Base(dir), nil)...),
	}
	var port []string
	for _, a := range launch.Args(filepath.Join(dir, launch.UserDataDirName), true, nil) {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch {
		case !strings.HasPrefix(a, "--"):
			// the initial URL (about:blank): chromedp adds it itself
		case strings.HasPrefix(name, "remote-debugging-port") || strings.HasPrefix(name, "remote-debugging-address"):
			port = append(port, a)
		case hasValue:
			opts = append(opts, chromedp.Flag(name, value))
		default:
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	opts = append(opts, chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		// chromedp's last argument is its initial URL; flags go before it.
		last := len(cmd.Args) - 1
		args := append(append(append([]string{}, cmd.Args[:last]...), port...), cmd.Args[last:]...)
		cmd.Args = args
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		*cmdOut = cmd
	}))
	return opts
}

// startChromedp starts a chromedp browser in dir (made here) and runs its
// first, empty action, which starts the browser and attaches its first tab.
func startChromedp(exe, dir string) (*cdpSide, error) {
	s, err := newChromedp(exe, dir)
	if err != nil {
		return nil, err
	}
	if err := chromedp.Do(s.ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// newChromedp makes dir and the allocator and browser contexts; the
// browser starts at the first Run on s.ctx.
func newChromedp(exe, dir string) (*cdpSide, error) {
	if err := makeSessionDir(dir); err != nil {
		return nil, err
	}
	s := &cdpSide{dir: dir}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), chromedpOptions(exe, dir, &s.cmd)...)
	s.allocCancel = allocCancel
	s.ctx, s.cancel = chromedp.NewContext(allocCtx)
	return s, nil
}

// stop cancels the browser's context (chromedp's normal way: it kills the
// browser process and waits for it), then the allocator's (waits for its
// goroutines), then kills what is left of the group and removes dir.
func (s *cdpSide) stop() {
	s.cancel()
	s.allocCancel()
	if s.cmd != nil && s.cmd.Process != nil {
		killGroup(s.cmd.Process.Pid)
	}
	os.RemoveAll(s.dir)
}

// newTab opens a new tab of the browser the chromedp way: a context
// derived from the browser's, and a first (empty) run on it. Its cancel
// closes the tab and waits until it is gone.
func (s *cdpSide) newTab() (context.Context, context.CancelFunc, error) {
	ctx, cancel := chromedp.NewContext(s.ctx)
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return ctx, cancel, nil
}

// ---- rod ----

// rodSide is a rod browser started by rod's launcher and one page.
type rodSide struct {
	l    *launcher.Launcher
	b    *rod.Browser
	page *rod.Page
	dir  string
}

// rodLauncher returns rod's launcher set to start exe with exactly the
// launcher's flag list for a session in dir, without the pipe (rod drives
// the browser over the TCP DevTools websocket only), and the launcher's
// environment. rod's own default flags are replaced, not added to.
//
// Leakless is off: rod's leakless guard is an embedded binary that it
// writes into the OS temp dir (outside the benchmark's root, and left
// there) and runs between the Go process and the browser, listening on a
// TCP port; the floor and browserpool have no such guard process (their
// browsers die with the host by pipe EOF and Pdeathsig). Without leakless
// rod sets Setpgid on the browser, and stop kills that group.
func rodLauncher(exe, dir string) *launcher.Launcher {
	l := launcher.New()
	l.Flags = map[flags.Flag][]string{}
	l.Bin(exe).Leakless(false)
	for _, a := range launch.Args(filepath.Join(dir, launch.UserDataDirName), false, nil) {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch {
		case !strings.HasPrefix(a, "--"):
			l.Set(flags.Arguments, a)
		case hasValue:
			l.Set(flags.Flag(name), value)
		default:
			l.Set(flags.Flag(name))
		}
	}
	return l.Env(launch.Environ(dir, filepath.Base(dir), nil)...)
}

// startRod launches a rod browser in dir (made here) and connects to it.
func startRod(exe, dir string) (*rodSide, error) {
	if err := makeSessionDir(dir); err != nil {
		return nil, err
	}
	s := &rodSide{l: rodLauncher(exe, dir), dir: dir}
	u, err := s.l.Launch()
	if err != nil {
		s.stop()
		return nil, err
	}
	s.b = rod.New().ControlURL(u)
	if err := s.b.Connect(); err != nil {
		s.b = nil
		s.stop()
		return nil, err
	}
	return s, nil
}

// openPage opens the side's page (about:blank) the rod way.
func (s *rodSide) openPage() error {
	var err error
	s.page, err = s.b.Page(proto.TargetCreateTarget{})
	return err
}

// stop closes the browser with rod's Browser.Close (Browser.close), kills
// its group (rod's Launcher.Kill does the same after a one-second sleep),
// waits for it with Launcher.Cleanup (which also removes the profile) and
// removes dir.
func (s *rodSide) stop() {
	if s.b != nil {
		s.b.Close()
	}
	if pid := s.l.PID(); pid > 0 {
		killGroup(pid)
		s.l.Cleanup()
	}
	os.RemoveAll(s.dir)
}

// rodEval is rod's normal evaluate, Page.Eval of a function (rod sends
// Runtime.callFunctionOn on the page's window object, awaiting promises,
// by value), decoded as an int.
func rodEval(p *rod.Page, fn string) (int, error) {
	r, err := p.Eval(fn)
	if err != nil {
		return 0, err
	}
	return r.Value.Int(), nil
}

// errPNG reports a screenshot that is not a PNG.
var errPNG = errors.New("the screenshot is not a PNG")

// checkPNG returns errPNG unless b starts with the PNG signature.
func checkPNG(b []byte) error {
	if !strings.HasPrefix(string(b), "\x89PNG\r\n\x1a\n") {
		return fmt.Errorf("%w (%d bytes)", errPNG, len(b))
	}
	return nil
}
