// Room: BenchmarkAnchorsFootprint and its child process. No locks.

package anchors_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browserpool/browserpool/internal/benchfloor"
)

// footprintTabs is how many tabs each side's child opens beside its
// browser's first.
const footprintTabs = 10

// BenchmarkAnchorsFootprint reports, per side, the resident memory
// (MiB-rss-<side>, and its anonymous part MiB-anon-<side>: heap and
// stacks, without the binary's file-backed code pages) and the goroutines
// (goroutines-<side>, beyond those the child had before it started) of a
// whole program driving 1 browser + 10 tabs: this test binary re-executed
// once per side (runFootprint), reading its own /proc/self/status after a
// GC with the browser still up, as bench_floor_test.go's
// BenchmarkFloorFootprint does. The children run one after the other, in
// a rotating order, each stopping its browser before it exits.
func BenchmarkAnchorsFootprint(b *testing.B) {
	requireExe(b)
	var sum [4]footprint
	i := 0
	for b.Loop() {
		for k := range 4 {
			j := (i + k) % 4
			f := footprintChild(b, sideNames[j])
			sum[j].rssKiB += f.rssKiB
			sum[j].anonKiB += f.anonKiB
			sum[j].goroutines += f.goroutines
		}
		i++
	}
	n := float64(b.N)
	for j, side := range sideNames {
		b.ReportMetric(sum[j].rssKiB/1024/n, "MiB-rss-"+side)
		b.ReportMetric(sum[j].anonKiB/1024/n, "MiB-anon-"+side)
		b.ReportMetric(sum[j].goroutines/n, "goroutines-"+side)
	}
}

// footprint is what a child measured.
type footprint struct{ rssKiB, anonKiB, goroutines float64 }

// footprintChild runs the footprint child for side in a fresh directory
// under the test's root and returns what it measured.
func footprintChild(b *testing.B, side string) footprint {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), footprintEnv+"="+side, footprintRootEnv+"="+newDir(b))
	out, err := cmd.CombinedOutput()
	var f footprint
	_, serr := fmt.Sscanf(lastLine(string(out)), "rss-kib %g anon-kib %g goroutines %g", &f.rssKiB, &f.anonKiB, &f.goroutines)
	if err != nil || serr != nil {
		b.Fatalf("footprint child %s: %v %v\n%s", side, err, serr, out)
	}
	return f
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// runFootprint is the footprint child (TestMain runs it instead of the
// tests when footprintEnv is set): one browser with 10 more tabs, driven
// by side, the browser's files under footprintRootEnv. It prints
// "rss-kib N anon-kib N goroutines N" after a GC, with the browser still
// up, then stops it. Each side opens its tabs its normal way: bare
// createTarget + attachToTarget + Page.enable; browserpool
// Session.OpenTab; chromedp a context per tab and a first run on it; rod
// Browser.Page.
func runFootprint(side string) int {
	root := os.Getenv(footprintRootEnv)
	fail := func(err error) int { fmt.Println("error", err); return 1 }
	exe, err := findExe()
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	g0 := runtime.NumGoroutine()
	var stop func()
	switch side {
	case "bare":
		s, err := startBare(exe, filepath.Join(root, "bare"))
		if err != nil {
			return fail(err)
		}
		stop = s.stop
		for range footprintTabs {
			if err := s.openTab(); err != nil {
				stop()
				return fail(err)
			}
		}
	case "browserpool":
		s, err := startBP(ctx, exe, filepath.Join(root, "pool"))
		if err != nil {
			return fail(err)
		}
		stop = s.stop
		for range footprintTabs {
			if err := s.openTab(ctx); err != nil {
				stop()
				return fail(err)
			}
		}
	case "chromedp":
		s, err := startChromedp(exe, filepath.Join(root, "cdp"))
		if err != nil {
			return fail(err)
		}
		var tabs []context.CancelFunc
		stop = func() {
			for _, c := range tabs {
				c() // closes the tab
			}
			s.stop()
		}
		for range footprintTabs {
			_, cancel, err := s.newTab()
			if err != nil {
				stop()
				return fail(err)
			}
			tabs = append(tabs, cancel)
		}
	case "rod":
		s, err := startRod(exe, filepath.Join(root, "rod"))
		if err != nil {
			return fail(err)
		}
		stop = s.stop
		for range footprintTabs {
			if _, err := s.b.Page(proto.TargetCreateTarget{}); err != nil {
				stop()
				return fail(err)
			}
		}
	default:
		return fail(fmt.Errorf("unknown footprint side %q", side))
	}
	benchfloor.SettleGoroutines()
	runtime.GC()
	debug.FreeOSMemory()
	rss, anon, err := benchfloor.ResidentKiB()
	g := runtime.NumGoroutine() - g0
	stop()
	if err != nil {
		return fail(err)
	}
	fmt.Println("rss-kib", rss, "anon-kib", anon, "goroutines", g)
	return 0
}
