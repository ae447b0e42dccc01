package browserpool_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// newFakePool returns a pool of cdptest browsers, closed at cleanup.
func newFakePool(t testing.TB, l *cdptest.Launcher, cfg browserpool.Config) *browserpool.Pool {
	t.Helper()
	cfg.Launcher = l
	if cfg.Root == "" {
		cfg.Root = newRoot(t)
	}
	p, err := browserpool.NewPool(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// fakeTab opens a session of a new cdptest browser in a pool closed at
// cleanup, and a tab in it; it returns the browser and the tab.
func fakeTab(t testing.TB) (*cdptest.Browser, *browserpool.Tab) {
	t.Helper()
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := context.Background()
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	return l.Browsers()[0], tab
}

func TestConcurrentEmptyIDCallersShareOneLaunch(t *testing.T) {
	l := cdptest.NewLauncher(t)
	l.SetLaunchDelay(50 * time.Millisecond)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	var wg sync.WaitGroup
	got := make([]*browserpool.Session, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := p.Session(ctx, "")
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got {
		if s != got[0] {
			t.Fatalf("empty-id callers got different sessions: %v and %v", s.ID(), got[0].ID())
		}
	}
	if n := len(l.Browsers()); n != 1 {
		t.Errorf("%d browsers launched for concurrent empty-id callers, want 1", n)
	}
}

func TestALaunchWhoseCallerLeftIsHandedToTheNextWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(time.Second)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := p.Session(short, ""); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("first caller: error = %v, want DeadlineExceeded", err)
		}
		// A second empty-id caller joins the launch still under way.
		s, err := p.Session(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(l.Browsers()); n != 1 {
			t.Errorf("%d browsers launched, want the first launch handed on", n)
		}
		if st := p.Stats(); st.Closes[browserpool.ReasonAbandoned] != 0 {
			t.Errorf("the handed-on launch was closed: %v", st.Closes)
		}
		s.Close(context.Background())
	})
}

func TestALaunchNobodyWaitsForAnyMoreIsClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(time.Second)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if _, err := p.Open(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Open: error = %v, want DeadlineExceeded", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		st := p.Stats()
		if diff := cmp.Diff(map[browserpool.CloseReason]uint64{browserpool.ReasonAbandoned: 1}, st.Closes); diff != "" {
			t.Errorf("Stats.Closes (-want +got):\n%s", diff)
		}
		if len(p.Sessions()) != 0 {
			t.Error("the abandoned session is live")
		}
	})
}

func TestACrashedFakeBrowserIsReclaimedWithItsExitStatus(t *testing.T) {
	l := cdptest.NewLauncher(t, cdptest.WithoutLeakCheck())
	var c closes
	p := newFakePool(t, l, browserpool.Config{Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	errc, release := heldEvaluate(t, ctx, l.Browsers()[0], tab)
	defer release()
	l.Browsers()[0].Exit(3)
	if err := <-errc; !errors.Is(err, browserpool.ErrBrowserExited) {
		t.Errorf("call in flight: error = %v, want ErrBrowserExited", err)
	}
	<-s.Done()
	if err := s.Err(); !errors.Is(err, browserpool.ErrBrowserExited) || !strings.Contains(err.Error(), "status 3") {
		t.Errorf("Session.Err() = %v, want ErrBrowserExited naming status 3", err)
	}
	waitFor(t, "the close event", func() bool { return len(c.reasons(s.ID())) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonCrashed}, c.reasons(s.ID())); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
}

// exitOnlyLauncher launches cdptest browsers that report their exit
// through a channel the test closes while their connection stays up: a
// Launcher whose browser's end does not end its transport.
type exitOnlyLauncher struct {
	l    *cdptest.Launcher
	last chan *exitOnlyBrowser
}

type exitOnlyBrowser struct {
	browserpool.LaunchedBrowser
	exited chan struct{}
	err    error // set before exited is closed
}

func (l *exitOnlyLauncher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	b, err := l.l.Launch(ctx, spec)
	if err != nil {
		return nil, err
	}
	eb := &exitOnlyBrowser{LaunchedBrowser: b, exited: make(chan struct{})}
	l.last <- eb
	return eb, nil
}

func (b *exitOnlyBrowser) Exited() <-chan struct{} { return b.exited }

func (b *exitOnlyBrowser) ExitErr() error {
	select {
	case <-b.exited:
		return b.err
	default:
		return nil
	}
}

func TestABrowserWhoseLauncherReportsItsExitIsReclaimedWhileItsConnectionStaysUp(t *testing.T) {
	l := &exitOnlyLauncher{l: cdptest.NewLauncher(t), last: make(chan *exitOnlyBrowser, 1)}
	var c closes
	p, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: newRoot(t), Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	b := <-l.last
	b.err = errors.New("browser exited with status 7")
	close(b.exited)
	select {
	case <-s.Done():
	case <-ctx.Done():
		t.Fatal("the session outlived its browser's reported exit")
	}
	if err := s.Err(); !errors.Is(err, browserpool.ErrBrowserExited) || !strings.Contains(err.Error(), "status 7") {
		t.Errorf("Session.Err() = %v, want ErrBrowserExited naming status 7", err)
	}
	waitFor(t, "the close event", func() bool { return len(c.reasons(s.ID())) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonCrashed}, c.reasons(s.ID())); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
}

func TestIdleSessionsAreReclaimedButNotMidCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		var c closes
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: 10 * time.Minute,
			Hooks: browserpool.Hooks{SessionClosed: c.hook}})
		ctx := context.Background()
		idle := mustOpen(t, ctx, p)
		busy := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, busy)
		// A 20-minute call on busy: it must never be reclaimed mid-call.
		l.Browsers()[1].Delay("Runtime.evaluate", 20*time.Minute)
		done := make(chan error, 1)
		go func() { done <- tab.Evaluate(ctx, "1+1", nil) }()
		time.Sleep(9 * time.Minute)
		synctest.Wait()
		if idle.Err() != nil {
			t.Fatalf("reclaimed before its idle timeout: %v", idle.Err())
		}
		time.Sleep(2 * time.Minute) // past the timeout plus the reaper's lag
		synctest.Wait()
		if !errors.Is(idle.Err(), browserpool.ErrSessionClosed) {
			t.Fatalf("idle session after 11 minutes: Err() = %v, want closed", idle.Err())
		}
		if busy.Err() != nil {
			t.Fatalf("a session with a call in flight was reclaimed: %v", busy.Err())
		}
		time.Sleep(10 * time.Minute) // the call ends at minute 20
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if busy.Err() != nil {
			t.Fatalf("reclaimed right after its call ended: %v", busy.Err())
		}
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		if !errors.Is(busy.Err(), browserpool.ErrSessionClosed) {
			t.Fatalf("busy session 11 minutes after its call: Err() = %v, want closed", busy.Err())
		}
		p.Close()
		if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonIdle}, c.reasons(idle.ID())); diff != "" {
			t.Errorf("close reasons (-want +got):\n%s", diff)
		}
	})
}

func TestAPanickingOrSlowHookNeverStallsThePool(t *testing.T) {
	release := make(chan struct{})
	var c closes
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{Hooks: browserpool.Hooks{
		SessionCreated: func(browserpool.SessionEvent) { <-release; panic("a host's bug") },
		SessionClosed:  c.hook,
	}})
	ctx := ctxT(t)
	// The first hook blocks; opening and closing still go on.
	for range 3 {
		s := mustOpen(t, ctx, p)
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := p.Stats(); st.Closes[browserpool.ReasonExplicit] != 3 {
		t.Fatalf("closes while a hook was stuck: %v", st.Closes)
	}
	close(release) // now every SessionCreated hook panics
	waitFor(t, "the close events after the panics", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.evs) == 3
	})
	if _, err := p.Open(ctx); err != nil {
		t.Fatalf("the pool after panicking hooks: %v", err)
	}
}

// heldEvaluate starts tab.Evaluate("1+1") with the fake browser b holding
// every Runtime.evaluate reply, and returns once the call is in flight.
func heldEvaluate(t testing.TB, ctx context.Context, b *cdptest.Browser, tab *browserpool.Tab) (errc <-chan error, release func()) {
	t.Helper()
	gate := b.Hold("Runtime.evaluate")
	ch := make(chan error, 1)
	go func() { ch <- tab.Evaluate(ctx, "1+1", nil) }()
	if err := gate.Wait(ctx, 1); err != nil { // the browser has the call
		t.Fatal(err)
	}
	return ch, gate.Release
}

// A dropped connection to a browser that keeps running fails the calls in
// flight at once with ErrBrowserExited (connection lost), not with the
// caller's DeadlineExceeded after the pool's wait for the exit (issue 13
// item 5). In a synctest bubble the old 2 s wait would outlast the call's
// 1 s deadline deterministically.
func TestADroppedConnectionFailsCallsInFlightAtOnceWithConnectionLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t, cdptest.WithoutLeakCheck())
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		b := l.Browsers()[0]
		gate := b.Hold("Runtime.evaluate")
		defer gate.Release()
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- tab.Evaluate(short, "1+1", nil) }()
		if err := gate.Wait(ctx, 1); err != nil { // the browser has the call
			t.Fatal(err)
		}
		b.DropConnection()
		err := <-errc
		if !errors.Is(err, browserpool.ErrBrowserExited) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call in flight when the connection dropped: %v, want ErrBrowserExited (connection lost)", err)
		}
		if short.Err() != nil {
			t.Errorf("the call returned only after its deadline: %v", err)
		}
		<-s.Done()
		if !errors.Is(s.Err(), browserpool.ErrBrowserExited) {
			t.Errorf("Session.Err() = %v, want ErrBrowserExited", s.Err())
		}
	})
}

// Pool.Open cut short by Pool.Close is ErrPoolClosed, not ErrLaunchFailed
// (issue 13 item 5).
func TestOpenInterruptedByCloseIsErrPoolClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(time.Hour)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), LaunchTimeout: 2 * time.Hour})
		errc := make(chan error, 1)
		go func() {
			_, err := p.Open(context.Background())
			errc <- err
		}()
		synctest.Wait()
		p.Close()
		err := <-errc
		if !errors.Is(err, browserpool.ErrPoolClosed) || errors.Is(err, browserpool.ErrLaunchFailed) {
			t.Errorf("Open interrupted by Close: %v, want ErrPoolClosed", err)
		}
	})
}

func TestASessionAndTabOfAClosedPoolSayThePoolWasClosed(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_, openErr := s.OpenTab(ctx, "about:blank")
	evalErr := tab.Evaluate(ctx, "1", nil)
	for name, err := range map[string]error{"Session.OpenTab": openErr, "Tab.Evaluate": evalErr} {
		// Not "open a new session": the closed pool cannot open one.
		if !errors.Is(err, browserpool.ErrSessionClosed) || !strings.Contains(err.Error(), "reason shutdown") || !strings.Contains(err.Error(), "create a new Pool") {
			t.Errorf("%s after Pool.Close: error = %v, want ErrSessionClosed (reason shutdown) saying to create a new Pool", name, err)
		}
	}
}

func TestPoolResolveTabAndOpenTabNameThemselvesInTheirErrors(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	for range 2 {
		if _, err := p.Open(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := p.Sessions()[0]
	var got []string
	for _, err := range []error{
		func() error {
			_, err := p.ResolveTab(ctx, browserpool.Ref{SessionID: s.ID(), TabID: "NOPE"})
			return err
		}(),
		func() error { _, err := p.ResolveTab(ctx, browserpool.Ref{}); return err }(),
		func() error { _, err := p.OpenTab(ctx, browserpool.Ref{}, "about:blank"); return err }(),
		func() error {
			_, err := p.OpenTab(ctx, browserpool.Ref{SessionID: "s-gone"}, "about:blank")
			return err
		}(),
	} {
		var e *browserpool.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not a *browserpool.Error", err)
		}
		got = append(got, e.Op+": "+e.Class.Error())
	}
	want := []string{
		"Pool.ResolveTab: tab not found",
		"Pool.ResolveTab: several sessions are live and no session id was given",
		"Pool.OpenTab: several sessions are live and no session id was given",
		"Pool.OpenTab: session not found",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the operations errors name (-want +got):\n%s", diff)
	}
}

func TestAnInputActionWaitingForAnotherOnTheSameTabSaysSoWhenItsContextEnds(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	gate := l.Browsers()[0].Hold("Input.dispatchKeyEvent")
	first := make(chan error, 1)
	go func() { first <- tab.Press(ctx, "Enter") }()
	if err := gate.Wait(ctx, 1); err != nil { // the first Press holds the keyboard
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := tab.Press(short, "Tab")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "another action on this tab used the mouse and keyboard") || !strings.Contains(err.Error(), "one at a time") {
		t.Errorf("a Press waiting for another: error = %v, want the caller's deadline, saying another action on the tab held the input", err)
	}
	gate.Release()
	if err := <-first; err != nil {
		t.Errorf("the first Press: %v", err)
	}
}

// A tab whose page never answers the enabling of its events (a renderer
// slow to start on a loaded machine, a page busy in a script) makes
// Navigate run out of NavigationTimeout: an ErrTimeout that says so, not
// the caller's context ending, which it did not.
func TestANavigationOfATabThatNeverGetsReadyTimesOutSayingSo(t *testing.T) {
	l := cdptest.NewLauncher(t, cdptest.WithPages(&cdptest.Page{URL: "https://example.test/", Title: "Example"}))
	p := newFakePool(t, l, browserpool.Config{NavigationTimeout: 300 * time.Millisecond})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	gate := l.BrowserFor(s).Hold("Page.enable")
	defer gate.Release()
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	_, err = tab.Navigate(ctx, "https://example.test/")
	var be *browserpool.Error
	if !errors.Is(err, browserpool.ErrTimeout) || !errors.As(err, &be) || !strings.Contains(err.Error(), "did not get ready to navigate within 300ms") || !strings.Contains(be.Hint, "Config.NavigationTimeout") {
		t.Errorf("Navigate of a tab whose page never answers Page.enable: %v; want ErrTimeout naming NavigationTimeout", err)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the error %v says the caller's context ended; it did not", err)
	}
}

// A profile is held by one session at a time even while RemoveProfile
// races its openers: the removal deleted the lock file it held, so an
// opener that had opened that file locked a deleted one while a later
// opener locked a new one (helper 69 saw two holders on every run). A
// race ends in the profile held, in use or not found: no other error.
func TestAProfileRacedByItsRemovalHasOneHolderAtATime(t *testing.T) {
	ctx := ctxT(t)
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	var holders, most atomic.Int64
	var mu sync.Mutex
	unexpected := map[string]int{}
	note := func(err error) {
		if err != nil && !errors.Is(err, browserpool.ErrProfileInUse) && !errors.Is(err, browserpool.ErrProfileNotFound) {
			mu.Lock()
			unexpected[err.Error()]++
			mu.Unlock()
		}
	}
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				s, err := p.OpenProfile(ctx, "race")
				note(err)
				if err != nil {
					continue
				}
				n := holders.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				holders.Add(-1)
				s.Close(ctx)
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(deadline) {
			note(p.RemoveProfile(ctx, "race"))
		}
	})
	wg.Wait()
	if n := most.Load(); n != 1 {
		t.Errorf("at most %d sessions held the profile at once, want 1", n)
	}
	if len(unexpected) > 0 {
		t.Errorf("errors other than ErrProfileInUse and ErrProfileNotFound: %v", unexpected)
	}
	names, err := p.Profiles()
	if err != nil || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, ".") }) {
		t.Errorf("Profiles() = %v, %v: a removal's leftovers are listed", names, err)
	}
}
