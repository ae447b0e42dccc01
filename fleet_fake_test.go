package browserpool_test

import (
	"encoding/base64"
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
	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// fakeFleet is a browserless-like fleet in Go: each websocket on /chromium
// (or /session/<id>/se/cdp for the Grid face) is one fresh cdptest
// browser. It answers 401 to a wrong token (the token query parameter, or
// an Authorization: Bearer header) and 429 when Size leases are
// live, and can drop a lease; its HTTP API (/sessions, /pressure) wants
// the token in the query too. The Grid face serves POST /session (with
// Grid's exact Content-Type rule), DELETE /session/<id> and GraphQL's
// session figures.
type fakeFleet struct {
	URL   string // ws://127.0.0.1:PORT
	HTTP  string // http://127.0.0.1:PORT
	Token string
	Size  int

	srv *httptest.Server
	wg  sync.WaitGroup

	mu        sync.Mutex
	live      map[*websocket.Conn]string // guarded by mu; connected leases and their trackingId
	grid      map[string]bool            // guarded by mu; Grid sessions not deleted yet
	nextID    int                        // guarded by mu
	headers   []http.Header              // guarded by mu; handshake headers seen
	deletes   []string                   // guarded by mu; DELETEd session ids
	failDel   int                        // guarded by mu; DELETEs to answer 500 before succeeding
	postDelay time.Duration              // guarded by mu; Grid POST answers after this
	checks    int                        // guarded by mu; GET /session/{id}/timeouts answered
	lists     int                        // guarded by mu; GET /sessions answered (with the token)

	listStatus     int    // guarded by mu; non-zero: GET /sessions answers this status and listBody
	listBody       string // guarded by mu
	dropAfterProbe bool   // guarded by mu; a lease answers its first call (the readiness probe), then drops
	refuseSocket   bool   // guarded by mu; websocket handshakes are refused (HTTP 500), as by a Grid whose se:cdp is unreachable
	silentLease    bool   // guarded by mu; a lease's browser never answers (a stuck browser behind a granted lease)
}

// forgetGridSession ends Grid session id as a DELETE from elsewhere or
// Grid's session-timeout does, leaving its se:cdp socket open.
func (f *fakeFleet) forgetGridSession(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.grid, id)
}

// startFakeFleet serves a fake fleet of size leases until tb ends (a nil
// tb leaves the stop to the caller, as in an example).
func startFakeFleet(tb testing.TB, size int, token string) *fakeFleet {
	f := &fakeFleet{Token: token, Size: size, live: map[*websocket.Conn]string{}, grid: map[string]bool{}}
	f.srv = httptest.NewServer(f)
	f.HTTP = f.srv.URL
	f.URL = "ws" + strings.TrimPrefix(f.srv.URL, "http")
	if tb != nil {
		tb.Cleanup(f.Close)
	}
	return f
}

// Close drops every lease and stops the server.
func (f *fakeFleet) Close() {
	f.mu.Lock()
	for c := range f.live {
		c.Close()
	}
	f.mu.Unlock()
	f.srv.Close()
	f.wg.Wait()
}

var fleetUpgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (f *fakeFleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/session":
		f.createGridSession(w, r)
		return
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/session/") && strings.HasSuffix(r.URL.Path, "/timeouts"):
		f.mu.Lock()
		known := f.grid[strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/session/"), "/timeouts")]
		f.checks++
		f.mu.Unlock()
		if !known {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"value":{"error":"invalid session id","message":"Unable to find session"}}`)
			return
		}
		fmt.Fprint(w, `{"value":{"implicit":0,"pageLoad":300000,"script":30000}}`)
		return
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/session/"):
		f.deleteGridSession(w, strings.TrimPrefix(r.URL.Path, "/session/"))
		return
	case (r.URL.Path == "/sessions" || r.URL.Path == "/pressure") && f.Token != "" && r.URL.Query().Get("token") != f.Token:
		http.Error(w, "Bad or missing authentication.", http.StatusUnauthorized) // as browserless's HTTP API
		return
	case r.URL.Path == "/graphql":
		f.mu.Lock()
		fmt.Fprintf(w, `{"data":{"grid":{"sessionCount":%d,"maxSession":%d,"sessionQueueSize":0}}}`, len(f.grid), f.Size)
		f.mu.Unlock()
		return
	case r.URL.Path == "/sessions":
		f.mu.Lock()
		f.lists++
		if f.listStatus != 0 {
			code, body := f.listStatus, f.listBody
			f.mu.Unlock()
			w.WriteHeader(code)
			fmt.Fprint(w, body)
			return
		}
		list := []map[string]string{}
		for _, id := range f.live {
			list = append(list, map[string]string{"trackingId": id})
		}
		f.mu.Unlock()
		json.NewEncoder(w).Encode(list)
		return
	case r.URL.Path == "/pressure":
		f.mu.Lock()
		n := len(f.live)
		f.mu.Unlock()
		fmt.Fprintf(w, `{"pressure":{"running":%d,"queued":0,"maxConcurrent":%d}}`, n, f.Size)
		return
	}
	if f.Token != "" && r.URL.Query().Get("token") != f.Token && r.Header.Get("Authorization") != "Bearer "+f.Token {
		http.Error(w, "Bad or missing authentication.", http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	if f.refuseSocket {
		f.mu.Unlock()
		http.Error(w, "injected", http.StatusInternalServerError)
		return
	}
	if len(f.live) >= f.Size {
		f.mu.Unlock()
		http.Error(w, "Too Many Requests", http.StatusTooManyRequests)
		return
	}
	f.mu.Unlock()
	c, err := fleetUpgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	b := cdptest.NewBrowser(nil, cdptest.WithPage("about:blank"))
	f.mu.Lock()
	f.live[c] = r.URL.Query().Get("trackingId")
	drop, silent := f.dropAfterProbe, f.silentLease
	f.mu.Unlock()
	if silent || drop {
		if silent {
			// Nothing answers until the client leaves.
			for _, _, err := c.ReadMessage(); err == nil; _, _, err = c.ReadMessage() {
			}
		} else if _, msg, err := c.ReadMessage(); err == nil {
			// The probe is answered by the browser; then the lease ends
			// (the server's per-lease timeout, a proxy's reset).
			b.Transport().WriteMessage(msg)
			if reply, err := b.Transport().ReadMessage(); err == nil {
				c.WriteMessage(websocket.TextMessage, reply)
			}
		}
		b.Transport().Close()
		c.Close()
		f.mu.Lock()
		delete(f.live, c)
		f.mu.Unlock()
		return
	}
	pumpWebSocket(c, b, &f.wg)
	f.mu.Lock()
	delete(f.live, c)
	f.mu.Unlock()
}

// pumpWebSocket joins a fleet's websocket client c to the fake browser b
// until either side ends, then closes both: browser → client on a
// goroutine of wg, client → browser on the caller's goroutine.
func pumpWebSocket(c *websocket.Conn, b *cdptest.Browser, wg *sync.WaitGroup) {
	wg.Go(func() {
		for {
			msg, err := b.Transport().ReadMessage()
			if err != nil {
				c.Close()
				return
			}
			if c.WriteMessage(websocket.TextMessage, msg) != nil {
				return
			}
		}
	})
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			break
		}
		b.Transport().WriteMessage(msg)
	}
	b.Transport().Close()
	c.Close()
}

// createGridSession answers POST /session like Grid: only with the exact
// Content-Type, after postDelay, with se:cdp pointing at this server.
func (f *fakeFleet) createGridSession(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Content-Type") != "application/json; charset=utf-8" {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"value":{"error":"unknown error","message":"Content-Type header does not indicate utf-8 encoded json"}}`)
		return
	}
	f.mu.Lock()
	delay := f.postDelay
	f.nextID++
	id := fmt.Sprintf("grid%d", f.nextID)
	f.mu.Unlock()
	time.Sleep(delay) // like Grid: the session is created whether or not the client still waits
	f.mu.Lock()
	f.grid[id] = true
	f.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"value": map[string]any{"sessionId": id,
		"capabilities": map[string]any{"se:cdp": f.URL + "/session/" + id + "/se/cdp?token=" + f.Token}}})
}

func (f *fakeFleet) deleteGridSession(w http.ResponseWriter, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failDel > 0 {
		f.failDel--
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"value":{"error":"unknown error","message":"injected"}}`)
		return
	}
	f.deletes = append(f.deletes, id)
	if !f.grid[id] {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"value":{"error":"invalid session id","message":"gone"}}`)
		return
	}
	delete(f.grid, id)
	fmt.Fprint(w, `{"value":null}`)
}

// leases returns the number of connected leases.
func (f *fakeFleet) leases() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.live)
}

// gridSessions returns the Grid sessions not deleted yet.
func (f *fakeFleet) gridSessions() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.grid)
}

// dropAll breaks every lease's connection, as a fleet ending leases does.
func (f *fakeFleet) dropAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.live {
		c.Close()
	}
}

func TestFleetFakeBrowserlessSessionWorksAndItsCloseEndsTheLease(t *testing.T) {
	f := startFakeFleet(t, 2, "t0ken-123456")
	p := newFleetPool(t, &browserpool.Browserless{URL: f.URL, Token: f.Token, Header: http.Header{"X-Fleet": {"yes"}}}, 0)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if got := f.leases(); got != 1 {
		t.Fatalf("leases after Open = %d, want 1", got)
	}
	tab := mustTab(t, ctx, s)
	var n int
	if err := tab.Evaluate(ctx, "1+2", &n); err != nil || n != 3 {
		t.Fatalf("evaluate on a leased browser: %v, %d", err, n)
	}
	info := s.Info()
	if info.Version == "" {
		t.Error("SessionInfo.Version is empty for a lease")
	}
	if diff := cmp.Diff([]any{"browserless", f.URL, 0, ""}, []any{info.Fleet, info.Endpoint, info.PID, info.ProfileDir}); diff != "" {
		t.Errorf("SessionInfo Fleet, Endpoint, PID, ProfileDir (-want +got):\n%s", diff)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Close returns once the fleet no longer lists the lease.
	if got := f.leases(); got != 0 {
		t.Errorf("leases after Close returned = %d, want 0", got)
	}
	f.mu.Lock()
	h := f.headers[0].Get("X-Fleet")
	f.mu.Unlock()
	if h != "yes" {
		t.Errorf("handshake header X-Fleet = %q, want yes", h)
	}
}

func TestFleetFakeFullFleetGivesErrFleetFullWithoutTheToken(t *testing.T) {
	f := startFakeFleet(t, 1, "t0ken-abcdef99")
	p := newFleetPool(t, &browserpool.Browserless{URL: f.URL, Token: f.Token}, 0)
	ctx := ctxT(t)
	mustOpen(t, ctx, p)
	_, err := p.Open(ctx)
	if !errors.Is(err, browserpool.ErrFleetFull) {
		t.Fatalf("Open on a full fleet: %v, want ErrFleetFull", err)
	}
	var e *browserpool.Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not a *browserpool.Error", err)
	}
	want := "the fleet at " + f.URL + " is full (1 running, 0 queued, max 1): retry later, raise its concurrency, or queue through an Allocator (AcquireOptions.Policy PolicyQueue, with the computer's Cap at the fleet's size)"
	if diff := cmp.Diff(want, e.Hint); diff != "" {
		t.Errorf("hint (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), f.Token) {
		t.Errorf("error shows the token: %v", err)
	}
	if got := f.leases(); got != 1 {
		t.Errorf("leases = %d, want 1", got)
	}
}

func TestFleetFakeWrongTokenIsALaunchFailureNamingTheToken(t *testing.T) {
	f := startFakeFleet(t, 1, "right-t0ken-1")
	p := newFleetPool(t, &browserpool.Browserless{URL: f.URL, Token: "wr0ng-t0ken-2"}, 0)
	_, err := p.Open(ctxT(t))
	if !errors.Is(err, browserpool.ErrLaunchFailed) || !strings.Contains(err.Error(), "set Browserless.Token") {
		t.Fatalf("Open with a wrong token: %v, want ErrLaunchFailed with a token hint", err)
	}
	if strings.Contains(err.Error(), "wr0ng-t0ken-2") {
		t.Errorf("error shows the token: %v", err)
	}
}

func TestFleetFakeDroppedLeaseClosesTheSessionAsCrashed(t *testing.T) {
	f := startFakeFleet(t, 1, "")
	closed := make(chan browserpool.SessionEvent, 1)
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.Browserless{URL: f.URL},
		Hooks: browserpool.Hooks{SessionClosed: func(ev browserpool.SessionEvent) { closed <- ev }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s := mustOpen(t, ctxT(t), p)
	f.dropAll()
	ev := <-closed
	if ev.Reason != browserpool.ReasonCrashed {
		t.Errorf("close reason = %q, want %q", ev.Reason, browserpool.ReasonCrashed)
	}
	if !errors.Is(s.Err(), browserpool.ErrBrowserExited) {
		t.Errorf("Session.Err = %v, want ErrBrowserExited", s.Err())
	}
	if got := p.Stats().Closes[browserpool.ReasonCrashed]; got != 1 {
		t.Errorf("Stats.Closes[crashed] = %d, want 1", got)
	}
}

func TestFleetFakeGridCloseDeletesExactlyItsOwnSession(t *testing.T) {
	f := startFakeFleet(t, 4, "")
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: f.HTTP}, 0)
	ctx := ctxT(t)
	a, b := mustOpen(t, ctx, p), mustOpen(t, ctx, p)
	if diff := cmp.Diff([]string{"selenium-grid", f.HTTP}, []string{b.Info().Fleet, b.Info().Endpoint}); diff != "" {
		t.Errorf("SessionInfo Fleet and Endpoint (-want +got):\n%s", diff)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	deletes := append([]string(nil), f.deletes...)
	f.mu.Unlock()
	if diff := cmp.Diff([]string{"grid1"}, deletes); diff != "" {
		t.Errorf("DELETEs after closing the first session (-want +got):\n%s", diff)
	}
	if got := f.gridSessions(); got != 1 {
		t.Errorf("Grid sessions = %d, want 1", got)
	}
}

func TestFleetFakeGridFailedDeleteIsRetriedByTheLeakPath(t *testing.T) {
	f := startFakeFleet(t, 1, "")
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.SeleniumGrid{URL: f.HTTP}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	f.mu.Lock()
	f.failDel = 1
	f.mu.Unlock()
	if err := s.Close(ctx); !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("Close with a failing DELETE: %v, want ErrCloseFailed", err)
	}
	if got := p.Stats().Leaked; got != 1 {
		t.Errorf("Stats.Leaked = %d, want 1", got)
	}
	p.Close() // retries what is pending
	if got := p.Stats().Leaked; got != 0 {
		t.Errorf("Stats.Leaked after Pool.Close = %d, want 0", got)
	}
	if got := f.gridSessions(); got != 0 {
		t.Errorf("Grid sessions after the retry = %d, want 0", got)
	}
}

// A session the Grid makes for a request given up on is deleted in the
// background, also when the first DELETEs fail (they were not tried
// again: the session lived on the Grid, recorded nowhere, until its
// session-timeout).
func TestFleetFakeGridPostCutShortIsDeletedInTheBackground(t *testing.T) {
	for _, failDel := range []int{0, 2} {
		f := startFakeFleet(t, 1, "")
		f.mu.Lock()
		f.postDelay, f.failDel = 700*time.Millisecond, failDel
		f.mu.Unlock()
		p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.SeleniumGrid{URL: f.HTTP}, LaunchTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Open(ctxT(t)); !errors.Is(err, browserpool.ErrTimeout) {
			t.Fatalf("Open with a slow Grid: %v, want ErrTimeout", err)
		}
		p.Close() // waits for the background cleanup
		if got := f.gridSessions(); got != 0 {
			t.Errorf("%d failed DELETEs: Grid sessions after the pool closed = %d, want 0 (the late session is deleted)", failDel, got)
		}
		f.mu.Lock()
		deletes := append([]string(nil), f.deletes...)
		f.mu.Unlock()
		if diff := cmp.Diff([]string{"grid1"}, deletes); diff != "" {
			t.Errorf("%d failed DELETEs: DELETEs answered (-want +got):\n%s", failDel, diff)
		}
	}
}

func TestFleetTransportCarriesLargeMessagesAndReportsTheEnd(t *testing.T) {
	got := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := fleetUpgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_, msg, err := c.ReadMessage()
		if err == nil {
			got <- len(msg)
			c.WriteMessage(websocket.TextMessage, msg)
		}
		c.Close() // the remote end goes away
	}))
	t.Cleanup(srv.Close)
	ctx := ctxT(t)
	tr, err := browserpool.DialWebSocket(ctx, srv.URL, browserpool.DialOptions{HandshakeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	big := `{"id":1,"method":"Runtime.evaluate","params":{"expression":"'` + strings.Repeat("x", 1<<20) + `'"}}`
	if err := tr.WriteMessage([]byte(big)); err != nil {
		t.Fatalf("writing a 1 MiB message: %v", err)
	}
	if n := <-got; n != len(big) {
		t.Errorf("server got %d bytes, want %d", n, len(big))
	}
	if echo, err := tr.ReadMessage(); err != nil || len(echo) != len(big) {
		t.Fatalf("reading the echo: %d bytes, %v", len(echo), err)
	}
	select {
	case <-tr.Exited():
		t.Fatal("Exited closed before any read error")
	default:
	}
	if _, err := tr.ReadMessage(); err == nil {
		t.Fatal("read after the server closed returned no error")
	}
	<-tr.Exited()
	if tr.Err() == nil {
		t.Error("Err is nil after the end")
	}
}

func TestFleetTransportHandshakeRefusalIsAHandshakeErrorWithoutTheURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Too Many Requests for "+r.URL.String(), http.StatusTooManyRequests) // echoes the token
	}))
	t.Cleanup(srv.Close)
	_, err := browserpool.DialWebSocket(ctxT(t), srv.URL+"/x?token=sekr1t-123", browserpool.DialOptions{})
	var he *browserpool.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("dial to a refusing server: %v, want a *HandshakeError with 429", err)
	}
	if strings.Contains(err.Error(), "sekr1t") {
		t.Errorf("error shows the token: %v", err)
	}
	_, err = browserpool.DialWebSocket(ctxT(t), "ws://127.0.0.1:1/x?token=sekr1t-123", browserpool.DialOptions{})
	if err == nil || strings.Contains(err.Error(), "sekr1t") {
		t.Errorf("dial to a closed port: %v (want an error without the token)", err)
	}
}

// A server echoing a secret across the 512 bytes a handshake error keeps,
// or echoing a header's credentials, shows no part of either.
func TestFleetTransportHandshakeRefusalShowsNoPartOfAnEchoedSecret(t *testing.T) {
	const token, bearer = "tokSEKRIT0-abcdefghijklmno", "hdrSEKRIT-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := strings.Repeat("x", 495) + " bad token " + r.URL.Query().Get("token") + " for " + r.Header.Get("Authorization")
		http.Error(w, body, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	_, err := browserpool.DialWebSocket(ctxT(t), srv.URL+"/x?token="+token, browserpool.DialOptions{Header: http.Header{"Authorization": {"Bearer " + bearer}}})
	var he *browserpool.HandshakeError
	if !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial to a refusing server: %v, want a *HandshakeError with 401", err)
	}
	for _, part := range []string{token[:4], bearer[:4]} {
		if strings.Contains(err.Error(), part) {
			t.Errorf("the error shows part of a secret (%q): %v", part, err)
		}
	}
}

// Grid's refusal of a session is quoted without the credentials of its
// URL, as written or as the Basic authorization they make.
func TestFleetGridRefusalShowsNotTheCredentialsItEchoes(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("alice:gridSEKRITpw"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		json.NewEncoder(w).Encode(map[string]any{"value": map[string]any{"error": "session not created",
			"message": "refused " + r.Header.Get("Authorization") + " (user alice, password gridSEKRITpw)"}})
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	u.User = url.UserPassword("alice", "gridSEKRITpw")
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.SeleniumGrid{URL: u.String()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	_, err = p.Open(ctxT(t))
	if err == nil || !strings.Contains(err.Error(), "session not created") {
		t.Fatalf("Open against a refusing Grid: %v, want its refusal", err)
	}
	for _, secret := range []string{"gridSEKRITpw", basic} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

func TestFleetFakeGridSessionTheGridEndedWhileItsSocketStaysOpenEndsAsCrashed(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: f.HTTP, CheckInterval: 20 * time.Millisecond}, 0)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	other := mustOpen(t, ctx, p)
	waitFor(t, "the pool to check its leases on the Grid", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.checks >= 4 })
	if s.Err() != nil || other.Err() != nil {
		t.Fatalf("sessions the Grid still has ended: %v, %v", s.Err(), other.Err())
	}
	f.forgetGridSession("grid1")
	waitFor(t, "the session the Grid ended to end", func() bool { return s.Err() != nil })
	if err := s.Err(); !errors.Is(err, browserpool.ErrBrowserExited) || !strings.Contains(err.Error(), "no longer has session grid1") || !strings.Contains(err.Error(), "the fleet ended the lease") {
		t.Errorf("Err() = %v; want ErrBrowserExited saying the Grid no longer has the session, with a hint for a lease", err)
	}
	// The close is counted when the close path ends, a moment after Err.
	waitFor(t, "the session to be counted as crashed", func() bool { return p.Stats().Closes[browserpool.ReasonCrashed] == 1 })
	if err := other.Err(); err != nil {
		t.Errorf("the other lease: %v", err)
	}
}

func TestAFleetPoolRefusesNetworkRulesItCannotEnforce(t *testing.T) {
	for _, l := range []browserpool.Launcher{&browserpool.Browserless{URL: "ws://127.0.0.1:1"}, &browserpool.SeleniumGrid{URL: "http://127.0.0.1:1"}} {
		_, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: l, Network: browserpool.NetworkPolicy{Block: []string{"127.0.0.0/8"}}})
		if !errors.Is(err, browserpool.ErrInvalidConfig) || !strings.Contains(err.Error(), "cannot be enforced") {
			t.Errorf("NewPool with %T and Block rules: %v; want ErrInvalidConfig saying they cannot be enforced", l, err)
		}
	}
	// Without rules a fleet pool is fine.
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.Browserless{URL: "ws://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

func TestPoolCloseNamesALeaseItCouldNotEndAndPointsAtTheFleet(t *testing.T) {
	f := startFakeFleet(t, 1, "")
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.SeleniumGrid{URL: f.HTTP}})
	if err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, ctxT(t), p)
	f.mu.Lock()
	f.failDel = 1 << 20 // the Grid refuses every DELETE
	f.mu.Unlock()
	err = p.Close()
	if !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("Pool.Close with a Grid refusing DELETE: %v, want ErrCloseFailed", err)
	}
	checkText(t, "Pool.Close", err, []string{"selenium-grid lease of session " + s.ID(), f.HTTP, "check the fleet"}, []string{"remove those dirs by hand", "\n"})
}
