// Room: artifacts. Files a tab writes (screenshots, PDFs, downloads) land
// in the session's output dir; names are confined to it and kept out of
// the dirs the session writes itself (reservedDirs). No locks: name
// generation relies on O_EXCL creation. Screenshots themselves are in
// tab_screenshot.go.

package browserpool

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// writeArtifact writes data as an artifact of kind k of tab in the
// session's output dir (see createArtifact) and returns its path. With overwrite, data goes
// to a new file beside it that then takes the name: the file the name had
// (a symlink, or a hard link to a file elsewhere) is never written through.
// A failed write leaves no file behind. Every error names tab.
func (s *Session) writeArtifact(op, tab, name string, k artifactKind, ext string, overwrite bool, data []byte) (string, error) {
	f, path, err := s.createArtifact(op, tab, name, k, ext, overwrite)
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

// createArtifact creates a new file for an artifact of kind k of tab in
// the session's output dir and returns it and the artifact's path. name is
// the caller's file name, checked again as Session.checkName does before
// any browser work (a recording may have started since); an empty name
// gets a generated one, <k.prefix>-<time>-<random><ext>, that never
// collides. An existing file of the given name is an error; with
// overwrite, the file returned is a new one beside path, named
// .<name>.<random>.tmp, which the caller renames to path once written.
func (s *Session) createArtifact(op, tab, name string, k artifactKind, ext string, overwrite bool) (*os.File, string, error) {
	root := s.output
	if err := s.outputDir(op, root, true); err != nil {
		return nil, "", err
	}
	if name == "" {
		for range 10 {
			var b [4]byte
			rand.Read(b[:])
			gen := fmt.Sprintf("%s-%s-%s%s", k.prefix, time.Now().UTC().Format("20060102T150405.000"), hex.EncodeToString(b[:]), ext)
			f, err := os.OpenFile(filepath.Join(root, gen), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err == nil {
				return f, f.Name(), nil
			}
			if !errors.Is(err, fs.ErrExist) {
				return nil, "", s.artifactErr(op, gen, err)
			}
		}
		return nil, "", s.artifactErr(op, k.prefix, errors.New("could not find a free name"))
	}
	path, err := s.checkName(op, tab, name, k, overwrite)
	if err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, "", s.nameErr(op, tab, name, k, err)
	}
	// Re-check after creating parents: a symlinked parent must not lead out.
	if _, err := confine(root, name); err != nil {
		return nil, "", s.escapesErr(op, tab, name, k, err)
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
		return nil, "", s.nameErr(op, tab, name, k, err)
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

// artifactKind is what a tab writes under a caller's name: the names its
// files may take and the words its errors use.
type artifactKind struct {
	what    string   // "a screenshot"
	prefix  string   // of a generated name: "screenshot"
	exts    []string // the extensions a name may end in, lower case
	formats string   // what its files hold: "a PNG or a JPEG"
	example string   // a name of the kind, for hints: "shot.png"
	extHint string   // how to name it, for a name with a wrong extension
}

// The kinds of artifacts with a caller's name.
var (
	shotKind = artifactKind{what: "a screenshot", prefix: "screenshot", exts: []string{".png", ".jpg", ".jpeg"},
		formats: "a PNG or a JPEG", example: "shot.png", extHint: "name the file .png (or .jpg with JPEG set), such as shot.png"}
	pdfKind = artifactKind{what: "a PDF", prefix: "page", exts: []string{".pdf"},
		formats: "a PDF", example: "page.pdf", extHint: "name the file .pdf, such as page.pdf"}
)

// checkName checks name, a caller's name for an artifact of kind k of tab,
// before any browser work, in this order: its length and characters
// (ErrInvalidArgument); that it stays inside the output dir
// (ErrPathEscapes); that it is not, and is not inside, a dir the session
// writes its own files in (reservedDirs); that it names a file with one of
// k's extensions (a name without an extension is refused too: the file
// would not open as what it holds); that no parent of it is a file; and,
// unless overwrite, that it is free (see existsErr). Every refusal but
// ErrPathEscapes is ErrInvalidArgument. It returns the artifact's path.
func (s *Session) checkName(op, tab, name string, k artifactKind, overwrite bool) (string, error) {
	bad := func(why, hint string) error {
		e := newError(op, ErrInvalidArgument, why)
		e.Session, e.Tab, e.Hint = s.id, tab, hint
		return e
	}
	if why, hint := checkArtifactName(name, k.example); why != "" {
		return "", bad(fmt.Sprintf("%q: %s", truncName(name), why), hint)
	}
	path, err := confine(s.output, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", s.escapesErr(op, tab, name, k, err)
	}
	clean := filepath.Clean(name)
	for _, r := range s.reservedDirs() {
		switch {
		case clean == r.dir:
			return "", bad(fmt.Sprintf("%q is %s, %s: %s may not take its name", truncName(name), r.what, r.role, k.what),
				fmt.Sprintf("choose another file name, such as %s, or leave Name empty for a generated one", k.example))
		case strings.HasPrefix(clean, r.dir+string(filepath.Separator)):
			return "", bad(fmt.Sprintf("%q is inside %s, %s: %s may not be written there", truncName(name), r.what, r.role, k.what),
				fmt.Sprintf("name a file outside %s/, such as %s, or leave Name empty for a generated one", r.dir, k.example))
		}
	}
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case strings.HasSuffix(name, "/"):
		return "", bad(fmt.Sprintf("%q ends in '/': it names a directory, and %s is a file", truncName(name), k.what), "name a file, such as "+strings.TrimSuffix(name, "/")+"/"+k.example)
	case ext == "" || ext == ".":
		return "", bad(fmt.Sprintf("%q has no extension, and %s is %s", truncName(name), k.what, k.formats), k.extHint)
	case !slices.Contains(k.exts, ext):
		return "", bad(fmt.Sprintf("the name %q says %s, and %s is %s", truncName(name), strings.ToUpper(ext[1:]), k.what, k.formats), k.extHint)
	}
	if err != nil { // the output dir does not exist yet: the name is free
		return filepath.Join(s.output, name), nil
	}
	_, serr := os.Lstat(path)
	switch {
	case serr == nil && !overwrite:
		return "", s.existsErr(op, tab, name)
	case errors.Is(serr, syscall.ENOTDIR):
		return "", s.parentFileErr(op, tab, name, k)
	}
	return path, nil
}

// escapesErr is the error for an artifact name confine refused: why.
func (s *Session) escapesErr(op, tab, name string, k artifactKind, why error) error {
	e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", truncName(name), why))
	e.Session, e.Tab = s.id, tab
	e.Hint = fmt.Sprintf("give a plain file name such as %s; it is always placed inside the session's output directory", k.example)
	return e
}

// reservedDir is a dir of the output dir that holds files the session
// writes itself, which no artifact may take or go into.
type reservedDir struct {
	dir  string // relative to the output dir, clean
	what string // "the session's downloads dir (Session.DownloadDir)"
	role string // "where the session saves its downloads"
}

// reservedDirs returns the dirs of the session's output dir that hold its
// own files: the downloads dir (a file in its place fails every download,
// a file inside it may be taken for one), the running recording's dir and
// the one Config.Recording records into (the recorder's frames and replay
// page would meet a file there), as record.Options.Reserved does for the
// recorder's side.
func (s *Session) reservedDirs() []reservedDir {
	dirs := make([]reservedDir, 0, 3)
	add := func(abs, what, role string) {
		rel, err := filepath.Rel(s.output, abs)
		if err != nil || !filepath.IsLocal(rel) {
			return
		}
		for _, d := range dirs {
			if d.dir == rel {
				return
			}
		}
		dirs = append(dirs, reservedDir{dir: rel, what: what, role: role})
	}
	add(s.DownloadDir(), "the session's downloads dir (Session.DownloadDir)", "where the session saves its downloads")
	if r := s.rec.Load(); r != nil {
		add(r.Dir(), "the dir of the session's recording (Recording.Dir)", "where the recording writes its frames and replay page")
	}
	if s.p != nil && s.p.cfg.Recording != nil {
		add(filepath.Join(s.output, cmp.Or(s.p.cfg.Recording.DirName, RecordingDirName)), "the dir of the session's recording (Config.Recording)", "where the recording writes its frames and replay page")
	}
	return dirs
}

// nameErr is the error for a caller's artifact name that could not be
// created: a parent of it that is a file is the caller's name's fault
// (ErrInvalidArgument), anything else is artifactErr's.
func (s *Session) nameErr(op, tab, name string, k artifactKind, err error) error {
	if errors.Is(err, syscall.ENOTDIR) {
		return s.parentFileErr(op, tab, name, k)
	}
	e := s.artifactErr(op, name, err).(*Error)
	e.Tab = tab
	if e.Class == ErrInvalidArgument { // too long for the file system
		e.Hint += " such as " + k.example
	}
	return e
}

// parentFileErr is the error for an artifact name with a file where one of
// its parent dirs would be ("sub/x.png/y.png" with sub/x.png a file).
func (s *Session) parentFileErr(op, tab, name string, k artifactKind) error {
	parent := filepath.Dir(filepath.Clean(name))
	for p := parent; p != "." && p != string(filepath.Separator); p = filepath.Dir(p) {
		if fi, err := os.Lstat(filepath.Join(s.output, p)); err == nil {
			if !fi.IsDir() {
				parent = p
			}
			break
		}
	}
	e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q: %s in the output dir is a file, so it cannot hold one", truncName(name), truncName(parent)))
	e.Session, e.Tab = s.id, tab
	e.Hint = fmt.Sprintf("name a file whose parent dirs are dirs (or do not exist yet), such as %s, or remove %s first", k.example, truncName(parent))
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
// output dir, and a name holding a control character. example is a good
// name of the artifact's kind, for the hint ("shot.png").
// It returns why the name is refused and what to do, or "" for a name it
// takes.
func checkArtifactName(name, example string) (why, hint string) {
	shorter := "give a shorter file name such as " + example
	if len(name) > maxName {
		return fmt.Sprintf("the name is %d bytes long; the limit is %d bytes", len(name), maxName), shorter
	}
	for _, elem := range strings.Split(name, "/") {
		if len(elem) > maxNameElem {
			return fmt.Sprintf("a file or directory name of %d bytes is too long; the limit is %d bytes per name", len(elem), maxNameElem), shorter
		}
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "the name holds a control character (a newline, a tab, ...)", "give a plain file name such as " + example
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

// artifactErr is the error for a file of the session's (an artifact of
// op, or a download) that could not be written: a name too long for the
// file system is the caller's (ErrInvalidArgument), anything else the
// output dir's (ErrInvalidConfig).
func (s *Session) artifactErr(op, name string, err error) error {
	if errors.Is(err, syscall.ENAMETOOLONG) {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q: the name is too long for the file system (%d bytes per name at most)", truncName(name), maxNameElem))
		e.Session, e.Err = s.id, err
		e.Hint = "give a shorter file name" // nameErr names one of the artifact's kind
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
