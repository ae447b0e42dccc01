package launch

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deepSessionDir returns a session dir too deep for a singleton dir of its
// own (TmpDir gives none): its browser makes one in a private TMPDIR.
func deepSessionDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(sessionDir(t), strings.Repeat("d", 40))
	if TmpDir(dir) != "" {
		t.Fatalf("TmpDir(%q) = %q, want \"\" (too long for a socket path)", dir, TmpDir(dir))
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dir)) })
	return dir
}

// A start that fails after the browser made its singleton dir (here
// OnSpawn's error, once the profile names the dir) removes that dir, in
// the private TMPDIR, with the rest: the killed browser cannot.
func TestAStartThatFailsAfterTheBrowserMadeItsSingletonDirRemovesIt(t *testing.T) {
	exe := browser(t)
	dir := deepSessionDir(t)
	var singleton string
	errLate := errors.New("the caller's record failed late")
	_, err := Start(testCtx(t), Options{Executable: exe, SessionDir: dir, OnSpawn: func(Spawn) error {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			// Chromium links the socket, then the profile's cookie, then
			// the singleton dir's: wait for the last.
			if link, err := os.Readlink(filepath.Join(dir, UserDataDirName, singletonSocket)); err == nil {
				if _, err := os.Readlink(filepath.Join(filepath.Dir(link), singletonCookie)); err == nil {
					singleton = filepath.Dir(link)
					return errLate
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return errors.New("the browser made no singleton dir in 30 s")
	}})
	if !errors.Is(err, errLate) {
		t.Fatalf("Start = %v, want OnSpawn's error after the singleton dir appeared", err)
	}
	if strings.HasPrefix(singleton, dir+string(filepath.Separator)) {
		t.Fatalf("the singleton dir %s is inside the session dir: the test proves nothing", singleton)
	}
	if _, err := os.Lstat(singleton); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the failed start, the singleton dir %s: %v, want it gone", singleton, err)
	}
}

// A browser killed on a profile leaves the profile naming its singleton
// dir; the next Start on that profile removes it before the browser makes
// its own.
func TestAStartOnAProfileRemovesTheSingletonDirAKilledBrowserLeft(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := fakeSingleton(t, profile, deadPID(t), "4242")
	p := start(t, Options{SessionDir: deepSessionDir(t), Profile: profile})
	openPage(t, p)
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the singleton dir a killed browser left: %v, want it gone", err)
	}
	link, err := os.Readlink(filepath.Join(profile, singletonSocket))
	if err != nil || filepath.Dir(link) == stale {
		t.Errorf("the profile's SingletonSocket after the start: %q, %v; want the new browser's", link, err)
	}
}

// RemoveSingletonDir removes a dir only when the profile proves it the
// dead browser's: its lock names that browser, and the dir is a real
// singleton dir with the profile's cookie, outside the session dir. A
// sweep takes a live pid that runs no browser on the profile for a reused
// one (after a reboot): the browser is gone.
func TestRemoveSingletonDirRemovesOnlyWhatTheProfileProvesTheBrowsers(t *testing.T) {
	dead := deadPID(t)
	live := os.Getpid()
	for _, tc := range []struct {
		name       string
		lockPID    int  // the pid the profile's SingletonLock names
		onProfile  bool // the lock names instead a live process whose command line names the profile
		pid        int  // RemoveSingletonDir's pid
		mutate     func(t *testing.T, profile, dir string)
		wantRemove bool
	}{
		{name: "the named browser's, after its kill", lockPID: dead, pid: dead, wantRemove: true},
		{name: "a dead browser's, found by a sweep", lockPID: dead, pid: 0, wantRemove: true},
		{name: "a dead browser's, found by a start on its profile", lockPID: dead, pid: -1, wantRemove: true},
		{name: "a live process's, found by a start on its profile", lockPID: live, pid: -1},
		{name: "another browser's than the one stopped", lockPID: dead, pid: dead + 1},
		{name: "a live browser's on the profile, found by a sweep", onProfile: true, pid: 0},
		{name: "a reused pid's, found by a sweep", lockPID: live, pid: 0, wantRemove: true},
		{name: "another cookie's", lockPID: dead, pid: dead, mutate: func(t *testing.T, _, dir string) {
			relink(t, filepath.Join(dir, singletonCookie), "999")
		}},
		{name: "a dir without the browser's prefix", lockPID: dead, pid: dead, mutate: func(t *testing.T, profile, dir string) {
			other := filepath.Join(filepath.Dir(dir), "keep-me")
			if err := os.Rename(dir, other); err != nil {
				t.Fatal(err)
			}
			relink(t, filepath.Join(profile, singletonSocket), filepath.Join(other, singletonSocket))
		}},
		{name: "another host's lock", lockPID: dead, pid: dead, mutate: func(t *testing.T, profile, _ string) {
			relink(t, filepath.Join(profile, singletonLock), "elsewhere.example-"+strconv.Itoa(dead))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			profile := filepath.Join(t.TempDir(), "profile")
			if err := os.Mkdir(profile, 0o700); err != nil {
				t.Fatal(err)
			}
			lockPID := tc.lockPID
			if tc.onProfile {
				lockPID = standInOn(t, profile)
			}
			dir := fakeSingleton(t, profile, lockPID, "4242")
			if tc.mutate != nil {
				tc.mutate(t, profile, dir)
			}
			link, _ := os.Readlink(filepath.Join(profile, singletonSocket))
			named := filepath.Dir(link)
			RemoveSingletonDir(profile, filepath.Join(t.TempDir(), "session"), tc.pid)
			_, err := os.Lstat(named)
			if removed := errors.Is(err, fs.ErrNotExist); removed != tc.wantRemove {
				t.Errorf("RemoveSingletonDir: %s removed = %v (%v), want %v", named, removed, err, tc.wantRemove)
			}
		})
	}
}

// fakeSingleton makes, in a temporary dir, what a browser killed on
// profile leaves: an org.chromium.Chromium.* dir with its socket and
// cookie, and the profile's links naming it, pid and cookie. It returns
// the singleton dir.
func fakeSingleton(t *testing.T, profile string, pid int, cookie string) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "org.chromium.Chromium.stale1")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, singletonSocket), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	relink(t, filepath.Join(dir, singletonCookie), cookie)
	relink(t, filepath.Join(profile, singletonCookie), cookie)
	relink(t, filepath.Join(profile, singletonSocket), filepath.Join(dir, singletonSocket))
	relink(t, filepath.Join(profile, singletonLock), host+"-"+strconv.Itoa(pid))
	return dir
}

// relink makes name a symlink to target, replacing what was there.
func relink(t *testing.T, name, target string) {
	t.Helper()
	os.Remove(name)
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// standInOn starts a process whose command line names profile as its
// --user-data-dir, as a browser's does, and returns its pid; it ends with
// the test.
func standInOn(t *testing.T, profile string) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "read x", "sh", "--user-data-dir="+profile)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return cmd.Process.Pid
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
