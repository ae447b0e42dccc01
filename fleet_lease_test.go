// Room: tests of remote leases in the manifest and the sweep (LeaseEnder):
// a fake fleet for the faults, real Selenium Grid for a host's SIGKILL. No
// locks beyond the fakes' own.

package browserpool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/fleettest"
	"github.com/browserpool/browserpool/internal/manifest"
	"github.com/browserpool/browserpool/internal/proc"
)

// readManifest returns the raw manifest of root and its entries.
func readManifest(t testing.TB, root string) (string, []manifest.Entry) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, manifest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	es, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), es
}

// entryOf returns root's manifest entry of session id.
func entryOf(t testing.TB, root, id string) (manifest.Entry, bool) {
	t.Helper()
	_, es := readManifest(t, root)
	for _, e := range es {
		if e.Session == id {
			return e, true
		}
	}
	return manifest.Entry{}, false
}

// writeLeaseEntries writes a manifest holding es (owned by a host that is
// gone unless the entry says otherwise) into root.
func writeLeaseEntries(t *testing.T, root string, es ...manifest.Entry) {
	t.Helper()
	for i := range es {
		if es[i].OwnerPID == 0 {
			es[i].OwnerPID, es[i].OwnerStart = deadOwner, 1
		}
		if es[i].Dir == "" {
			es[i].Dir = filepath.Join(root, "sessions", es[i].Session)
		}
		es[i].State, es[i].Created = manifest.Ready, time.Now().UTC()
	}
	data, err := manifest.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, manifest.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// withCredentials puts user:password into an http URL.
func withCredentials(u, user, password string) string {
	return strings.Replace(u, "://", "://"+user+":"+password+"@", 1)
}

// leaseLog collects a pool's log lines.
type leaseLog struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (l *leaseLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *leaseLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// sweepPool opens a pool on root with launcher l (its sweep runs in
// NewPool), closed at cleanup, and returns it with its log.
func sweepPool(t *testing.T, root string, l browserpool.Launcher) (*browserpool.Pool, *leaseLog) {
	t.Helper()
	log := &leaseLog{}
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: l, Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, log
}

// newGridSession creates a session on the fake Grid directly, as a host
// that then died would have, and returns its id.
func newGridSession(t *testing.T, f *fakeFleet) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.HTTP+"/session", strings.NewReader(`{"capabilities":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Value struct {
			SessionID string `json:"sessionId"`
		} `json:"value"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Value.SessionID == "" {
		t.Fatalf("POST /session on the fake Grid: %v, %+v", err, r)
	}
	return r.Value.SessionID
}

// deletesOf returns the session ids the fake Grid was asked to DELETE.
func deletesOf(f *fakeFleet) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.deletes...)
}

// leaseCounts are the sweep's counters of a pool's Stats.
type leaseCounts struct{ Swept, Skipped, DirsRemoved, LeasesEnded uint64 }

func leaseCountsOf(p *browserpool.Pool) leaseCounts {
	st := p.Stats()
	return leaseCounts{st.OrphansSwept, st.OrphansSkipped, st.OrphanDirsRemoved, st.OrphanLeasesEnded}
}

func TestFleetLeaseGridSessionIsRecordedWithItsIDAndNoCredentials(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	root := newRoot(t)
	url := withCredentials(f.HTTP, "grid-user", "gr1d-pa55")
	p, _ := sweepPool(t, root, &browserpool.SeleniumGrid{URL: url, Header: http.Header{"Authorization": {"Bearer h3ader-t0ken"}}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	raw, _ := readManifest(t, root)
	e, ok := entryOf(t, root, s.ID())
	if !ok {
		t.Fatalf("no manifest entry for the leased session %s:\n%s", s.ID(), raw)
	}
	if diff := cmp.Diff([]any{"selenium-grid", f.HTTP, "grid1", 0, 0}, []any{e.Fleet, e.Endpoint, e.LeaseID, e.PID, e.PGID}); diff != "" {
		t.Errorf("manifest entry Fleet, Endpoint, LeaseID, PID, PGID (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"gr1d-pa55", "grid-user", "h3ader-t0ken"} {
		if strings.Contains(raw, secret) {
			t.Errorf("the manifest holds %q:\n%s", secret, raw)
		}
	}
	if diff := cmp.Diff([]string{"selenium-grid", f.HTTP}, []string{s.Info().Fleet, s.Info().Endpoint}); diff != "" {
		t.Errorf("SessionInfo Fleet and Endpoint (-want +got):\n%s", diff)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := entryOf(t, root, s.ID()); ok {
		t.Errorf("the entry of a closed lease is still in the manifest")
	}
}

func TestFleetLeaseBrowserlessSessionIsRecordedWithoutItsToken(t *testing.T) {
	f := startFakeFleet(t, 1, "bl-t0ken-98765")
	root := newRoot(t)
	p, _ := sweepPool(t, root, &browserpool.Browserless{URL: f.URL, Token: f.Token})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	raw, _ := readManifest(t, root)
	e, ok := entryOf(t, root, s.ID())
	if !ok {
		t.Fatalf("no manifest entry for the leased session %s:\n%s", s.ID(), raw)
	}
	// browserless has no lease id: the lease ends with its socket.
	if diff := cmp.Diff([]any{"browserless", f.URL, "", 0}, []any{e.Fleet, e.Endpoint, e.LeaseID, e.PID}); diff != "" {
		t.Errorf("manifest entry Fleet, Endpoint, LeaseID, PID (-want +got):\n%s", diff)
	}
	if strings.Contains(raw, f.Token) || strings.Contains(raw, "token") {
		t.Errorf("the manifest holds the token:\n%s", raw)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := entryOf(t, root, s.ID()); ok {
		t.Errorf("the entry of a closed lease is still in the manifest")
	}
}

// hangingGrid answers POST /session with a se:cdp endpoint that accepts
// connections but never answers the websocket handshake, until release.
type hangingGrid struct {
	srv  *httptest.Server
	ln   net.Listener
	wg   sync.WaitGroup
	once sync.Once

	mu      sync.Mutex
	conns   []net.Conn // guarded by mu
	deletes []string   // guarded by mu
}

func startHangingGrid(t *testing.T) *hangingGrid {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &hangingGrid{ln: ln}
	g.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.mu.Lock()
			g.conns = append(g.conns, c)
			g.mu.Unlock()
		}
	})
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/session":
			json.NewEncoder(w).Encode(map[string]any{"value": map[string]any{"sessionId": "hang1",
				"capabilities": map[string]any{"se:cdp": "ws://" + ln.Addr().String() + "/session/hang1/se/cdp"}}})
		case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/session/"):
			g.mu.Lock()
			g.deletes = append(g.deletes, strings.TrimPrefix(r.URL.Path, "/session/"))
			g.mu.Unlock()
			fmt.Fprint(w, `{"value":null}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() { g.release(); g.srv.Close() })
	return g
}

// release closes the se:cdp listener and every connection it took: a
// handshake under way fails at once.
func (g *hangingGrid) release() {
	g.once.Do(func() {
		g.ln.Close()
		g.wg.Wait()
		g.mu.Lock()
		for _, c := range g.conns {
			c.Close()
		}
		g.mu.Unlock()
	})
}

func TestFleetLeaseGridSessionIsRecordedBeforeItsCDPDial(t *testing.T) {
	g := startHangingGrid(t)
	root := newRoot(t)
	p, _ := sweepPool(t, root, &browserpool.SeleniumGrid{URL: g.srv.URL})
	ctx := ctxT(t)
	got := make(chan error, 1)
	go func() {
		_, err := p.Open(ctx)
		got <- err
	}()
	// The se:cdp handshake cannot complete: an entry naming the Grid
	// session now was written before the dial.
	waitFor(t, "the Grid session to be in the manifest while its CDP dial hangs", func() bool {
		_, es := readManifest(t, root)
		return len(es) == 1 && es[0].LeaseID == "hang1" && es[0].Fleet == browserpool.FleetSeleniumGrid
	})
	g.release()
	if err := <-got; !errors.Is(err, browserpool.ErrLaunchFailed) {
		t.Fatalf("Open whose se:cdp handshake failed: %v, want ErrLaunchFailed", err)
	}
	g.mu.Lock()
	deletes := append([]string(nil), g.deletes...)
	g.mu.Unlock()
	if diff := cmp.Diff([]string{"hang1"}, deletes); diff != "" {
		t.Errorf("DELETEs after the failed launch (-want +got):\n%s", diff)
	}
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after the failed launch: %+v, want no entry", es)
	}
}

func TestFleetLeaseSweepDeletesTheGridSessionOfADeadHostOnce(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	root := newRoot(t)
	id := newGridSession(t, f)
	writeLeaseEntries(t, root, manifest.Entry{Session: "s-dead", Fleet: browserpool.FleetSeleniumGrid, Endpoint: f.HTTP, LeaseID: id})
	// The new pool's URL carries credentials; the record has none: they match.
	p, log := sweepPool(t, root, &browserpool.SeleniumGrid{URL: withCredentials(f.HTTP, "u", "pw-123")})
	if diff := cmp.Diff([]string{id}, deletesOf(f)); diff != "" {
		t.Errorf("DELETEs sent by the sweep (-want +got):\n%s", diff)
	}
	if n := f.gridSessions(); n != 0 {
		t.Errorf("Grid sessions after the sweep = %d, want 0", n)
	}
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after the sweep: %+v, want no entry", es)
	}
	if diff := cmp.Diff(leaseCounts{LeasesEnded: 1}, leaseCountsOf(p)); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
	if !strings.Contains(log.String(), "leases_ended=1") {
		t.Errorf("the sweep's log does not say it ended one lease:\n%s", log)
	}
}

func TestFleetLeaseSweepKeepsAGridEntryWhoseDeleteFailedForALaterPool(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	root := newRoot(t)
	id := newGridSession(t, f)
	writeLeaseEntries(t, root, manifest.Entry{Session: "s-dead", Fleet: browserpool.FleetSeleniumGrid, Endpoint: f.HTTP, LeaseID: id})
	f.mu.Lock()
	f.failDel = 1
	f.mu.Unlock()
	p, log := sweepPool(t, root, &browserpool.SeleniumGrid{URL: f.HTTP})
	if diff := cmp.Diff(leaseCounts{Skipped: 1}, leaseCountsOf(p)); diff != "" {
		t.Errorf("sweep counts after a failed DELETE (-want +got):\n%s", diff)
	}
	if e, ok := entryOf(t, root, "s-dead"); !ok || e.LeaseID != id {
		t.Fatalf("the entry whose DELETE failed was dropped (found %v: %+v)", ok, e)
	}
	if n := f.gridSessions(); n != 1 {
		t.Errorf("Grid sessions after the failed DELETE = %d, want 1", n)
	}
	if !strings.Contains(log.String(), "kept the record of a remote lease") {
		t.Errorf("the sweep did not log the lease it kept:\n%s", log)
	}
	// Pool.Orphans shows the kept lease for what it is.
	orphans, err := p.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	for i := range orphans {
		orphans[i].Owner, orphans[i].Alive = 0, false // the fake owner's pid
	}
	wantOrphan := browserpool.Orphan{Session: "s-dead", Dir: filepath.Join(root, "sessions", "s-dead"), Fleet: browserpool.FleetSeleniumGrid, Endpoint: f.HTTP, LeaseID: id}
	if diff := cmp.Diff([]browserpool.Orphan{wantOrphan}, orphans); diff != "" {
		t.Errorf("Pool.Orphans with a kept lease (-want +got):\n%s", diff)
	}
	p.Close()
	// A later pool on the same root and Grid ends it.
	later, _ := sweepPool(t, root, &browserpool.SeleniumGrid{URL: f.HTTP})
	if diff := cmp.Diff(leaseCounts{LeasesEnded: 1}, leaseCountsOf(later)); diff != "" {
		t.Errorf("the later pool's sweep counts (-want +got):\n%s", diff)
	}
	if n := f.gridSessions(); n != 0 {
		t.Errorf("Grid sessions after the later sweep = %d, want 0", n)
	}
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after the later sweep: %+v, want no entry", es)
	}
}

func TestFleetLeaseSweepKeepsLeasesOfAnotherFleetOrLauncher(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	other := startFakeFleet(t, 2, "")
	root := newRoot(t)
	id := newGridSession(t, other)
	es := []manifest.Entry{
		{Session: "s-other-grid", Fleet: browserpool.FleetSeleniumGrid, Endpoint: other.HTTP, LeaseID: id},
		{Session: "s-browserless", Fleet: browserpool.FleetBrowserless, Endpoint: f.URL},
	}
	writeLeaseEntries(t, root, es...)
	// A Grid launcher of another Grid ends neither.
	p, _ := sweepPool(t, root, &browserpool.SeleniumGrid{URL: f.HTTP})
	if diff := cmp.Diff(leaseCounts{Skipped: 2}, leaseCountsOf(p)); diff != "" {
		t.Errorf("sweep counts of a Grid pool on another Grid (-want +got):\n%s", diff)
	}
	p.Close()
	// A launcher that is no LeaseEnder ends none.
	p2, _ := sweepPool(t, root, unusedLauncher{})
	if diff := cmp.Diff(leaseCounts{Skipped: 2}, leaseCountsOf(p2)); diff != "" {
		t.Errorf("sweep counts of a pool without a LeaseEnder (-want +got):\n%s", diff)
	}
	p2.Close()
	if got := append(deletesOf(f), deletesOf(other)...); len(got) != 0 {
		t.Errorf("DELETEs sent for leases of another fleet: %v", got)
	}
	var kept []string
	_, left := readManifest(t, root)
	for _, e := range left {
		kept = append(kept, e.Session)
	}
	if diff := cmp.Diff([]string{"s-other-grid", "s-browserless"}, kept); diff != "" {
		t.Errorf("entries kept for a later pool (-want +got):\n%s", diff)
	}
}

func TestFleetLeaseSweepDropsABrowserlessEntryWithoutTouchingAnything(t *testing.T) {
	root := newRoot(t)
	dir := filepath.Join(root, "sessions", "s-bl")
	file := mkdirWithFile(t, dir)
	// A (hostile) remote entry naming a live process and a session dir.
	victim := startStandIn(t, "victim", 0, nil)
	endpoint := "ws://127.0.0.1:1" // nothing listens: the sweep must not need the server
	writeLeaseEntries(t, root, manifest.Entry{Session: "s-bl", Fleet: browserpool.FleetBrowserless, Endpoint: endpoint,
		PID: victim.pid, PGID: victim.pid, StartTime: victim.start, BootID: bootID(t), Dir: dir})
	p, _ := sweepPool(t, root, &browserpool.Browserless{URL: endpoint, Token: "t0k"})
	if !proc.Alive(victim.pid) {
		t.Error("the sweep killed the process a remote entry names")
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the sweep touched the dir a remote entry names: %v", err)
	}
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after the sweep: %+v, want the browserless entry dropped", es)
	}
	if diff := cmp.Diff(leaseCounts{LeasesEnded: 1}, leaseCountsOf(p)); diff != "" {
		t.Errorf("sweep counts (-want +got):\n%s", diff)
	}
}

func TestFleetLeaseWarmGridSessionLeavesTheManifestWhenClosed(t *testing.T) {
	f := startFakeFleet(t, 4, "")
	root := newRoot(t)
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: &browserpool.SeleniumGrid{URL: f.HTTP}, Warm: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	waitFor(t, "a warm Grid session", func() bool { return p.Stats().SessionsWarm == 1 })
	if _, es := readManifest(t, root); len(es) != 1 || es[0].LeaseID != "grid1" {
		t.Fatalf("manifest with one warm lease: %+v, want one entry of lease grid1", es)
	}
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if got := p.Stats().WarmClaims; got != 1 {
		t.Fatalf("Stats.WarmClaims = %d, want 1 (the subject is a claimed warm lease)", got)
	}
	if e, ok := entryOf(t, root, s.ID()); !ok || e.LeaseID != "grid1" {
		t.Fatalf("entry of the claimed session: %v %+v, want lease grid1", ok, e)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := entryOf(t, root, s.ID()); ok {
		t.Error("the claimed warm lease is still in the manifest after its close")
	}
	if !f.deleted("grid1") {
		t.Error("the claimed warm lease was not deleted on the Grid")
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after Pool.Close: %+v, want no entry (the replacement warm lease ends too)", es)
	}
	if n := f.gridSessions(); n != 0 {
		t.Errorf("Grid sessions after Pool.Close = %d, want 0", n)
	}
}

// deleted reports whether the fake Grid was asked to DELETE session id.
func (f *fakeFleet) deleted(id string) bool {
	for _, d := range deletesOf(f) {
		if d == id {
			return true
		}
	}
	return false
}

func TestFleetLeaseMonitorShowsWhereEachSessionLives(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: withCredentials(f.HTTP, "mon-user", "m0n-pa55")}, 0)
	tr := newTracker(t, p, browserpool.TrackerConfig{})
	if _, err := tr.Open(ctxT(t), "w1", "remote"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tr.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	var snap browserpool.MonitorSnapshot
	if err := json.Unmarshal(body.Bytes(), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Sessions) != 1 {
		t.Fatalf("snapshot sessions: %+v, want 1", snap.Sessions)
	}
	got := snap.Sessions[0]
	if diff := cmp.Diff([]any{"selenium-grid", f.HTTP, 0}, []any{got.Fleet, got.Endpoint, got.PID}); diff != "" {
		t.Errorf("monitor Fleet, Endpoint, PID (-want +got):\n%s", diff)
	}
	for _, secret := range []string{"m0n-pa55", "mon-user"} {
		if strings.Contains(body.String(), secret) {
			t.Errorf("the monitor shows %q:\n%s", secret, body)
		}
	}
}

// TestFleetLeaseGridSessionOfAKilledHostIsEndedByTheNextPool: a Grid session
// outlives its host's SIGKILL (closing the CDP socket does not end it); the
// next pool on the same root deletes it in its sweep.
func TestFleetLeaseGridSessionOfAKilledHostIsEndedByTheNextPool(t *testing.T) {
	requireBrowser(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1})
	root, tmp := newRoot(t), newRoot(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetLeaseGridHostHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "BROWSERPOOL_LEASE_GRID="+grid.URL, "BROWSERPOOL_LEASE_CHROMIUM="+grid.Chromium,
		"BROWSERPOOL_LEASE_ROOT="+root, "TMPDIR="+tmp)
	lines := startLeasingHost(t, cmd)
	if n := grid.Leases(t); n != 1 {
		t.Fatalf("the host helper holds %d Grid sessions, want 1; its output:\n%s", n, strings.Join(lines, "\n"))
	}
	raw, es := readManifest(t, root)
	if len(es) != 1 || es[0].Fleet != browserpool.FleetSeleniumGrid || es[0].Endpoint != grid.URL || es[0].LeaseID == "" {
		t.Fatalf("the host's manifest does not record its Grid session:\n%s", raw)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The case under test: the session stays on the Grid without its host.
	if n := grid.Leases(t); n != 1 {
		t.Fatalf("after the host's SIGKILL the Grid holds %d sessions, want 1 (the orphan the sweep must end)", n)
	}
	p := newFleetPoolOn(t, root, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()})
	if got := p.Stats().OrphanLeasesEnded; got != 1 {
		t.Errorf("Stats.OrphanLeasesEnded = %d, want 1", got)
	}
	ctx := ctxT(t)
	fleettest.WaitFor(t, "the Grid to hold no session and show its slot free", func() bool {
		st, err := grid.Status(ctx)
		return err == nil && st.Busy == 0 && grid.Leases(t) == 0
	})
	if _, es := readManifest(t, root); len(es) != 0 {
		t.Errorf("manifest after the sweep: %+v, want no entry", es)
	}
}

// newFleetPoolOn returns a pool on root with launcher l, closed at cleanup.
func newFleetPoolOn(t testing.TB, root string, l browserpool.Launcher) *browserpool.Pool {
	t.Helper()
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: l, LaunchTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestFleetLeaseGridHostHelper is the host
// TestFleetLeaseGridSessionOfAKilledHostIsEndedByTheNextPool kills: it
// leases one Grid session on the given root and waits.
func TestFleetLeaseGridHostHelper(t *testing.T) {
	url := os.Getenv("BROWSERPOOL_LEASE_GRID")
	if url == "" {
		t.Skip("the host process of TestFleetLeaseGridSessionOfAKilledHostIsEndedByTheNextPool")
	}
	caps := (&fleettest.Grid{URL: url, Chromium: os.Getenv("BROWSERPOOL_LEASE_CHROMIUM")}).Capabilities()
	p := newFleetPoolOn(t, os.Getenv("BROWSERPOOL_LEASE_ROOT"), &browserpool.SeleniumGrid{URL: url, Capabilities: caps})
	mustOpen(t, ctxT(t), p)
	fmt.Println("leased")
	time.Sleep(time.Hour) // until killed
}
