// Room: tests of what Pool.Close reports. No locks.

package browserpool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// pidLauncher gives each fake browser a process id, as a local launcher
// would, so the pool has a pid to name.
type pidLauncher struct {
	l   browserpool.Launcher
	pid int
}

func (p pidLauncher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	b, err := p.l.Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	return pidBrowser{b, p.pid}, nil
}

type pidBrowser struct {
	browserpool.LaunchedBrowser
	pid int
}

func (b pidBrowser) Info() browserpool.SpawnInfo {
	info := b.LaunchedBrowser.Info()
	info.PID = b.pid
	return info
}

func TestPoolCloseNamesABrowserItCouldNotStop(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: pidLauncher{l, 4242}, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), p)
	l.FailStops(errors.New("kill: operation not permitted"))
	err = p.Close()
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrCloseFailed) || !errors.As(err, &e) || e.Op != "Pool.Close" {
		t.Fatalf("Close = %v, want a Pool.Close *Error of class ErrCloseFailed", err)
	}
	for _, want := range []string{s.ID(), "pid 4242", "could not be stopped", "kill: operation not permitted"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Close error %q does not name %q", err, want)
		}
	}
	// One line, one hint: the pool is closed and retries nothing.
	if strings.Contains(err.Error(), "\n") || strings.Count(err.Error(), "(hint:") != 1 || strings.Contains(err.Error(), "the pool retries") {
		t.Errorf("Close error %q: want one line with the closed pool's hint only", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("a second Close = %v, want nil", err)
	}
}

func TestPoolCloseNamesAProfileDirItCouldNotRemove(t *testing.T) {
	root := newRoot(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(t), IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), p)
	// The session dir becomes a symlink into another tree: the pool never
	// removes through it, so it stays behind.
	dir := filepath.Join(root, "sessions", s.ID())
	elsewhere := t.TempDir()
	file := mkdirWithFile(t, elsewhere)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	err = p.Close()
	if !errors.Is(err, browserpool.ErrCloseFailed) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Close = %v, want an ErrCloseFailed naming %s", err, dir)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the pool removed files through a symlink: %v", err)
	}
	os.Remove(dir)
}

// stopGateLauncher's browsers stop only once gate is closed; entered gets a
// value when a Stop begins.
type stopGateLauncher struct {
	l       browserpool.Launcher
	gate    chan struct{}
	entered chan struct{}
}

func (g stopGateLauncher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	b, err := g.l.Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	return stopGateBrowser{b, g}, nil
}

type stopGateBrowser struct {
	browserpool.LaunchedBrowser
	g stopGateLauncher
}

func (b stopGateBrowser) Stop(ctx context.Context) error {
	b.g.entered <- struct{}{}
	<-b.g.gate
	return b.LaunchedBrowser.Stop(ctx)
}

func TestASecondPoolCloseReturnsOnlyOnceTheFirstHasStoppedTheBrowsers(t *testing.T) {
	g := stopGateLauncher{l: cdptest.NewLauncher(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: g, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	mustOpen(t, ctxT(t), p)
	first := make(chan error, 1)
	go func() { first <- p.Close() }()
	<-g.entered // the first Close is stopping the browser
	var stopped atomic.Bool
	time.AfterFunc(100*time.Millisecond, func() { stopped.Store(true); close(g.gate) })
	if err := p.Close(); err != nil {
		t.Errorf("the second Close = %v, want nil", err)
	}
	if !stopped.Load() {
		t.Error("the second Close returned while the first was still stopping the browser")
	}
	if err := <-first; err != nil {
		t.Errorf("the first Close = %v, want nil", err)
	}
}

func TestPoolCloseWaitsForASessionCloseItsCallerStoppedWaitingFor(t *testing.T) {
	g := stopGateLauncher{l: cdptest.NewLauncher(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	var hooks atomic.Int32
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: g, IdleTimeout: -1,
		Hooks: browserpool.Hooks{SessionClosed: func(browserpool.SessionEvent) { hooks.Add(1) }}})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), p)
	ctx, cancel := context.WithCancel(ctxT(t))
	go func() { <-g.entered; cancel() }() // the close is stopping the browser: its caller leaves
	if err := s.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Session.Close whose caller left: %v; want context.Canceled (the close goes on)", err)
	}
	time.AfterFunc(time.Second, func() { close(g.gate) }) // Pool.Close needs far less for the rest
	if err := p.Close(); err != nil {
		t.Errorf("Pool.Close = %v, want nil", err)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Pool.Close returned while the session's own close was still stopping its browser")
	}
	if got := hooks.Load(); got != 1 {
		t.Errorf("SessionClosed ran %d times by the time Pool.Close returned; want once", got)
	}
}

func TestASecondTrackerCloseReturnsOnlyOnceTheFirstHasClosedTheSessions(t *testing.T) {
	g := stopGateLauncher{l: cdptest.NewLauncher(t), gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: g, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Open(ctxT(t), "wf", "chat"); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- tr.Close() }()
	<-g.entered
	var stopped atomic.Bool
	time.AfterFunc(100*time.Millisecond, func() { stopped.Store(true); close(g.gate) })
	if err := tr.Close(); err != nil {
		t.Errorf("the second Close = %v, want nil", err)
	}
	if !stopped.Load() {
		t.Error("the second Tracker.Close returned while the first was still closing the session")
	}
	if err := <-first; err != nil {
		t.Errorf("the first Close = %v, want nil", err)
	}
}

func TestASlowHookHoldsPoolCloseUpForAtMostCloseTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var ran atomic.Int32
		l := cdptest.NewLauncher(t)
		p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: l, IdleTimeout: -1, CloseTimeout: 5 * time.Second,
			Hooks: browserpool.Hooks{SessionClosed: func(browserpool.SessionEvent) { ran.Add(1); <-release }}})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		mustOpen(t, ctx, p)
		mustOpen(t, ctx, p)
		closed := make(chan error, 1)
		go func() { closed <- p.Close() }()
		time.Sleep(6 * time.Second)
		synctest.Wait()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close = %v", err)
			}
		default:
			t.Fatal("Close still waits for a hook that does not return, past its CloseTimeout")
		}
		close(release) // the stuck hook ends; the one queued after it was dropped
		synctest.Wait()
		if n := ran.Load(); n != 1 {
			t.Errorf("SessionClosed ran %d times; want the stuck one only, the next dropped", n)
		}
	})
}
