// Package anchors_test measures chromedp and rod beside browserpool and the
// bare floor (internal/benchfloor) in the same run, so that issue 14's
// table (chromedp ÷ bare | rod ÷ bare | browserpool ÷ bare) comes from one
// run on one machine. Run it with:
//
//	cd bench/anchors && go test -run '^$' -bench . -benchtime 100x
//
// (an iteration of BenchmarkAnchorsColdStart is four cold launches, about
// 5 s on a loaded 2-core machine, and one of BenchmarkAnchorsFootprint is
// four child processes, about 25 s: give those two a smaller -benchtime,
// 20x and 3x, with -bench 'AnchorsColdStart$' and 'AnchorsFootprint$').
// `go test ./...` here runs only TestEachSideDrivesTheSameBrowserWork,
// which checks that every side does the same work with the same browser
// flags, and the start order's test (startorder_test.go).
//
// Every row waits until the four browsers are idle, then times the same
// operation on the four sides in turns of about 50 ms each, every turn in
// another of the sides' 24 orders (so that no side always meets the
// machine warmed, or loaded, by the same other side; interleave_test.go),
// and reports per library side x-bare-<side> (its total time ÷ the floor's)
// and x-bare-median-<side> (the median of the iterations' own ratios,
// steadier on a shared machine), µs-bare/op and µs-<side>/op. ns/op is the
// four sides together: read the named metrics. Lower is better everywhere
// (the concurrent rows time a fixed batch of calls).
//
// The side-by-side rows (BenchmarkAnchors and BenchmarkAnchorsConcurrent,
// whose four browsers run for the whole benchmark) start the browsers, and
// open their tabs, one side after the other in an order set by
// BROWSERPOOL_BENCH_FIRST: bare (the default), ours, chromedp or rod names
// the side started first, the other three following in the order bare,
// browserpool, chromedp, rod (startOrder). The browser started first tends
// to be faster on a loaded machine, so each of these rows reports
// first-<side> = 1 for the side started first, and the root Makefile's
// bench-anchors runs them once per first side. The cold-start and
// footprint rows start a browser per side and iteration, and ignore it.
//
// The sides, each with its own browser, started from the same executable
// (chromium on PATH) with the launcher's flag list (launch.Args), its
// environment (launch.Environ: XDG dirs and TMPDIR inside the side's own
// session directory under the test's temp root) and its own
// --user-data-dir:
//
//   - bare: internal/benchfloor, raw NUL-framed JSON on the pipe (read its
//     doc for what it includes), one attached tab with Page.enable.
//   - browserpool: a Pool (its LocalLauncher), one Session, Tab calls;
//     screenshot and AX tree through Tab.Client() (mafredri/cdp), as
//     bench_floor_test.go does. Its zero Config routes the browser through
//     the pool's network-policy proxy (--proxy-server on 127.0.0.1, and
//     WebRTC kept to it: its only flags beyond the floor's): the navigate
//     row's page load goes through it, and that is part of what
//     browserpool costs.
//   - chromedp v0.23.0: its ExecAllocator over the pipe (its default), the
//     launcher's flags given as Flag options (see chromedpOptions), its
//     generic API (chromedp.Run / chromedp.Do with its actions) on the
//     browser's first tab.
//   - rod v0.116.2: its launcher with rod's default flags replaced by the
//     launcher's list minus the pipe (rod speaks only the websocket), no
//     leakless guard (see rodLauncher), rod.Browser and rod.Page calls.
//     rod keeps its default device emulation on its pages (its normal API).
//
// Rows (one benchmark function per family):
//
//   - BenchmarkAnchors/evaluate-sequential: "1+1" by value. bare:
//     Runtime.evaluate with awaitPromise (what Tab.Evaluate sends);
//     browserpool: Tab.Evaluate; chromedp: chromedp.Run(ctx,
//     chromedp.Evaluate[int]("1+1")) (Runtime.evaluate, returnByValue
//     only: no awaitPromise, which spares the renderer a promise round);
//     rod: Page.Eval("() => 1+1") (Runtime.callFunctionOn on the page's
//     window object, by value, awaiting promises: rod's normal evaluate).
//   - BenchmarkAnchors/navigate: to a local page, until its load event.
//     bare: Page.navigate + Page.loadEventFired; browserpool: Tab.Navigate;
//     chromedp: chromedp.Do(ctx, chromedp.Navigate(url)); rod:
//     Page.Navigate + Page.WaitLoad.
//   - BenchmarkAnchors/screenshot-1280x600: PNG, viewport set once per
//     side. bare: Page.captureScreenshot; browserpool:
//     Tab.Client().Page.CaptureScreenshot; chromedp:
//     chromedp.CaptureScreenshot(); rod: Page.Screenshot(false, png).
//   - BenchmarkAnchors/ax-tree-3000-nodes: the full AX tree of bigDOM.
//     bare: Accessibility.getFullAXTree; browserpool:
//     Tab.Client().Accessibility.GetFullAXTree; chromedp: cdp.Call(ctx, t,
//     accessibility.GetFullAXTree, ...) in an action; rod:
//     proto.AccessibilityGetFullAXTree{}.Call(page).
//   - BenchmarkAnchors/tab-open-close: about:blank. bare: createTarget +
//     attachToTarget + closeTarget (in the browser's one window);
//     browserpool: Session.OpenTab (a window of its own) +
//     Session.CloseTab; chromedp: chromedp.NewContext(browser ctx) +
//     chromedp.Do(tab ctx), then its cancel (closes the target and waits
//     until it is gone); rod: Browser.Page + Page.Close.
//   - BenchmarkAnchorsConcurrent/8-goroutines-{1,8}-tabs: each iteration is
//     8 goroutines × 8 evaluates (as above; bare through benchfloor.Conc)
//     on the first of 8 tabs opened per side, or on all 8. browserpool
//     and chromedp open each tab in a window of their own (their default),
//     so all their tabs are visible; the floor and rod open theirs in the
//     browser's window, where only the last one opened is visible
//     (document.visibilityState), and the 1-tab row's is hidden.
//   - BenchmarkAnchorsColdStart: start a browser, open a tab, first
//     evaluate; each side's browser stopped right after it, untimed.
//   - BenchmarkAnchorsFootprint: Go RSS and goroutines of a child process
//     (this test binary) driving 1 browser + 10 tabs, per side. The binary
//     links all four sides, so its file-backed pages are the same for each
//     and larger than a program linking one library would have: compare
//     MiB-anon-<side> (heap and stacks) for what each library allocates.
//
// Room: the anchors' rows, their start order (startOrder) and their
// interleaving (interleave4). No locks: each row drives its sides from the
// benchmark goroutine, the concurrent rows through each library's own
// concurrent-safe calls.
package anchors_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	cdpax "github.com/chromedp/cdproto/accessibility"
	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/emulation"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
)

// bigDOM builds about 3,000 accessibility nodes in the page.
const bigDOM = benchfloor.BigDOM

// minAXNodes is the least a full AX tree of bigDOM has.
const minAXNodes = 3000

// firstEnv names the side whose browser a side-by-side row starts first
// (see startOrder); the root's bench-floor reads the same variable.
const firstEnv = "BROWSERPOOL_BENCH_FIRST"

// env is one running browser per side, each with one tab, and a local
// page; everything stops at the benchmark's cleanup.
type env struct {
	url  string
	bare *bareSide
	bp   *bpSide
	cd   *cdpSide // its first tab (s.ctx) is the tab the rows use
	rd   *rodSide

	order [4]int // the sides in the order their browsers were started (startOrder)
}

// newEnv starts the four sides' browsers, and with tabs their tabs (the
// chromedp side's comes with its browser), in the order startOrder gives
// for BROWSERPOOL_BENCH_FIRST, one side after the other.
func newEnv(b *testing.B, tabs bool) *env {
	exe := requireExe(b)
	order, err := startOrder(os.Getenv(firstEnv))
	if err != nil {
		b.Fatal(err)
	}
	dir := newDir(b)
	e := &env{url: newPageServer(b), order: order}
	ctx := context.Background()
	start := [4]func() error{
		func() (err error) {
			if e.bare, err = startBare(exe, filepath.Join(dir, "bare")); err == nil {
				b.Cleanup(e.bare.stop)
			}
			return err
		},
		func() (err error) {
			if e.bp, err = startBP(ctx, exe, filepath.Join(dir, "pool")); err == nil {
				b.Cleanup(e.bp.stop)
			}
			return err
		},
		func() (err error) {
			if e.cd, err = startChromedp(exe, filepath.Join(dir, "cdp")); err == nil {
				b.Cleanup(e.cd.stop)
			}
			return err
		},
		func() (err error) {
			if e.rd, err = startRod(exe, filepath.Join(dir, "rod")); err == nil {
				b.Cleanup(e.rd.stop)
			}
			return err
		},
	}
	e.each(b, start)
	if !tabs {
		return e
	}
	e.each(b, [4]func() error{
		e.bare.openTab,
		func() error {
			// OpenTab returns before the renderer is up; the floor's
			// Page.enable waits for it: so does a first evaluate here,
			// or the first timed call would pay the renderer's start.
			if err := e.bp.openTab(ctx); err != nil {
				return err
			}
			var one int
			return e.bp.tab.Evaluate(ctx, "1", &one)
		},
		nil, // chromedp's tab is its browser's first, attached at its start
		e.rd.openPage,
	})
	return e
}

// settle waits until the four browsers are idle (benchfloor.Settle: a
// browser works for a second or more after its start, its first tab and
// call, or a row that closed a hundred tabs, and that work would slow
// whichever side is timed then, mostly its own).
func (e *env) settle(b *testing.B) {
	pgids := []int{e.bare.b.PID(), e.bp.s.Info().PGID, e.cd.cmd.Process.Pid, e.rd.l.PID()}
	if err := benchfloor.SettleRow(pgids...); err != nil {
		b.Log(err, "; timing anyway")
	}
}

// each runs the sides' funcs (indexed as sideNames; nil skips a side) in
// e's start order, failing b at the first error.
func (e *env) each(b *testing.B, fs [4]func() error) {
	for _, j := range e.order {
		if fs[j] == nil {
			continue
		}
		if err := fs[j](); err != nil {
			b.Fatal(sideNames[j], ": ", err)
		}
	}
}

// interleave4 is interleave4 on e's browsers, once they are idle
// (settle); the row also reports which side's browser was started first
// (first-<side> = 1, see startOrder).
func (e *env) interleave4(b *testing.B, ops [4]op) {
	e.settle(b)
	interleave4(b, ops)
	b.ReportMetric(1, "first-"+sideNames[e.order[0]])
}

// evalArgs are the floor's Runtime.evaluate parameters (those
// browserpool's Tab.Evaluate sends).
var evalArgs = map[string]any{"expression": "1+1", "returnByValue": true, "awaitPromise": true}

func BenchmarkAnchors(b *testing.B) {
	e := newEnv(b, true)
	ctx := context.Background()
	b.Run("evaluate-sequential", func(b *testing.B) {
		e.interleave4(b, [4]op{
			keep(func() error { return e.bare.b.Call(e.bare.sid, "Runtime.evaluate", evalArgs, nil) }),
			keep(func() error {
				var n int
				return e.bp.tab.Evaluate(ctx, "1+1", &n)
			}),
			keep(func() error {
				_, err := chromedp.Run(e.cd.ctx, chromedp.Evaluate[int]("1+1"))
				return err
			}),
			keep(func() error {
				_, err := e.rd.page.Eval("() => 1+1")
				return err
			}),
		})
	})
	b.Run("navigate", func(b *testing.B) {
		e.interleave4(b, [4]op{
			keep(func() error { return e.bare.navigate(e.url) }),
			keep(func() error {
				_, err := e.bp.tab.Navigate(ctx, e.url)
				return err
			}),
			keep(func() error { return chromedp.Do(e.cd.ctx, chromedp.Navigate(e.url)) }),
			keep(func() error {
				if err := e.rd.page.Navigate(e.url); err != nil {
					return err
				}
				return e.rd.page.WaitLoad()
			}),
		})
	})
	b.Run("screenshot-1280x600", func(b *testing.B) {
		const w, h = 1280, 600
		if err := e.bare.setViewport(w, h); err != nil {
			b.Fatal(err)
		}
		if err := e.bp.tab.Client().Emulation.SetDeviceMetricsOverride(ctx, emulation.NewSetDeviceMetricsOverrideArgs(w, h, 1, false)); err != nil {
			b.Fatal(err)
		}
		if err := chromedp.Do(e.cd.ctx, chromedp.EmulateViewport(w, h)); err != nil {
			b.Fatal(err)
		}
		if err := e.rd.page.SetViewport(&proto.EmulationSetDeviceMetricsOverride{Width: w, Height: h, DeviceScaleFactor: 1}); err != nil {
			b.Fatal(err)
		}
		e.interleave4(b, [4]op{
			keep(func() error {
				_, err := e.bare.screenshot()
				return err
			}),
			keep(func() error {
				_, err := e.bp.tab.Client().Page.CaptureScreenshot(ctx, page.NewCaptureScreenshotArgs().SetFormat("png"))
				return err
			}),
			keep(func() error {
				_, err := chromedp.Run(e.cd.ctx, chromedp.CaptureScreenshot())
				return err
			}),
			keep(func() error {
				_, err := e.rd.page.Screenshot(false, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
				return err
			}),
		})
	})
	b.Run("ax-tree-3000-nodes", func(b *testing.B) {
		var n int
		if err := e.bare.evaluate(e.bare.sid, bigDOM, &n); err != nil {
			b.Fatal(err)
		}
		if err := e.bp.tab.Evaluate(ctx, bigDOM, &n); err != nil {
			b.Fatal(err)
		}
		if _, err := chromedp.Run(e.cd.ctx, chromedp.Evaluate[int](bigDOM)); err != nil {
			b.Fatal(err)
		}
		if _, err := e.rd.page.Eval("() => " + bigDOM); err != nil {
			b.Fatal(err)
		}
		// chromedp's way to send a command it has no action for.
		axTree := chromedp.Action[cdpax.GetFullAXTreeResult](func(ctx context.Context, t *chromedp.Target) (cdpax.GetFullAXTreeResult, error) {
			return cdproto.Call(ctx, t, cdpax.GetFullAXTree, cdpax.GetFullAXTreeParams{})
		})
		e.interleave4(b, [4]op{
			keep(func() error {
				var r struct {
					Nodes []accessibility.AXNode `json:"nodes"`
				}
				if err := e.bare.b.Call(e.bare.sid, "Accessibility.getFullAXTree", nil, &r); err != nil {
					return err
				}
				return enoughNodes(len(r.Nodes))
			}),
			keep(func() error {
				r, err := e.bp.tab.Client().Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs())
				if err != nil {
					return err
				}
				return enoughNodes(len(r.Nodes))
			}),
			keep(func() error {
				r, err := chromedp.Run(e.cd.ctx, axTree)
				if err != nil {
					return err
				}
				return enoughNodes(len(r.Nodes))
			}),
			keep(func() error {
				r, err := proto.AccessibilityGetFullAXTree{}.Call(e.rd.page)
				if err != nil {
					return err
				}
				return enoughNodes(len(r.Nodes))
			}),
		})
	})
	b.Run("tab-open-close", func(b *testing.B) {
		e.interleave4(b, [4]op{
			keep(func() error {
				tid, _, err := e.bare.b.NewTab()
				if err != nil {
					return err
				}
				return e.bare.b.CloseTab(tid)
			}),
			keep(func() error {
				t, err := e.bp.s.OpenTab(ctx, "about:blank")
				if err != nil {
					return err
				}
				return e.bp.s.CloseTab(ctx, t.ID())
			}),
			keep(func() error {
				_, cancel, err := e.cd.newTab()
				if err != nil {
					return err
				}
				cancel()
				return nil
			}),
			keep(func() error {
				p, err := e.rd.b.Page(proto.TargetCreateTarget{})
				if err != nil {
					return err
				}
				return p.Close()
			}),
		})
	})
}

// enoughNodes fails an AX tree smaller than bigDOM's.
func enoughNodes(n int) error {
	if n < minAXNodes {
		return fmt.Errorf("%d AX nodes, want %d or more", n, minAXNodes)
	}
	return nil
}

// BenchmarkAnchorsConcurrent: 8 goroutines on 1 tab and on 8 tabs, 64
// evaluates per iteration and side (the floor through benchfloor.Conc).
// The 1-tab row uses each side's first tab: hidden on the floor's and
// rod's, visible on browserpool's and chromedp's (see the package doc).
func BenchmarkAnchorsConcurrent(b *testing.B) {
	e := newEnv(b, false)
	ctx := context.Background()
	conc := e.bare.b.Concurrent()
	var (
		bareTabs []string
		bpTabs   []*browserpool.Tab
		cdTabs   []context.Context
		rdTabs   []*rod.Page
	)
	// The tabs open round by round, each round in the start order.
	for range 8 {
		e.each(b, [4]func() error{
			func() error {
				sid, err := concTab(conc)
				bareTabs = append(bareTabs, sid)
				return err
			},
			func() error {
				t, err := e.bp.s.OpenTab(ctx, "about:blank")
				bpTabs = append(bpTabs, t)
				return err
			},
			func() error {
				tctx, cancel, err := e.cd.newTab()
				if err != nil {
					return err
				}
				b.Cleanup(cancel) // before the browser's stop (cleanups run last first)
				cdTabs = append(cdTabs, tctx)
				return nil
			},
			func() error {
				p, err := e.rd.b.Page(proto.TargetCreateTarget{})
				rdTabs = append(rdTabs, p)
				return err
			},
		})
	}
	run := func(call func(g int) error) error { return benchfloor.Fanout(8, 8, call) }
	for _, tabs := range []int{1, 8} {
		b.Run(fmt.Sprintf("8-goroutines-%d-tabs", tabs), func(b *testing.B) {
			e.interleave4(b, [4]op{
				keep(func() error {
					return run(func(g int) error { return conc.Call(bareTabs[g%tabs], "Runtime.evaluate", evalArgs, nil) })
				}),
				keep(func() error {
					return run(func(g int) error {
						var n int
						return bpTabs[g%tabs].Evaluate(ctx, "1+1", &n)
					})
				}),
				keep(func() error {
					return run(func(g int) error {
						_, err := chromedp.Run(cdTabs[g%tabs], chromedp.Evaluate[int]("1+1"))
						return err
					})
				}),
				keep(func() error {
					return run(func(g int) error {
						_, err := rdTabs[g%tabs].Eval("() => 1+1")
						return err
					})
				}),
			})
		})
	}
}

// concTab creates and attaches an about:blank tab through the floor's
// concurrent client, returning its session id.
func concTab(conc *benchfloor.Conc) (string, error) {
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := conc.Call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
		return "", err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	err := conc.Call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att)
	return att.SessionID, err
}

// BenchmarkAnchorsColdStart: a cold launch to the first page evaluate on
// each side (bare: benchfloor.Start + FirstEvaluate; browserpool:
// Pool.Open + Session.OpenTab + Tab.Evaluate, the pool made untimed
// before; chromedp: NewExecAllocator + NewContext + the first
// chromedp.Run of Evaluate, which starts the browser and attaches its
// first tab; rod: its launcher's Launch + Browser.Connect + Browser.Page +
// Page.Eval). Each side's browser is stopped right after it, untimed, so
// that every launch starts on a machine running no other browser of the
// benchmark.
func BenchmarkAnchorsColdStart(b *testing.B) {
	exe := requireExe(b)
	dir := newDir(b)
	ctx := context.Background()
	p, err := newPool(exe, filepath.Join(dir, "pool"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	n := 0
	sideDir := func(side string) string { n++; return filepath.Join(dir, fmt.Sprintf("%s-%d", side, n)) }
	interleave4(b, [4]op{
		func() (func(), error) {
			s, err := startBare(exe, sideDir("bare"))
			if err != nil {
				return nil, err
			}
			return s.stop, nil
		},
		func() (func(), error) {
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
		},
		func() (func(), error) {
			s, err := newChromedp(exe, sideDir("cdp"))
			if err != nil {
				return nil, err
			}
			_, err = chromedp.Run(s.ctx, chromedp.Evaluate[int]("1+1"))
			return s.stop, err
		},
		func() (func(), error) {
			s, err := startRod(exe, sideDir("rod"))
			if err != nil {
				return nil, err
			}
			if err := s.openPage(); err != nil {
				return s.stop, err
			}
			_, err = s.page.Eval("() => 1+1")
			return s.stop, err
		},
	})
}
