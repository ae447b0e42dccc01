// Room: what the fleet launchers share: the capacity error class, the
// leased browser a Pool drives, the cleanup of leases a launch gave up on,
// and the readiness probe. Locks: fleetCleanups.mu and leaseWatch.mu,
// each guarding its own fields, never held across a call out;
// leasedBrowser's state is atomic.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrFleetFull: a remote fleet (browserless, Selenium Grid) has no free
// browser: it refused the lease (browserless answers 429 when its running
// and queued slots are taken; Grid's queue timed out). Returned by
// Pool.Open and everything that launches, when Config.Launcher is a fleet.
var ErrFleetFull = errors.New("the browser fleet is full")

// DefaultFleetCleanupTimeout is how long a fleet launcher keeps following a
// lease request its launch gave up on (the caller's deadline or
// LaunchTimeout passed while the fleet queued it), so that a lease the fleet
// grants afterwards is ended at once instead of holding a slot.
const DefaultFleetCleanupTimeout = 30 * time.Second

// newFleetHTTP returns the HTTP client of a fleet launcher's control calls
// when the user gave none: it reads no proxy settings from the environment
// and keeps no idle connection (no goroutine outlives a call). Each call
// gets its own, so no client state is shared between launchers or pools.
func newFleetHTTP() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:             nil,
		DialContext:       (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		DisableKeepAlives: true,
	}}
}

// fleetCleanups joins the background work of one launcher: leases requested
// for a launch that gave up, followed until the fleet answers (bounded) and
// then ended. Pool.Close waits for it. One launcher may serve several
// pools, so a cleanup may start while another pool's Close waits: a
// sync.WaitGroup forbids that, a count and a channel do not. The zero
// value is ready.
type fleetCleanups struct {
	mu   sync.Mutex
	n    int           // guarded by mu: cleanups running
	idle chan struct{} // guarded by mu: closed when n drops to zero; nil while it is zero
}

// start runs f in the background, tracked.
func (c *fleetCleanups) start(f func()) {
	c.mu.Lock()
	if c.n++; c.n == 1 {
		c.idle = make(chan struct{})
	}
	c.mu.Unlock()
	go func() {
		defer c.done()
		f()
	}()
}

func (c *fleetCleanups) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n--; c.n == 0 {
		close(c.idle)
		c.idle = nil
	}
}

// wait waits until no background cleanup runs.
func (c *fleetCleanups) wait() {
	c.mu.Lock()
	idle := c.idle
	c.mu.Unlock()
	if idle != nil {
		<-idle
	}
}

// fleetFullError is the capacity error of the fleet at endpoint; load says
// how full it is ("" when unknown), cause is what the fleet answered.
func fleetFullError(id, endpoint, load string, cause error) *Error {
	e := newError("Pool.Open", ErrFleetFull, "")
	at := "the fleet at " + endpoint + " is full"
	if load != "" {
		at += " (" + load + ")"
	}
	e.Detail, e.Session, e.Err = at, id, cause
	e.Hint = at + ": retry later, raise its concurrency, or queue through an Allocator (AcquireOptions.Policy PolicyQueue, with the computer's Cap at the fleet's size)"
	return e
}

// fleetLaunchError is a launch failure at endpoint with a hint.
func fleetLaunchError(id, endpoint, detail, hint string, cause error) *Error {
	e := newError("Pool.Open", ErrLaunchFailed, "")
	e.Session, e.Err = id, cause
	e.Detail = "fleet at " + endpoint + ": " + detail
	if hint != "" {
		e.Hint = hint
	}
	return e
}

// fleetWaitError is the error of a launch whose context ended while the
// fleet had not answered (a queued lease). A cancelled pool gives its own.
func fleetWaitError(ctx context.Context, id, endpoint string) *Error {
	e := newError("Pool.Open", ErrTimeout, "")
	e.Session, e.Err = id, context.Cause(ctx)
	e.Detail = "the fleet at " + endpoint + " gave no browser before the launch deadline (Config.LaunchTimeout)"
	e.Hint = "the fleet is probably full and queued the request: raise Config.LaunchTimeout to wait longer, raise the fleet's concurrency, or queue through an Allocator; the request given up on is ended when the fleet answers it"
	return e
}

// fleetNoAnswerError is the error of a launch whose lease the fleet at
// endpoint granted but whose browser did not answer CDP (the readiness
// probe failed with cause): the fleet is not full, its browser is slow,
// stuck or unreachable. The launcher ends the lease.
func fleetNoAnswerError(ctx context.Context, id, endpoint string, cause error) *Error {
	if ctx.Err() != nil {
		e := newError("Pool.Open", ErrTimeout, "")
		e.Session, e.Err = id, context.Cause(ctx)
		e.Detail = "the fleet at " + endpoint + " granted a lease, but its browser did not answer CDP before the launch deadline (Config.LaunchTimeout)"
		e.Hint = "the fleet's browser is slow to start or stuck: raise Config.LaunchTimeout, or check the fleet's browsers and logs"
		return e
	}
	return fleetLaunchError(id, endpoint, "granted a lease, but its browser did not answer CDP",
		"the connection to the fleet's browser failed: check the fleet's browsers and logs, then retry", cause)
}

// cleanupContext returns the context a lease request runs on: ctx's values,
// not its cancellation or deadline, so that a request given up on can still
// be followed to its end. The launch waits for the request while ctx
// lasts; once it gives up, followFor bounds the rest.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(context.WithoutCancel(ctx))
}

// followFor bounds the follow of a lease request given up on to grace
// (DefaultFleetCleanupTimeout when zero) from now: cancel, the request's
// context's, runs then. It returns the func that stops the bound.
func followFor(grace time.Duration, cancel context.CancelFunc) (stop func() bool) {
	if grace <= 0 {
		grace = DefaultFleetCleanupTimeout
	}
	return time.AfterFunc(grace, cancel).Stop
}

// probeVersion sends Browser.getVersion over t and returns the product once
// the reply comes: the lease answers CDP. ctx bounds it; on failure the
// caller closes t.
func probeVersion(ctx context.Context, t *WebSocketTransport) (string, error) {
	stop := context.AfterFunc(ctx, func() { t.c.NetConn().SetReadDeadline(time.Unix(1, 0)) })
	const probeID = 1 << 30 // far from the ids the mux will use
	if err := t.WriteMessage(fmt.Appendf(nil, `{"id":%d,"method":"Browser.getVersion"}`, probeID)); err != nil {
		stop()
		return "", err
	}
	for {
		b, err := t.ReadMessage()
		if err != nil {
			if !stop() {
				return "", context.Cause(ctx)
			}
			return "", err
		}
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				Product string `json:"product"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &reply) != nil || reply.ID != probeID {
			continue // an event before the reply
		}
		if !stop() {
			return "", context.Cause(ctx) // the deadline may have hit the conn
		}
		if reply.Error != nil {
			return "", fmt.Errorf("Browser.getVersion: %s", reply.Error.Message)
		}
		return reply.Result.Product, nil
	}
}

// fleetCall sends one request (a JSON body when body is non-nil, with the
// Content-Type Grid insists on) and returns the status and up to 4 MiB of
// the reply, bounded by timeout. The URL may carry a token: errors never
// quote it.
func fleetCall(ctx context.Context, client *http.Client, method, rawURL string, header http.Header, body []byte, timeout time.Duration) (int, []byte, error) {
	if client == nil {
		client = newFleetHTTP()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(string(body))
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: bad URL", method, fleetEndpoint(rawURL))
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		// Selenium Grid refuses plain application/json.
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, fleetEndpoint(rawURL), ctx.Err())
		}
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // *url.Error quotes the URL; keep its cause
		}
		return 0, nil, fmt.Errorf("%s %s: %w", method, fleetEndpoint(rawURL), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: reading the reply: %v", method, fleetEndpoint(rawURL), err)
	}
	return resp.StatusCode, b, nil
}

// Fleet kinds, as SessionInfo.Fleet names them.
const (
	FleetBrowserless  = "browserless"
	FleetSeleniumGrid = "selenium-grid"
)

// fleetLauncherKind returns the fleet kind of a fleet launcher of this
// package, else "".
func fleetLauncherKind(l Launcher) string {
	switch l.(type) {
	case *Browserless:
		return FleetBrowserless
	case *SeleniumGrid:
		return FleetSeleniumGrid
	}
	return ""
}

// fleetKind returns the fleet kind of b, "" for a browser not leased. A
// third-party launcher's browser says it through Info().Fleet.
func fleetKind(b LaunchedBrowser) string {
	if lb, ok := b.(*leasedBrowser); ok {
		return lb.kind
	}
	return b.Info().Fleet
}

// fleetEndpointOf returns the redacted fleet endpoint of b, "" for a
// browser not leased. A third-party launcher's endpoint is redacted here
// again, in case it kept credentials or a query.
func fleetEndpointOf(b LaunchedBrowser) string {
	if lb, ok := b.(*leasedBrowser); ok {
		return lb.endpoint
	}
	if e := b.Info().Endpoint; e != "" {
		return fleetEndpoint(e)
	}
	return ""
}

// leasedBrowser is a browser leased from a fleet, as the Pool drives it: a
// websocket transport and a way to end the lease.
type leasedBrowser struct {
	kind     string // FleetBrowserless or FleetSeleniumGrid
	t        *WebSocketTransport
	version  string
	endpoint string // fleet endpoint, credentials and query removed
	leaseID  string // the fleet's id of the lease (Grid session id); "" for browserless
	// release ends the lease on the fleet after the socket is closed (Grid:
	// DELETE /session/{id}); nil when closing the socket is enough.
	release  func(ctx context.Context) error
	released atomic.Bool // release succeeded (or was not needed)
	stopped  atomic.Bool // Stop was called
	watch    *leaseWatch // checks the lease on its fleet (Grid); nil: none
}

// leaseWatch checks a lease on its fleet every interval, on a timer (no
// goroutine between checks), and fails the lease's transport when the
// fleet no longer has it. mu guards timer and stopped; a check runs
// without it, counted in running so that stop can wait for it.
type leaseWatch struct {
	interval time.Duration
	// check reports, with a nil error, that the fleet no longer has the
	// lease and why; a non-nil error means it could not tell.
	check func(ctx context.Context) (gone string, err error)
	fail  func(cause error)

	mu      sync.Mutex
	timer   *time.Timer        // guarded by mu
	stopped bool               // guarded by mu
	cancel  context.CancelFunc // guarded by mu; ends the check in progress, if any
	running sync.WaitGroup     // a check in progress
}

// start arms the first check.
func (w *leaseWatch) start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = time.AfterFunc(w.interval, w.tick)
}

func (w *leaseWatch) tick() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.running.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), max(w.interval, 5*time.Second))
	w.cancel = cancel
	w.mu.Unlock()
	gone, err := w.check(ctx)
	cancel()
	w.running.Done()
	if err == nil && gone != "" {
		w.fail(errors.New(gone))
		return
	}
	w.mu.Lock()
	if !w.stopped {
		w.timer.Reset(w.interval)
	}
	w.mu.Unlock()
}

// stop ends the checks, cancels one in progress and waits for it: a
// close does not wait out a check's request to a slow fleet.
func (w *leaseWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	w.running.Wait()
}

func (b *leasedBrowser) Transport() Transport    { return b.t }
func (b *leasedBrowser) Exited() <-chan struct{} { return b.t.Exited() }
func (b *leasedBrowser) exitEndsConn()           {}
func (b *leasedBrowser) Info() SpawnInfo         { return b.spawnInfo(b.version) }

// spawnInfo is what the manifest records of the lease: where it lives and
// its id on the fleet, never a credential.
func (b *leasedBrowser) spawnInfo(version string) SpawnInfo {
	return SpawnInfo{Version: version, Fleet: b.kind, Endpoint: b.endpoint, LeaseID: b.leaseID}
}

// ExitErr says why the lease ended, or nil while it runs or after Stop.
func (b *leasedBrowser) ExitErr() error {
	err := b.t.Err()
	if err == nil || b.stopped.Load() {
		return nil
	}
	return fmt.Errorf("the lease from the fleet at %s ended (the fleet closed it, e.g. its per-lease timeout, or the network dropped): %w", b.endpoint, err)
}

// Stop closes the socket and ends the lease. It is idempotent: after a
// release that failed (the session is counted as leaked), a later Stop
// tries the release again.
func (b *leasedBrowser) Stop(ctx context.Context) error {
	b.stopped.Store(true)
	b.watch.stop()
	b.t.Close()
	if b.release == nil || b.released.Load() {
		return nil
	}
	if err := b.release(ctx); err != nil {
		return err
	}
	b.released.Store(true)
	return nil
}

// leaseHeld is a fleet launcher's launch error after it recorded the lease
// (LaunchSpec.OnSpawn) and could not end it: the fleet may still hold it.
// The pool keeps the lease's manifest entry and retries end (a stray).
type leaseHeld struct {
	err error                           // the launch's error, with the failed end's
	end func(ctx context.Context) error // ends the lease
}

func (e *leaseHeld) Error() string { return e.err.Error() }
func (e *leaseHeld) Unwrap() error { return e.err }

// otherFleet says why info is not a lease of l's fleet (another kind or
// endpoint), or returns nil. A LeaseEnder checks it before ending anything,
// though the sweep only asks for leases of the launcher's own fleet.
func otherFleet(l LeaseEnder, info SpawnInfo) error {
	kind, endpoint := l.LeaseFleet()
	if info.Fleet != kind || !sameFleet(info.Endpoint, endpoint) {
		return fmt.Errorf("the lease is on %s %s, not on this launcher's %s %s: end it with a launcher of that fleet", info.Fleet, info.Endpoint, kind, endpoint)
	}
	return nil
}
