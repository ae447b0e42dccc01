// Package footprint is the footprint row's child (issue 14: Go RSS with 1
// browser + 10 tabs): one browser with 10 tabs, driven by the floor
// (internal/benchfloor) or by a browserpool.Pool, measuring its own
// resident memory with the browser up. The root's BenchmarkFloorFootprint
// runs it in two programs: its test binary re-executed (which links the
// whole package, whose launch → open path spans about ten 64 KiB blocks
// of its text), and
// the small program in ./child, which links what the row calls and
// nothing else, as a user's program does. No locks.
package footprint

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
)

// Tabs is how many tabs each side opens beside the first.
const Tabs = 10

// Result is what a child measured, in KiB: its VmRSS, its anonymous part
// (RssAnon: heap and stacks) and its executable's resident sections.
type Result struct {
	RSS, Anon             float64
	Text, Pclntab, Rodata float64
}

// Minus is r less o, measure by measure.
func (r Result) Minus(o Result) Result {
	return Result{RSS: r.RSS - o.RSS, Anon: r.Anon - o.Anon, Text: r.Text - o.Text, Pclntab: r.Pclntab - o.Pclntab, Rodata: r.Rodata - o.Rodata}
}

// Median is each measure's median over rs (benchfloor.Median), taken
// measure by measure: its fields may come from different results.
func Median(rs []Result) Result {
	m := func(f func(Result) float64) float64 {
		vs := make([]float64, len(rs))
		for i, r := range rs {
			vs[i] = f(r)
		}
		return benchfloor.Median(vs)
	}
	return Result{
		RSS:     m(func(r Result) float64 { return r.RSS }),
		Anon:    m(func(r Result) float64 { return r.Anon }),
		Text:    m(func(r Result) float64 { return r.Text }),
		Pclntab: m(func(r Result) float64 { return r.Pclntab }),
		Rodata:  m(func(r Result) float64 { return r.Rodata }),
	}
}

// lineFormat is Result's line (String, Parse).
const lineFormat = "rss-kib %g anon-kib %g text-kib %g pclntab-kib %g rodata-kib %g"

// String is the line a child prints last.
func (r Result) String() string {
	return fmt.Sprintf(lineFormat, r.RSS, r.Anon, r.Text, r.Pclntab, r.Rodata)
}

// Parse reads a Result from a child's output: its last line.
func Parse(out string) (Result, error) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r Result
	if _, err := fmt.Sscanf(lines[len(lines)-1], lineFormat, &r.RSS, &r.Anon, &r.Text, &r.Pclntab, &r.Rodata); err != nil {
		return Result{}, fmt.Errorf("footprint child printed no result line (%v):\n%s", err, out)
	}
	return r, nil
}

// Measure starts one browser with its files under root and opens Tabs
// tabs, the floor's way (side "bare": a target created and attached for
// each, Page.enable on each) or a Pool's ("ours": Session.OpenTab), then
// reads this process's resident memory after a GC, with the browser still
// up, and stops it.
func Measure(side, root string) (Result, error) {
	var stop func()
	switch side {
	case "bare":
		exe, err := exec.LookPath("chromium")
		if err != nil {
			return Result{}, fmt.Errorf("footprint: the floor runs chromium from PATH (make browser installs it): %w", err)
		}
		bare, err := benchfloor.Start(exe, filepath.Join(root, "bare"))
		if err != nil {
			return Result{}, err
		}
		stop = bare.Stop
		if err := openBare(bare); err != nil {
			stop()
			return Result{}, err
		}
	case "ours":
		p, err := browserpool.NewPool(browserpool.Config{Root: root})
		if err != nil {
			return Result{}, err
		}
		stop = func() { p.Close() }
		if err := openOurs(p); err != nil {
			stop()
			return Result{}, err
		}
		benchfloor.SettleGoroutines()
	default:
		return Result{}, fmt.Errorf("footprint: unknown side %q: want bare or ours", side)
	}
	defer stop()
	runtime.GC()
	debug.FreeOSMemory()
	rss, anon, err := benchfloor.ResidentKiB()
	if err != nil {
		return Result{}, err
	}
	code, err := benchfloor.ResidentCodeKiB()
	if err != nil {
		return Result{}, err
	}
	return Result{RSS: float64(rss), Anon: float64(anon), Text: float64(code.Text), Pclntab: float64(code.Pclntab), Rodata: float64(code.Rodata)}, nil
}

func openBare(bare *benchfloor.Bare) error {
	if err := bare.FirstEvaluate(); err != nil {
		return err
	}
	for range Tabs {
		_, sid, err := bare.NewTab()
		if err == nil {
			err = bare.Call(sid, "Page.enable", nil, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func openOurs(p *browserpool.Pool) error {
	ctx := context.Background()
	s, err := p.Open(ctx)
	if err != nil {
		return err
	}
	for range Tabs {
		if _, err := s.OpenTab(ctx, "about:blank"); err != nil {
			return err
		}
	}
	return nil
}
