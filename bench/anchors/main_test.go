// Room: the test binary's TestMain (the leak gate) and the helpers every
// test and benchmark of the anchors shares. No locks.

package anchors_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/browserpool/browserpool/internal/leakcheck"
)

// testRoot holds every browser's files of this test binary (each side's
// session directories and pools' roots), so that TestMain can prove that
// no process, file or goroutine outlived the tests. Its prefix is short
// because a session directory's path plus Chromium's singleton socket must
// fit in a Unix socket path (launch.TmpDir).
var testRoot string

// footprintEnv makes this test binary a footprint child (see
// runFootprint): its value is the side to measure; footprintRootEnv names
// the directory the child's browser lives in.
const (
	footprintEnv     = "BROWSERPOOL_ANCHORS_FOOTPRINT"
	footprintRootEnv = "BROWSERPOOL_ANCHORS_FOOTPRINT_ROOT"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{
		Root: &testRoot, Prefix: "bpanchors-",
		HelperEnv: footprintEnv, Helper: runFootprint,
	})
}

// newDir returns a fresh directory under testRoot, removed at cleanup
// (after the browsers registered later have stopped).
func newDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp(testRoot, "e")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// requireExe skips or fails (BROWSERPOOL_REQUIRE_BROWSER=1) without a
// browser, and returns the executable every side starts.
func requireExe(tb testing.TB) string {
	tb.Helper()
	leakcheck.RequireBrowser(tb)
	exe, err := findExe()
	if err != nil {
		if os.Getenv(leakcheck.RequireEnv) == "1" {
			tb.Fatal("the anchors start chromium from PATH: ", err)
		}
		tb.Skip("the anchors start chromium from PATH: ", err)
	}
	return exe
}

// pageTitle is the local page's title.
const pageTitle = "anchors"

// newPageServer serves the local page every navigation loads (as
// bench_floor_test.go's newFloorEnv does), on 127.0.0.1, closed at cleanup.
func newPageServer(tb testing.TB) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>"+pageTitle+"</title><p>hello</p>")
	}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/"
}
