package browserpool_test

import (
	"errors"
	"image/png"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestViewportIs1280x720ByDefaultAndSetViewportResizesIt(t *testing.T) {
	e := newAgentEnv(t)

	if diff := cmp.Diff(browserpool.Viewport{Width: 1280, Height: 720, DeviceScaleFactor: 1}, e.pool.Config().Viewport); diff != "" {
		t.Errorf("effective Config.Viewport (-want +got):\n%s", diff)
	}

	t.Run("page info and screenshots report 1280x720 on a new tab and on the start-up tab", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		start, err := e.sess.Tab(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for name, tb := range map[string]*browserpool.Tab{"new tab": tab, "start-up tab": start} {
			info, err := tb.PageInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := [2]int{info.ViewportWidth, info.ViewportHeight}; got != [2]int{1280, 720} {
				t.Errorf("%s: PageInfo viewport = %v, want [1280 720]", name, got)
			}
		}
		shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(shot.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg, err := png.DecodeConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		want := [4]int{1280, 720, 1280, 720}
		if got := [4]int{shot.Width, shot.Height, cfg.Width, cfg.Height}; got != want {
			t.Errorf("screenshot reported %dx%d, file is %dx%d; want 1280x720 both", got[0], got[1], got[2], got[3])
		}
	})

	t.Run("set viewport changes innerWidth and the device pixel ratio", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.SetViewport(ctx, 800, 600, 2); err != nil {
			t.Fatal(err)
		}
		got := eval[[3]float64](t, tab, "[innerWidth, innerHeight, devicePixelRatio]")
		if diff := cmp.Diff([3]float64{800, 600, 2}, got); diff != "" {
			t.Errorf("[innerWidth, innerHeight, devicePixelRatio] (-want +got):\n%s", diff)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]int{info.ViewportWidth, info.ViewportHeight}; got != [2]int{800, 600} {
			t.Errorf("PageInfo viewport = %v, want [800 600]", got)
		}
	})

	t.Run("a window the page opens gets the viewport once used", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/popup.html")
		before, err := e.sess.Tabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Open popup")); err != nil {
			t.Fatal(err)
		}
		var popup string
		waitFor(t, "the popup's target", func() bool {
			tabs, err := e.sess.Tabs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range tabs {
				if !containsTab(before, ti.TabID) {
					popup = ti.TabID
					return true
				}
			}
			return false
		})
		pt, err := e.sess.Tab(ctx, popup)
		if err != nil {
			t.Fatal(err)
		}
		defer e.sess.CloseTab(ctx, popup)
		waitJS(t, pt, "innerWidth === 1280 && innerHeight === 720")
	})

	t.Run("bad sizes are invalid arguments and change nothing", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		for _, c := range []struct {
			w, h  int
			scale float64
		}{{0, 600, 1}, {800, -1, 1}, {20000, 600, 1}, {800, 600, -2}} {
			err := tab.SetViewport(ctx, c.w, c.h, c.scale)
			if !errors.Is(err, browserpool.ErrInvalidArgument) {
				t.Errorf("SetViewport(%d, %d, %g) = %v, want ErrInvalidArgument", c.w, c.h, c.scale, err)
			}
		}
		if got := eval[int](t, tab, "innerWidth"); got != 1280 {
			t.Errorf("innerWidth after refused resizes = %d, want 1280", got)
		}
	})
}

func TestConfigViewportRefusesNegativeSizes(t *testing.T) {
	for _, v := range []browserpool.Viewport{{Width: -1}, {Height: -5}, {DeviceScaleFactor: -1}} {
		_, err := browserpool.NewPool(browserpool.Config{Root: t.TempDir(), Viewport: v})
		var e *browserpool.Error
		if !errors.Is(err, browserpool.ErrInvalidConfig) || !errors.As(err, &e) || e.Hint == "" {
			t.Errorf("Viewport %+v: NewPool error = %v, want ErrInvalidConfig with a hint", v, err)
		}
	}
}

func containsTab(tabs []browserpool.TabInfo, id string) bool {
	for _, t := range tabs {
		if t.TabID == id {
			return true
		}
	}
	return false
}
