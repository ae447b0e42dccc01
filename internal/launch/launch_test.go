// Room: tests of starting, using and stopping real browsers. No locks.

package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

// httpGet fetches http://127.0.0.1:port/path without keeping the connection.
func httpGet(ctx context.Context, port int, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+path, nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func TestStartAnswersGetVersionAndServesDevToolsOnLoopbackOnly(t *testing.T) {
	p := start(t, Options{})
	if !strings.Contains(p.Version(), "Chrome/") {
		t.Errorf("Version() = %q, want a Chrome product string", p.Version())
	}
	st, err := proc.StartTime(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	type ids struct {
		PGID      int
		StartTime uint64
	}
	if diff := cmp.Diff(ids{p.PID(), st}, ids{p.PGID(), p.StartTime()}); diff != "" {
		t.Errorf("own process group and start time (-want +got):\n%s", diff)
	}
	var v struct {
		Browser string `json:"Browser"`
		WS      string `json:"webSocketDebuggerUrl"`
	}
	jsonGet(t, p, "/json/version", &v)
	if diff := cmp.Diff(struct{ Browser, WS string }{p.Version(), p.WebSocketURL()}, struct{ Browser, WS string }{v.Browser, v.WS}); diff != "" {
		t.Errorf("/json/version on Port() (-want +got):\n%s", diff)
	}
	if got := listeners(t, p.Port()); !cmp.Equal(got, []string{"127.0.0.1"}) {
		t.Errorf("DevTools port %d listens on %v, want only 127.0.0.1", p.Port(), got)
	}
	for _, d := range []string{p.SessionDir(), p.UserDataDir()} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
}

// listeners returns the local addresses listening on TCP port (IPv4 and IPv6).
func listeners(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // LISTEN
				continue
			}
			addr, portHex, _ := strings.Cut(fields[1], ":")
			if n, _ := strconv.ParseUint(portHex, 16, 16); int(n) != port {
				continue
			}
			switch addr {
			case "0100007F":
				out = append(out, "127.0.0.1")
			default:
				out = append(out, addr)
			}
		}
	}
	return out
}

func TestStartThroughTheDebianWrapperTracksTheRealBinaryWithOurFlags(t *testing.T) {
	const wrapper = "/usr/bin/chromium"
	browser(t)
	if interpreter(wrapper) == "" {
		t.Skipf("%s is not a wrapper script here", wrapper)
	}
	p := start(t, Options{Executable: wrapper})
	exe, err := proc.Exe(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	if exe != p.Exe() || shells[filepath.Base(exe)] || exe == wrapper {
		t.Errorf("pid %d runs %s (Exe() = %s), want the browser binary the wrapper execs", p.PID(), exe, p.Exe())
	}
	if want := "/usr/lib/chromium/chromium"; exe != want {
		t.Errorf("pid %d runs %s, want %s (Debian's layout)", p.PID(), exe, want)
	}
	cl, err := proc.Cmdline(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, a := range Args(p.UserDataDir(), true, nil) {
		if !strings.Contains(" "+cl+" ", " "+a+" ") {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		t.Errorf("the browser's command line lacks %v:\n%s", missing, cl)
	}
}

// Chromium's zygote and its children rewrite their title over the memory
// that /proc/PID/environ shows, so only the main process and the crashpad
// handlers (which never rewrite it) still show the marker there; the others
// name the profile directory in their command line instead. Between the two,
// /proc proves every process of the browser ours.
func TestBrowserAndCrashpadCarryTheSessionMarkerAndEveryProcessNamesTheSessionDir(t *testing.T) {
	p := start(t, Options{SessionID: "marker-test"})
	openPage(t, p) // a renderer, at least
	var list []proc.Info
	// The browser forks each child before the child execs its own command
	// line: until then the fork carries the browser's command line and
	// environment (ci99 caught one). The list is read when none is
	// between fork and exec.
	eventually(t, "a renderer and two crashpad handlers name the session dir, and no child is between fork and exec", func() bool {
		list = processesIn(t, p.SessionDir())
		renderers, crashpads, forks := 0, 0, 0
		for _, in := range list {
			switch {
			case strings.Contains(in.Cmdline, "--type=renderer"):
				renderers++
			case strings.Contains(in.Cmdline, "chrome_crashpad_handler"):
				crashpads++
			case in.PID != p.PID() && in.PPID == p.PID() && !strings.Contains(in.Cmdline, " --type="):
				forks++
			}
		}
		return renderers > 0 && crashpads == 2 && forks == 0
	})
	type env struct{ Session, Config, Cache, Tmp string }
	want := env{"marker-test", filepath.Join(p.SessionDir(), XDGConfigName), filepath.Join(p.SessionDir(), XDGCacheName), TmpDir(p.SessionDir())}
	if want.Tmp == "" {
		want.Tmp = p.privateTmp // too deep for one of its own: a private one
	}
	marked := 0
	for _, in := range list {
		rewritten := strings.Contains(in.Cmdline, " --type=") && !strings.Contains(in.Cmdline, "chrome_crashpad_handler")
		if rewritten {
			if !strings.Contains(in.Cmdline, "--user-data-dir="+p.UserDataDir()) {
				t.Errorf("pid %d names the session dir but not as its --user-data-dir: %.200s", in.PID, in.Cmdline)
			}
			continue
		}
		var got env
		for name, dst := range map[string]*string{SessionEnv: &got.Session, "XDG_CONFIG_HOME": &got.Config, "XDG_CACHE_HOME": &got.Cache, "TMPDIR": &got.Tmp} {
			v, _, err := proc.Environ(in.PID, name)
			if err != nil {
				t.Fatal(err)
			}
			*dst = v
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("environment of pid %d (%.80s) (-want +got):\n%s", in.PID, in.Cmdline, diff)
		}
		marked++
	}
	if marked != 3 {
		t.Errorf("%d processes carry the marker, want 3 (the browser and two crashpad handlers):%s", marked, describe(list))
	}
	outside := 0
	for _, in := range list {
		if in.PGID != p.PGID() {
			outside++
			if !strings.Contains(in.Cmdline, "chrome_crashpad_handler") {
				t.Errorf("pid %d left the process group and is not a crashpad handler: %.100s", in.PID, in.Cmdline)
			}
		}
	}
	if outside != 2 {
		t.Errorf("%d processes outside the group, want the 2 crashpad handlers:%s", outside, describe(list))
	}
}

// Chromium makes an org.chromium.Chromium.* singleton dir in $TMPDIR; with
// TMPDIR inside the session dir it goes with the profile instead of piling
// up in /tmp. The test looks only at this browser's own environment and
// session dir, so other browsers running meanwhile cannot disturb it.
func TestBrowserSingletonDirLandsInsideTheSessionDirNotTmp(t *testing.T) {
	// A short session dir: the singleton socket's path must fit in 107
	// bytes (beside the run's root, not in the tests' own TMPDIR).
	short, err := os.MkdirTemp(filepath.Dir(testRoot), "bpl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) }) // after start's Stop
	p := start(t, Options{SessionDir: filepath.Join(short, "s")})
	openPage(t, p)
	tmp := filepath.Join(p.SessionDir(), TmpName)
	if TmpDir(p.SessionDir()) != tmp {
		t.Fatalf("TmpDir(%q) = %q, want %q", p.SessionDir(), TmpDir(p.SessionDir()), tmp)
	}
	got, ok, err := proc.Environ(p.PID(), "TMPDIR")
	if err != nil || !ok {
		t.Fatalf("TMPDIR of the browser (pid %d): %q, set=%v, err=%v", p.PID(), got, ok, err)
	}
	if got != tmp {
		t.Errorf("TMPDIR of the browser = %q, want %q", got, tmp)
	}
	// The browser's SingletonSocket link names the dir it uses: it must be
	// the one inside the session dir, not one in /tmp.
	link, err := os.Readlink(filepath.Join(p.UserDataDir(), "SingletonSocket"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, tmp+string(filepath.Separator)+"org.chromium.") {
		t.Errorf("SingletonSocket -> %s, want a path inside %s", link, tmp)
	}
}

// A session dir too deep for the singleton socket gets a private TMPDIR
// outside it (Chromium would abort otherwise), and Stop removes it with
// the singleton dir inside even after the browser was killed and could not.
func TestBrowserInADeepSessionDirStartsAndStopRemovesItsSingletonDirFromTmp(t *testing.T) {
	parent := sessionDir(t)
	t.Cleanup(func() { os.RemoveAll(parent) }) // after start's Stop
	deep := filepath.Join(parent, strings.Repeat("d", 40))
	if TmpDir(deep) != "" {
		t.Fatalf("TmpDir(%q) = %q, want \"\" (too long for a socket path)", deep, TmpDir(deep))
	}
	p := start(t, Options{SessionDir: deep})
	openPage(t, p)
	link, err := os.Readlink(filepath.Join(p.UserDataDir(), "SingletonSocket"))
	if err != nil {
		t.Fatal(err)
	}
	singleton := filepath.Dir(link)
	if _, err := os.Stat(singleton); err != nil {
		t.Fatalf("the singleton dir the profile names: %v", err)
	}
	p.Kill() // no clean exit: the browser cannot remove it itself
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(singleton); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Stop, %s: %v, want it gone", singleton, err)
	}
}

// A browser shutting down unlinks its profile's singleton links first and
// removes its singleton dir a moment later: killed in between (Stop's
// Browser.close outlasting CloseTimeout on a loaded machine; CI saw five
// such dirs left in one run), its profile names the dir no more. Stop
// removes the dir Start recorded. The test sends Browser.close and kills
// the browser as soon as the links are gone; it tries again if the
// browser was quicker and removed the dir itself (the kill proved
// nothing then).
func TestStopRemovesTheSingletonDirOfABrowserKilledMidShutdown(t *testing.T) {
	parent := sessionDir(t)
	t.Cleanup(func() { os.RemoveAll(parent) }) // after the Stops
	for try := 1; ; try++ {
		deep := filepath.Join(parent, strconv.Itoa(try), strings.Repeat("d", 40))
		p := start(t, Options{SessionDir: deep})
		openPage(t, p)
		link, err := os.Readlink(filepath.Join(p.UserDataDir(), "SingletonSocket"))
		if err != nil {
			t.Fatal(err)
		}
		singleton := filepath.Dir(link)
		if err := p.t.WriteMessage([]byte(`{"id":999001,"method":"Browser.close"}`)); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			if _, err := os.Lstat(filepath.Join(p.UserDataDir(), "SingletonSocket")); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the browser did not unlink its SingletonSocket within 10 s of Browser.close")
			}
		}
		p.Kill()
		waitFor(p.exited, ReapTimeout)
		_, statErr := os.Lstat(singleton)
		if err := p.Stop(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if statErr != nil {
			if try == 5 {
				t.Fatalf("in 5 tries the browser always removed its singleton dir before the kill landed: the test proves nothing here")
			}
			continue
		}
		if _, err := os.Lstat(singleton); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after Stop, %s: %v, want it gone", singleton, err)
		}
		return
	}
}

func TestEvaluateRunsOnTwoTargetsConcurrentlyThroughTheMux(t *testing.T) {
	p := start(t, Options{})
	pages := []page{openPage(t, p), openPage(t, p)}
	ctx := testCtx(t)
	for i, pg := range pages {
		if _, err := eval(ctx, pg.client, fmt.Sprintf("window.tag = %q", "page"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	const calls = 50
	got := make([][]string, len(pages))
	var wg sync.WaitGroup
	for i, pg := range pages {
		for g := range 2 { // two goroutines per page
			wg.Go(func() {
				for n := range calls {
					v, err := eval(ctx, pg.client, fmt.Sprintf("window.tag + '/%d/%d'", g, n))
					if err != nil {
						t.Error(err)
						return
					}
					if want := fmt.Sprintf(`"page%d/%d/%d"`, i, g, n); v != want {
						got[i] = append(got[i], fmt.Sprintf("got %s, want %s", v, want))
					}
				}
			})
		}
	}
	wg.Wait()
	if diff := cmp.Diff(make([][]string, len(pages)), got); diff != "" {
		t.Errorf("misrouted replies (-want +got):\n%s", diff)
	}
}

func TestClosingATargetFailsItsCallInFlightWithErrDetached(t *testing.T) {
	p := start(t, Options{})
	a, b := openPage(t, p), openPage(t, p)
	ctx := testCtx(t)
	errc := make(chan error, 1)
	go func() {
		_, err := eval(ctx, a.client, "globalThis.started = true; new Promise(() => {})")
		errc <- err
	}()
	eventually(t, "the never-resolving call is running in the page", func() bool {
		v, err := eval(ctx, a.client, "globalThis.started === true")
		return err == nil && v == "true"
	})
	if _, err := cdp.NewClient(muxOf(t, p).Browser()).Target.CloseTarget(ctx, target.NewCloseTargetArgs(a.id)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, cdpmux.ErrDetached) {
			t.Errorf("call in flight on the closed target: err = %v, want one wrapping cdpmux.ErrDetached", err)
		}
	case <-ctx.Done():
		t.Fatal("the call in flight on the closed target hangs")
	}
	if _, err := eval(ctx, a.client, "1"); !errors.Is(err, cdpmux.ErrDetached) {
		t.Errorf("call after the close: err = %v, want one wrapping cdpmux.ErrDetached", err)
	}
	if v, err := eval(ctx, b.client, "1+1"); err != nil || v != "2" {
		t.Errorf("the other target: eval = %q, %v; want 2", v, err)
	}
}

func TestKillingTheBrowserFailsEveryPendingCallWithItsExitStatus(t *testing.T) {
	p := start(t, Options{})
	pages := []page{openPage(t, p), openPage(t, p)}
	ctx := testCtx(t)
	const perPage = 3
	errc := make(chan error, perPage*len(pages))
	for _, pg := range pages {
		for range perPage {
			go func() {
				_, err := eval(ctx, pg.client, "globalThis.n = (globalThis.n || 0) + 1; new Promise(() => {})")
				errc <- err
			}()
		}
	}
	for _, pg := range pages {
		eventually(t, "every never-resolving call is running", func() bool {
			v, err := eval(ctx, pg.client, "globalThis.n")
			return err == nil && v == strconv.Itoa(perPage)
		})
	}
	p.Kill()
	var checkExit func(string, error)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cdpmux.ErrConnClosed) {
			t.Errorf("%s: err = %v, want class cdpmux.ErrConnClosed", what, err)
		}
		checkExit(what, err)
	}
	checkExit = func(what string, err error) {
		t.Helper()
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL || ee.PID != p.PID() {
			t.Errorf("%s: err = %v, want one wrapping *ExitError for SIGKILL of pid %d", what, err, p.PID())
		}
		if err != nil && !strings.Contains(err.Error(), "browser was killed by signal killed") {
			t.Errorf("%s: error text %q does not name the signal", what, err)
		}
		if !errors.Is(err, ErrExited) {
			t.Errorf("%s: err = %v, want class ErrExited", what, err)
		}
	}
	for i := range cap(errc) {
		select {
		case err := <-errc:
			check(fmt.Sprintf("pending call %d", i), err)
		case <-ctx.Done():
			t.Fatalf("pending call %d hangs after the browser was killed", i)
		}
	}
	<-p.Exited()
	checkExit("ExitErr()", p.ExitErr())
	_, err := eval(ctx, pages[0].client, "1")
	check("a call after the death", err)
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop after the crash: %v", err)
	}
	if _, err := os.Stat(p.SessionDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("session dir after Stop: stat err = %v, want not exist", err)
	}
}

func TestStopRemovesSessionDirAndProcessGroup(t *testing.T) {
	p := start(t, Options{})
	openPage(t, p)
	var group []proc.Info
	eventually(t, "the browser's group holds a renderer", func() bool {
		group = inGroup(t, p.PGID())
		return strings.Contains(describe(group), "--type=renderer")
	})
	all := processesIn(t, p.SessionDir())
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.SessionDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("session dir after Stop: stat err = %v, want not exist", err)
	}
	if left := inGroup(t, p.PGID()); len(left) > 0 {
		t.Errorf("process group %d still has members after Stop:%s", p.PGID(), describe(left))
	}
	if left := processesIn(t, p.SessionDir()); len(left) > 0 {
		t.Errorf("processes naming the session dir after Stop:%s", describe(left))
	}
	for _, in := range append(group, all...) {
		if st, err := proc.StartTime(in.PID); err == nil && st == in.StartTime && proc.Alive(in.PID) {
			t.Errorf("pid %d (%.80s) outlived Stop", in.PID, in.Cmdline)
		}
	}
	if !errors.Is(p.ExitErr(), ErrExited) {
		t.Errorf("ExitErr() after Stop = %v, want an *ExitError", p.ExitErr())
	}
}

func TestStopIsIdempotentAndSafeToCallConcurrently(t *testing.T) {
	p := start(t, Options{})
	ctx := testCtx(t)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop(ctx) })
	}
	wg.Wait()
	errs = append(errs, p.Stop(ctx))
	if diff := cmp.Diff(make([]error, 5), errs, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
		t.Errorf("Stop results (-want +got):\n%s", diff)
	}
}

func TestNoPipeModeConnectsOverTheWebSocketAndStops(t *testing.T) {
	p := start(t, Options{NoPipe: true})
	cl, err := proc.Cmdline(p.PID())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cl, "--remote-debugging-pipe") {
		t.Errorf("NoPipe browser runs with --remote-debugging-pipe: %s", cl)
	}
	pg := openPage(t, p)
	if v, err := eval(testCtx(t), pg.client, "1+1"); err != nil || v != "2" {
		t.Errorf("eval over the websocket = %q, %v; want 2", v, err)
	}
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if left := processesIn(t, p.SessionDir()); len(left) > 0 {
		t.Errorf("processes naming the session dir after Stop:%s", describe(left))
	}
}

func TestHostKilledBySIGKILLTakesDownTheWholeBrowserTree(t *testing.T) {
	browser(t)
	dir := sessionDir(t)
	t.Cleanup(func() { os.RemoveAll(dir) }) // the dead host cannot remove it
	host := exec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), helperEnv+"=host", helperDirEnv+"="+dir)
	host.Stderr = os.Stderr
	stdin, err := host.StdinPipe() // closing it makes a surviving host stop its browser
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); host.Process.Kill(); host.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the host's report: %v (got %q)", err, line)
	}
	var pid, pgid int
	if _, err := fmt.Sscanf(line, "pid=%d pgid=%d", &pid, &pgid); err != nil {
		t.Fatalf("host said %q", line)
	}
	// Nor its browser's private TMPDIR, when dir is too deep for its own.
	t.Cleanup(func() { RemovePrivateTmp(dir) })
	var before []proc.Info
	eventually(t, "the browser tree is up", func() bool {
		before = processesIn(t, dir)
		return len(before) >= 3
	})
	killed := time.Now()
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	eventually(t, "no process names the session dir or carries its marker", func() bool {
		left, err := leakcheck.Processes(dir)
		return err == nil && len(left) == 0 && len(processesIn(t, dir)) == 0
	})
	// A member killed a moment ago reads an empty command line once its
	// memory is released, before it is gone: the group must empty too.
	for deadline, left := time.Now().Add(90*time.Second), inGroup(t, pgid); len(left) > 0; left = inGroup(t, pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d has members 90 s after the host died:%s", pgid, describe(left))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%d browser processes (main pid %d, group %d) gone %v after the host's SIGKILL", len(before), pid, pgid, time.Since(killed).Round(time.Millisecond))
}

func TestStartReportsTheExitStatusAndOutputOfABrowserThatDies(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fake-browser")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'boom: no display' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := sessionDir(t)
	_, err := Start(testCtx(t), Options{Executable: fake, SessionDir: dir})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start = %v, want a *StartError", err)
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("Start = %v, want it to wrap an *ExitError with status 3", err)
	}
	want := "launch: starting " + fake + ": waiting for Browser.getVersion: browser exited with status 3\nbrowser output (tail):\nboom: no display"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the session dir Start created: stat err = %v, want it removed", err)
	}
}

func TestOnSpawnErrorKillsTheBrowserAndRemovesOnlyWhatStartCreated(t *testing.T) {
	exe := browser(t)
	dir := sessionDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	mine := filepath.Join(dir, "caller-file")
	if err := os.WriteFile(mine, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	errManifest := errors.New("manifest disk full")
	var sp Spawn
	_, err := Start(testCtx(t), Options{Executable: exe, SessionDir: dir, OnSpawn: func(s Spawn) error {
		sp = s
		if !proc.Alive(s.PID) {
			return errors.New("OnSpawn saw no live process")
		}
		return errManifest
	}})
	if !errors.Is(err, errManifest) {
		t.Fatalf("Start = %v, want OnSpawn's error", err)
	}
	boot, _ := proc.BootID()
	if diff := cmp.Diff(Spawn{PID: sp.PID, PGID: sp.PID, StartTime: sp.StartTime, BootID: boot, SessionDir: dir, Executable: exe}, sp); diff != "" || sp.PID <= 0 || sp.StartTime == 0 {
		t.Errorf("Spawn (-want +got):\n%s", diff)
	}
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL {
		t.Errorf("Start = %v, want the exit of the killed browser in it", err)
	}
	if left := inGroup(t, sp.PGID); len(left) > 0 {
		t.Errorf("process group of the aborted start:%s", describe(left))
	}
	if left := processesIn(t, dir); len(left) > 0 {
		t.Errorf("processes naming the session dir after the aborted start:%s", describe(left))
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"caller-file"}, names); diff != "" {
		t.Errorf("session dir the caller made, after the aborted start (-want +got):\n%s", diff)
	}
}

func TestStartGivesUpWhenItsContextEndsAndCleansUp(t *testing.T) {
	exe := browser(t)
	dir := sessionDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := Start(ctx, Options{Executable: exe, SessionDir: dir, OnSpawn: func(Spawn) error {
		cancel() // the caller leaves while the browser starts
		return nil
	}})
	var se *StartError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) || se.Exit == nil {
		t.Fatalf("Start = %v, want a *StartError wrapping context.Canceled with the exit status", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("session dir after the cancelled start: stat err = %v, want removed", err)
	}
	if left := processesIn(t, dir); len(left) > 0 {
		t.Errorf("processes after the cancelled start:%s", describe(left))
	}
}

func TestOptionsAreCheckedBeforeAnythingIsCreated(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "never-run")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := sessionDir(t)
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Executable: exe}, "launch: Options.SessionDir is empty: give each browser its own directory"},
		{Options{Executable: exe, SessionDir: dir, SessionID: "a/b"}, `launch: Options.SessionID "a/b" is invalid: use 1 to 64 of A-Z a-z 0-9 _ -`},
		{Options{Executable: exe, SessionDir: filepath.Join(dir, "x.y")}, `launch: Options.SessionID (defaulted to the base name of SessionDir) "x.y" is invalid: use 1 to 64 of A-Z a-z 0-9 _ -`},
	} {
		_, err := Start(context.Background(), tc.opts)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Start(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a rejected Start created %s", dir)
	}
}

func TestExitErrorNamesStatusOrSignal(t *testing.T) {
	var got []string
	for _, e := range []*ExitError{{Code: 1}, {Code: 0}, {Code: -1, Signal: syscall.SIGKILL}, {Code: -1, Signal: syscall.SIGSEGV}} {
		got = append(got, e.Error())
	}
	want := []string{"browser exited with status 1", "browser exited with status 0", "browser was killed by signal killed", "browser was killed by signal segmentation fault"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseActivePortWaitsForBothWholeLines(t *testing.T) {
	const path = "/devtools/browser/3c50266d-b0f7-4cc9-be66-d8ef9ac43da3"
	type res struct {
		Port int
		Path string
		OK   bool
	}
	for in, want := range map[string]res{
		"40831\n" + path:          {40831, path, true},
		"40831\n" + path + "\n":   {40831, path, true},
		"408":                     {},
		"40831\n":                 {},
		"40831\n" + path[:30]:     {},
		"0\n" + path:              {},
		"x\n" + path:              {},
		"40831\n/devtools/page/x": {},
	} {
		var got res
		got.Port, got.Path, got.OK = parseActivePort([]byte(in))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("parseActivePort(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestTailKeepsTheLastBytesFromALineStart(t *testing.T) {
	tl := tail{max: 16}
	tl.write([]byte("first line\nsecond\n"))
	tl.write([]byte("third\n"))
	if diff := cmp.Diff("second\nthird\n", tl.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	short := tail{max: 100}
	short.write([]byte("only\n"))
	if diff := cmp.Diff("only\n", short.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEvaluateOfALargeArgumentPassesThroughThePipe(t *testing.T) {
	p := start(t, Options{})
	pg := openPage(t, p)
	big := strings.Repeat("x", 1<<20)
	v, err := eval(testCtx(t), pg.client, fmt.Sprintf("%q.length", big))
	if err != nil || v != strconv.Itoa(len(big)) {
		t.Errorf("eval of a 1 MiB expression = %q, %v; want %d", v, err, len(big))
	}
}

// onExitingThread runs f on an OS thread that the runtime terminates when f
// returns, and returns that thread's id. The main thread is never
// terminated (the runtime wedges it instead), so a goroutine that lands on
// it holds it while f runs on another.
func onExitingThread(f func()) (tid int) {
	done := make(chan int)
	go func() {
		goruntime.LockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			t := onExitingThread(f)
			goruntime.UnlockOSThread()
			done <- t
			return
		}
		f()
		done <- syscall.Gettid() // and exit locked: the thread ends
	}()
	return <-done
}

// The parent-death signal fires when the OS thread that forked the browser
// exits. Start must fork from a thread of its own that lives as long as the
// browser, not from whichever thread its caller happens to run on.
func TestBrowserSurvivesTheExitOfTheThreadThatCalledStart(t *testing.T) {
	exe := browser(t)
	var p *Process
	var err error
	tid := onExitingThread(func() {
		p, err = Start(testCtx(t), Options{Executable: exe, SessionDir: sessionDir(t)})
	})
	if err != nil {
		t.Fatal(err)
	}
	manage(t, p)
	eventually(t, "the calling thread has exited", func() bool {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
		return errors.Is(err, fs.ErrNotExist)
	})
	// The kernel sends the parent-death signal as the thread exits; an
	// evaluate needs the browser and a renderer alive after that.
	pg := openPage(t, p)
	if v, err := eval(testCtx(t), pg.client, "1+1"); err != nil || v != "2" {
		t.Fatalf("eval after the calling thread exited = %q, %v; want 2", v, err)
	}
	if err := p.ExitErr(); err != nil {
		t.Fatalf("the browser died with its caller's thread: %v", err)
	}
}

func TestStopWithAnEndedContextStillKillsAndCleansUp(t *testing.T) {
	p := start(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop(ended ctx) = %v, want nil: the cleanup does not depend on ctx", err)
	}
	if _, err := os.Stat(p.SessionDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("session dir after Stop: stat err = %v, want not exist", err)
	}
	if left := processesIn(t, p.SessionDir()); len(left) > 0 {
		t.Errorf("processes naming the session dir after Stop:%s", describe(left))
	}
	var ee *ExitError
	if !errors.As(p.ExitErr(), &ee) || ee.Signal != syscall.SIGKILL {
		t.Errorf("ExitErr() = %v, want SIGKILL: an ended ctx skips the graceful close", p.ExitErr())
	}
}

func TestAUsersDisableFeaturesJoinsTheQuietFeaturesInOneSwitch(t *testing.T) {
	args := ArgsPort("/p/user-data", true, false, []string{"--disable-features=Translate,MediaRouter", "--lang=fr", "--gaia-url=https://example.test/"})

	var features []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			features = append(features, v)
		}
	}
	// Chromium obeys only the last --disable-features: one switch with all.
	if diff := cmp.Diff([]string{"NetworkTimeServiceQuerying,OptimizationHints,AutofillServerCommunication,Translate,MediaRouter"}, features); diff != "" {
		t.Errorf("--disable-features switches (-want +got):\n%s", diff)
	}
	// The user's other flags follow the pool's, so theirs win (the last
	// of a switch counts), and the initial URL stays last.
	gaia := slices.Index(args, "--gaia-url=https://example.test/")
	if ours := slices.Index(args, "--gaia-url=http://127.0.0.1:9/"); ours < 0 || gaia < ours || !slices.Contains(args, "--lang=fr") || args[len(args)-1] != "about:blank" {
		t.Errorf("command line %q: want the pool's --gaia-url before the user's, --lang=fr kept and about:blank last", args)
	}
}
