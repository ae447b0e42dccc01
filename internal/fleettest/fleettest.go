// Package fleettest starts real remote fleets for tests: a browserless v2
// server and a Selenium Grid 4 standalone, each on a free 127.0.0.1 port
// with its own directory, installed beforehand by scripts/fleet/install.sh.
// Each server runs in its own process group and is stopped at the test's
// cleanup (SIGTERM, then SIGKILL of that group); helpers count the leases
// the server holds.
//
// A server that is not installed or cannot start skips the test, unless
// BROWSERPOOL_REQUIRE_BROWSER=1, when it fails it.
//
// Room: test server processes. No locks: server.err is written before
// server.exited is closed, and server.once runs stop once.
package fleettest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Installed is what scripts/fleet/install.sh recorded in its env file.
type Installed struct {
	BrowserlessDir      string // the npm project (cwd of the server)
	BrowserlessMain     string // build/index.js
	BrowserlessRoutes   string // ROUTES dir: chromium and management only
	BrowserlessBrowsers string // PLAYWRIGHT_BROWSERS_PATH
	Node                string
	GridJar             string
	Java                string
	Chromedriver        string
	Chromium            string
}

// Dir is where the install script puts the fleets:
// $BROWSERPOOL_FLEET_DIR, else ${BROWSERPOOL_CACHE:-$HOME/.cache/browserpool}/fleet.
func Dir() string {
	if d := os.Getenv("BROWSERPOOL_FLEET_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("BROWSERPOOL_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "browserpool")
	}
	return filepath.Join(cache, "fleet")
}

// Install reads the install script's env file.
func Install() (Installed, error) {
	path := filepath.Join(Dir(), "env")
	f, err := os.Open(path)
	if err != nil {
		return Installed{}, fmt.Errorf("fleets not installed (%v): run scripts/fleet/install.sh (make fleet)", err)
	}
	defer f.Close()
	kv := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = v
		}
	}
	in := Installed{
		BrowserlessDir: kv["BROWSERLESS_DIR"], BrowserlessMain: kv["BROWSERLESS_MAIN"],
		BrowserlessRoutes: kv["BROWSERLESS_ROUTES"], BrowserlessBrowsers: kv["BROWSERLESS_BROWSERS"],
		Node: kv["NODE"], GridJar: kv["GRID_JAR"], Java: kv["JAVA"], Chromedriver: kv["CHROMEDRIVER"], Chromium: kv["CHROMIUM"],
	}
	for _, p := range []string{in.BrowserlessMain, in.Node, in.GridJar, in.Java, in.Chromedriver} {
		if _, err := os.Stat(p); err != nil {
			return in, fmt.Errorf("fleet install incomplete (%v): run scripts/fleet/install.sh (make fleet)", err)
		}
	}
	return in, nil
}

// unavailable fails the test under BROWSERPOOL_REQUIRE_BROWSER=1 and skips
// it otherwise.
func unavailable(tb testing.TB, what string, err error) {
	tb.Helper()
	if os.Getenv("BROWSERPOOL_REQUIRE_BROWSER") == "1" {
		tb.Fatalf("%s cannot start and BROWSERPOOL_REQUIRE_BROWSER=1: %v", what, err)
	}
	tb.Skipf("%s cannot start (set BROWSERPOOL_REQUIRE_BROWSER=1 to make this a failure): %v", what, err)
}

// server is one started server process, in its own process group.
type server struct {
	cmd    *exec.Cmd
	log    string // its combined output
	exited chan struct{}
	err    error // how it exited; read after exited is closed
	once   sync.Once
}

// freePort returns a port on 127.0.0.1 free a moment ago.
// startOnFreePort starts a server on a free 127.0.0.1 port: launch starts
// it on port and says how to tell it is ready. A port may be taken before
// the server binds it, so it tries three ports before it declares the
// server unavailable. The server is stopped at tb's cleanup.
func startOnFreePort(tb testing.TB, what string, launch func(port int) (*server, func() bool, error)) (*server, int) {
	tb.Helper()
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			unavailable(tb, what, err)
		}
		s, ready, err := launch(port)
		if err != nil {
			unavailable(tb, what, err)
		}
		if last = s.waitReady(ready); last == nil {
			tb.Cleanup(func() { s.stop(); s.logIfFailed(tb) })
			return s, port
		}
		s.stop()
	}
	unavailable(tb, what, last)
	return nil, 0
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs name args in dir (cwd), its output in logPath.
func start(cwd, logPath string, env []string, name string, args ...string) (*server, error) {
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = cwd
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, err
	}
	s := &server{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		out.Close()
		close(s.exited)
	}()
	return s, nil
}

// stop ends the server's process group: SIGTERM, then SIGKILL after 10 s,
// and waits for the server to be reaped and its group to be empty.
func (s *server) stop() { s.once.Do(s.stopOnce) }

func (s *server) stopOnce() {
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.exited
	}
	// Children of the server (its browsers) share the group: end any left.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			deadline = time.Now().Add(5 * time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail returns the last lines of the server's output.
func (s *server) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// logIfFailed logs the end of the server's output when the test failed.
func (s *server) logIfFailed(tb testing.TB) {
	if tb.Failed() {
		tb.Logf("server output (end):\n%s", s.tail())
	}
}

// waitReady polls ready until it holds, the server exits, or 60 s pass.
func (s *server) waitReady(ready func() bool) error {
	deadline := time.Now().Add(60 * time.Second)
	for !ready() {
		select {
		case <-s.exited:
			return fmt.Errorf("server exited (%v) before it was ready; output:\n%s", s.err, s.tail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server not ready after 60 s; output:\n%s", s.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// env is the servers' environment: a minimal PATH and HOME, temp and XDG
// dirs inside dir (so browsers' profiles and crash reports stay there).
func env(dir string, extra ...string) []string {
	e := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"TMPDIR=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg-config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "xdg-cache"),
	}
	return append(e, extra...)
}

// shortDir returns a new directory with a short path (Chromium's singleton
// socket path must fit in 108 bytes, which t.TempDir's long names break),
// removed at cleanup after the server has stopped.
func shortDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "fleet-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// client is the tests' HTTP client: no proxy, no idle connections.
var client = &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 10 * time.Second}

// get returns the status and body of a GET.
func get(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(b.String()), nil
}

// WaitFor polls cond every 20 ms until it holds, failing the test after
// 20 s with what it waited for.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
