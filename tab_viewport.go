// Room: the viewport (Config.Viewport, Tab.SetViewport): the size and
// device scale factor every tab gets when it is connected, and resizing it
// later. No lock: the override lives in the browser (it is tied to the
// tab's CDP session), nothing of it is kept here.

package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/mafredri/cdp/protocol/emulation"
)

// The default viewport, the one Playwright and Playwright MCP use.
const (
	DefaultViewportWidth  = 1280
	DefaultViewportHeight = 720
)

// maxViewport bounds a viewport side, in CSS pixels.
const maxViewport = 10000

// Viewport is a tab's viewport: its size in CSS pixels and its device
// scale factor (device pixels per CSS pixel).
type Viewport struct {
	// Width and Height in CSS pixels. Zero means DefaultViewportWidth and
	// DefaultViewportHeight (in Config.Viewport); negative is invalid.
	Width, Height int
	// DeviceScaleFactor is 2 for a "retina" screen. Zero means 1;
	// negative is invalid.
	DeviceScaleFactor float64
}

// String shows the viewport as 1280x720 (@2x when scaled).
func (v Viewport) String() string {
	if v.DeviceScaleFactor == 0 || v.DeviceScaleFactor == 1 {
		return fmt.Sprintf("%dx%d", v.Width, v.Height)
	}
	return fmt.Sprintf("%dx%d@%gx", v.Width, v.Height, v.DeviceScaleFactor)
}

// withDefaults fills in the default size and scale, and checks the values:
// the error names field (e.g. "Viewport").
func (v Viewport) withDefaults(field string) (Viewport, string) {
	if v.Width == 0 {
		v.Width = DefaultViewportWidth
	}
	if v.Height == 0 {
		v.Height = DefaultViewportHeight
	}
	if v.DeviceScaleFactor == 0 {
		v.DeviceScaleFactor = 1
	}
	return v, v.check(field)
}

// check returns why v cannot be used, or "".
func (v Viewport) check(field string) string {
	switch {
	case v.Width <= 0 || v.Height <= 0 || v.Width > maxViewport || v.Height > maxViewport:
		return fmt.Sprintf("%s: %dx%d is not a usable size (1 to %d CSS pixels a side; zero means the default %dx%d)",
			field, v.Width, v.Height, maxViewport, DefaultViewportWidth, DefaultViewportHeight)
	case math.IsNaN(v.DeviceScaleFactor) || v.DeviceScaleFactor <= 0 || v.DeviceScaleFactor > 10:
		return fmt.Sprintf("%s: device scale factor %g is not usable (above 0, at most 10; zero means 1)", field, v.DeviceScaleFactor)
	}
	return ""
}

// effectiveViewport is Config.effective's part for Config.Viewport.
func effectiveViewport(v Viewport) (Viewport, error) {
	v, why := v.withDefaults("Viewport")
	if why != "" {
		return v, &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: why, Hint: hints[ErrInvalidConfig]}
	}
	return v, nil
}

// viewportArgs is the Emulation.setDeviceMetricsOverride call for v.
func viewportArgs(v Viewport) *emulation.SetDeviceMetricsOverrideArgs {
	return emulation.NewSetDeviceMetricsOverrideArgs(v.Width, v.Height, v.DeviceScaleFactor, false)
}

// viewportParams are the Emulation.setDeviceMetricsOverride params that
// set the tab's viewport at connect (Tab.connect sends them alongside its
// other calls, so they cost no extra round trip). ok is false for a zero
// deps.viewport (a browser the pool attached to rather than launched),
// whose own size is left alone.
func (t *Tab) viewportParams() (params []byte, ok bool) {
	if t.deps.viewport == (Viewport{}) {
		return nil, false
	}
	params, err := json.Marshal(viewportArgs(t.deps.viewport))
	return params, err == nil
}

// SetViewport resizes the tab's viewport to width x height CSS pixels with
// the given device scale factor (zero means 1), as a window of that size
// would be: the page sees the new window.innerWidth and innerHeight and
// gets a resize event. It lasts until the tab closes or the next
// SetViewport. A size outside 1 to 10000 pixels, or a negative scale, is
// an ErrInvalidArgument error.
func (t *Tab) SetViewport(ctx context.Context, width, height int, scale float64) error {
	const op = "Tab.SetViewport"
	v := Viewport{Width: width, Height: height, DeviceScaleFactor: scale}
	if scale == 0 {
		v.DeviceScaleFactor = 1
	}
	check := func() error {
		if why := v.check("viewport"); why != "" {
			e := newError(op, ErrInvalidArgument, why)
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = fmt.Sprintf("give a width and height in CSS pixels, such as %dx%d, and a scale of 1 or 2", DefaultViewportWidth, DefaultViewportHeight)
			return e
		}
		return nil
	}
	return t.act(ctx, op, "set-viewport", v.String(), check, func(ctx context.Context, x *tabExt, _ *string) error {
		if err := t.direct.Invoke(ctx, "Emulation.setDeviceMetricsOverride", viewportArgs(v), nil); err != nil {
			return x.fail(op, ctx, "", err)
		}
		t.setViewportSize(v)
		return nil
	})
}

// setViewportSize records the viewport size the package gave the tab.
func (t *Tab) setViewportSize(v Viewport) {
	t.vpSize.Store(uint64(v.Width)<<32 | uint64(uint32(v.Height)))
}

// givenViewport returns the viewport size the package gave the tab, in CSS
// pixels; ok is false when it gave none (an attached browser's tab keeps
// its own size, unknown here without asking the page).
func (t *Tab) givenViewport() (w, h float64, ok bool) {
	s := t.vpSize.Load()
	if s == 0 {
		return 0, 0, false
	}
	return float64(s >> 32), float64(uint32(s)), true
}
