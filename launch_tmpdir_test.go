package browserpool_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/launch"
	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/proc"
)

// browserTmpdir returns the TMPDIR in the environment of session s's
// browser.
func browserTmpdir(t *testing.T, s *browserpool.Session) string {
	t.Helper()
	v, ok, err := proc.Environ(s.Info().PID, "TMPDIR")
	if err != nil || !ok {
		t.Fatalf("TMPDIR of the browser (pid %d): %q, set=%v, err=%v", s.Info().PID, v, ok, err)
	}
	return v
}

// A Root over 34 bytes leaves no room for a TMPDIR inside the session dir,
// and a host TMPDIR of 70 bytes is too long for Chromium's singleton socket
// too: the browser still starts, on a short private TMPDIR, and leaves
// nothing in the host's.
func TestALongRootAndALongTmpdirStillLaunchAndLeaveNothingInTmpdir(t *testing.T) {
	requireBrowser(t)
	base, err := os.MkdirTemp("/tmp", "bpt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	long := filepath.Join(base, strings.Repeat("t", 70-len(base)-1))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	root := newRoot(t)
	if len(root) <= 34 {
		t.Fatalf("root %s is %d bytes: too short to prove anything", root, len(root))
	}
	p := newRealPool(t, browserpool.Config{Root: root})
	ctx := ctxT(t)
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatalf("Open with TMPDIR=%s (%d bytes) and Root=%s (%d bytes): %v", long, len(long), root, len(root), err)
	}
	tmp := browserTmpdir(t, s)
	if strings.HasPrefix(tmp, long) || strings.HasPrefix(tmp, root+"/") || len(tmp) > launch.MaxTmpDir {
		t.Errorf("TMPDIR of the browser = %s (%d bytes), want a private one of at most %d bytes outside the host's TMPDIR and the root", tmp, len(tmp), launch.MaxTmpDir)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Close, the browser's TMPDIR %s: %v, want it gone", tmp, err)
	}
	if left := leakcheck.SingletonDirs(long); len(left) > 0 {
		t.Errorf("singleton dirs left in the host's TMPDIR: %v", left)
	}
}

// A host killed while it closed a session (Chromium had already removed
// its profile's singleton links, so the profile names its singleton dir no
// more) leaves that dir in the browser's TMPDIR: with a Root too long for
// a TMPDIR inside the session dir, the next pool's sweep still removes it.
func TestSweepRemovesTheTmpdirOfABrowserWhoseHostDiedAsItClosed(t *testing.T) {
	requireBrowser(t)
	root := newRoot(t)
	host, pids := startHostN(t, root, "ready", false, 1)
	dirs, err := filepath.Glob(filepath.Join(root, "sessions", "*"))
	if err != nil || len(dirs) != 1 {
		t.Fatalf("session dirs of the host: %v, %v; want one", dirs, err)
	}
	dir := dirs[0]
	if launch.TmpDir(dir) != "" {
		t.Fatalf("session dir %s holds a TMPDIR of its own: the test proves nothing", dir)
	}
	userData := filepath.Join(dir, launch.UserDataDirName)
	link, err := os.Readlink(filepath.Join(userData, "SingletonSocket"))
	if err != nil {
		t.Fatal(err)
	}
	singleton := filepath.Dir(link)
	t.Cleanup(func() { os.RemoveAll(singleton) }) // wherever the code under test left it
	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	waitFor(t, fmt.Sprintf("the browser %d to die with its host", pids[0]), func() bool {
		left, err := leakcheck.Processes(dir)
		return err == nil && len(left) == 0
	})
	// What a browser killed in the middle of its shutdown leaves: its dir,
	// which the profile no longer names.
	for _, name := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		if err := os.Remove(filepath.Join(userData, name)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	private, err := launch.PrivateTmpDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range append([]string{singleton, dir}, private...) {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after the sweep, %s: %v, want it gone", path, err)
		}
	}
}

// Leftovers of a browser killed before a reboot: its profile's lock names
// a pid that is alive again, as another program. The sweep does not wait
// for it, and removes the singleton dir the profile names.
func TestSweepRemovesTheSingletonDirOfABrowserWhosePidWasReused(t *testing.T) {
	root := newRoot(t)
	userData := filepath.Join(root, "sessions", "s-reused", "user-data")
	if err := os.MkdirAll(userData, 0o700); err != nil {
		t.Fatal(err)
	}
	singleton := filepath.Join(t.TempDir(), "org.chromium.Chromium.reuse1")
	if err := os.Mkdir(singleton, 0o700); err != nil {
		t.Fatal(err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{
		{filepath.Join(singleton, "SingletonCookie"), "77"},
		{filepath.Join(userData, "SingletonCookie"), "77"},
		{filepath.Join(userData, "SingletonSocket"), filepath.Join(singleton, "SingletonSocket")},
		{filepath.Join(userData, "SingletonLock"), fmt.Sprintf("%s-%d", host, os.Getpid())}, // alive, and no browser
	} {
		if err := os.Symlink(l[1], l[0]); err != nil {
			t.Fatal(err)
		}
	}
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, path := range []string{singleton, filepath.Dir(userData)} {
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after the sweep, %s: %v, want it gone", path, err)
		}
	}
}

// On a full disk the browser never becomes ready: Open fails as soon as
// that shows, saying the disk is full and where to free space, not at the
// end of LaunchTimeout with a hint to raise it. Needs a tmpfs mount
// (root); skipped where mounting is not allowed.
func TestOpenOnAFullDiskSaysTheDiskIsFullAndWhereToFreeSpace(t *testing.T) {
	requireBrowser(t)
	mnt, err := os.MkdirTemp("/tmp", "bpfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(mnt) })
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	root := filepath.Join(mnt, "r")
	p := newRealPool(t, browserpool.Config{Root: root})
	// Room for the manifest, not for a profile.
	fill := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(mnt, "filler"), "bs=4k", "count=480")
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("filling the tmpfs: %v %s", err, out)
	}
	_, err = p.Open(ctxT(t))
	if !errors.Is(err, browserpool.ErrLaunchFailed) || errors.Is(err, browserpool.ErrTimeout) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Open on a full disk = %v, want ErrLaunchFailed (ENOSPC), not ErrTimeout", err)
	}
	for _, want := range []string{"the disk is full: the file system of " + root, "(hint: free space on the file system of Config.Root (" + root + ")"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open on a full disk = %v\nwant it to say %q", err, want)
		}
	}
	if diff := cmp.Diff([]string{}, dirNames(t, filepath.Join(root, "sessions"))); diff != "" {
		t.Errorf("session dirs after the failed launch (-want +got):\n%s", diff)
	}
}

// dirNames returns the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	names := []string{}
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}
