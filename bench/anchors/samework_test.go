// Room: the fast test that each side drives the same browser work. No
// locks.

package anchors_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-rod/rod/lib/proto"
	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool/internal/launch"
)

// sideWork is what one side reports after doing the same work: 1+1, the
// local page's title after navigating to it, and its browser's
// command-line flags (mainFlags). Its screenshot is checked apart.
type sideWork struct {
	Two   int
	Title string
	Flags []string
}

// TestEachSideDrivesTheSameBrowserWork checks that the four sides the
// benchmarks compare each start a browser with the launcher's flags (the
// floor's command line; rod's without the pipe), evaluate 1+1, navigate
// the local page and read its title, take a PNG screenshot, and stop,
// leaving nothing behind (TestMain's leak gate).
func TestEachSideDrivesTheSameBrowserWork(t *testing.T) {
	exe := requireExe(t)
	url := newPageServer(t)
	var floorFlags []string // the bare side's, which runs first
	for _, side := range sideNames {
		t.Run(side, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
			defer cancel()
			dir := newDir(t)
			var got sideWork
			var shot []byte
			var err error
			switch side {
			case "bare":
				got, shot, err = bareWork(exe, filepath.Join(dir, "bare"), url)
			case "browserpool":
				got, shot, err = bpWork(ctx, exe, filepath.Join(dir, "pool"), url)
			case "chromedp":
				got, shot, err = chromedpWork(ctx, exe, filepath.Join(dir, "cdp"), url)
			case "rod":
				got, shot, err = rodWork(ctx, exe, filepath.Join(dir, "rod"), url)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := sideWork{Two: 2, Title: pageTitle, Flags: floorFlags}
			switch side {
			case "bare":
				floorFlags = got.Flags
				want.Flags = launcherFlags(got.Flags)
			case "browserpool":
				// Its pool routes the browser through its network-policy
				// proxy (netpolicy.go), on by default: that is part of
				// what browserpool costs, not a difference of launch.
				got.Flags = slices.DeleteFunc(got.Flags, func(f string) bool {
					return strings.HasPrefix(f, "--proxy-server=") || f == "--proxy-bypass-list=<-loopback>" ||
						f == "--webrtc-ip-handling-policy=disable_non_proxied_udp"
				})
			case "rod":
				want.Flags = slices.DeleteFunc(slices.Clone(floorFlags), func(f string) bool { return f == "--remote-debugging-pipe" })
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s's work (-want +got):\n%s", side, diff)
			}
			if err := checkPNG(shot); err != nil {
				t.Error(side, ": ", err)
			}
		})
	}
}

func bareWork(exe, dir, url string) (w sideWork, shot []byte, err error) {
	s, err := startBare(exe, dir)
	if err != nil {
		return w, nil, err
	}
	defer s.stop()
	if w.Flags, err = mainFlags(dir); err != nil {
		return w, nil, err
	}
	if err := s.openTab(); err != nil {
		return w, nil, err
	}
	if err := s.evaluate(s.sid, "1+1", &w.Two); err != nil {
		return w, nil, err
	}
	if err := s.navigate(url); err != nil {
		return w, nil, err
	}
	if err := s.evaluate(s.sid, "document.title", &w.Title); err != nil {
		return w, nil, err
	}
	shot, err = s.screenshot()
	return w, shot, err
}

func bpWork(ctx context.Context, exe, root, url string) (w sideWork, shot []byte, err error) {
	s, err := startBP(ctx, exe, root)
	if err != nil {
		return w, nil, err
	}
	defer s.stop()
	if w.Flags, err = mainFlags(root); err != nil {
		return w, nil, err
	}
	if err := s.openTab(ctx); err != nil {
		return w, nil, err
	}
	if err := s.tab.Evaluate(ctx, "1+1", &w.Two); err != nil {
		return w, nil, err
	}
	if _, err := s.tab.Navigate(ctx, url); err != nil {
		return w, nil, err
	}
	if err := s.tab.Evaluate(ctx, "document.title", &w.Title); err != nil {
		return w, nil, err
	}
	r, err := s.tab.Client().Page.CaptureScreenshot(ctx, page.NewCaptureScreenshotArgs().SetFormat("png"))
	if err != nil {
		return w, nil, err
	}
	return w, r.Data, nil
}

func chromedpWork(ctx context.Context, exe, dir, url string) (w sideWork, shot []byte, err error) {
	s, err := startChromedp(exe, dir)
	if err != nil {
		return w, nil, err
	}
	defer s.stop()
	if w.Flags, err = mainFlags(dir); err != nil {
		return w, nil, err
	}
	// A deadline for the actions only: a context derived from one that has
	// run (chromedp.Run's rule), so it does not bound the browser's life.
	actx, cancel := context.WithDeadline(s.ctx, deadlineOf(ctx))
	defer cancel()
	if w.Two, err = chromedp.Run(actx, chromedp.Evaluate[int]("1+1")); err != nil {
		return w, nil, err
	}
	if err := chromedp.Do(actx, chromedp.Navigate(url)); err != nil {
		return w, nil, err
	}
	if w.Title, err = chromedp.Run(actx, chromedp.Title()); err != nil {
		return w, nil, err
	}
	shot, err = chromedp.Run(actx, chromedp.CaptureScreenshot())
	return w, shot, err
}

func rodWork(ctx context.Context, exe, dir, url string) (w sideWork, shot []byte, err error) {
	s, err := startRod(exe, dir)
	if err != nil {
		return w, nil, err
	}
	defer s.stop()
	if w.Flags, err = mainFlags(dir); err != nil {
		return w, nil, err
	}
	if err := s.openPage(); err != nil {
		return w, nil, err
	}
	p := s.page.Context(ctx)
	if w.Two, err = rodEval(p, "() => 1+1"); err != nil {
		return w, nil, err
	}
	if err := p.Navigate(url); err != nil {
		return w, nil, err
	}
	if err := p.WaitLoad(); err != nil {
		return w, nil, err
	}
	r, err := p.Eval("() => document.title")
	if err != nil {
		return w, nil, err
	}
	w.Title = r.Value.Str()
	shot, err = p.Screenshot(false, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	return w, shot, err
}

// deadlineOf returns ctx's deadline, or one launchTimeout away.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(launchTimeout)
}

// mainFlags returns the sorted command-line arguments (without argv[0])
// of the one browser main process (no --type= flag) whose --user-data-dir
// lies under dir, with that flag's value dropped (each side's differs).
// They include what the /usr/bin/chromium wrapper adds, the same for
// every side.
func mainFlags(dir string) ([]string, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	// A browser's child between its fork and its exec still shows the
	// browser's command line: a main process whose parent is one too is
	// such a child, not a second browser.
	type proc struct {
		pid, ppid int
		args      []string
	}
	var procs []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")[1:]
		if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--user-data-dir="+dir+"/") }) ||
			slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--type=") }) {
			continue
		}
		for i, a := range args {
			if strings.HasPrefix(a, "--user-data-dir=") {
				args[i] = "--user-data-dir"
			}
		}
		slices.Sort(args)
		procs = append(procs, proc{pid: pid, ppid: parentPID(pid), args: args})
	}
	var found [][]string
	for _, p := range procs {
		if !slices.ContainsFunc(procs, func(q proc) bool { return q.pid == p.ppid }) {
			found = append(found, p.args)
		}
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d browser main processes with a profile under %s, want 1: %q", len(found), dir, found)
	}
	return found[0], nil
}

// parentPID returns pid's parent (0 if it cannot be read): the fourth
// field of /proc/<pid>/stat, after the command name in parentheses.
func parentPID(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// launcherFlags returns got if it holds every flag of the launcher's list
// (launch.Args with the pipe, the profile's value dropped as mainFlags
// does), else that list: a floor that lacks one shows in the diff.
func launcherFlags(got []string) []string {
	for _, a := range launch.Args("", true, nil) {
		if strings.HasPrefix(a, "--user-data-dir=") {
			a = "--user-data-dir"
		}
		if !slices.Contains(got, a) {
			want := launch.Args("", true, nil)
			slices.Sort(want)
			return want
		}
	}
	return got
}
