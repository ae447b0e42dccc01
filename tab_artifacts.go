// Room: artifacts. Files a tab writes (screenshots, later downloads) land in
// the session's output dir; names are confined to it. No locks: name
// generation relies on O_EXCL creation.

package browserpool

import (
	"context"
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

	"github.com/mafredri/cdp/protocol/page"
)

// createArtifact creates a new file for an artifact in the session's output
// dir. name is the caller's file name: it must be a local path (no
// absolute path, no "..", nothing a symlink would lead out of the dir); an
// empty name gets a generated one, prefix-<time>-<random><ext>, that never
// collides. An existing file of the given name is not overwritten.
func (s *Session) createArtifact(op, name, prefix, ext string) (*os.File, string, error) {
	root := s.output
	if err := os.MkdirAll(root, 0o700); err != nil {
		e := newError(op, ErrPathEscapes, "cannot create the output dir")
		e.Class, e.Session, e.Err = ErrInvalidConfig, s.id, err
		e.Hint = "check that Config.OutputDir is writable"
		return nil, "", e
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
	path, err := confine(root, name)
	if err != nil {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", name, err))
		e.Session = s.id
		return nil, "", e
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, "", s.artifactErr(op, name, err)
	}
	// Re-check after creating parents: a symlinked parent must not lead out.
	if _, err := confine(root, name); err != nil {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", name, err))
		e.Session = s.id
		return nil, "", e
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscallNoFollow, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			e := newError(op, ErrPathEscapes, fmt.Sprintf("%q already exists in the output dir", name))
			e.Class, e.Session = ErrInvalidArgument, s.id
			e.Hint = "choose another file name, or pass an empty name to get a generated one"
			return nil, "", e
		}
		return nil, "", s.artifactErr(op, name, err)
	}
	return f, path, nil
}

const syscallNoFollow = syscall.O_NOFOLLOW

func (s *Session) artifactErr(op, name string, err error) error {
	e := newError(op, ErrInvalidConfig, "cannot write "+name+" in the output dir")
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

// ScreenshotOptions configures Tab.Screenshot. The zero value takes a PNG
// of the viewport with a generated name.
type ScreenshotOptions struct {
	// Name is the file name inside the session's output dir. Zero means a
	// generated, collision-free name.
	Name string
	// FullPage captures the whole page, not just the viewport, without
	// resizing the viewport.
	FullPage bool
	// JPEG writes a JPEG (quality Quality, zero means 80) instead of a PNG.
	JPEG    bool
	Quality int
	// MaxDimension scales the image down so neither side exceeds it (some
	// image-aware models refuse more than 2000 px). Zero means no limit.
	MaxDimension int
}

// Screenshot is a file written by Tab.Screenshot.
type Screenshot struct {
	SessionID string
	TabID     string
	Path      string // absolute path inside the session's output dir
	Width     int    // image size in pixels
	Height    int
	Bytes     int
}

// Screenshot captures the tab into a file in the session's output dir.
func (t *Tab) Screenshot(ctx context.Context, opts ScreenshotOptions) (_ Screenshot, err error) {
	const op = "Tab.Screenshot"
	end, err := t.begin(op)
	if err != nil {
		return Screenshot{}, err
	}
	defer end()
	defer t.x.record("screenshot", fmt.Sprintf("name=%q full=%v jpeg=%v max=%d", opts.Name, opts.FullPage, opts.JPEG, opts.MaxDimension), time.Now(), &err)
	if err := t.x.dialogErr(op); err != nil {
		return Screenshot{}, err
	}
	ext, format := ".png", "png"
	if opts.JPEG {
		ext, format = ".jpg", "jpeg"
	}
	// Validate the name before the browser does any work.
	if opts.Name != "" {
		if _, err := confine(t.s.output, opts.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			e := newError(op, ErrPathEscapes, fmt.Sprintf("%q: %v", opts.Name, err))
			e.Session, e.Tab = t.s.id, t.id
			return Screenshot{}, e
		}
	}
	metrics, err := t.client.Page.GetLayoutMetrics(ctx)
	if err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	vp := metrics.CSSVisualViewport
	w, h := vp.ClientWidth, vp.ClientHeight
	clip := page.Viewport{X: vp.PageX, Y: vp.PageY, Width: w, Height: h, Scale: 1}
	if opts.FullPage {
		cs := metrics.CSSContentSize
		clip = page.Viewport{X: 0, Y: 0, Width: cs.Width, Height: cs.Height, Scale: 1}
		w, h = cs.Width, cs.Height
	}
	if opts.MaxDimension > 0 && (w > float64(opts.MaxDimension) || h > float64(opts.MaxDimension)) {
		clip.Scale = float64(opts.MaxDimension) / max(w, h)
	}
	args := page.NewCaptureScreenshotArgs().SetFormat(format).SetClip(clip)
	if opts.FullPage {
		args.SetCaptureBeyondViewport(true)
	}
	if opts.JPEG {
		q := opts.Quality
		if q <= 0 {
			q = 80
		}
		args.SetQuality(q)
	}
	shot, err := t.client.Page.CaptureScreenshot(ctx, args)
	if err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	f, path, err := t.s.createArtifact(op, opts.Name, "screenshot", ext)
	if err != nil {
		return Screenshot{}, err
	}
	_, werr := f.Write(shot.Data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return Screenshot{}, t.s.artifactErr(op, filepath.Base(path), werr)
	}
	return Screenshot{SessionID: t.s.id, TabID: t.id, Path: path,
		Width: int(clip.Width*clip.Scale + 0.5), Height: int(clip.Height*clip.Scale + 0.5), Bytes: len(shot.Data)}, nil
}
