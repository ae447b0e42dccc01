package launch

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/proc"
)

// shortTmp makes a short directory in /tmp, sets TMPDIR to it for the
// test (so private TMPDIRs land there, where the test can see them) and
// returns it. The test cannot run in parallel.
func shortTmp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "bpl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	return dir
}

// browserTmpdir returns the TMPDIR in the environment of the browser's
// main process.
func browserTmpdir(t *testing.T, p *Process) string {
	t.Helper()
	v, ok, err := proc.Environ(p.PID(), "TMPDIR")
	if err != nil || !ok {
		t.Fatalf("TMPDIR of the browser (pid %d): %q, set=%v, err=%v", p.PID(), v, ok, err)
	}
	return v
}

// entries returns the names in dir, or the error's text.
func entries(dir string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	names := []string{}
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestABrowserInADeepSessionDirGetsAPrivateTmpdirThatStopRemovesEvenAfterAKill(t *testing.T) {
	dir := deepSessionDir(t)
	p := start(t, Options{SessionDir: dir})
	openPage(t, p)
	dirs, err := PrivateTmpDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := browserTmpdir(t, p)
	if want := filepath.Join("/tmp", "bp-"+strconv.Itoa(os.Getuid()), filepath.Base(dirs[0])); got != dirs[0] || got != want {
		t.Fatalf("TMPDIR of the browser = %s, want %s (the first of %v)", got, want, dirs)
	}
	if len(got) > MaxTmpDir {
		t.Errorf("TMPDIR of the browser is %d bytes, more than the %d the singleton socket allows", len(got), MaxTmpDir)
	}
	for _, d := range []string{filepath.Dir(got), got} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory with mode 0700", d, fi.Mode(), err)
		}
	}
	link, err := os.Readlink(filepath.Join(p.UserDataDir(), singletonSocket))
	if err != nil || !strings.HasPrefix(link, got+string(filepath.Separator)+"org.chromium.") {
		t.Errorf("SingletonSocket -> %q (%v), want a path inside %s", link, err, got)
	}
	p.Kill() // no clean exit: the browser removes nothing itself
	waitFor(p.exited, ReapTimeout)
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(got); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Stop, the browser's TMPDIR %s: %v, want it gone", got, err)
	}
}

// A host whose own TMPDIR is long (70 bytes) and a session dir too deep
// for a TMPDIR inside it: the host's is too long too, yet the browser
// starts (on a private TMPDIR in /tmp) and leaves nothing in either.
func TestABrowserStartsWithALongHostTmpdirAndADeepSessionDirAndLeavesNothingInTmpdir(t *testing.T) {
	exe := browser(t)
	base, err := os.MkdirTemp("/tmp", "bpl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	long := filepath.Join(base, strings.Repeat("t", 70-len(base)-1))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", long)
	dir := filepath.Join(sessionDir(t), strings.Repeat("d", 40))
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dir)) })
	p, err := Start(testCtx(t), Options{Executable: exe, SessionDir: dir})
	if err != nil {
		t.Fatalf("Start with TMPDIR=%s (%d bytes) and a deep session dir: %v", long, len(long), err)
	}
	manage(t, p)
	got := browserTmpdir(t, p)
	if strings.HasPrefix(got, long) || strings.HasPrefix(got, dir+string(filepath.Separator)) {
		t.Errorf("TMPDIR of the browser = %s, want a private one outside the host's and the session dir", got)
	}
	if err := p.Stop(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, entries(long)); diff != "" {
		t.Errorf("after Stop, the host's TMPDIR holds (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(got); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Stop, the browser's TMPDIR %s: %v, want it gone", got, err)
	}
}

func TestWhenNoTmpdirFitsTheErrorSaysWhatToShorten(t *testing.T) {
	parent, err := os.MkdirTemp("/tmp", "bpl") // short: its paths fit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	long := filepath.Join("/tmp", strings.Repeat("l", 50), "bp-0")
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, "link")
	if err := os.Symlink(parent, link); err != nil {
		t.Fatal(err)
	}
	_, err = makeTmpIn([]string{long, file, link}, "s-0123456789ab.0123456789ab", []string{"/r/sessions/s-0123456789ab/tmp is 99 bytes"})
	if !errors.Is(err, syscall.ENAMETOOLONG) {
		t.Errorf("makeTmpIn = %v, want an error wrapping ENAMETOOLONG", err)
	}
	var te *TmpDirError
	if !errors.As(err, &te) {
		t.Fatalf("makeTmpIn = %v, want a *TmpDirError", err)
	}
	te.SessionDir = "/r/sessions/s-0123456789ab"
	want := "no TMPDIR fits the browser's singleton socket (a TMPDIR of at most 62 bytes, for <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket within 107 bytes): " +
		"/r/sessions/s-0123456789ab/tmp is 99 bytes; " +
		long + "/s-0123456789ab.0123456789ab is 88 bytes; " +
		file + ": not a directory; " +
		link + ": a symlink, not a directory; " +
		"shorten Config.Root (the session dir is /r/sessions/s-0123456789ab), or make /tmp writable, or shorten TMPDIR"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"file", "link"}, entries(parent)); diff != "" {
		t.Errorf("makeTmpIn made something beside what was there (-want +got):\n%s", diff)
	}
}

func TestTwoSessionDirsOfOneNameInTwoRootsGetTwoPrivateTmpdirs(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "s-same"), filepath.Join(t.TempDir(), "s-same")
	da, err := PrivateTmpDirs(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := PrivateTmpDirs(b)
	if err != nil {
		t.Fatal(err)
	}
	if da[0] == db[0] || !strings.HasPrefix(filepath.Base(da[0]), "s-same.") {
		t.Errorf("private TMPDIRs of %s and %s: %s and %s, want two named after s-same", a, b, da[0], db[0])
	}
	// Through a symlink to its parent, a session dir is the same one.
	link := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink(filepath.Dir(a), link); err != nil {
		t.Fatal(err)
	}
	dl, err := PrivateTmpDirs(filepath.Join(link, "s-same"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(da, dl); diff != "" {
		t.Errorf("private TMPDIRs through a symlinked parent (-want +got):\n%s", diff)
	}
}

func TestRemovePrivateTmpNeverFollowsASymlinkOut(t *testing.T) {
	base := shortTmp(t)
	dir := filepath.Join(t.TempDir(), "s-link")
	dirs, err := PrivateTmpDirs(dir)
	if err != nil || len(dirs) != 2 || !strings.HasPrefix(dirs[1], base+"/") {
		t.Fatalf("PrivateTmpDirs = %v, %v; want two, the second under TMPDIR %s", dirs, err, base)
	}
	mine := dirs[1] // under the test's own TMPDIR, where it may play with links
	name := filepath.Base(mine)
	outside := t.TempDir()
	keep := filepath.Join(outside, name, "keep")
	if err := os.MkdirAll(keep, 0o700); err != nil {
		t.Fatal(err)
	}
	// The per-user dir is a symlink to outside: it is not ours.
	if err := os.Symlink(outside, filepath.Dir(mine)); err != nil {
		t.Fatal(err)
	}
	if err := RemovePrivateTmp(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("through a symlinked per-user dir, %s: %v, want it kept", keep, err)
	}
	// The private TMPDIR is a symlink to outside: the link goes, not what
	// it names.
	if err := os.Remove(filepath.Dir(mine)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(mine), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, name), mine); err != nil {
		t.Fatal(err)
	}
	if err := RemovePrivateTmp(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("through a symlinked private TMPDIR, %s: %v, want it kept", keep, err)
	}
	if diff := cmp.Diff([]string{}, entries(filepath.Join(base, filepath.Base(filepath.Dir(mine))))); diff != "" {
		t.Errorf("the per-user dir after the removal (-want +got):\n%s", diff)
	}
}

// On a full disk Chromium never writes DevToolsActivePort: Start ends at
// once with an error that says the disk is full, not at its deadline.
// Needs a tmpfs mount (root); skipped where mounting is not allowed.
func TestStartOnAFullDiskSaysTheDiskIsFull(t *testing.T) {
	exe := browser(t)
	mnt, err := os.MkdirTemp("/tmp", "bpfull")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(mnt) })
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=2m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	// Fill it but for a few KiB: the session dir's directories fit,
	// the browser's profile does not.
	fill := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(mnt, "filler"), "bs=4k", "count=480")
	if out, err := fill.CombinedOutput(); err != nil {
		t.Fatalf("filling the tmpfs: %v %s", err, out)
	}
	dir := filepath.Join(mnt, "s")
	t0 := time.Now()
	_, err = Start(testCtx(t), Options{Executable: exe, SessionDir: dir})
	var ns *NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Start on a full disk = %v, want a *NoSpaceError (ENOSPC)", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start on a full disk waited for its deadline (%v): %v", time.Since(t0), err)
	}
	if !strings.Contains(err.Error(), "the disk is full: the file system of "+dir) {
		t.Errorf("Start on a full disk = %v, want it to say the disk is full", err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the failed start, the session dir: %v, want it removed", err)
	}
}
