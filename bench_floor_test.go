package browserpool_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/emulation"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
	"github.com/browserpool/browserpool/internal/benchfloor/footprint"
)

// The rows of issue 14's table, each as a ratio to the bare floor
// (internal/benchfloor, whose doc says what it includes) measured in the
// same run: every iteration times the floor's operation and ours back to
// back (interleaved), and the row reports x-bare = ours ÷ floor (for
// throughput rows, the time per call: lower is better either way).

// bigDOM builds about 3,000 accessibility nodes in the page.
const bigDOM = benchfloor.BigDOM

// imagesPage is the navigate-60-images row's page: 60 images of the same
// host, each URL new to the browser (query makes them differ from one
// load to the next; they are served no-store besides).
func imagesPage(query string) string {
	var sb strings.Builder
	sb.WriteString("<!doctype html><title>images</title>")
	for i := range 60 {
		fmt.Fprintf(&sb, "<img src='/img/%d.png?%s' width=16 height=16>", i, query)
	}
	return sb.String()
}

// tinyPNG is a 1x1 PNG.
var tinyPNG = func() []byte {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1)))
	return buf.Bytes()
}()

type floorEnv struct {
	p    *browserpool.Pool
	s    *browserpool.Session
	tab  *browserpool.Tab
	bare *benchfloor.Bare
	bsid string // the bare tab's session id
	btid string
	url  string

	oursFirst bool // our browser was started before the floor's
}

func newFloorEnv(b *testing.B) *floorEnv {
	requireBrowser(b)
	exe, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("the bare floor needs chromium on PATH")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/images":
			fmt.Fprint(w, imagesPage(r.URL.RawQuery))
		case strings.HasPrefix(r.URL.Path, "/img/"):
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(tinyPNG)
		default:
			fmt.Fprint(w, "<!doctype html><title>t</title><p>hello</p>")
		}
	}))
	b.Cleanup(srv.Close)
	e := &floorEnv{url: srv.URL + "/"}
	startOurs := func() {
		e.p = newRealPool(b, browserpool.Config{})
		ctx := context.Background()
		var err error
		if e.s, err = e.p.Open(ctx); err != nil {
			b.Fatal(err)
		}
		if e.tab, err = e.s.OpenTab(ctx, "about:blank"); err != nil {
			b.Fatal(err)
		}
		// OpenTab returns before the tab's renderer is up; the floor's
		// Page.enable below waits for its. Wait for ours too, so that the
		// first timed call of neither side pays a renderer's start (it
		// took ours 0.3-0.65 s, a third of the sequential row's mean).
		var one int
		if err := e.tab.Evaluate(ctx, "1", &one); err != nil {
			b.Fatal(err)
		}
	}
	startBare := func() {
		var err error
		e.bare, err = benchfloor.Start(exe, filepath.Join(b.TempDir(), "bare-floor"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(e.bare.Stop)
		if err := e.bare.FirstEvaluate(); err != nil {
			b.Fatal(err)
		}
		if e.btid, e.bsid, err = e.bare.NewTab(); err != nil {
			b.Fatal(err)
		}
		if err := e.bare.Call(e.bsid, "Page.enable", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
	// Which browser started first moves a row on a loaded machine (up to
	// ±10 % measured on the concurrent rows), not always the same way:
	// make bench-floor runs the rows once each way,
	// BROWSERPOOL_BENCH_FIRST=floor starting the floor's browser first;
	// ours-first says which.
	oursFirst := os.Getenv("BROWSERPOOL_BENCH_FIRST") != "floor"
	if oursFirst {
		startOurs()
		startBare()
	} else {
		startBare()
		startOurs()
	}
	e.oursFirst = oursFirst
	return e
}

// BenchmarkFloor: one call, navigation, capture or tab at a time, on a
// tab of each side's browser. tab-open-close opens an about:blank tab and
// closes it, each side in a window of its own (Session.OpenTab's default,
// so that every tab is visible; the floor's NewWindowTab);
// tab-open-close-one-window opens it in the browser's one window, where a
// new tab hides the others (ours with Config.TabsShareWindow, on a session
// of its own; the floor's NewTab). A window costs Chromium about three
// times as much per tab here.
func BenchmarkFloor(b *testing.B) {
	e := newFloorEnv(b)
	ctx := context.Background()
	b.Run("evaluate-sequential", func(b *testing.B) {
		e.interleave(b, func() error {
			return e.bare.Call(e.bsid, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true, "awaitPromise": true}, nil)
		}, func() error {
			var n int
			return e.tab.Evaluate(ctx, "1+1", &n)
		})
	})
	bareOpenClose := func(open func() (string, string, error)) func() error {
		return func() error {
			tid, _, err := open()
			if err != nil {
				return err
			}
			return e.bare.CloseTab(tid)
		}
	}
	openClose := func(s *browserpool.Session) func() error {
		return func() error {
			t, err := s.OpenTab(ctx, "about:blank")
			if err != nil {
				return err
			}
			return s.CloseTab(ctx, t.ID())
		}
	}
	b.Run("tab-open-close", func(b *testing.B) {
		e.interleave(b, bareOpenClose(e.bare.NewWindowTab), openClose(e.s))
	})
	b.Run("tab-open-close-one-window", func(b *testing.B) {
		p := newRealPool(b, browserpool.Config{TabsShareWindow: true})
		s, err := p.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.OpenTab(ctx, "about:blank"); err != nil { // the start-up tab, as e.s's
			b.Fatal(err)
		}
		e.interleaveOn(b, s, bareOpenClose(e.bare.NewTab), openClose(s))
	})
	b.Run("navigate", func(b *testing.B) {
		e.interleave(b, func() error {
			if err := e.bare.Call(e.bsid, "Page.navigate", map[string]any{"url": e.url}, nil); err != nil {
				return err
			}
			return e.bare.Until(e.bsid, "Page.loadEventFired")
		}, func() error {
			_, err := e.tab.Navigate(ctx, e.url)
			return err
		})
	})
	// A page of 60 images: our browser fetches them through the pool's
	// policy proxy (netpolicy.go), the floor's straight from the site, so
	// this row shows what the proxy costs per request, which the one
	// request of the navigate row hides.
	b.Run("navigate-60-images", func(b *testing.B) {
		n := 0
		e.interleave(b, func() error {
			n++
			if err := e.bare.Call(e.bsid, "Page.navigate", map[string]any{"url": fmt.Sprintf("%simages?%d", e.url, n)}, nil); err != nil {
				return err
			}
			return e.bare.Until(e.bsid, "Page.loadEventFired")
		}, func() error {
			n++
			_, err := e.tab.Navigate(ctx, fmt.Sprintf("%simages?%d", e.url, n))
			return err
		})
	})
	b.Run("screenshot-1280x600", func(b *testing.B) {
		if err := e.bare.Call(e.bsid, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1280, "height": 600, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
			b.Fatal(err)
		}
		if err := e.tab.Client().Emulation.SetDeviceMetricsOverride(ctx, emulation.NewSetDeviceMetricsOverrideArgs(1280, 600, 1, false)); err != nil {
			b.Fatal(err)
		}
		e.interleave(b, func() error {
			return e.bare.Call(e.bsid, "Page.captureScreenshot", map[string]any{"format": "png"}, new(struct {
				Data []byte `json:"data"`
			}))
		}, func() error {
			_, err := e.tab.Client().Page.CaptureScreenshot(ctx, page.NewCaptureScreenshotArgs().SetFormat("png"))
			return err
		})
	})
	b.Run("ax-tree-3000-nodes", func(b *testing.B) {
		var n int
		if err := e.bare.Call(e.bsid, "Runtime.evaluate", map[string]any{"expression": bigDOM}, nil); err != nil {
			b.Fatal(err)
		}
		if err := e.tab.Evaluate(ctx, bigDOM, &n); err != nil {
			b.Fatal(err)
		}
		e.interleave(b, func() error {
			var r struct {
				Nodes []accessibility.AXNode `json:"nodes"`
			}
			return e.bare.Call(e.bsid, "Accessibility.getFullAXTree", nil, &r)
		}, func() error {
			r, err := e.tab.Client().Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs())
			if err == nil && len(r.Nodes) < 3000 {
				err = fmt.Errorf("%d AX nodes, want 3000 or more", len(r.Nodes))
			}
			return err
		})
	})
}

// BenchmarkFloorConcurrent: 8 goroutines on 1 tab and on 8 tabs, 64 calls
// per iteration, against the floor's concurrent client (benchfloor.Conc).
// Each side opens 8 tabs and the 1-tab row uses the first: ours opens each
// in a window of its own (Session.OpenTab's default), so all are visible;
// the floor opens them in its browser's one window, where all but the last
// are hidden pages, which the renderer serves less eagerly (chromedp, too,
// opens a window per tab).
func BenchmarkFloorConcurrent(b *testing.B) {
	e := newFloorEnv(b)
	ctx := context.Background()
	conc := e.bare.Concurrent()
	var bareTabs []string
	var ourTabs []*browserpool.Tab
	for range 8 {
		var tgt struct {
			TargetID string `json:"targetId"`
		}
		if err := conc.Call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
			b.Fatal(err)
		}
		var att struct {
			SessionID string `json:"sessionId"`
		}
		if err := conc.Call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att); err != nil {
			b.Fatal(err)
		}
		bareTabs = append(bareTabs, att.SessionID)
		t, err := e.s.OpenTab(ctx, "about:blank")
		if err != nil {
			b.Fatal(err)
		}
		ourTabs = append(ourTabs, t)
	}
	run := func(call func(g int) error) error { return benchfloor.Fanout(8, 8, call) }
	args := map[string]any{"expression": "1+1", "returnByValue": true, "awaitPromise": true}
	// Every tab's renderer up before the timing, on both sides.
	for i := range 8 {
		var one int
		if err := conc.Call(bareTabs[i], "Runtime.evaluate", args, nil); err != nil {
			b.Fatal(err)
		}
		if err := ourTabs[i].Evaluate(ctx, "1", &one); err != nil {
			b.Fatal(err)
		}
	}
	for _, tabs := range []int{1, 8} {
		b.Run(fmt.Sprintf("8-goroutines-%d-tabs", tabs), func(b *testing.B) {
			e.interleave(b, func() error {
				return run(func(g int) error { return conc.Call(bareTabs[g%tabs], "Runtime.evaluate", args, nil) })
			}, func() error {
				return run(func(g int) error {
					var n int
					return ourTabs[g%tabs].Evaluate(ctx, "1+1", &n)
				})
			})
		})
	}
}

// BenchmarkFloorColdStart: a cold launch to the first page evaluate, the
// floor's and ours interleaved (ours: Pool.Open, the first OpenTab,
// Evaluate). Each side's browser is closed right after it, untimed, so
// that every launch starts on a machine running no other browser of the
// benchmark (a browser still busy with its own start slows a launch beside
// it by a third or more).
func BenchmarkFloorColdStart(b *testing.B) {
	requireBrowser(b)
	exe, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("the bare floor needs chromium on PATH")
	}
	for _, mode := range []struct {
		name   string
		noPort bool
	}{{"devtools-port", false}, {"no-devtools-port", true}} {
		b.Run(mode.name, func(b *testing.B) {
			p := newRealPool(b, browserpool.Config{Launcher: &browserpool.LocalLauncher{NoDevToolsPort: mode.noPort}})
			ctx := context.Background()
			i := 0
			interleaveStop(b, browserGroups{}, func() (func(), error) {
				i++
				bare, err := benchfloor.Start(exe, filepath.Join(p.Config().Root, "sessions", fmt.Sprintf("bare-%d", i)))
				if err != nil {
					return nil, err
				}
				return bare.Stop, bare.FirstEvaluate()
			}, func() (func(), error) {
				s, err := p.Open(ctx)
				if err != nil {
					return nil, err
				}
				stop := func() { s.Close(ctx) }
				tab, err := s.OpenTab(ctx, "about:blank")
				if err != nil {
					return stop, err
				}
				var two int
				return stop, tab.Evaluate(ctx, "1+1", &two)
			})
		})
	}
}

// BenchmarkFloorFootprint reports the goroutines and Go heap one browser
// with 10 tabs costs us, and the resident memory of a whole program doing
// it (footprint.Measure: the floor's browser with 10 tabs created and
// attached, Page.enable on each, or a Pool's with 10 tabs, each program
// reading its own VmRSS, and its anonymous part without the binary's
// file-backed code pages, after a GC with the browser still up). Heap is
// the in-use delta after a GC in this process.
//
// Two programs measure it, each in benchfloor.FootprintPairs pairs of
// children (the floor's, then ours), every figure the median of the pairs'
// differences:
//   - this test binary re-executed (runFootprintHelper): MiB-rss-over-bare
//     and the rest. It links the whole package (about 760 KB of text, its
//     files in alphabetical order, the tests' code after it), so the
//     launch → open path's functions lie in about ten 64 KiB blocks;
//   - footprint/child, built here: MiB-rss-over-bare-program,
//     MiB-anon-over-bare-program and the largest pair's difference,
//     MiB-rss-over-bare-program-max. It links what the row calls and
//     nothing else, as a user's program doing only this would.
//
// The file-backed rest is the executable's pages, which both sides share
// the same binary for; MiB-text-, -pclntab- and -rodata-over-bare split
// it by ELF section (benchfloor.ResidentCodeKiB). The kernel maps them in
// 64 KiB blocks around each page touched, so code the floor does not have
// (the pool, the policy proxy's listener, the launcher) and the runtime's
// reads of .gopclntab for its functions (starting a goroutine reads its
// function's name; growing, shrinking or scanning a stack reads every
// frame's tables) cost a block each, whatever their size.
func BenchmarkFloorFootprint(b *testing.B) {
	requireBrowser(b)
	ctx := context.Background()
	child := buildFootprintChild(b)
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		g0 := runtime.NumGoroutine()
		p := newRealPool(b, browserpool.Config{})
		s, err := p.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for range footprint.Tabs {
			if _, err := s.OpenTab(ctx, "about:blank"); err != nil {
				b.Fatal(err)
			}
		}
		benchfloor.SettleGoroutines()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(runtime.NumGoroutine()-g0), "goroutines")
		b.ReportMetric(float64(int64(m1.HeapInuse)-int64(m0.HeapInuse))/(1<<20), "MiB-heap")
		p.Close()
		const mib = 1024 // KiB
		tb := footprintOver(b, "")
		b.ReportMetric(tb.bare.RSS/mib, "MiB-rss-bare")
		b.ReportMetric(tb.ours.RSS/mib, "MiB-rss-ours")
		b.ReportMetric(tb.over.RSS/mib, "MiB-rss-over-bare")
		b.ReportMetric(tb.over.Anon/mib, "MiB-anon-over-bare")
		b.ReportMetric(tb.over.Text/mib, "MiB-text-over-bare")
		b.ReportMetric(tb.over.Pclntab/mib, "MiB-pclntab-over-bare")
		b.ReportMetric(tb.over.Rodata/mib, "MiB-rodata-over-bare")
		prog := footprintOver(b, child)
		b.ReportMetric(prog.over.RSS/mib, "MiB-rss-over-bare-program")
		b.ReportMetric(prog.over.Anon/mib, "MiB-anon-over-bare-program")
		b.ReportMetric(prog.over.Text/mib, "MiB-text-over-bare-program")
		b.ReportMetric(prog.over.Pclntab/mib, "MiB-pclntab-over-bare-program")
		b.ReportMetric(prog.maxRSS/mib, "MiB-rss-over-bare-program-max")
	}
}

// footprintPairsResult is what footprintOver measured, in KiB.
type footprintPairsResult struct {
	bare, ours footprint.Result // each side's median
	over       footprint.Result // the median of the pairs' ours − bare
	maxRSS     float64          // the largest pair's RSS difference
}

// footprintOver runs benchfloor.FootprintPairs pairs of footprint
// children of exe (this test binary when ""), the floor's then ours, and
// returns the medians of each measure.
func footprintOver(b *testing.B, exe string) footprintPairsResult {
	var bare, ours, over []footprint.Result
	var overRSS []float64 // over's RSS, for the log and the largest pair
	for range benchfloor.FootprintPairs {
		fb, fo := runFootprint(b, "bare", exe), runFootprint(b, "ours", exe)
		bare, ours, over = append(bare, fb), append(ours, fo), append(over, fo.Minus(fb))
		overRSS = append(overRSS, over[len(over)-1].RSS)
	}
	b.Logf("footprint pairs (%s), ours − bare RSS in KiB: %v", cmp.Or(exe, "the test binary"), overRSS)
	return footprintPairsResult{bare: footprint.Median(bare), ours: footprint.Median(ours), over: footprint.Median(over), maxRSS: slices.Max(overRSS)}
}

// buildFootprintChild builds footprint/child into a temporary directory
// and returns its path.
func buildFootprintChild(b *testing.B) string {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	exe := filepath.Join(b.TempDir(), "footprint-child")
	out, err := exec.Command(goTool, "build", "-o", exe, "./internal/benchfloor/footprint/child").CombinedOutput()
	if err != nil {
		b.Fatalf("building the footprint child: %v\n%s", err, out)
	}
	return exe
}

// footprintHelper prefixes the host helper's value (hostHelperEnv) that
// makes this test binary a footprint child: "footprint-bare" or
// "footprint-ours".
const footprintHelper = "footprint-"

// runFootprint runs the footprint child for side, in a fresh root: the
// program at exe, or this test binary when exe is "".
func runFootprint(b *testing.B, side, exe string) footprint.Result {
	root := newRoot(b)
	var cmd *exec.Cmd
	if exe == "" {
		cmd = exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), hostHelperEnv+"="+footprintHelper+side, "BROWSERPOOL_TEST_HOST_ROOT="+root)
	} else {
		cmd = exec.Command(exe, side, root)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("footprint child %s (%s): %v\n%s", side, cmp.Or(exe, "the test binary"), err, out)
	}
	r, err := footprint.Parse(string(out))
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// runFootprintHelper is this test binary as the footprint child
// (footprint.Measure for side, under BROWSERPOOL_TEST_HOST_ROOT): it
// prints the result's line last.
func runFootprintHelper(side string) int {
	r, err := footprint.Measure(side, os.Getenv("BROWSERPOOL_TEST_HOST_ROOT"))
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(r)
	return 0
}
