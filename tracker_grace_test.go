package browserpool_test

import (
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// graceTimes blanks the times an ErrNoRoom error gives (how long ago the
// oldest protected session was used, when to retry), which depend on how
// fast the test ran.
var graceTimes = regexp.MustCompile(`used (less than a second|[0-9hms.]+) ago|in [0-9hms.]+ or later`)

func blankGraceTimes(s string) string {
	return graceTimes.ReplaceAllStringFunc(s, func(m string) string {
		if m[0] == 'u' {
			return "used T ago"
		}
		return "in T or later"
	})
}

func TestTheEvictGraceKeepsOtherWorkflowsRecentSessionsOpen(t *testing.T) {
	var ev evictions
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 2, PerWorkflow: 2, EvictGrace: time.Hour, Evicted: ev.hook})
	ctx := ctxT(t)
	w1, err := tr.Open(ctx, "w1", "main")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := tr.Open(ctx, "w2", "main")
	if err != nil {
		t.Fatal(err)
	}
	// Both idle sessions are another workflow's, used within the hour.
	_, err = tr.Open(ctx, "w3", "main")
	if !errors.Is(err, browserpool.ErrNoRoom) {
		t.Fatalf("a third workflow at the limit: error = %v, want ErrNoRoom", err)
	}
	want := `browserpool: Tracker.Open name=main workflow=w3: no browser session may be closed to make room yet: the global limit of 2 browser sessions is reached, and the idle ones belong to other workflows that used them within the last 1h0m0s (EvictGrace), the least recently used T ago (hint: open again in T or later (another workflow's session idle for 1h0m0s is closed to make room), or close a session you no longer need)`
	if diff := cmp.Diff(want, blankGraceTimes(err.Error())); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	// A workflow's own idle session is not protected from itself.
	if _, err := tr.Open(ctx, "w1", "second"); err != nil {
		t.Fatal(err)
	}
	<-w1.Done()
	if w2.Err() != nil {
		t.Errorf("w2's recent session was closed: %v", w2.Err())
	}
	tr.Close()
	if diff := cmp.Diff([]string{"w1/main lru for w1/second"}, ev.names()); diff != "" {
		t.Errorf("eviction events (-want +got):\n%s", diff)
	}
}

func TestASessionIdleForTheGraceMakesRoom(t *testing.T) {
	var ev evictions
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 2, EvictGrace: 300 * time.Millisecond, Evicted: ev.hook})
	ctx := ctxT(t)
	for _, wf := range []string{"w1", "w2"} {
		if _, err := tr.Open(ctx, wf, "main"); err != nil {
			t.Fatal(err)
		}
	}
	// Refused while w1 and w2 are within the grace, then w1, the least
	// recently used, makes room.
	waitFor(t, "w3's open to find room", func() bool {
		_, err := tr.Open(ctx, "w3", "main")
		if err != nil && !errors.Is(err, browserpool.ErrNoRoom) {
			t.Fatalf("w3's open: %v, want ErrNoRoom or success", err)
		}
		return err == nil
	})
	tr.Close()
	if diff := cmp.Diff([]string{"w1/main lru for w3/main"}, ev.names()); diff != "" {
		t.Errorf("eviction events (-want +got):\n%s", diff)
	}
}

// The grace is kept by the choice of the session to close, made under the
// tracker's lock with its removal: opens racing each other never close a
// protected session (the MCP server's check before Tracker.Open did not
// hold against a concurrent open).
func TestConcurrentOpensNeverCloseAProtectedSession(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 2, PerWorkflow: 2, EvictGrace: time.Hour})
	ctx := ctxT(t)
	if _, err := tr.Open(ctx, "w1", "main"); err != nil {
		t.Fatal(err)
	}
	w2, err := tr.Open(ctx, "w2", "main")
	if err != nil {
		t.Fatal(err)
	}
	// w1 may close its own session; the eight others may close nothing,
	// whichever runs first.
	others := []string{"w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10"}
	errs := make([]error, len(others)+1)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, wf := range append([]string{"w1"}, others...) {
		wg.Go(func() {
			<-start
			name := "main"
			if wf == "w1" {
				name = "second"
			}
			_, errs[i] = tr.Open(ctx, wf, name)
		})
	}
	close(start)
	wg.Wait()
	if errs[0] != nil {
		t.Errorf("w1's second session: %v", errs[0])
	}
	for i, err := range errs[1:] {
		if !errors.Is(err, browserpool.ErrNoRoom) {
			t.Errorf("%s: error = %v, want ErrNoRoom", others[i], err)
		}
	}
	if w2.Err() != nil {
		t.Errorf("w2's recent session was closed: %v", w2.Err())
	}
}

func TestANegativeEvictGraceIsRefused(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	_, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p, EvictGrace: -time.Second})
	want := `browserpool: NewTracker: invalid config: EvictGrace: must not be negative; zero means none (hint: fix the Config field named above)`
	if err == nil {
		t.Fatal("NewTracker accepted a negative EvictGrace")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
}

func TestTheEvictGraceWithRealBrowsers(t *testing.T) {
	t.Parallel()
	var ev evictions
	p := newRealPool(t, browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 1, PerWorkflow: 2, EvictGrace: time.Hour, Evicted: ev.hook})
	ctx := ctxWithin(t, 3*time.Minute)
	a, err := tr.Open(ctx, "w1", "a")
	if err != nil {
		t.Fatal(err)
	}
	tab := mustTab(t, ctx, a)
	var two int
	if err := tab.Evaluate(ctx, "1+1", &two); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Open(ctx, "w2", "main"); !errors.Is(err, browserpool.ErrNoRoom) {
		t.Fatalf("w2 at the limit of one: error = %v, want ErrNoRoom", err)
	}
	if a.Err() != nil {
		t.Fatalf("w1's session was closed by w2's refused open: %v", a.Err())
	}
	b, err := tr.Open(ctx, "w1", "b")
	if err != nil {
		t.Fatal(err)
	}
	<-a.Done()
	if err := mustTab(t, ctx, b).Evaluate(ctx, "1+1", &two); err != nil {
		t.Fatal(err)
	}
	tr.Close()
	if diff := cmp.Diff([]string{"w1/a lru for w1/b"}, ev.names()); diff != "" {
		t.Errorf("eviction events (-want +got):\n%s", diff)
	}
}
