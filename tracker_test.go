package browserpool_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// evictions records the tracker's eviction events.
type evictions struct {
	mu  sync.Mutex
	evs []browserpool.TrackerEvent
}

func (e *evictions) hook(ev browserpool.TrackerEvent) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *evictions) names() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.evs {
		out = append(out, fmt.Sprintf("%s/%s %s for %s/%s", ev.Workflow, ev.Name, ev.Reason, ev.ForWorkflow, ev.ForName))
	}
	return out
}

func newTracker(t testing.TB, p *browserpool.Pool, cfg browserpool.TrackerConfig) *browserpool.Tracker {
	t.Helper()
	cfg.Pool = p
	tr, err := browserpool.NewTracker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestOpenOverWorkflowLimitNamesActiveSessions(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{})
	ctx := ctxT(t)
	if _, err := tr.Open(ctx, "w1", "news"); err != nil {
		t.Fatal(err)
	}
	_, err := tr.Open(ctx, "w1", "research")
	if !errors.Is(err, browserpool.ErrSessionLimit) {
		t.Fatalf("second session of w1: error = %v, want ErrSessionLimit", err)
	}
	want := `browserpool: Tracker.Open name=research workflow=w1: session limit reached: cannot open browser session "research": workflow w1 already has 1 active browser session (max 1 per workflow); active sessions: [news] (hint: close "news" first, then open again; or keep using "news")`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	// Another workflow is not affected.
	if _, err := tr.Open(ctx, "w2", "research"); err != nil {
		t.Fatalf("w2: %v", err)
	}
}

func TestOpeningANameTheWorkflowHoldsIsAReuse(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{})
	ctx := ctxT(t)
	a, err := tr.Open(ctx, "w1", "news")
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.Open(ctx, "w1", "news")
	if err != nil {
		t.Fatal(err)
	}
	if a != b || len(l.Browsers()) != 1 {
		t.Fatalf("reopening a held name launched anew: %s vs %s, %d browsers", a.ID(), b.ID(), len(l.Browsers()))
	}
}

func TestTheGlobalLimitEvictsTheLeastRecentlyUsedIdleSession(t *testing.T) {
	var ev evictions
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 3, Evicted: ev.hook})
	ctx := ctxT(t)
	sessions := map[string]*browserpool.Session{}
	for _, wf := range []string{"w1", "w2", "w3"} {
		s, err := tr.Open(ctx, wf, "main")
		if err != nil {
			t.Fatal(err)
		}
		sessions[wf] = s
	}
	// w1 is used again, so w2 is now the least recently used.
	tr.Touch("w1", "main")
	if _, err := tr.Open(ctx, "w4", "main"); err != nil {
		t.Fatal(err)
	}
	<-sessions["w2"].Done()
	for _, wf := range []string{"w1", "w3"} {
		if sessions[wf].Err() != nil {
			t.Errorf("%s was evicted: %v", wf, sessions[wf].Err())
		}
	}
	tr.Close()
	if diff := cmp.Diff([]string{"w2/main lru for w4/main"}, ev.names()); diff != "" {
		t.Errorf("eviction events (-want +got):\n%s", diff)
	}
	if st := p.Stats(); st.Closes[browserpool.ReasonLRU] != 1 {
		t.Errorf("Stats.Closes = %v, want one lru", st.Closes)
	}
}

func TestBusySessionsAreNeverEvicted(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 2})
	ctx := ctxT(t)
	var tabs []*browserpool.Tab
	for _, wf := range []string{"w1", "w2"} {
		s, err := tr.Open(ctx, wf, "main")
		if err != nil {
			t.Fatal(err)
		}
		tab := mustTab(t, ctx, s)
		tabs = append(tabs, tab)
		// The tab's setup calls (OpenTab returns before they are
		// answered) count as use: let them end.
		waitFor(t, "the new tab's setup calls to end", func() bool { return s.Info().InFlight == 0 })
	}
	// w1 is the least recently used but has a call in flight.
	errc, release := heldEvaluate(t, ctx, l.Browsers()[0], tabs[0])
	tr.Touch("w2", "main")
	if _, err := tr.Open(ctx, "w3", "main"); err != nil {
		t.Fatal(err)
	}
	if tabs[0].Session().Err() != nil {
		t.Fatal("the busy session was evicted")
	}
	if tabs[1].Session().Err() == nil {
		t.Fatal("the idle session was not evicted")
	}
	// Now both remaining sessions are busy.
	s3, _ := tr.Lookup("w3", "main")
	errc3, release3 := heldEvaluate(t, ctx, l.Browsers()[2], mustTab(t, ctx, s3))
	waitFor(t, "the second call in flight", func() bool { return s3.Info().InFlight > 0 })
	_, err := tr.Open(ctx, "w4", "main")
	if !errors.Is(err, browserpool.ErrAllBusy) {
		t.Fatalf("all busy: error = %v, want ErrAllBusy", err)
	}
	want := `browserpool: Tracker.Open name=main workflow=w4: every browser session is busy: the global limit of 2 browser sessions is reached and all 2 have a call in flight (hint: wait for a running browser step to finish and open again, or close a session you no longer need)`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	release()
	release3()
	if err := <-errc; err != nil {
		t.Error(err)
	}
	if err := <-errc3; err != nil {
		t.Error(err)
	}
}

func TestEndWorkflowClosesItsSessionsWhileCallsRace(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{PerWorkflow: 3})
	ctx := ctxT(t)
	var ss []*browserpool.Session
	for _, name := range []string{"a", "b", "c"} {
		s, err := tr.Open(ctx, "w1", name)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	other, err := tr.Open(ctx, "w2", "a")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, s := range ss {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					tab, err := s.Tab(ctx, "")
					if err == nil {
						err = tab.Evaluate(ctx, "1+1", nil)
					}
					if err != nil {
						if !errors.Is(err, browserpool.ErrSessionClosed) && !errors.Is(err, browserpool.ErrBrowserExited) && !errors.Is(err, browserpool.ErrTabClosed) {
							t.Errorf("a call racing EndWorkflow: unexpected error %v", err)
						}
						return
					}
				}
			}()
		}
	}
	for range 2 { // idempotent
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tr.EndWorkflow(ctx, "w1"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for _, s := range ss {
		if !errors.Is(s.Err(), browserpool.ErrSessionClosed) {
			t.Errorf("session %s after EndWorkflow: %v", s.ID(), s.Err())
		}
	}
	if other.Err() != nil {
		t.Errorf("another workflow's session was closed: %v", other.Err())
	}
	if _, err := tr.Lookup("w1", "a"); !errors.Is(err, browserpool.ErrSessionNotFound) {
		t.Errorf("Lookup after EndWorkflow: %v, want ErrSessionNotFound", err)
	}
	if _, err := tr.Open(ctx, "w1", "d"); err != nil {
		t.Errorf("w1 cannot open again after its end: %v", err)
	}
}

func TestTheMonitorHandlerServesSessionsAndClosesOnPOST(t *testing.T) {
	p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{PerWorkflow: 2})
	ctx := ctxT(t)
	for _, name := range []string{"news", "mail"} {
		if _, err := tr.Open(ctx, "w1", name); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.StripPrefix("/admin", tr.Handler()))
	defer srv.Close()
	snap := getSnapshot(t, srv.URL+"/admin/")
	var names []string
	for _, s := range snap.Sessions {
		names = append(names, s.Workflow+"/"+s.Name+"/"+s.State)
	}
	if diff := cmp.Diff([]string{"w1/mail/live", "w1/news/live"}, names); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	if snap.Sessions[0].Tabs != 1 || snap.Limits.PerWorkflow != 2 || snap.Limits.Global != 8 {
		t.Errorf("snapshot: %+v", snap)
	}
	for _, s := range snap.Sessions {
		if s.Fleet != "" || s.Endpoint != "" {
			t.Errorf("session %s of a local launcher shows fleet %q at %q, want both empty", s.Name, s.Fleet, s.Endpoint)
		}
	}
	resp, err := http.PostForm(srv.URL+"/admin/close", url.Values{"workflow": {"w1"}, "name": {"news"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /close: %s", resp.Status)
	}
	resp, err = http.PostForm(srv.URL+"/admin/close", url.Values{"workflow": {"w1"}, "name": {"news"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /close of a closed session: %s, want 404", resp.Status)
	}
	if got := getSnapshot(t, srv.URL+"/admin/"); len(got.Sessions) != 1 || got.Stats.Closes[browserpool.ReasonExplicit] != 1 {
		t.Errorf("after closing news: %+v", got)
	}
	resp, err = http.Post(srv.URL+"/admin/close-all", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := getSnapshot(t, srv.URL+"/admin/"); len(got.Sessions) != 0 {
		t.Errorf("after close-all: %+v", got.Sessions)
	}
}

func getSnapshot(t *testing.T, u string) browserpool.MonitorSnapshot {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	var snap browserpool.MonitorSnapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestTrackerWithEightPlusOneRealBrowsers(t *testing.T) {
	var ev evictions
	p := newRealPool(t, browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{Evicted: ev.hook})
	// Nine launches one after another: on a loaded 2-core machine each can
	// take seconds, so the test's deadline is longer than ctxT's.
	ctx := ctxWithin(t, 4*time.Minute)
	var first *browserpool.Session
	for i := range 8 {
		s, err := tr.Open(ctx, fmt.Sprintf("w%d", i), "main")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = s
		}
	}
	// The monitor shows real CPU and memory figures.
	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
	snap := getSnapshot(t, srv.URL+"/")
	if len(snap.Sessions) != 8 {
		t.Fatalf("%d sessions in the snapshot, want 8", len(snap.Sessions))
	}
	var pss uint64
	for _, s := range snap.Sessions {
		if s.PID == 0 || s.CPU <= 0 || s.RSS == 0 || s.PSS == 0 || s.Processes < 2 {
			t.Errorf("session %s/%s: pid %d cpu %v rss %d pss %d processes %d; want real figures", s.Workflow, s.Name, s.PID, s.CPU, s.RSS, s.PSS, s.Processes)
		}
		pss += s.PSS
	}
	t.Logf("8 idle headless browsers: %d MiB PSS in all, %d MiB each on average", pss>>20, (pss/8)>>20)
	// The ninth evicts the least recently used: w0.
	for i := 1; i < 8; i++ {
		tr.Touch(fmt.Sprintf("w%d", i), "main")
	}
	if _, err := tr.Open(ctx, "w8", "main"); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	if len(tr.Sessions(ctx)) != 8 {
		t.Errorf("tracked sessions after the ninth open: %d, want 8", len(tr.Sessions(ctx)))
	}
	tr.Close()
	if diff := cmp.Diff([]string{"w0/main lru for w8/main"}, ev.names()); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}
