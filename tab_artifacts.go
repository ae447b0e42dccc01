// Room: artifacts. Files a tab writes (screenshots, downloads) land in the
// session's output dir; names are confined to it. No locks: name generation
// relies on O_EXCL creation. Screenshots themselves are in tab_screenshot.go.

package browserpool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// writeArtifact writes data as an artifact of tab in the session's output
// dir (see createArtifact) and returns its path. With overwrite, data goes
// to a new file beside it that then takes the name: the file the name had
// (a symlink, or a hard link to a file elsewhere) is never written through.
// A failed write leaves no file behind. Every error names tab.
func (s *Session) writeArtifact(op, tab, name, prefix, ext string, overwrite bool, data []byte) (string, error) {
	f, path, err := s.createArtifact(op, tab, name, prefix, ext, overwrite)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Tab == "" {
			e.Tab = tab
		}
		return "", err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && f.Name() != path {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		e := s.artifactErr(op, filepath.Base(path), werr).(*Error)
		e.Tab = tab
		return "", e
	}
	return path, nil
}

// createArtifact creates a new file for an artifact of tab in the session's
// output dir and returns it and the artifact's path. name is the caller's
// file name: it must be a local path (no absolute path, no "..", nothing a
// symlink would lead out of the dir, at most maxNameElem bytes per
// element); an empty name gets a generated one, prefix-<time>-<random><ext>,
// that never collides. An existing file of the given name is an error;
// with overwrite, the file returned is a new one beside path, named
// .<name>.<random>.tmp, which the caller renames to path once written.
func (s *Session) createArtifact(op, tab, name, prefix, ext string, overwrite bool) (*os.File, string, error) {
	root := s.output
	if err := s.outputDir(op, root, true); err != nil {
		return nil, "", err
	}
	if name == "" {
		for range 10 {
			var b [4]byte
			rand.Read(b[:])
			gen := fmt.Sprintf("%s-%s-%s%s", prefix, time.Now().UTC().Format("20060102T150405.000"), hex.EncodeToString(b[:]), ext)
			f, err := os.OpenFile(filepath.Join(root, gen), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil {
				return f, f.Name(), nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return nil, "", s.artifactErr(op, gen, err)
			}
		}
		return nil, "", s.artifactErr(op, prefix, errors.New("could not find a free name"))
	}
	if why, hint := checkArtifactName(name); why != "" {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q: %s", truncName(name), why))
		e.Session, e.Tab, e.Hint = s.id, tab, hint
		return nil, "", e
	}
	path, err := confine(root, name)
	if err != nil {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", truncName(name), err))
		e.Session, e.Tab = s.id, tab
		return nil, "", e
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, "", s.artifactErr(op, name, err)
	}
	// Re-check after creating parents: a symlinked parent must not lead out.
	if _, err := confine(root, name); err != nil {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", truncName(name), err))
		e.Session, e.Tab = s.id, tab
		return nil, "", e
	}
	file := path
	if overwrite {
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q is a directory in the output dir", truncName(name)))
			e.Session, e.Tab = s.id, tab
			e.Hint = "name a file, not a directory"
			return nil, "", e
		}
		var b [4]byte
		rand.Read(b[:])
		base := filepath.Base(path)
		base = base[:min(len(base), maxNameElem-14)] // room for the rest of the name
		file = filepath.Join(filepath.Dir(path), "."+base+"."+hex.EncodeToString(b[:])+".tmp")
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscallNoFollow, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, "", s.existsErr(op, tab, name)
		}
		return nil, "", s.artifactErr(op, name, err)
	}
	return f, path, nil
}

// outputDir checks that dir, the session's output dir or a dir the
// session owns inside it (downloads), is a real directory of this user's,
// not a link, making it first with create, and accepting a missing one
// without: a link planted there (by whoever else may write in
// Config.OutputDir) would carry every artifact of the session, downloads
// included, out of the output dir.
func (s *Session) outputDir(op, dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			e := newError(op, ErrInvalidConfig, "cannot create the output dir "+dir)
			e.Session, e.Err = s.id, err
			e.Hint = "check that Config.OutputDir is writable"
			return e
		}
	}
	fi, err := os.Lstat(dir)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		e := newError(op, ErrInvalidConfig, "cannot read the output dir "+dir)
		e.Session, e.Err = s.id, err
		e.Hint = "check that Config.OutputDir is readable and writable"
		return e
	}
	if fi.Mode().Type() == fs.ModeSymlink {
		target, _ := os.Readlink(dir)
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%s is a link (to %s), not a directory: refusing to write the session's files through it", dir, target))
		e.Session = s.id
		e.Hint = "remove the link, and make sure only you can write in Config.OutputDir"
		return e
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%s belongs to another user (uid %d): refusing to write the session's files in it", dir, st.Uid))
		e.Session = s.id
		e.Hint = "remove it, and make sure only you can write in Config.OutputDir"
		return e
	}
	return nil
}

// existsErr is the error for an artifact name already taken in the
// output dir.
func (s *Session) existsErr(op, tab, name string) error {
	e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q already exists in the output dir", truncName(name)))
	e.Session, e.Tab = s.id, tab
	e.Hint = "choose another file name, pass an empty name to get a generated one, or remove the file first"
	if op == "Tab.Screenshot" { // the one artifact with an Overwrite option
		e.Hint = "choose another file name, pass an empty name to get a generated one, or set Overwrite to replace the file"
	}
	return e
}

// Limits of artifact names: Linux's NAME_MAX per path element and a bound
// on the whole name well under PATH_MAX, so the output dir's own path fits.
const (
	maxNameElem = 255
	maxName     = 1024
)

// checkArtifactName rejects a name the file system would refuse for its
// length, so a long name is reported as a bad name, not as an unwritable
// output dir.
// It returns why the name is refused and what to do, or "" for a name it
// takes.
func checkArtifactName(name string) (why, hint string) {
	const shorter = "give a shorter file name such as shot.png"
	if len(name) > maxName {
		return fmt.Sprintf("the name is %d bytes long; the limit is %d bytes", len(name), maxName), shorter
	}
	for _, elem := range strings.Split(name, "/") {
		if len(elem) > maxNameElem {
			return fmt.Sprintf("a file or directory name of %d bytes is too long; the limit is %d bytes per name", len(elem), maxNameElem), shorter
		}
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "the name holds a control character (a newline, a tab, ...)", "give a plain file name such as shot.png"
	}
	return "", ""
}

// truncName shortens a caller's name for an error message.
func truncName(name string) string {
	if len(name) <= 80 {
		return name
	}
	return fmt.Sprintf("%s...(%d bytes)", name[:60], len(name))
}

const syscallNoFollow = syscall.O_NOFOLLOW

func (s *Session) artifactErr(op, name string, err error) error {
	if errors.Is(err, syscall.ENAMETOOLONG) {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q: the name is too long for the file system (%d bytes per name at most)", truncName(name), maxNameElem))
		e.Session, e.Err = s.id, err
		e.Hint = "give a shorter file name such as shot.png"
		return e
	}
	e := newError(op, ErrInvalidConfig, "cannot write "+truncName(name)+" in the output dir")
	e.Session, e.Err = s.id, err
	e.Hint = "check that Config.OutputDir is writable and not full"
	return e
}

// confine resolves name inside root and refuses anything that would leave
// it, following symlinks of existing path elements.
func confine(root, name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", errors.New("the name contains a NUL byte")
	}
	if !filepath.IsLocal(name) {
		return "", errors.New("absolute paths and '..' are not allowed")
	}
	path := filepath.Join(root, name)
	if path == filepath.Clean(root) {
		return "", errors.New("the name is the output dir itself: name a file in it")
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", err
	}
	// Resolve the deepest existing ancestor and check it stays inside.
	dir := filepath.Dir(path)
	for {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
		dir = filepath.Dir(dir)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	if realDir != realRoot && !strings.HasPrefix(realDir, realRoot+string(filepath.Separator)) {
		return "", errors.New("a symlink leads out of the output dir")
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", errors.New("the name is a symlink")
	}
	return path, nil
}
