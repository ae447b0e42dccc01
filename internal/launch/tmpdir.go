// Room: the browser's TMPDIR: inside its session dir when that fits the
// singleton socket, else a private dir whose path derives from the session
// dir alone, so that a sweep that knows only the session dir finds it. No
// locks.

package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// singletonSocketTail is what Chromium appends to TMPDIR for its singleton
// socket (the longest brand's name); maxSocketPath is the most a Unix
// socket path may hold (sun_path, 108 bytes with its NUL). A longer path
// makes Chromium abort at start ("Socket path too long").
const (
	singletonSocketTail = "/org.chromium.Chromium.XXXXXX/SingletonSocket"
	maxSocketPath       = 107
	// MaxTmpDir is the longest TMPDIR a browser can start with.
	MaxTmpDir = maxSocketPath - len(singletonSocketTail)
)

// TmpDir returns the TMPDIR inside session dir, dir/tmp, or "" when that
// path is longer than MaxTmpDir (a deep root): Start then gives the browser
// a private TMPDIR outside the session dir (see PrivateTmpDirs).
func TmpDir(dir string) string {
	tmp := filepath.Join(dir, TmpName)
	if len(tmp) > MaxTmpDir {
		return ""
	}
	return tmp
}

// PrivateTmpDirs returns, in the order Start tries them, the paths a
// private TMPDIR of the browser of sessionDir may have: <base>/bp-<uid>/<name>
// for base /tmp and then os.TempDir() (when absolute and not /tmp), where
// name is the session dir's base name (at most 16 bytes of it, characters outside
// [A-Za-z0-9_-] replaced by _), a dot and 12 hex digits of the SHA-256 of
// the session dir's path with its parent's symlinks resolved. The name is
// derived from the session dir alone, so a sweep that knows only the
// session dir finds the private TMPDIR of a browser whose host died; the
// hash keeps the private TMPDIRs of two session dirs with one name (two
// roots) apart. /tmp comes first because it is the same for every process:
// a host's TMPDIR is used only where /tmp is not usable, and a sweep
// finds what it left only when it runs with the same TMPDIR. The parent of
// sessionDir must exist.
func PrivateTmpDirs(sessionDir string) ([]string, error) {
	name, err := privateTmpName(sessionDir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, base := range privateTmpBases() {
		dirs = append(dirs, filepath.Join(base, name))
	}
	return dirs, nil
}

func privateTmpName(sessionDir string) (string, error) {
	if !filepath.IsAbs(sessionDir) {
		return "", fmt.Errorf("session dir %s is not an absolute path", sessionDir)
	}
	parent, err := filepath.EvalSymlinks(filepath.Dir(filepath.Clean(sessionDir)))
	if err != nil {
		return "", err
	}
	base := filepath.Base(sessionDir)
	sum := sha256.Sum256([]byte(filepath.Join(parent, base)))
	short := []byte(base)
	if len(short) > 16 {
		short = short[:16]
	}
	for i, c := range short {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			short[i] = '_'
		}
	}
	return string(short) + "." + hex.EncodeToString(sum[:6]), nil
}

// privateTmpBases returns the per-user dirs that hold private TMPDIRs,
// in the order they are tried.
func privateTmpBases() []string {
	user := "bp-" + strconv.Itoa(os.Getuid())
	bases := []string{filepath.Join("/tmp", user)}
	if t := os.TempDir(); filepath.IsAbs(t) && filepath.Clean(t) != "/tmp" {
		bases = append(bases, filepath.Join(t, user))
	}
	return bases
}

// TmpDirError says why no TMPDIR fits the browser: Chromium's singleton
// socket, <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket, must fit
// in 107 bytes, and every candidate was too long or unusable. It unwraps
// to syscall.ENAMETOOLONG.
type TmpDirError struct {
	SessionDir string
	// Tried says, for each candidate in order, why it was not taken.
	Tried []string
}

// Error names every candidate with its length or its fault, and what to
// shorten.
func (e *TmpDirError) Error() string {
	return fmt.Sprintf("no TMPDIR fits the browser's singleton socket (a TMPDIR of at most %d bytes, for <TMPDIR>%s within %d bytes): %s; shorten Config.Root (the session dir is %s), or make /tmp writable, or shorten TMPDIR",
		MaxTmpDir, singletonSocketTail, maxSocketPath, strings.Join(e.Tried, "; "), e.SessionDir)
}

// Unwrap returns syscall.ENAMETOOLONG.
func (e *TmpDirError) Unwrap() error { return syscall.ENAMETOOLONG }

// browserTmp returns the TMPDIR of the browser of session dir, which
// exists: dir/tmp when it fits (made by prepare), else a private TMPDIR,
// made here (0700) in the first candidate of PrivateTmpDirs that fits and
// is usable; private reports which. A *TmpDirError says none was.
func browserTmp(dir string) (tmp string, private bool, err error) {
	if tmp := TmpDir(dir); tmp != "" {
		return tmp, false, nil
	}
	name, err := privateTmpName(dir)
	if err != nil {
		return "", false, err
	}
	in := filepath.Join(dir, TmpName)
	tried := []string{fmt.Sprintf("%s is %d bytes", in, len(in))}
	tmp, err = makeTmpIn(privateTmpBases(), name, tried)
	if err != nil {
		var te *TmpDirError
		if errors.As(err, &te) {
			te.SessionDir = dir
		}
		return "", false, err
	}
	return tmp, true, nil
}

// makeTmpIn makes <base>/<name> in the first base where it fits and the
// base is (or can be made) a directory of this user that no one else may
// enter. tried starts the *TmpDirError's list.
func makeTmpIn(bases []string, name string, tried []string) (string, error) {
	for _, base := range bases {
		tmp := filepath.Join(base, name)
		if len(tmp) > MaxTmpDir {
			tried = append(tried, fmt.Sprintf("%s is %d bytes", tmp, len(tmp)))
			continue
		}
		if err := ownDir(base, true); err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", base, err))
			continue
		}
		err := os.Mkdir(tmp, 0o700)
		if errors.Is(err, fs.ErrExist) {
			// Left by a browser of this session dir that was killed: it
			// is ours to reuse.
			err = ownDir(tmp, false)
		}
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", tmp, err))
			continue
		}
		return tmp, nil
	}
	return "", &TmpDirError{Tried: tried}
}

// ownDir checks that dir is a real directory (not a symlink) owned by
// this user and closed to others, making it (0700) when create is set and it
// is missing, and closing it (chmod 0700) when it is ours but open.
func ownDir(dir string, create bool) error {
	if create {
		if err := os.Mkdir(dir, 0o700); err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return errors.New("a symlink, not a directory")
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		return errors.New("owned by another user")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// RemovePrivateTmp removes every private TMPDIR a browser of sessionDir
// may have had (see PrivateTmpDirs), with what the browser left in it. It
// removes them through an os.Root of their per-user dir, which it checks
// is a real directory of this user, so no symlink leads the removal
// anywhere else. A sessionDir whose parent is gone has none to remove.
func RemovePrivateTmp(sessionDir string) error {
	dirs, err := PrivateTmpDirs(sessionDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		errs = append(errs, removeTmp(d))
	}
	return errors.Join(errs...)
}

// removeTmp removes the private TMPDIR tmp (<base>/bp-<uid>/<name>),
// retrying with a short backoff as removeDir does.
func removeTmp(tmp string) error {
	base, name := filepath.Dir(tmp), filepath.Base(tmp)
	fi, err := os.Lstat(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return nil // not ours: it holds nothing we made
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return err
	}
	defer r.Close()
	if rfi, err := r.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		return fmt.Errorf("removing %s: %s changed while it was opened", tmp, base)
	}
	delay := 10 * time.Millisecond
	for i := 0; ; i++ {
		if _, err = r.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err = r.RemoveAll(name); err == nil || i == 4 {
			return err
		}
		time.Sleep(delay)
		delay *= 3
	}
}
