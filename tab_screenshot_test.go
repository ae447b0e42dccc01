// Room: tests of Tab.Screenshot on real Chromium: the images are decoded
// and their sizes checked. No locks.

package browserpool_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// shotPage is taller than the viewport (so it has a vertical scrollbar),
// with a red 300x120 box at (40, 1500) of the document.
const shotPage = `<!doctype html><title>shots</title>
<style>body{margin:0;height:3000px;background:#fff}
#box{position:absolute;left:40px;top:1500px;width:300px;height:120px;background:#f00}</style>
<body><button id="box">Red box</button></body>`

func decodeShot(t *testing.T, shot browserpool.Screenshot) (image.Image, string) {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatalf("Screenshot.Data does not decode: %v", err)
	}
	b := img.Bounds()
	if b.Dx() != shot.Width || b.Dy() != shot.Height {
		t.Errorf("Screenshot says %dx%d, the image is %dx%d", shot.Width, shot.Height, b.Dx(), b.Dy())
	}
	if shot.Path != "" {
		raw, err := os.ReadFile(shot.Path)
		if err != nil || !bytes.Equal(raw, shot.Data) {
			t.Errorf("the file %s does not hold Screenshot.Data (err %v)", shot.Path, err)
		}
	}
	return img, format
}

func isRed(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	return r > 0xd000 && g < 0x3000 && b < 0x3000
}

func TestScreenshotsHaveTheSizeAskedFor(t *testing.T) {
	base := serve(t, map[string]string{"/": shotPage})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/")
	if err != nil {
		t.Fatal(err)
	}
	vw, vh := eval[int](t, tab, "innerWidth"), eval[int](t, tab, "innerHeight")
	if eval[int](t, tab, "document.documentElement.clientWidth") >= vw {
		t.Fatalf("the page has no vertical scrollbar to leave out; the test proves nothing")
	}
	type size struct {
		W, H   int
		Format string
	}
	for _, tc := range []struct {
		name string
		opts browserpool.ScreenshotOptions
		want size
	}{
		{"the viewport, scrollbar included", browserpool.ScreenshotOptions{NoFile: true}, size{vw, vh, "png"}},
		{"the viewport scaled to a max dimension", browserpool.ScreenshotOptions{NoFile: true, MaxDimension: vw / 2}, size{vw / 2, (vh*(vw/2) + vw/2) / vw, "png"}},
		{"the full page", browserpool.ScreenshotOptions{NoFile: true, FullPage: true}, size{vw, 3000, "png"}},
		{"the full page scaled", browserpool.ScreenshotOptions{NoFile: true, FullPage: true, MaxDimension: 1000}, size{(vw*1000 + 1500) / 3000, 1000, "png"}},
		{"a clip rectangle beyond the viewport", browserpool.ScreenshotOptions{NoFile: true, Clip: &browserpool.Rect{X: 10, Y: 1490, Width: 200, Height: 50}}, size{200, 50, "png"}},
		{"a clip rectangle as JPEG", browserpool.ScreenshotOptions{NoFile: true, JPEG: true, Quality: 50, Clip: &browserpool.Rect{X: 0, Y: 0, Width: 320, Height: 240}}, size{320, 240, "jpeg"}},
		{"a clip rectangle scaled", browserpool.ScreenshotOptions{NoFile: true, MaxDimension: 100, Clip: &browserpool.Rect{X: 0, Y: 0, Width: 400, Height: 200}}, size{100, 50, "png"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shot, err := tab.Screenshot(ctx, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if shot.Path != "" {
				t.Errorf("NoFile wrote %s", shot.Path)
			}
			_, format := decodeShot(t, shot)
			if diff := cmp.Diff(tc.want, size{shot.Width, shot.Height, format}); diff != "" {
				t.Errorf("image (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("one element by ref", func(t *testing.T) {
		box := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Red box")
		eval[int](t, tab, "window.scrollTo(0, 0), 0")
		shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Ref: box, Name: "box.png"})
		if err != nil {
			t.Fatal(err)
		}
		img, _ := decodeShot(t, shot)
		if shot.Width != 300 || shot.Height != 120 {
			t.Errorf("element screenshot is %dx%d, want the element's 300x120", shot.Width, shot.Height)
		}
		b := img.Bounds()
		for _, pt := range []image.Point{{b.Min.X + 2, b.Min.Y + 2}, {b.Max.X - 3, b.Max.Y - 3}, {b.Dx() / 2, b.Dy() / 2}} {
			if !isRed(img.At(pt.X, pt.Y)) {
				t.Errorf("pixel %v of the element screenshot is %v, want the red box", pt, img.At(pt.X, pt.Y))
			}
		}
		if filepath.Base(shot.Path) != "box.png" {
			t.Errorf("Path = %q, want box.png in the output dir", shot.Path)
		}
	})

	t.Run("at a device pixel ratio of 2 the image has twice the size and MaxDimension bounds the image", func(t *testing.T) {
		tab2, err := s.OpenTab(ctx, base+"/")
		if err != nil {
			t.Fatal(err)
		}
		if err := tab2.SetViewport(ctx, 800, 600, 2); err != nil {
			t.Fatal(err)
		}
		type size struct{ W, H int }
		for _, tc := range []struct {
			name string
			opts browserpool.ScreenshotOptions
			want size
		}{
			{"the viewport", browserpool.ScreenshotOptions{NoFile: true}, size{1600, 1200}},
			{"the viewport at most 800", browserpool.ScreenshotOptions{NoFile: true, MaxDimension: 800}, size{800, 600}},
			{"a clip at most 300", browserpool.ScreenshotOptions{NoFile: true, MaxDimension: 300, Clip: &browserpool.Rect{Width: 300, Height: 200}}, size{300, 200}},
			{"a clip under its limit", browserpool.ScreenshotOptions{NoFile: true, MaxDimension: 1000, Clip: &browserpool.Rect{Width: 300, Height: 200}}, size{600, 400}},
			// 3,000 CSS pixels tall is 6,000 image pixels: scaled by 1/6.
			{"the full page at most 1000", browserpool.ScreenshotOptions{NoFile: true, FullPage: true, MaxDimension: 1000}, size{(1600*1000 + 3000) / 6000, 1000}},
		} {
			shot, err := tab2.Screenshot(ctx, tc.opts)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			decodeShot(t, shot)
			if diff := cmp.Diff(tc.want, size{shot.Width, shot.Height}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.name, diff)
			}
		}
	})

	t.Run("a clip rectangle shows that part of the page", func(t *testing.T) {
		shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{NoFile: true, Clip: &browserpool.Rect{X: 50, Y: 1510, Width: 100, Height: 50}})
		if err != nil {
			t.Fatal(err)
		}
		img, _ := decodeShot(t, shot)
		if !isRed(img.At(50, 25)) {
			t.Errorf("the middle of a clip inside the red box is %v, want red", img.At(50, 25))
		}
	})
}

func TestScreenshotNamesAndOptionsAreCheckedBeforeTheBrowserWorks(t *testing.T) {
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))

	long := strings.Repeat("n", 300) + ".png" // 304 characters
	_, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: long})
	if !errors.Is(err, browserpool.ErrInvalidArgument) || errors.Is(err, browserpool.ErrInvalidConfig) {
		t.Errorf("a 304-character name: error = %v, want ErrInvalidArgument (a bad name), not ErrInvalidConfig", err)
	} else if msg := err.Error(); !strings.Contains(msg, "304 bytes") || !strings.Contains(msg, "255") || strings.Contains(msg, "writable") {
		t.Errorf("a 304-character name: error %q should give the length and the limit and not blame the output dir", msg)
	}

	first, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "same.png"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "same.png"})
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "tab="+tab.ID()) || !strings.Contains(err.Error(), "Overwrite") {
		t.Errorf("reusing a name: error = %v, want ErrInvalidArgument naming tab=%s and offering Overwrite", err, tab.ID())
	}
	again, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "same.png", Overwrite: true, MaxDimension: 100})
	if err != nil {
		t.Fatalf("Overwrite: %v", err)
	}
	if again.Path != first.Path {
		t.Errorf("Overwrite wrote %s, want %s", again.Path, first.Path)
	}
	decodeShot(t, again) // the file now holds the new, smaller capture

	// Overwrite replaces the name: a hard link planted there to a file
	// elsewhere keeps that file as it was.
	victim := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(first.Path)
	if err := os.Link(victim, filepath.Join(dir, "linked.png")); err != nil {
		t.Fatal(err)
	}
	linked, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "linked.png", Overwrite: true})
	if err != nil {
		t.Fatalf("Overwrite of a hard link: %v", err)
	}
	decodeShot(t, linked)
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("Overwrite wrote through a hard link into a file outside the output dir: it holds %.20q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("Overwrite left its temporary files: %v", left)
	}

	for _, tc := range []struct {
		name string
		opts browserpool.ScreenshotOptions
		want string
	}{
		{"two targets", browserpool.ScreenshotOptions{FullPage: true, Clip: &browserpool.Rect{Width: 1, Height: 1}}, "at most one"},
		{"an empty clip", browserpool.ScreenshotOptions{Clip: &browserpool.Rect{Width: 0, Height: 10}}, "Clip"},
		{"a quality for a PNG", browserpool.ScreenshotOptions{Quality: 50}, "Quality"},
		{"a quality over 100", browserpool.ScreenshotOptions{JPEG: true, Quality: 101}, "Quality"},
		{"a negative max dimension", browserpool.ScreenshotOptions{MaxDimension: -1}, "MaxDimension"},
		{"NoFile with a name", browserpool.ScreenshotOptions{NoFile: true, Name: "x.png"}, "NoFile"},
		{"a JPEG named .png", browserpool.ScreenshotOptions{JPEG: true, Name: "shot.png"}, "says PNG"},
		{"a ref that is not one", browserpool.ScreenshotOptions{Ref: "button"}, "not a ref"},
		{"a WebP name", browserpool.ScreenshotOptions{Name: "shot.webp"}, "says WEBP"},
		{"a newline in the name", browserpool.ScreenshotOptions{Name: "a\nb.png"}, "control character"},
		{"a clip past the page", browserpool.ScreenshotOptions{NoFile: true, Clip: &browserpool.Rect{X: 0, Y: 50000, Width: 100, Height: 100}}, "starts past the page"},
		{"an infinite clip", browserpool.ScreenshotOptions{NoFile: true, Clip: &browserpool.Rect{Width: math.Inf(1), Height: 10}}, "finite"},
		{"the session's downloads dir", browserpool.ScreenshotOptions{Name: "downloads"}, "downloads dir"},
		{"a name inside the downloads dir", browserpool.ScreenshotOptions{Name: "downloads/x.png"}, "inside the session's downloads dir"},
		{"a name under a file", browserpool.ScreenshotOptions{Name: "same.png/x.png"}, "same.png in the output dir is a file"},
		{"a PDF's name", browserpool.ScreenshotOptions{Name: "shot.pdf"}, "says PDF"},
		{"a clip too large to capture", browserpool.ScreenshotOptions{NoFile: true, Clip: &browserpool.Rect{Width: 1e6, Height: 1e6}}, "could not capture"},
	} {
		_, err := tab.Screenshot(ctx, tc.opts)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want ErrInvalidArgument mentioning %q", tc.name, err, tc.want)
		}
	}
}
