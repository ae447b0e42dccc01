// Room: the browser's singleton dir outside its session dir. No locks.

package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
// removing the session dir leaves it behind. Start's browsers never leave
// one there (they have a TMPDIR of their own, see PrivateTmpDirs); a
// browser started with Environ in a deep session dir, or by an earlier
// version of this package, keeps the host's TMPDIR. A browser that exits
// cleanly removes it itself; a killed one does not.
//
// The profile's SingletonLock must name the browser whose dir it is: pid
// on this host; when pid is 0 (a sweep, which knows no pid and has
// already killed what it could prove ours), a process of this host that
// is not a browser on this profile: gone, or its pid reused by a process
// whose command line does not name userDataDir (after a reboot, say); when
// pid is negative, one that no longer exists. It never waits. The dir is
// removed only if it is a real directory with the browser's prefix whose
// SingletonCookie link names the profile's cookie, so a stale or foreign
// link, or a profile another live browser took over since, removes
// nothing.
func RemoveSingletonDir(userDataDir, sessionDir string, pid int) {
	lockPID, ok := singletonLockPID(userDataDir)
	if !ok || (pid > 0 && lockPID != pid) {
		return
	}
	switch {
	case pid == 0 && browserOn(lockPID, userDataDir):
		return
	case pid < 0 && proc.Alive(lockPID):
		return
	}
	if sd, ok := findSingletonDir(userDataDir, sessionDir); ok {
		sd.remove()
	}
}

// browserOn reports whether pid is alive and its command line names
// userDataDir: a browser (or one of its children) on that profile, not a
// process that got its pid since. A zombie's command line is empty.
func browserOn(pid int, userDataDir string) bool {
	cl, err := proc.Cmdline(pid)
	return err == nil && proc.Alive(pid) && strings.Contains(cl, "--user-data-dir="+userDataDir)
}

// singletonDir is a browser's singleton dir outside its session dir, as
// its profile named it: the dir and the cookie of its SingletonCookie link.
// A browser that shuts down unlinks its profile's links first and removes
// the dir a moment later (about a quarter of a second on a quiet machine,
// seen here): killed in between, its profile no longer names the dir it
// leaves behind. That is why Start's browsers keep it in a TMPDIR of their
// own, which goes whole.
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
