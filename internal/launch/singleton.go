// Room: the browser's singleton dir outside its session dir. No locks.

package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// Names of the links Chromium keeps in a profile while a browser runs on
// it (its process singleton): the lock names the browser (host-pid), the
// socket the singleton dir's socket, the cookie a random number the
// singleton dir's own SingletonCookie link repeats.
const (
	singletonLock   = "SingletonLock"
	singletonSocket = "SingletonSocket"
	singletonCookie = "SingletonCookie"
)

// RemoveSingletonDir removes the singleton dir (org.chromium.Chromium.* or
// com.google.Chrome.*) that the profile in userDataDir names through its
// SingletonSocket link, when that dir lies outside sessionDir: there,
// removing the session dir leaves it behind (TmpDir gave the browser no
// TMPDIR of its own, its session dir being too deep). A browser that exits
// cleanly removes it itself; a killed one does not.
//
// The profile's SingletonLock must name the browser whose dir it is: pid
// on this host; when pid is 0, a process of this host that no longer
// exists, or is gone within a second (a sweep, which knows no pid: it
// waits that long for a browser killed a moment ago); when pid is
// negative, one that no longer exists. The dir is removed only if it is a
// real directory with the browser's prefix whose SingletonCookie link
// names the profile's cookie, so a stale or foreign link, or a profile
// another live browser took over since, removes nothing.
func RemoveSingletonDir(userDataDir, sessionDir string, pid int) {
	lockPID, ok := singletonLockPID(userDataDir)
	if !ok || (pid > 0 && lockPID != pid) {
		return
	}
	switch {
	case pid == 0:
		// A browser killed a moment ago (its host died, the sweep killed
		// it) may not have finished dying: give it a moment.
		for deadline := time.Now().Add(time.Second); proc.Alive(lockPID); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				return
			}
		}
	case pid < 0 && proc.Alive(lockPID):
		return
	}
	if sd, ok := findSingletonDir(userDataDir, sessionDir); ok {
		sd.remove()
	}
}

// singletonDir is a browser's singleton dir outside its session dir, as
// its profile named it: the dir and the cookie of its SingletonCookie link.
// Start records it once the browser has answered, because a browser that
// shuts down unlinks its profile's links first and removes the dir a
// moment later (about a quarter of a second on a quiet machine, seen here):
// killed in between (Stop's close took longer than CloseTimeout on a
// loaded machine), its profile no longer names the dir it leaves behind.
type singletonDir struct{ dir, cookie string }

// findSingletonDir returns the singleton dir the profile in userDataDir
// names through its SingletonSocket link, when the link is sound: an
// absolute clean path outside sessionDir, a real directory with a
// browser's prefix whose SingletonCookie link names the profile's cookie.
// It checks no pid: the callers do.
func findSingletonDir(userDataDir, sessionDir string) (singletonDir, bool) {
	link, err := os.Readlink(filepath.Join(userDataDir, singletonSocket))
	if err != nil || filepath.Base(link) != singletonSocket {
		return singletonDir{}, false
	}
	dir := filepath.Dir(link)
	name := filepath.Base(dir)
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || strings.HasPrefix(dir, sessionDir+string(filepath.Separator)) ||
		!(strings.HasPrefix(name, "org.chromium.") || strings.HasPrefix(name, "com.google.")) {
		return singletonDir{}, false
	}
	cookie, err := os.Readlink(filepath.Join(userDataDir, singletonCookie))
	if err != nil || cookie == "" {
		return singletonDir{}, false
	}
	sd := singletonDir{dir: dir, cookie: cookie}
	return sd, sd.holdsCookie()
}

// holdsCookie reports whether sd.dir is still a real directory whose
// SingletonCookie link names sd.cookie: the browser's own, not one another
// browser made since under the same name.
func (sd singletonDir) holdsCookie() bool {
	if fi, err := os.Lstat(sd.dir); err != nil || !fi.IsDir() {
		return false
	}
	theirs, err := os.Readlink(filepath.Join(sd.dir, singletonCookie))
	return err == nil && theirs == sd.cookie
}

// remove removes sd's dir if it is still the browser's (holdsCookie). A
// zero singletonDir removes nothing.
func (sd singletonDir) remove() {
	if sd.dir != "" && sd.holdsCookie() {
		_ = os.RemoveAll(sd.dir)
	}
}

// singletonLockPID returns the pid the profile's SingletonLock names
// ("<hostname>-<pid>") when the hostname is this host's.
func singletonLockPID(userDataDir string) (int, bool) {
	lock, err := os.Readlink(filepath.Join(userDataDir, singletonLock))
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(lock, '-')
	if i < 0 {
		return 0, false
	}
	host, err := os.Hostname()
	if err != nil || lock[:i] != host {
		return 0, false
	}
	pid, err := strconv.Atoi(lock[i+1:])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
