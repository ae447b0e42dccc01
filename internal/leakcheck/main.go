// Room: the TestMain every package of the module runs. No locks.

package leakcheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// MainOptions says what Main sets up around a package's tests. The zero
// value runs the tests and checks only for leaked goroutines.
type MainOptions struct {
	// Root, if set, receives a fresh temporary directory (named after
	// Prefix) before the tests run. Tests put every browser's files under
	// it; after the tests, Check proves it empty and no process names it,
	// and Main removes it.
	Root *string
	// Prefix names the temporary root ("browserpool-<pkg>-test-"). Zero
	// means "browserpool-test-".
	Prefix string
	// HelperEnv and Helper make the test binary double as a helper process
	// (a host a test SIGKILLs, for example): when the environment variable
	// HelperEnv is set and not empty, Helper runs with its value instead of
	// the tests, and its result is the exit status.
	HelperEnv string
	Helper    func(value string) int
	// AfterTests, if set, runs after the tests and before the check: it
	// ends what the package's tests share (a pool kept across -count runs).
	AfterTests func()
}

// Main is the TestMain of every package of this module:
//
//	func TestMain(m *testing.M) {
//		leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-mypkg-test-"})
//	}
//
// It runs the helper when asked to (see MainOptions.HelperEnv), else
// creates the root, runs the tests, then runs Check on the root and fails
// the run if a process, an entry under the root or a goroutine outlived the
// tests. It never returns: it exits with the tests' status.
func Main(m *testing.M, opts MainOptions) {
	if opts.HelperEnv != "" && opts.Helper != nil {
		if v := os.Getenv(opts.HelperEnv); v != "" {
			os.Exit(opts.Helper(v))
		}
	}
	var roots []string
	if opts.Root != nil {
		prefix := opts.Prefix
		if prefix == "" {
			prefix = "browserpool-test-"
		}
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "leakcheck:", err)
			os.Exit(2)
		}
		*opts.Root = dir
		roots = append(roots, dir)
	}
	code := m.Run()
	if opts.AfterTests != nil {
		opts.AfterTests()
	}
	if err := Check(context.Background(), roots...); err != nil {
		fmt.Fprintln(os.Stderr, "leak check:", err)
		if code == 0 {
			code = 1
		}
	}
	for _, r := range roots {
		os.RemoveAll(r)
	}
	os.Exit(code)
}

// RequireEnv set to "1" makes a missing browser fail real-browser tests
// instead of skipping them (make test and CI set it).
const RequireEnv = "BROWSERPOOL_REQUIRE_BROWSER"

// RequireBrowser skips a real-browser test when no Chromium-family browser
// is on PATH, unless RequireEnv is "1", when it fails instead. Every
// package's real-browser tests call it (directly or through a helper).
func RequireBrowser(tb testing.TB) {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatal("no Chromium found and " + RequireEnv + "=1: install the Debian package chromium (make test does)")
	}
	tb.Skip("no Chromium found; set " + RequireEnv + "=1 to make this a failure")
}
