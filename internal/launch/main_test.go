// Room: the test harness of launch: TestMain and its leak gate, the host
// helper process, browser and page helpers. No locks.

package launch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

// Environment of the test binary.
const (
	requireBrowserEnv = "BROWSERPOOL_REQUIRE_BROWSER" // "1": a missing browser fails the tests instead of skipping them
	helperEnv         = "BROWSERPOOL_TEST_HELPER"     // "host": run as the host process of TestHostKilledBySIGKILL...
	helperDirEnv      = "BROWSERPOOL_TEST_SESSION_DIR"
)

// testRoot holds every session directory of this run; TestMain fails the run
// if a process or an entry under it, or a goroutine, outlives the tests.
var testRoot string

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{
		Root: &testRoot, Prefix: "browserpool-launch-test-",
		HelperEnv: helperEnv, Helper: func(mode string) int {
			if mode != "host" {
				fmt.Fprintf(os.Stderr, "%s=%q: the only helper is \"host\"\n", helperEnv, mode)
				return 2
			}
			return runHost()
		},
	})
}

// runHost is the host process of the host-SIGKILL test: it starts a browser
// in the directory it is given, prints "pid=P pgid=G", and keeps it until its
// stdin closes (or it is killed, which is the point).
func runHost() int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p, err := Start(ctx, Options{SessionDir: os.Getenv(helperDirEnv)})
	cancel()
	if err != nil {
		fmt.Printf("error: %v\n", strings.ReplaceAll(err.Error(), "\n", " | "))
		return 1
	}
	fmt.Printf("pid=%d pgid=%d\n", p.PID(), p.PGID())
	io.Copy(io.Discard, os.Stdin)
	if err := p.Stop(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// browser returns the browser to test with, or skips the test (fails it
// under BROWSERPOOL_REQUIRE_BROWSER=1) when there is none.
func browser(t testing.TB) string {
	t.Helper()
	exe, err := Find("")
	if err != nil {
		if os.Getenv(requireBrowserEnv) == "1" {
			t.Fatalf("%s=1 and no browser: %v", requireBrowserEnv, err)
		}
		t.Skipf("skipping: needs a Chromium-family browser (set %s=1 to fail instead): %v", requireBrowserEnv, err)
	}
	return exe
}

var dirSeq atomic.Int64

// sessionDir returns a fresh, not yet existing session directory under the
// run's root, named after the test (and so a valid session id).
func sessionDir(t testing.TB) string {
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 50 {
		name = name[:50]
	}
	return filepath.Join(testRoot, name+"-"+strconv.FormatInt(dirSeq.Add(1), 10))
}

// start starts a browser for the test (the one Find finds unless opts says
// otherwise) and stops it when the test ends, failing the test if Stop
// reports anything.
func start(t testing.TB, opts Options) *Process {
	t.Helper()
	if opts.Executable == "" {
		opts.Executable = browser(t)
	}
	if opts.SessionDir == "" {
		opts.SessionDir = sessionDir(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	manage(t, p)
	return p
}

// manage builds a mux on p's transport, as a pool does, and stops p and
// closes the mux when the test ends, failing the test if Stop reports
// anything.
func manage(t testing.TB, p *Process) {
	t.Helper()
	m, err := cdpmux.New(p.Transport(), cdpmux.Options{Cause: p.Cause})
	if err != nil {
		t.Fatal(err)
	}
	muxes.Store(p, m)
	t.Cleanup(func() {
		if err := p.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
		m.Close()
		muxes.Delete(p)
	})
}

// muxes holds the mux manage built for each browser.
var muxes sync.Map // *Process -> *cdpmux.Mux

// muxOf returns the mux manage built on p's transport.
func muxOf(t testing.TB, p *Process) *cdpmux.Mux {
	t.Helper()
	m, ok := muxes.Load(p)
	if !ok {
		t.Fatal("muxOf: the browser is not managed (start it with start, or call manage)")
	}
	return m.(*cdpmux.Mux)
}

// testCtx bounds one step of a test; a hang fails the test instead of the run.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// page is one attached target.
type page struct {
	id     target.ID
	client *cdp.Client
	conn   *rpcc.Conn
}

// openPage creates an about:blank target and attaches to it through the mux.
func openPage(t testing.TB, p *Process) page {
	t.Helper()
	ctx := testCtx(t)
	tgt, err := cdp.NewClient(muxOf(t, p).Browser()).Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := muxOf(t, p).Attach(ctx, string(tgt.TargetID))
	if err != nil {
		t.Fatal(err)
	}
	return page{id: tgt.TargetID, client: cdp.NewClient(conn), conn: conn}
}

// eval evaluates expr in the page (awaiting a promise) and returns its value
// as JSON text.
func eval(ctx context.Context, c *cdp.Client, expr string) (string, error) {
	r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(expr).SetReturnByValue(true).SetAwaitPromise(true))
	if err != nil {
		return "", err
	}
	if r.ExceptionDetails != nil {
		return "", r.ExceptionDetails
	}
	return string(r.Result.Value), nil
}

// eventually polls cond every 10 ms until it holds, failing the test after
// 20 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processesIn returns the live processes whose command line names dir.
func processesIn(t testing.TB, dir string) []proc.Info {
	t.Helper()
	list, err := proc.List(func(in proc.Info) bool {
		return in.State != 'Z' && strings.Contains(in.Cmdline, dir+"/")
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// inGroup returns the live processes of process group pgid.
func inGroup(t testing.TB, pgid int) []proc.Info {
	t.Helper()
	list, err := proc.List(func(in proc.Info) bool { return in.PGID == pgid && in.State != 'Z' })
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func describe(list []proc.Info) string {
	var b strings.Builder
	for _, in := range list {
		cl := in.Cmdline
		if len(cl) > 120 {
			cl = cl[:120]
		}
		fmt.Fprintf(&b, "\n  pid %d pgid %d: %s", in.PID, in.PGID, cl)
	}
	return b.String()
}

// jsonGet decodes JSON from a DevTools HTTP endpoint of p.
func jsonGet(t testing.TB, p *Process, path string, v any) {
	t.Helper()
	b, err := httpGet(testCtx(t), p.Port(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, b)
	}
}
