package browserpool_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/fleettest"
)

// fleetPage is the page the fleet tests drive: a button that writes into
// the page and a text field.
const fleetPage = `<!doctype html><title>Fleet page</title>
<h1>Fleet page</h1>
<button onclick="document.getElementById('out').textContent='clicked'">Press me</button>
<label>Name <input id="name" type="text"></label>
<p id="out">waiting</p>`

// startFleetPage serves fleetPage on 127.0.0.1 until the test ends (the
// fleets' browsers run on this machine, so they reach it).
func startFleetPage(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(fleetPage))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// newFleetPool returns a pool on launcher, closed at cleanup. A zero
// launchTimeout is a 2-minute ceiling: on a loaded 2-core machine a Grid
// node's chromedriver start alone has taken over 30 s.
func newFleetPool(t testing.TB, l browserpool.Launcher, launchTimeout time.Duration) *browserpool.Pool {
	t.Helper()
	if launchTimeout == 0 {
		launchTimeout = 2 * time.Minute
	}
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: l, LaunchTimeout: launchTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// driveFleetSession runs the agent steps on a fresh session of p: open →
// tab → navigate → snapshot → click → fill → screenshot → close.
func driveFleetSession(t *testing.T, p *browserpool.Pool, page string) {
	t.Helper()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, page); err != nil {
		t.Fatal(err)
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	button, field := snap.Find("button", "Press me"), snap.Find("textbox", "Name")
	if button == "" || field == "" {
		t.Fatalf("the snapshot lacks the button or the field:\n%s", snap.Text)
	}
	if err := tab.Click(ctx, button); err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(ctx, field, "Ada"); err != nil {
		t.Fatal(err)
	}
	var got struct{ Out, Name string }
	if err := tab.Evaluate(ctx, `({Out: document.getElementById('out').textContent, Name: document.getElementById('name').value})`, &got); err != nil {
		t.Fatal(err)
	}
	if got.Out != "clicked" || got.Name != "Ada" {
		t.Errorf("after click and fill the page shows %+v, want Out clicked and Name Ada", got)
	}
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(shot.Path); err != nil || st.Size() == 0 {
		t.Errorf("screenshot file %s: %v", shot.Path, err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFleetBrowserlessSessionRunsAgentStepsAndEndsItsLease(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	page := startFleetPage(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 2, Token: "s3cret-t0ken"})
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 0)
	driveFleetSession(t, p, page)
	// Close waits until the server no longer lists the lease.
	if n := srv.Leases(t); n != 0 {
		t.Errorf("browserless runs %d browsers after the session closed, want 0", n)
	}
}

func TestFleetGridSessionRunsAgentStepsAndEndsItsLease(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	page := startFleetPage(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1})
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, 0)
	driveFleetSession(t, p, page)
	// DELETE is synchronous: the Grid holds no session once Close returns.
	if n := grid.Leases(t); n != 0 {
		t.Errorf("Grid holds %d sessions after the session closed, want 0", n)
	}
}

func TestFleetBrowserlessFullRefusesTheExtraLeaseAtOnceWithACapacityError(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Token: "s3cret-t0ken"})
	// The launch may wait two minutes: a capacity error therefore comes
	// from the server's refusal (429), not from waiting out a queue or the
	// launch timeout, which would be ErrLaunchTimeout. How fast it comes is
	// a figure for the log, not an assertion on a loaded machine.
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 2*time.Minute)
	ctx := ctxWithin(t, 3*time.Minute)
	mustOpen(t, ctx, p)
	start := time.Now()
	_, err := p.Open(ctx)
	took := time.Since(start)
	if !errors.Is(err, browserpool.ErrFleetFull) {
		t.Fatalf("second Open on a fleet of one: %v, want ErrFleetFull", err)
	}
	t.Logf("the capacity error came after %v", took)
	msg := err.Error()
	for _, want := range []string{"is full", "retry later, raise its concurrency, or queue through an Allocator"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, srv.Token) {
		t.Errorf("error %q shows the token", msg)
	}
}

// TestFleetGridQueueTimeoutIsACapacityError: Grid has no reject; its queue
// timeout (session-request-timeout, which also bounds a slow first start on
// a loaded machine, where chromedriver took 9 s, hence 20 s here) is the
// capacity error.
func TestFleetGridQueueTimeoutIsACapacityError(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1, RequestTimeout: 20 * time.Second})
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The first session takes the one slot. On a loaded machine its start
	// alone may outlast the queue timeout: the empty Grid then says full
	// too, so try again (the subject is the second Open).
	for i := 0; ; i++ {
		_, err := p.Open(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, browserpool.ErrFleetFull) || i == 2 {
			t.Fatal(err)
		}
	}
	_, err := p.Open(ctx)
	if !errors.Is(err, browserpool.ErrFleetFull) {
		t.Fatalf("second Open on a Grid of one: %v, want ErrFleetFull", err)
	}
	if !strings.Contains(err.Error(), "is full") {
		t.Errorf("error %q does not say the Grid is full", err)
	}
}

// TestFleetBrowserlessWaiterThatLeftCostsNoLease: a lease queued on a full
// server whose launch gives up is closed as soon as the server grants it.
func TestFleetBrowserlessWaiterThatLeftCostsNoLease(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Queued: 1, Token: "s3cret-t0ken"})
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 500*time.Millisecond)
	ctx := ctxT(t)
	// The first lease gets the long launch timeout through a pool of its own.
	p1 := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 0)
	first := mustOpen(t, ctx, p1)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := p.Open(short)
	cancel()
	if err == nil {
		t.Fatal("Open on a full fleet returned a session")
	}
	// The launch itself gives up after LaunchTimeout; the handshake stays queued.
	fleettest.WaitFor(t, "the launch to give up", func() bool { return p.Stats().SessionsStarting == 0 })
	if pr, err := srv.Pressure(ctx); err != nil || pr.Queued != 1 {
		t.Fatalf("after the launch gave up the server shows %+v, %v; want 1 queued handshake (the case under test)", pr, err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The server now launches the queued browser; the launcher closes it.
	fleettest.WaitFor(t, "browserless to run and queue nothing", func() bool {
		pr, err := srv.Pressure(context.Background())
		return err == nil && pr.Running == 0 && pr.Queued == 0 && srv.Leases(t) == 0
	})
	if st := p.Stats(); st.SessionsIdle+st.SessionsInUse != 0 {
		t.Errorf("the pool holds a session after the waiter left: %+v", st)
	}
}

// TestFleetGridWaiterThatLeftCostsNoLease: Grid creates a session for a
// POST /session cut short; the launcher deletes it.
func TestFleetGridWaiterThatLeftCostsNoLease(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1, RequestTimeout: 30 * time.Second})
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, 500*time.Millisecond)
	ctx := ctxT(t)
	// The first session gets the long launch timeout through a pool of its own.
	p1 := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, 0)
	first := mustOpen(t, ctx, p1)
	if _, err := p.Open(ctx); !errors.Is(err, browserpool.ErrTimeout) {
		t.Fatalf("Open on a full Grid with a short LaunchTimeout: %v, want ErrTimeout", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Grid now creates the queued session; the launcher deletes it.
	fleettest.WaitFor(t, "the Grid to hold and queue no session", func() bool {
		c, err := grid.Counts(context.Background())
		return err == nil && c.Sessions == 0 && c.Queued == 0
	})
}

// TestFleetBrowserlessLeaseEndsWhenItsHostIsKilled: a browserless lease dies
// with its TCP connection, so a SIGKILLed host leaves nothing running.
func TestFleetBrowserlessLeaseEndsWhenItsHostIsKilled(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Token: "s3cret-t0ken"})
	dir := newRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetHostHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "BROWSERPOOL_FLEET_HOST="+srv.URL, "BROWSERPOOL_FLEET_TOKEN="+srv.Token, "TMPDIR="+dir)
	lines := startLeasingHost(t, cmd)
	if n := srv.Leases(t); n != 1 {
		t.Fatalf("the host helper holds %d leases, want 1; its output:\n%s", n, strings.Join(lines, "\n"))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	fleettest.WaitFor(t, "browserless to free the lease of the killed host", func() bool { return srv.Leases(t) == 0 })
}

// startLeasingHost starts cmd, the test binary running a host helper test, and
// returns what it printed before the line saying "leased". The host is
// killed and reaped at cleanup if the test has not done so itself.
func startLeasingHost(t *testing.T, cmd *exec.Cmd) []string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	var lines []string
	for sc.Scan() && !strings.Contains(sc.Text(), "leased") {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestFleetHostHelper is the host TestFleetBrowserlessLeaseEndsWhenItsHostIsKilled
// kills: it leases one browser and waits.
func TestFleetHostHelper(t *testing.T) {
	url := os.Getenv("BROWSERPOOL_FLEET_HOST")
	if url == "" {
		t.Skip("the host process of TestFleetBrowserlessLeaseEndsWhenItsHostIsKilled")
	}
	p := newFleetPool(t, &browserpool.Browserless{URL: url, Token: os.Getenv("BROWSERPOOL_FLEET_TOKEN")}, time.Minute)
	mustOpen(t, ctxT(t), p)
	fmt.Println("leased")
	time.Sleep(time.Hour) // until killed
}

// TestFleetAllocatorQueuesOnAFullFleetUntilASlotFrees: a fleet computer
// capped at the fleet's size queues the extra task in the allocator (no 429)
// and hands it the slot its predecessor frees.
func TestFleetAllocatorQueuesOnAFullFleetUntilASlotFrees(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Token: "s3cret-t0ken"})
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, time.Minute)
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{{Name: "fleet", Pool: p, Cap: 1}}, Budget: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx := ctxT(t)
	for _, task := range []string{"first", "second"} {
		if err := a.Bind(task, "fleet"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Acquire(ctx, "first", browserpool.AcquireOptions{}); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := a.Acquire(ctx, "second", browserpool.AcquireOptions{})
		if err == nil {
			var n int
			var tab *browserpool.Tab
			if tab, err = l.Session().Tab(ctx, ""); err == nil {
				err = tab.Evaluate(ctx, "40+2", &n)
			}
		}
		got <- err
	}()
	fleettest.WaitFor(t, "the second task to queue", func() bool { return a.Stats().Computers["fleet"].Waiting == 1 })
	if n := srv.Leases(t); n != 1 {
		t.Errorf("the fleet holds %d leases while the second task queues, want 1", n)
	}
	if err := a.Finish(ctx, "first", browserpool.TaskCompleted); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the queued task on the freed slot: %v", err)
	}
	if err := a.Finish(ctx, "second", browserpool.TaskCompleted); err != nil {
		t.Fatal(err)
	}
	fleettest.WaitFor(t, "browserless to list no browser", func() bool { return srv.Leases(t) == 0 })
}

// TestFleetGridSessionDeletedFromElsewhereEndsItsCallsWithErrBrowserExited:
// Grid ends a session deleted by another client (or by its own
// session-timeout) but leaves its se:cdp socket open; without the pool's
// check of the lease every call would wait for its caller's deadline.
func TestFleetGridSessionDeletedFromElsewhereEndsItsCallsWithErrBrowserExited(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1})
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities(), CheckInterval: 500 * time.Millisecond}, 0)
	ctx := ctxWithin(t, 3*time.Minute)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	ids, err := grid.SessionIDs(ctx)
	if err != nil || len(ids) != 1 {
		t.Fatalf("the Grid's sessions: %v, %v; want the pool's one", ids, err)
	}
	if err := grid.Delete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	err = tab.Evaluate(ctx, "new Promise(() => {})", nil) // would wait for ever on the dead browser
	if !errors.Is(err, browserpool.ErrBrowserExited) || ctx.Err() != nil {
		t.Fatalf("a call on the session the Grid ended: %v; want ErrBrowserExited before the caller's deadline", err)
	}
	if !strings.Contains(err.Error(), "no longer has session "+ids[0]) {
		t.Errorf("the error %q does not say the Grid no longer has the session", err)
	}
	waitFor(t, "the session to be counted as crashed", func() bool { return p.Stats().Closes[browserpool.ReasonCrashed] == 1 })
}
