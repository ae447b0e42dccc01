// Room: the TestMain every package of the module runs. No locks.

package leakcheck

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// MainOptions says what Main sets up around a package's tests. The zero
// value runs the tests and checks only for leaked goroutines.
type MainOptions struct {
	// Root, if set, receives a fresh temporary directory (named after
	// Prefix) before the tests run. Tests put every browser's files under
	// it; after the tests, Check proves it empty and no process names it,
	// and Main removes it.
	//
	// With Root set, Main also gives the tests, and every process they
	// start, a TMPDIR of their own (a second temporary directory), and
	// fails the run if a browser left its singleton dir there
	// (org.chromium.Chromium.*, com.google.Chrome.*): Chromium makes one in
	// $TMPDIR when its session dir is too deep to hold it, and only its
	// clean exit or the pool's cleanup removes it. An empty one (a browser
	// killed between making it and linking it from its profile, which
	// nothing can prove a browser's) is only noted.
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
	var tmp string // the tests' TMPDIR
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
		if tmp, err = os.MkdirTemp("", prefix+"tmp-"); err == nil {
			err = os.Setenv("TMPDIR", tmp)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "leakcheck:", err)
			os.RemoveAll(dir)
			os.Exit(2)
		}
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
	var left, empty []string
	for _, d := range SingletonDirs(tmp) {
		var names []string
		if des, err := os.ReadDir(d); err == nil {
			for _, de := range des {
				name := de.Name()
				if target, err := os.Readlink(filepath.Join(d, name)); err == nil {
					name += " -> " + target
				}
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			// Killed between making it and linking it from its profile:
			// nothing names it, nobody can prove it a browser's.
			empty = append(empty, d)
			continue
		}
		made := ""
		if fi, err := os.Stat(d); err == nil {
			made = ", made " + fi.ModTime().Format("15:04:05.000")
		}
		left = append(left, fmt.Sprintf("%s (holding %v%s)", d, names, made))
	}
	if len(empty) > 0 {
		fmt.Fprintf(os.Stderr, "leak check: note: %d empty singleton dirs in TMPDIR, of browsers killed as they started (no profile names them): %s\n", len(empty), strings.Join(empty, " "))
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "leak check: browsers left %d singleton dirs in TMPDIR (a killed browser's, which whoever ended it must remove): %s\n", len(left), strings.Join(left, " "))
		if code == 0 {
			code = 1
		}
	}
	for _, r := range roots {
		os.RemoveAll(r)
	}
	if tmp != "" {
		os.RemoveAll(tmp)
	}
	os.Exit(code)
}

// SingletonDirs returns the browsers' singleton dirs (org.chromium.* and
// com.google.* directories) directly in dir; nil for "".
func SingletonDirs(dir string) []string {
	if dir == "" {
		return nil
	}
	des, _ := os.ReadDir(dir)
	var left []string
	for _, de := range des {
		if de.IsDir() && (strings.HasPrefix(de.Name(), "org.chromium.") || strings.HasPrefix(de.Name(), "com.google.")) {
			left = append(left, filepath.Join(dir, de.Name()))
		}
	}
	return left
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
