// Room: tests of warm sessions (Config.Warm). No locks of the package's;
// the hook recorder has its own mutex.

package browserpool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// sessionEvents records the SessionCreated and SessionClosed hooks.
type sessionEvents struct {
	mu      sync.Mutex
	created []string                           // guarded by mu
	closed  map[string]browserpool.CloseReason // guarded by mu
}

func (e *sessionEvents) hooks() browserpool.Hooks {
	return browserpool.Hooks{
		SessionCreated: func(ev browserpool.SessionEvent) {
			e.mu.Lock()
			e.created = append(e.created, ev.SessionID)
			e.mu.Unlock()
		},
		SessionClosed: func(ev browserpool.SessionEvent) {
			e.mu.Lock()
			if e.closed == nil {
				e.closed = map[string]browserpool.CloseReason{}
			}
			e.closed[ev.SessionID] = ev.Reason
			e.mu.Unlock()
		},
	}
}

func (e *sessionEvents) createdIDs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.created...)
}

func (e *sessionEvents) closedReasons() map[string]browserpool.CloseReason {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]browserpool.CloseReason{}
	for k, v := range e.closed {
		out[k] = v
	}
	return out
}

func waitWarm(t testing.TB, p *browserpool.Pool, n int) {
	t.Helper()
	waitFor(t, "warm browsers to be ready", func() bool { return p.Stats().SessionsWarm == n })
}

// waitCreated waits until the SessionCreated hook has seen n sessions:
// hooks run on the pool's own goroutine, after the gauges moved.
func (e *sessionEvents) waitCreated(t testing.TB, n int) {
	t.Helper()
	waitFor(t, "the SessionCreated hooks", func() bool { return len(e.createdIDs()) >= n })
}

func TestOpenTakesAWarmBrowserAndThePoolRefillsInTheBackground(t *testing.T) {
	l := cdptest.NewLauncher(t)
	var ev sessionEvents
	p := newFakePool(t, l, browserpool.Config{Warm: 2, Hooks: ev.hooks()})
	waitWarm(t, p, 2)
	ev.waitCreated(t, 2)
	warm := ev.createdIDs()
	if len(p.Sessions()) != 0 {
		t.Fatalf("warm browsers are listed as live sessions: %v", p.Sessions())
	}

	s := mustOpen(t, ctxT(t), p)
	if s.ID() != warm[0] {
		t.Errorf("Open returned %s, want the oldest warm browser %s", s.ID(), warm[0])
	}
	if got := p.Sessions(); len(got) != 1 || got[0] != s {
		t.Errorf("live sessions after a warm open = %v, want only %s", got, s.ID())
	}
	waitWarm(t, p, 2)
	st := p.Stats()
	if diff := cmp.Diff([]uint64{3, 1}, []uint64{st.Launches, st.WarmClaims}); diff != "" {
		t.Errorf("launches, warm claims (-want +got):\n%s", diff)
	}
	if st.SessionsIdle != 1 {
		t.Errorf("SessionsIdle = %d, want 1 (warm browsers have their own gauge)", st.SessionsIdle)
	}
	if err := s.Err(); err != nil {
		t.Errorf("a claimed warm session is not live: %v", err)
	}
}

func TestEmptyIDResolutionTakesAWarmBrowserAndNeverSeesTheOthers(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Warm: 2})
	waitWarm(t, p, 2)
	ctx := ctxT(t)
	s, err := p.Session(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	waitWarm(t, p, 2)
	again, err := p.Session(ctx, "")
	if err != nil {
		t.Fatalf("a second empty-id call with one live session and two warm ones: %v (warm browsers must not make it ambiguous)", err)
	}
	if again != s {
		t.Errorf("second empty-id call got %s, want the one live session %s", again.ID(), s.ID())
	}
	if st := p.Stats(); st.WarmClaims != 1 {
		t.Errorf("WarmClaims = %d, want 1", st.WarmClaims)
	}
	// A warm browser's id does not resolve: it is not a session yet.
	for _, id := range p.WarmIDsForTest() {
		if _, err := p.Session(ctx, id); !errors.Is(err, browserpool.ErrSessionNotFound) {
			t.Errorf("Session(%s) of a warm browser: error = %v, want ErrSessionNotFound", id, err)
		}
	}
}

func TestWarmBrowsersAreInTheManifestAndPoolCloseClosesThem(t *testing.T) {
	l := cdptest.NewLauncher(t)
	var ev sessionEvents
	root := newRoot(t)
	p := newFakePool(t, l, browserpool.Config{Root: root, Warm: 2, Hooks: ev.hooks()})
	waitWarm(t, p, 2)
	ev.waitCreated(t, 2)
	raw, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ev.createdIDs() {
		if !strings.Contains(string(raw), id) {
			t.Errorf("the manifest does not record warm browser %s:\n%s", id, raw)
		}
	}
	if orphans, err := p.Orphans(); err != nil || len(orphans) != 0 {
		t.Errorf("Orphans() = %v, %v; warm browsers are the pool's own, not orphans", orphans, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]browserpool.CloseReason{}
	for _, id := range ev.createdIDs() {
		want[id] = browserpool.ReasonShutdown
	}
	if diff := cmp.Diff(want, ev.closedReasons()); diff != "" {
		t.Errorf("closes after Pool.Close (-want +got):\n%s", diff)
	}
	for _, b := range l.Browsers() {
		if _, exited := b.ExitStatus(); !exited {
			t.Error("a warm browser still runs after Pool.Close")
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "sessions")); len(entries) != 0 {
		t.Errorf("session dirs left after Pool.Close: %v", entries)
	}
	raw, _ = os.ReadFile(filepath.Join(root, "manifest.json"))
	for _, id := range ev.createdIDs() {
		if strings.Contains(string(raw), id) {
			t.Errorf("the manifest still names warm browser %s after Pool.Close", id)
		}
	}
	if st := p.Stats(); st.SessionsWarm != 0 || st.SessionsStarting != 0 {
		t.Errorf("after Close: SessionsWarm = %d, SessionsStarting = %d, want 0, 0", st.SessionsWarm, st.SessionsStarting)
	}
}

func TestAWarmBrowserThatDiesIsReplacedAndNeverHandedOut(t *testing.T) {
	l := cdptest.NewLauncher(t)
	var ev sessionEvents
	p := newFakePool(t, l, browserpool.Config{Warm: 1, Hooks: ev.hooks()})
	waitWarm(t, p, 1)
	ev.waitCreated(t, 1)
	dead := ev.createdIDs()[0]
	l.Browsers()[0].Exit(1)
	waitFor(t, "the dead warm browser to be closed", func() bool { return ev.closedReasons()[dead] == browserpool.ReasonCrashed })
	waitWarm(t, p, 1)
	s := mustOpen(t, ctxT(t), p)
	if s.ID() == dead {
		t.Fatal("Open handed out a warm browser that had died")
	}
	if n := len(l.Browsers()); n < 2 {
		t.Errorf("%d browsers launched, want a replacement for the dead one", n)
	}
}

func TestAWarmBrowserOlderThanWarmMaxAgeIsReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		var ev sessionEvents
		p := newFakePool(t, l, browserpool.Config{Warm: 1, WarmMaxAge: time.Minute, IdleTimeout: -1, Hooks: ev.hooks()})
		synctest.Wait()
		first := ev.createdIDs()
		if len(first) != 1 || p.Stats().SessionsWarm != 1 {
			t.Fatalf("after start: created %v, SessionsWarm %d; want one warm browser", first, p.Stats().SessionsWarm)
		}
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if got := ev.closedReasons(); len(got) != 0 {
			t.Fatalf("closes before WarmMaxAge: %v", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if diff := cmp.Diff(map[string]browserpool.CloseReason{first[0]: browserpool.ReasonWarmExpired}, ev.closedReasons()); diff != "" {
			t.Errorf("closes after WarmMaxAge (-want +got):\n%s", diff)
		}
		if st := p.Stats(); st.SessionsWarm != 1 || st.Launches != 2 {
			t.Errorf("SessionsWarm = %d, Launches = %d; want a fresh warm browser (1, 2)", st.SessionsWarm, st.Launches)
		}
		p.Close()
	})
}

func TestAFailingWarmLaunchBacksOffAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.FailLaunches(errors.New("no browser today"))
		p := newFakePool(t, l, browserpool.Config{Warm: 1, IdleTimeout: -1})
		// Attempts at 0, 1, 3, 7 and 15 s (backoff 1, 2, 4, 8 s): five in
		// 20 s, not a busy loop.
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if st := p.Stats(); st.Launches != 5 || st.LaunchFailures != 5 {
			t.Errorf("after 20 s of failing launches: Launches = %d, LaunchFailures = %d, want 5, 5", st.Launches, st.LaunchFailures)
		}
		// Open does not wait for the warmer: it launches cold, and fails.
		if _, err := p.Open(context.Background()); !errors.Is(err, browserpool.ErrLaunchFailed) {
			t.Errorf("Open with no warm browser and failing launches: error = %v, want ErrLaunchFailed", err)
		}
		l.FailLaunches(nil)
		time.Sleep(16 * time.Second) // the next retry is at most 16 s away
		synctest.Wait()
		if st := p.Stats(); st.SessionsWarm != 1 {
			t.Errorf("SessionsWarm = %d after launches recovered, want 1", st.SessionsWarm)
		}
		p.Close()
	})
}

func TestWarmBrowsersCountAgainstNoWorkflowLimitUntilClaimed(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Warm: 2})
	waitWarm(t, p, 2)
	tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p, PerWorkflow: 1, Global: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := ctxT(t)
	s, err := tr.Open(ctx, "w1", "main")
	if err != nil {
		t.Fatalf("Tracker.Open with two warm browsers and limits of 1: %v", err)
	}
	if st := p.Stats(); st.WarmClaims != 1 {
		t.Errorf("WarmClaims = %d, want the tracker's open served warm", st.WarmClaims)
	}
	if _, err := tr.Open(ctx, "w1", "second"); !errors.Is(err, browserpool.ErrSessionLimit) {
		t.Errorf("second Tracker.Open of w1: error = %v, want ErrSessionLimit (the claimed one counts, warm ones do not)", err)
	}
	if s.Err() != nil {
		t.Errorf("the claimed session was closed: %v", s.Err())
	}
}

func TestWarmBrowsersCountAgainstNoComputerCapUntilClaimed(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Warm: 2, IdleTimeout: -1})
	waitWarm(t, p, 2)
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "c1", Pool: p, Cap: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, task := range []string{"t1", "t2"} {
		if err := a.Bind(task, "c1"); err != nil {
			t.Fatal(err)
		}
	}
	ctx := ctxT(t)
	if _, err := a.Acquire(ctx, "t1", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject}); err != nil {
		t.Fatalf("Acquire at cap 1 with two warm browsers: %v", err)
	}
	if st := p.Stats(); st.WarmClaims != 1 {
		t.Errorf("WarmClaims = %d, want the acquire served warm", st.WarmClaims)
	}
	if _, err := a.Acquire(ctx, "t2", browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject}); !errors.Is(err, browserpool.ErrRejected) {
		t.Errorf("second Acquire at cap 1: error = %v, want ErrRejected (the claimed one counts, warm ones do not)", err)
	}
}

func TestNewPoolRejectsANegativeWarmCount(t *testing.T) {
	_, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: unusedLauncher{}, Warm: -1})
	if !errors.Is(err, browserpool.ErrInvalidConfig) || !strings.Contains(err.Error(), "Warm") {
		t.Errorf("NewPool(Warm: -1) error = %v, want ErrInvalidConfig naming Warm", err)
	}
}

func TestAWarmRealBrowserIsClaimedUsedAndClosedWithThePool(t *testing.T) {
	requireBrowser(t)
	root := newRoot(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitWarm(t, p, 1)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if st := p.Stats(); st.WarmClaims != 1 {
		t.Fatalf("WarmClaims = %d, want 1", st.WarmClaims)
	}
	var sum int
	if err := mustTab(t, ctx, s).Evaluate(ctx, "20+22", &sum); err != nil || sum != 42 {
		t.Fatalf("Evaluate on a claimed warm browser = %d, %v", sum, err)
	}
	waitWarm(t, p, 1)
	pids := []int{s.Info().PID}
	for _, id := range p.WarmIDsForTest() {
		pids = append(pids, p.WarmPIDForTest(id))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
			t.Errorf("browser pid %d still runs after Pool.Close", pid)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "sessions")); len(entries) != 0 {
		t.Errorf("session dirs left after Pool.Close: %v", entries)
	}
}

// A warm browser about to expire is replaced before it goes: a claim at
// the moment it expires takes the replacement, without a launch.
func TestAWarmBrowserIsReplacedBeforeItExpiresSoAClaimNeverWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		l.SetLaunchDelay(3 * time.Second) // a slow machine's cold start
		var ev sessionEvents
		p := newFakePool(t, l, browserpool.Config{Warm: 1, WarmMaxAge: time.Minute, IdleTimeout: -1, Hooks: ev.hooks()})
		waitWarm(t, p, 1)
		first := ev.createdIDs()
		time.Sleep(time.Minute + time.Second) // the first warm browser has expired
		synctest.Wait()
		if diff := cmp.Diff(map[string]browserpool.CloseReason{first[0]: browserpool.ReasonWarmExpired}, ev.closedReasons()); diff != "" {
			t.Fatalf("closes after WarmMaxAge (-want +got):\n%s", diff)
		}
		if st := p.Stats(); st.SessionsWarm != 1 {
			t.Fatalf("SessionsWarm = %d just after the first expired, want its replacement ready", st.SessionsWarm)
		}
		start := time.Now()
		s, err := p.Open(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("Open just after a warm browser expired waited %v (a cold launch), want a warm claim at once", waited)
		}
		if st := p.Stats(); st.WarmClaims != 1 {
			t.Errorf("WarmClaims = %d, want 1", st.WarmClaims)
		}
		s.Close(t.Context())
		p.Close()
	})
}
