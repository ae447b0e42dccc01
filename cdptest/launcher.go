// Room: the launcher adapter, so a browserpool.Pool can run on fake browsers.
// Launcher.mu guards its list of browsers and its scripted faults; it is
// never held while a launch waits or a browser stops.

package cdptest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// Launcher is a browserpool.Launcher whose every launch starts a new fake
// [Browser] (with one page, about:blank, as Chromium starts). Use it as
// browserpool.Config.Launcher to test code built on a Pool without a real
// browser. It is safe for concurrent use and works inside testing/synctest.
type Launcher struct {
	tb   testing.TB
	opts []Option

	mu       sync.Mutex
	browsers []*Browser       // guarded by mu; in launch order
	onLaunch []func(*Browser) // guarded by mu
	failNext error            // guarded by mu; launches fail with it while set
	failStop error            // guarded by mu; Stop returns it while set
	delay    time.Duration    // guarded by mu; how long a launch takes
}

// NewLauncher returns a launcher of fake browsers made with opts. Each
// browser's leak check (see [NewBrowser]) runs at tb's cleanup. With a nil
// tb (as in an example) there is no check; close the pool to end the
// browsers.
func NewLauncher(tb testing.TB, opts ...Option) *Launcher {
	opts = append([]Option{WithPage("about:blank")}, opts...)
	l := &Launcher{tb: tb, opts: opts}
	if tb != nil {
		tb.Helper() // a leak is reported at the caller's NewLauncher
		// One cleanup, registered now: it runs after the cleanups
		// registered later (such as a Pool's Close), so it sees what the
		// pool left.
		tb.Cleanup(func() {
			tb.Helper()
			for _, b := range l.Browsers() {
				b.cleanup()
			}
		})
	}
	return l
}

// Browsers returns every browser launched so far, in launch order.
func (l *Launcher) Browsers() []*Browser {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*Browser(nil), l.browsers...)
}

// BrowserFor returns the browser l launched for the session s of a
// browserpool.Pool whose Config.Launcher is l, or nil if l launched none
// for it (s is of another pool or launcher, or nil). With sessions opened
// at once, the order of [Launcher.Browsers] says nothing of which browser
// is whose; BrowserFor does, so that a test can inject a fault into one
// session's browser ([Browser.Exit], [Browser.CrashTarget], …):
//
//	l.BrowserFor(sess).CrashTarget(tab.ID())
func (l *Launcher) BrowserFor(s *browserpool.Session) *Browser {
	if s == nil {
		return nil
	}
	id := s.ID()
	for _, b := range l.Browsers() {
		if b.sessionID == id {
			return b
		}
	}
	return nil
}

// OnLaunch calls f with each browser launched from now on, before the pool
// sees it: script its replies and faults there. A second call adds f; it
// does not replace the earlier ones, which keep running first, in the
// order they were added.
func (l *Launcher) OnLaunch(f func(*Browser)) {
	l.mu.Lock()
	l.onLaunch = append(l.onLaunch, f)
	l.mu.Unlock()
}

// FailLaunches makes every later launch fail with err; nil restores them.
func (l *Launcher) FailLaunches(err error) {
	l.mu.Lock()
	l.failNext = err
	l.mu.Unlock()
}

// FailStops makes every later Stop return err, as when the browser's
// process cannot be killed or reaped; nil restores them. Stop then does
// nothing to the process; but a pool sends Browser.close or closes the
// browser's connection before it calls Stop, and a browser driven over a
// pipe exits when its pipe closes, so after Session.Close or Pool.Close
// the fake browser has exited all the same ([Browser.Exited] is closed):
// the fault is Stop's error alone, which the pool reports and counts.
func (l *Launcher) FailStops(err error) {
	l.mu.Lock()
	l.failStop = err
	l.mu.Unlock()
}

// SetLaunchDelay makes each later launch take d (on the fake clock inside
// testing/synctest).
func (l *Launcher) SetLaunchDelay(d time.Duration) {
	l.mu.Lock()
	l.delay = d
	l.mu.Unlock()
}

// Launch implements browserpool.Launcher.
func (l *Launcher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	l.mu.Lock()
	delay, fail := l.delay, l.failNext
	hooks := slices.Clone(l.onLaunch)
	l.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	if spec.Dir != "" {
		if err := os.MkdirAll(spec.Dir, 0o700); err != nil {
			return nil, err
		}
	}
	b := NewBrowser(nil, l.opts...)
	b.tb = l.tb // checked by the launcher's own cleanup
	b.launched = true
	b.sessionID = spec.SessionID
	if spec.OnSpawn != nil {
		if err := spec.OnSpawn(browserpool.SpawnInfo{Dir: spec.Dir}); err != nil {
			b.Exit(0)
			return nil, err
		}
	}
	for _, f := range hooks {
		f(b)
	}
	l.mu.Lock()
	l.browsers = append(l.browsers, b)
	l.mu.Unlock()
	return &launched{l: l, b: b, dir: spec.Dir}, nil
}

// launched is one fake browser as the pool drives it.
type launched struct {
	l   *Launcher
	b   *Browser
	dir string
}

func (lb *launched) Transport() browserpool.Transport { return lb.b.Transport() }
func (lb *launched) Exited() <-chan struct{}          { return lb.b.Exited() }

func (lb *launched) Info() browserpool.SpawnInfo {
	return browserpool.SpawnInfo{Dir: lb.dir, Version: "cdptest/1.0"}
}

func (lb *launched) ExitErr() error {
	status, exited := lb.b.ExitStatus()
	if !exited {
		return nil
	}
	return &ExitError{Status: status}
}

func (lb *launched) Stop(ctx context.Context) error {
	lb.l.mu.Lock()
	fail := lb.l.failStop
	lb.l.mu.Unlock()
	if fail != nil {
		return fail
	}
	lb.b.Exit(0)
	return nil
}

// ExitError says how a fake browser ended.
type ExitError struct {
	Status int // the exit status (Browser.Exit)
}

// Error says "browser exited with status N", as a real browser's exit would.
func (e *ExitError) Error() string { return fmt.Sprintf("browser exited with status %d", e.Status) }
