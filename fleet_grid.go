// Room: the Selenium Grid 4 launcher. No locks: its fields are read-only
// after it is put in a Config; its background cleanups are tracked by
// fleetCleanups.

package browserpool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SeleniumGrid leases browsers from a Selenium Grid 4 (standalone, hub and
// nodes, or Kubernetes): each lease is a W3C session (POST /session) driven
// over its se:cdp websocket and ended with DELETE /session/{id}. Put a
// *SeleniumGrid in Config.Launcher; one Pool is one Grid, and its sessions
// behave exactly as local ones, but for the network policy (Config.Network
// applies to local browsers only; NewPool refuses Allow and Block rules).
//
//	pool, err := browserpool.NewPool(browserpool.Config{
//		Launcher: &browserpool.SeleniumGrid{URL: "http://127.0.0.1:4444"},
//	})
//
// A lease waits in Grid's session queue up to Config.LaunchTimeout. When
// Grid's own queue times out (session-request-timeout) the error is of class
// ErrFleetFull. When the launch gives up first, the request is followed in
// the background (up to CleanupTimeout): Grid still creates the session,
// and it is deleted at once, so a waiter that left never keeps a lease.
// Pool.Close waits for that cleanup. A close whose DELETE fails is retried
// by the pool like any close that left something behind.
//
// Each session is recorded in the pool's manifest (its Grid session id and
// the URL without credentials) as soon as POST /session returns: if the
// host dies, even by SIGKILL, the sweep of the next NewPool on the same Root
// with a SeleniumGrid of the same URL deletes it (see LeaseEnder), instead
// of leaving it on the Grid until its session-timeout.
//
// Grid ends sessions without traffic after its session-timeout (default
// 300 s); the pool's check of each lease (CheckInterval) is traffic, so a
// lease the pool holds lasts until the pool closes it. A session the Grid
// ends anyway (a DELETE from elsewhere) is noticed by that check.
//
// Set it up before use and do not copy it afterwards; it is safe for
// concurrent use by several pools.
type SeleniumGrid struct {
	// URL is the Grid's base URL, e.g. http://127.0.0.1:4444 (a path prefix
	// such as /wd/hub is kept). Credentials in it are sent but never
	// shown.
	URL string
	// Capabilities are the session's alwaysMatch capabilities. Nil means
	// {"browserName":"chrome","goog:chromeOptions":{"args":[...headless]}}.
	// Give goog:chromeOptions.binary when the node's browser is not where
	// chromedriver looks.
	Capabilities map[string]any
	// Header is sent with every request and the CDP handshake (for example
	// Authorization). Nil sends none.
	Header http.Header
	// HTTPClient sends the WebDriver requests. Nil means a fresh client
	// per request (no proxy from the environment, no idle connections).
	HTTPClient *http.Client
	// CleanupTimeout bounds how long a lease request given up on is still
	// followed (see the type's doc). Zero means
	// DefaultFleetCleanupTimeout; Grid's own session-request-timeout
	// should not exceed Config.LaunchTimeout plus this.
	CleanupTimeout time.Duration
	// CheckInterval is how often the pool asks the Grid whether it still
	// has a lease it holds (GET /session/{id}/timeouts). Grid can end a
	// session and leave its se:cdp socket open (a DELETE from elsewhere,
	// its session-timeout): the browser is gone, and without the check
	// every call would wait for its caller's deadline. A session the Grid
	// no longer knows ends as crashed, its calls failing with
	// ErrBrowserExited. The check is a WebDriver command, so it also keeps
	// the Grid from ending a lease the pool still holds for inactivity:
	// the pool's IdleTimeout decides. Zero means DefaultGridCheckInterval;
	// negative turns the check off.
	CheckInterval time.Duration

	bg fleetCleanups
}

// DefaultGridCheckInterval is SeleniumGrid.CheckInterval's default.
const DefaultGridCheckInterval = 10 * time.Second

// DefaultGridArgs are the Chromium flags of the default Grid capabilities.
var DefaultGridArgs = []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
	"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"}

// gridSession is what POST /session answered.
type gridSession struct {
	id  string
	cdp string
}

// Launch implements Launcher: it asks the Grid for a session, dials its
// se:cdp endpoint and returns the leased browser once it answers CDP.
func (g *SeleniumGrid) Launch(ctx context.Context, spec LaunchSpec) (LaunchedBrowser, error) {
	endpoint := fleetEndpoint(g.URL)
	if u, err := url.Parse(g.URL); g.URL == "" || err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fleetLaunchError(spec.SessionID, endpoint, "SeleniumGrid.URL is not an http(s) URL with a host", "set SeleniumGrid.URL to the Grid, e.g. http://127.0.0.1:4444", nil)
	}
	caps := g.Capabilities
	if caps == nil {
		caps = map[string]any{"browserName": "chrome", "goog:chromeOptions": map[string]any{"args": DefaultGridArgs}}
	}
	body, err := json.Marshal(map[string]any{"capabilities": map[string]any{"alwaysMatch": caps}})
	if err != nil {
		return nil, fleetLaunchError(spec.SessionID, endpoint, "SeleniumGrid.Capabilities do not encode as JSON", "use plain JSON values in Capabilities", err)
	}
	type created struct {
		s   gridSession
		err error
	}
	res := make(chan created, 1)
	pctx, cancel := cleanupContext(ctx)
	go func() {
		s, err := g.newSession(pctx, body)
		res <- created{s, err}
	}()
	var c created
	select {
	case c = <-res:
		cancel()
	case <-ctx.Done():
		// Grid creates the session even for a request cut short: let the
		// request finish and delete what it made.
		stop := followFor(g.CleanupTimeout, cancel)
		g.bg.start(func() {
			defer cancel()
			c := <-res
			stop()
			if c.err == nil {
				g.deleteLate(ctx, c.s.id)
			}
		})
		return nil, g.waitError(ctx, spec.SessionID, endpoint)
	}
	if c.err != nil {
		return nil, g.createError(ctx, spec.SessionID, endpoint, c.err)
	}
	release := func(ctx context.Context) error { return g.deleteSession(ctx, c.s.id) }
	fail := func(err error) (LaunchedBrowser, error) {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if derr := release(dctx); derr != nil {
			var e *Error
			switch {
			case errors.As(err, &e) && e.Err != nil:
				e.Err = fmt.Errorf("%w; and then: %w", e.Err, derr)
			case errors.As(err, &e):
				e.Err = derr
			default:
				err = errors.Join(err, derr)
			}
			if e != nil {
				e.Detail += "; the Grid session could not be ended: the pool tries again, and Pool.Close names it if it is still left"
			}
			return nil, &leaseHeld{err: err, end: release}
		}
		return nil, err
	}
	b := &leasedBrowser{kind: FleetSeleniumGrid, endpoint: endpoint, leaseID: c.s.id, release: release}
	// The session exists on the Grid from now on and outlives this process
	// if it dies: record it before anything else can fail or block.
	if spec.OnSpawn != nil {
		if err := spec.OnSpawn(b.spawnInfo("")); err != nil {
			return fail(err)
		}
	}
	t, err := DialWebSocket(ctx, c.s.cdp, DialOptions{Header: g.Header})
	if err != nil {
		return fail(fleetLaunchError(spec.SessionID, endpoint, "cannot open the session's se:cdp websocket at "+fleetEndpoint(c.s.cdp),
			"check that the address Grid gives in se:cdp is reachable from this machine (Grid's --host / [server] host)", err))
	}
	b.t = t
	if b.version, err = probeVersion(ctx, t); err != nil {
		t.Close()
		return fail(fleetNoAnswerError(ctx, spec.SessionID, endpoint, err))
	}
	if every := cmp.Or(g.CheckInterval, DefaultGridCheckInterval); every > 0 {
		id := c.s.id
		b.watch = &leaseWatch{interval: every, fail: t.fail,
			check: func(ctx context.Context) (string, error) { return g.sessionGone(ctx, id) }}
		b.watch.start()
	}
	return b, nil
}

// LeaseFleet implements LeaseEnder: the Grid's sessions are recorded as
// FleetSeleniumGrid at URL without credentials or query.
func (g *SeleniumGrid) LeaseFleet() (kind, endpoint string) {
	return FleetSeleniumGrid, fleetEndpoint(g.URL)
}

// EndLease implements LeaseEnder: it deletes the Grid session info.LeaseID
// (DELETE {URL}/session/{id}, with Header, bounded by ctx and 10 s). A Grid
// that no longer knows the session (404, "invalid session id") counts as
// ended. The sweep at NewPool calls it for sessions of a host that died.
func (g *SeleniumGrid) EndLease(ctx context.Context, info SpawnInfo) (bool, error) {
	if err := otherFleet(g, info); err != nil {
		return false, err
	}
	if info.LeaseID == "" {
		return false, errors.New("no Grid session id was recorded for the lease, so there is nothing to DELETE: the Grid ends it at its own session-timeout")
	}
	if err := g.deleteSession(ctx, info.LeaseID); err != nil {
		return false, err
	}
	return true, nil
}

// gridError is a WebDriver error reply.
type gridError struct {
	status  int
	code    string // e.g. "session not created"
	message string // first line, cut short
}

func (e *gridError) Error() string {
	return fmt.Sprintf("HTTP %d: %s: %s", e.status, e.code, e.message)
}

// full reports whether the error says the Grid had no free slot in time.
func (e *gridError) full() bool {
	m := strings.ToLower(e.message)
	return strings.Contains(m, "timed out") || strings.Contains(m, "queue") && strings.Contains(m, "full")
}

// newSession sends POST /session and returns the session's id and CDP URL.
func (g *SeleniumGrid) newSession(ctx context.Context, body []byte) (gridSession, error) {
	code, b, err := fleetCall(ctx, g.HTTPClient, http.MethodPost, g.path("/session"), g.Header, body, time.Until(deadlineOr(ctx, time.Hour)))
	if err != nil {
		return gridSession{}, err
	}
	var reply struct {
		Value struct {
			SessionID    string         `json:"sessionId"`
			Capabilities map[string]any `json:"capabilities"`
			Error        string         `json:"error"`
			Message      string         `json:"message"`
		} `json:"value"`
	}
	if err := json.Unmarshal(b, &reply); err != nil {
		return gridSession{}, fmt.Errorf("HTTP %d: the reply is not WebDriver JSON", code)
	}
	v := reply.Value
	if code != http.StatusOK || v.Error != "" {
		msg, _, _ := strings.Cut(v.Message, "\n")
		secrets := g.secrets()
		return gridSession{}, &gridError{status: code, code: scrub(v.Error, secrets), message: cutScrubbed(msg, 300, secrets)}
	}
	cdp, _ := v.Capabilities["se:cdp"].(string)
	s := gridSession{id: v.SessionID, cdp: cdp}
	if s.id == "" || cdp == "" {
		// A session without se:cdp is of no use: end it.
		if s.id != "" {
			g.deleteSession(ctx, s.id)
		}
		return gridSession{}, errors.New("the session has no se:cdp endpoint (a Chromium-family browser with Grid 4's CDP support is needed)")
	}
	return s, nil
}

// lateDeleteTries is how many times deleteLate asks, a second apart.
const lateDeleteTries = 3

// deleteLate deletes session id, which the Grid made for a request the
// launch had given up on: nothing records it to end it later, so a failed
// DELETE is tried again (lateDeleteTries in all, each bounded by 10 s).
func (g *SeleniumGrid) deleteLate(ctx context.Context, id string) {
	for try := 1; ; try++ {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := g.deleteSession(dctx, id)
		cancel()
		if err == nil || try == lateDeleteTries {
			return
		}
		time.Sleep(time.Second)
	}
}

// deadlineOr returns ctx's deadline, or now+d without one.
func deadlineOr(ctx context.Context, d time.Duration) time.Time {
	if t, ok := ctx.Deadline(); ok {
		return t
	}
	return time.Now().Add(d)
}

// deleteSession ends session id; a session already gone counts as ended.
func (g *SeleniumGrid) deleteSession(ctx context.Context, id string) error {
	code, b, err := fleetCall(ctx, g.HTTPClient, http.MethodDelete, g.path("/session/"+url.PathEscape(id)), g.Header, nil, 10*time.Second)
	if err != nil {
		return fmt.Errorf("ending Grid session %s: %w", id, err)
	}
	switch {
	case code == http.StatusOK:
		return nil
	case code == http.StatusNotFound || strings.Contains(string(b), "invalid session id"):
		return nil
	}
	return fmt.Errorf("ending Grid session %s: HTTP %d", id, code)
}

// sessionGone asks the Grid about session id (GET /session/{id}/timeouts,
// a command any WebDriver session answers) and says why it is gone when
// the Grid no longer knows it; an error when the Grid could not tell.
func (g *SeleniumGrid) sessionGone(ctx context.Context, id string) (string, error) {
	code, b, err := fleetCall(ctx, g.HTTPClient, http.MethodGet, g.path("/session/"+url.PathEscape(id)+"/timeouts"), g.Header, nil, 10*time.Second)
	if err != nil {
		return "", err
	}
	if code == http.StatusNotFound || strings.Contains(string(b), "invalid session id") {
		return fmt.Sprintf("the Grid no longer has session %s (it was deleted from elsewhere or reached the Grid's session-timeout): its browser is gone", id), nil
	}
	return "", nil
}

// secrets returns what must never be shown of the Grid's URL and Header
// (see fleetSecrets).
func (g *SeleniumGrid) secrets() []string {
	u, _ := url.Parse(g.URL)
	return fleetSecrets(u, g.Header)
}

// path returns the Grid URL with path appended to its own path.
func (g *SeleniumGrid) path(p string) string {
	u, err := url.Parse(g.URL)
	if err != nil {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + p
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// createError maps a failed POST /session to the package's classes.
func (g *SeleniumGrid) createError(ctx context.Context, id, endpoint string, err error) error {
	var ge *gridError
	if errors.As(err, &ge) && ge.full() {
		return fleetFullError(id, endpoint, g.load(ctx), err)
	}
	if errors.As(err, &ge) {
		return fleetLaunchError(id, endpoint, "Grid refused the session", "check SeleniumGrid.Capabilities against the Grid's node stereotypes (GET /status lists them)", err)
	}
	return fleetLaunchError(id, endpoint, "no session", "check that the Grid runs and this machine reaches it (GET /status on it answers)", err)
}

// waitError is the error of a launch whose ctx ended while the Grid had
// not answered. A Grid with free slots that still gave no session has no
// node for the capabilities, which is not the full Grid fleetWaitError
// suggests: it says so.
func (g *SeleniumGrid) waitError(ctx context.Context, id, endpoint string) error {
	e := fleetWaitError(ctx, id, endpoint)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return e // a cancelled launch (the pool closing) needs no figures
	}
	gr, ok := g.counts(ctx)
	switch {
	case !ok:
	case gr.MaxSession == 0:
		e.Detail = fmt.Sprintf("the Grid at %s gave no session before the launch deadline (Config.LaunchTimeout): it has no node (0 slots)", endpoint)
		e.Hint = "start a node on the Grid (or check that its nodes registered: GET /status lists them); the request given up on is ended when the Grid answers it"
	case gr.SessionCount < gr.MaxSession:
		e.Detail = fmt.Sprintf("the Grid at %s gave no session before the launch deadline (Config.LaunchTimeout) though %d of its %d slots were free", endpoint, gr.MaxSession-gr.SessionCount, gr.MaxSession)
		e.Hint = "no free node may take SeleniumGrid.Capabilities (the free slots may be another browser's, or no node has this one): compare them (browserName, its options) with the nodes' stereotypes that GET /status lists; the request given up on is ended when the Grid answers it"
	default:
		e.Detail += " (" + gr.String() + ")"
	}
	return e
}

// gridCounts are the Grid's session figures (GraphQL's grid fields).
type gridCounts struct {
	SessionCount     int `json:"sessionCount"`
	MaxSession       int `json:"maxSession"`
	SessionQueueSize int `json:"sessionQueueSize"`
}

// load describes how full the Grid is ("2 of 2 slots in use, 1 queued"), or
// "" when it cannot tell within 300 ms (the
// capacity error stays fast; a loaded server may not answer that soon).
func (g *SeleniumGrid) load(ctx context.Context) string {
	gr, ok := g.counts(ctx)
	if !ok {
		return ""
	}
	return gr.String()
}

// String reads "2 of 2 slots in use, 1 queued".
func (gc gridCounts) String() string {
	return fmt.Sprintf("%d of %d slots in use, %d queued", gc.SessionCount, gc.MaxSession, gc.SessionQueueSize)
}

// counts reads the Grid's session figures, within 300 ms.
func (g *SeleniumGrid) counts(ctx context.Context) (gridCounts, bool) {
	q := []byte(`{"query":"{ grid { sessionCount maxSession sessionQueueSize } }"}`)
	code, b, err := fleetCall(context.WithoutCancel(ctx), g.HTTPClient, http.MethodPost, g.path("/graphql"), g.Header, q, 300*time.Millisecond)
	if err != nil || code != http.StatusOK {
		return gridCounts{}, false
	}
	var r struct {
		Data struct {
			Grid gridCounts `json:"grid"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &r) != nil {
		return gridCounts{}, false
	}
	return r.Data.Grid, true
}

// WaitCleanups implements CleanupWaiter: it waits for the background
// DELETEs of sessions whose request was given up on (Pool.Close calls it).
func (g *SeleniumGrid) WaitCleanups() { g.bg.wait() }
