// Room: screenshots. Tab.Screenshot captures the viewport, the whole page,
// a rectangle or one element, as PNG or JPEG, into a file of the session's
// output dir or only into memory. No lock of its own: it runs as one traced
// action (Tab.act) and reads refs through refTable (which locks itself).

package browserpool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG screenshots
	_ "image/png"  // DecodeConfig of PNG screenshots
	"math"
	"path"
	"strings"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/rpcc"
)

// DefaultJPEGQuality is the quality of a JPEG screenshot whose
// ScreenshotOptions.Quality is zero.
const DefaultJPEGQuality = 80

// Rect is a rectangle of the page in CSS pixels, from the top-left corner
// of the document (not of the viewport): it names the same content however
// the page is scrolled.
type Rect struct {
	X, Y          float64 // the top-left corner
	Width, Height float64 // the size
}

// ScreenshotOptions configures Tab.Screenshot. The zero value takes a PNG
// of the viewport, scrollbar included, into a file with a generated name.
//
// At most one of FullPage, Clip and Ref may be set: they choose what is
// captured. The image has exactly the size asked for (the viewport, the
// page, the rectangle or the element's box, in CSS pixels times the
// device pixel ratio), scaled down to MaxDimension if set; Screenshot's
// Width and Height are read from the image itself.
type ScreenshotOptions struct {
	// Name is the file name inside the session's output dir: a relative
	// path of at most 255 bytes per element, ending in .png, .jpg or
	// .jpeg (another extension, or none, is an error). A name ending in
	// .jpg or .jpeg writes a JPEG, as JPEG does. Zero means a generated,
	// collision-free name. An existing file of that name is an error
	// unless Overwrite is set. The session's own dirs are not names for a
	// screenshot, nor is anything inside them: its downloads dir
	// (Session.DownloadDir) and its recording's dir (Recording.Dir, and
	// the one Config.Recording names).
	Name string
	// FullPage captures the whole page (at least the viewport's size), not
	// just the viewport, without resizing the viewport.
	FullPage bool
	// JPEG writes a JPEG of quality Quality instead of a PNG.
	JPEG bool
	// Quality is the JPEG quality, 1 to 100. Zero means
	// DefaultJPEGQuality; it is an error for a PNG.
	Quality int
	// MaxDimension scales the image down so neither side exceeds it (some
	// image-aware models refuse more than 2000 px). Zero means no limit;
	// negative is an error.
	MaxDimension int

	// NoFile writes no file: the image is only in Screenshot.Data and
	// Screenshot.Path is empty. Name must then be empty.
	NoFile bool
	// Clip captures this rectangle of the page (scrolled into view or
	// not). Nil means the viewport, or the whole page with FullPage.
	Clip *Rect
	// Ref captures one element, by a ref from the tab's latest
	// Tab.Snapshot (such as "@e3"): its border box, scrolled into view
	// first. An element with no box is an ErrNotVisible error.
	Ref string
	// Overwrite replaces an existing file of the same Name.
	Overwrite bool
}

// Screenshot is an image taken by Tab.Screenshot.
type Screenshot struct {
	SessionID string // the tab's session
	TabID     string // the tab's CDP target id
	Path      string // absolute path inside the session's output dir; empty with NoFile
	Format    string // "png" or "jpeg"
	Width     int    // image size in pixels, read from the image
	Height    int    // likewise
	Bytes     int    // len(Data)
	Data      []byte // the image itself (also when a file was written)
}

// Screenshot captures the tab (see ScreenshotOptions) and writes it into a
// file of the session's output dir, or only returns it with NoFile. Invalid
// options and a name that cannot be used are reported before the browser
// does any work, with nothing changed: a name escaping the output dir is
// an ErrPathEscapes error; one too long, with a control character, with
// an extension other than .png, .jpg or .jpeg (or none), taking or inside
// one of the session's own dirs (see ScreenshotOptions.Name), under a
// file, or already taken without Overwrite is ErrInvalidArgument, and so
// are conflicting options and a Clip that is not a rectangle of finite
// numbers inside the page.
func (t *Tab) Screenshot(ctx context.Context, opts ScreenshotOptions) (Screenshot, error) {
	if ext := strings.ToLower(path.Ext(opts.Name)); ext == ".jpg" || ext == ".jpeg" {
		opts.JPEG = true // the name says JPEG: bytes to match it
	}
	const op = "Tab.Screenshot"
	var shot Screenshot
	args := fmt.Sprintf("name=%q full=%v jpeg=%v max=%d", opts.Name, opts.FullPage, opts.JPEG, opts.MaxDimension)
	if opts.Clip != nil {
		args += fmt.Sprintf(" clip=%gx%g+%g+%g", opts.Clip.Width, opts.Clip.Height, opts.Clip.X, opts.Clip.Y)
	}
	if opts.NoFile {
		args += " nofile"
	}
	check := func() error { return t.checkScreenshot(op, opts) }
	err := t.act(ctx, op, "screenshot", strings.TrimSpace(opts.Ref+" "+args), check, func(ctx context.Context, x *tabExt, a *string) error {
		var err error
		shot, err = t.screenshot(ctx, op, x, opts)
		return err
	})
	return shot, err
}

// checkScreenshot validates opts and the file name before any browser work.
func (t *Tab) checkScreenshot(op string, opts ScreenshotOptions) error {
	bad := func(why, hint string) error {
		e := newError(op, ErrInvalidArgument, why)
		e.Session, e.Tab, e.Hint = t.s.id, t.id, hint
		return e
	}
	n := 0
	for _, set := range []bool{opts.FullPage, opts.Clip != nil, opts.Ref != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return bad("FullPage, Clip and Ref each choose what to capture; more than one is set", "set at most one of them")
	case opts.Clip != nil && !finite(opts.Clip.X, opts.Clip.Y, opts.Clip.Width, opts.Clip.Height):
		return bad(fmt.Sprintf("Clip %gx%g at (%g, %g) is not a rectangle of finite numbers", opts.Clip.Width, opts.Clip.Height, opts.Clip.X, opts.Clip.Y),
			"give a Clip of finite CSS pixels (no infinity, no NaN): X, Y of 0 or more and a positive Width and Height")
	case opts.Clip != nil && !(opts.Clip.Width > 0 && opts.Clip.Height > 0 && opts.Clip.X >= 0 && opts.Clip.Y >= 0):
		return bad(fmt.Sprintf("Clip %gx%g at (%g, %g) is empty or starts before the page", opts.Clip.Width, opts.Clip.Height, opts.Clip.X, opts.Clip.Y),
			"give a Clip with a positive Width and Height and X, Y of 0 or more (CSS pixels from the document's top-left corner)")
	case opts.Quality < 0 || opts.Quality > 100:
		return bad(fmt.Sprintf("Quality %d is outside 1..100", opts.Quality), "use a JPEG quality from 1 to 100, or zero for the default 80")
	case opts.Quality != 0 && !opts.JPEG:
		return bad("Quality is set for a PNG", "set JPEG for a quality to apply, or leave Quality zero")
	case opts.JPEG && strings.EqualFold(path.Ext(opts.Name), ".png"):
		return bad(fmt.Sprintf("the name %q says PNG, and JPEG is set", opts.Name), "name the file .jpg for a JPEG, or leave JPEG unset for a PNG")
	case opts.MaxDimension < 0:
		return bad(fmt.Sprintf("MaxDimension %d is negative", opts.MaxDimension), "use zero for no limit, or the longest side in pixels")
	case opts.NoFile && opts.Name != "":
		return bad("NoFile is set with a Name", "drop Name to get the image in Screenshot.Data only, or drop NoFile to write it")
	case opts.NoFile || opts.Name == "":
		return nil
	}
	_, err := t.s.checkName(op, t.id, opts.Name, shotKind, opts.Overwrite)
	return err
}

// finite reports whether every v is a number, neither infinite nor NaN.
func finite(vs ...float64) bool {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// screenshot takes the picture for Tab.Screenshot, inside its traced
// action.
func (t *Tab) screenshot(ctx context.Context, op string, x *tabExt, opts ScreenshotOptions) (Screenshot, error) {
	format := "png"
	if opts.JPEG {
		format = "jpeg"
	}
	var vm viewMetrics
	if err := t.direct.Invoke(ctx, "Page.getLayoutMetrics", nil, &vm); err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	w, h, dpr, err := t.viewportSize(ctx, vm)
	if err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	vp := vm.Visual
	clip := page.Viewport{X: vp.PageX, Y: vp.PageY, Width: w, Height: h, Scale: 1}
	switch {
	case opts.FullPage:
		cs := vm.Content
		clip = page.Viewport{Width: max(cs.Width, w), Height: max(cs.Height, h), Scale: 1}
	case opts.Clip != nil:
		c := opts.Clip
		if pw, ph := max(vm.Content.Width, w), max(vm.Content.Height, h); c.X >= pw || c.Y >= ph {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("Clip at (%g, %g) starts past the page, which is %g×%g CSS pixels", c.X, c.Y, pw, ph))
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "give a Clip inside the page (Tab.PageInfo tells its size), or take the FullPage"
			return Screenshot{}, e
		}
		clip = page.Viewport{X: c.X, Y: c.Y, Width: c.Width, Height: c.Height, Scale: 1}
	case opts.Ref != "":
		tg, err := x.resolve(ctx, op, opts.Ref)
		if err != nil {
			return Screenshot{}, err
		}
		if clip, err = x.elementClip(ctx, op, opts.Ref, tg); err != nil {
			return Screenshot{}, err
		}
	}
	// The image has the clip's size times the device pixel ratio (2 on a
	// "retina" viewport) times Scale: the limit is on the image.
	if m, side := float64(opts.MaxDimension), max(clip.Width, clip.Height)*dpr; m > 0 && side > m {
		clip.Scale = m / side
	}
	args := page.NewCaptureScreenshotArgs().SetFormat(format).SetClip(clip)
	// Beyond the viewport only when the clip leaves it: capturing beyond
	// it re-lays out the page at the clip's size.
	if clip.X < vp.PageX || clip.Y < vp.PageY || clip.X+clip.Width > vp.PageX+w+0.5 || clip.Y+clip.Height > vp.PageY+h+0.5 {
		args.SetCaptureBeyondViewport(true)
	}
	if opts.JPEG {
		q := opts.Quality
		if q == 0 {
			q = DefaultJPEGQuality
		}
		args.SetQuality(q)
	}
	if err := t.toFront(ctx); err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	img, err := invoke[page.CaptureScreenshotReply](ctx, t.direct, "Page.captureScreenshot", args)
	var re *rpcc.ResponseError
	if errors.As(err, &re) && strings.Contains(re.Message, "Unable to capture screenshot") {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("the browser could not capture %g×%g CSS pixels at scale %g", clip.Width, clip.Height, clip.Scale))
		e.Session, e.Tab, e.Err = t.s.id, t.id, err
		e.Hint = "capture a smaller area (Clip), or set MaxDimension so the image is smaller"
		return Screenshot{}, e
	}
	if err != nil {
		return Screenshot{}, t.s.wrap(op, t.id, err)
	}
	shot := Screenshot{SessionID: t.s.id, TabID: t.id, Format: format, Data: img.Data, Bytes: len(img.Data)}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data)); err == nil {
		shot.Width, shot.Height = cfg.Width, cfg.Height
	} else {
		shot.Width, shot.Height = int(math.Round(clip.Width*clip.Scale*dpr)), int(math.Round(clip.Height*clip.Scale*dpr))
	}
	if opts.NoFile {
		return shot, nil
	}
	ext := ".png"
	if opts.JPEG {
		ext = ".jpg"
	}
	path, err := t.s.writeArtifact(op, t.id, opts.Name, shotKind, ext, opts.Overwrite, img.Data)
	if err != nil {
		return Screenshot{}, err
	}
	shot.Path = path
	return shot, nil
}

// viewMetrics is the part of Page.getLayoutMetrics a screenshot uses, in
// CSS pixels.
type viewMetrics struct {
	Visual struct {
		PageX float64 `json:"pageX"`
		PageY float64 `json:"pageY"`
		W     float64 `json:"clientWidth"`
		H     float64 `json:"clientHeight"`
	} `json:"cssVisualViewport"`
	Content struct {
		Width  float64 `json:"width"`
		Height float64 `json:"height"`
	} `json:"cssContentSize"`
}

// viewportSize returns the viewport's size in CSS pixels, scrollbars
// included (innerWidth, innerHeight), and the device pixel ratio (the
// image's pixels per CSS pixel at Scale 1): Page.getLayoutMetrics's client
// size leaves a scrollbar out, so a screenshot of it would be narrower than
// the viewport. It falls back to the client size and a ratio of 1 if the
// page cannot answer.
func (t *Tab) viewportSize(ctx context.Context, vm viewMetrics) (w, h, dpr float64, err error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	err = t.direct.Invoke(ctx, "Runtime.evaluate", struct {
		Expression    string `json:"expression"`
		ReturnByValue bool   `json:"returnByValue"`
	}{"[innerWidth, innerHeight, devicePixelRatio]", true}, &r)
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, 0, err
		}
		return vm.Visual.W, vm.Visual.H, 1, nil
	}
	var v []float64
	if json.Unmarshal(r.Result.Value, &v) != nil || len(v) != 3 || v[0] < vm.Visual.W || v[1] < vm.Visual.H {
		return vm.Visual.W, vm.Visual.H, 1, nil
	}
	dpr = v[2]
	if !(dpr > 0) || math.IsInf(dpr, 0) {
		dpr = 1
	}
	return v[0], v[1], dpr, nil
}

// elementClip scrolls the element tg into view and returns its border box
// (the union of its boxes) in document CSS pixels of the tab's top frame.
func (x *tabExt) elementClip(ctx context.Context, op, ref string, tg refTarget) (page.Viewport, error) {
	q, _, ox, oy, err := x.inView(ctx, op, ref, tg)
	if err != nil {
		return page.Viewport{}, err
	}
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, qd := range q.Quads {
		if len(qd) != 8 {
			continue
		}
		for i := 0; i < 8; i += 2 {
			x0, x1 = min(x0, qd[i]+ox), max(x1, qd[i]+ox)
			y0, y1 = min(y0, qd[i+1]+oy), max(y1, qd[i+1]+oy)
		}
	}
	if !(x1-x0 >= 1 && y1-y0 >= 1) {
		if len(q.Quads) == 0 {
			return page.Viewport{}, x.notVisible(op, ref, "it has no box (display: none, or not rendered)")
		}
		return page.Viewport{}, x.notVisible(op, ref, "it has no size")
	}
	lm, err := layoutMetrics(ctx, x.t.direct)
	if err != nil {
		return page.Viewport{}, x.fail(op, ctx, ref, err)
	}
	// Quads are in viewport coordinates; the clip is in the document's.
	clip := page.Viewport{X: x0 + lm.VP.PageX, Y: y0 + lm.VP.PageY, Width: x1 - x0, Height: y1 - y0, Scale: 1}
	if clip.X < 0 { // a part left of the document cannot be captured
		clip.Width, clip.X = clip.Width+clip.X, 0
	}
	if clip.Y < 0 {
		clip.Height, clip.Y = clip.Height+clip.Y, 0
	}
	if clip.Width < 1 || clip.Height < 1 {
		return page.Viewport{}, x.notVisible(op, ref, "it lies outside the page")
	}
	return clip, nil
}
