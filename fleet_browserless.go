// Room: the browserless v2 launcher. No locks: its fields are read-only
// after it is put in a Config; its background cleanups are tracked by
// fleetCleanups.

package browserpool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Browserless leases browsers from a browserless v2 server
// (https://github.com/browserless/browserless): one websocket is one fresh
// Chromium, ended when the socket closes. Put a *Browserless in
// Config.Launcher; one Pool is one fleet, and its sessions behave exactly as
// local ones (tabs, actions, idle reclaim, close reasons, hooks, stats),
// but for the network policy: Config.Network applies to local browsers
// only, and NewPool refuses Allow and Block rules with a fleet launcher.
//
//	pool, err := browserpool.NewPool(browserpool.Config{
//		Launcher: &browserpool.Browserless{URL: "ws://127.0.0.1:3000", Token: token},
//	})
//
// A full server (CONCURRENT running and QUEUED waiting) refuses a lease
// with HTTP 429: Pool.Open returns an error of class ErrFleetFull at once.
// A lease the server queues waits up to Config.LaunchTimeout; if the launch
// gives up first, the request is followed in the background (up to
// CleanupTimeout) and the browser the server grants it later is closed at
// once, so a waiter that left never keeps a lease. Pool.Close waits for that
// cleanup.
//
// Each lease is recorded in the pool's manifest (the URL without
// credentials or token; browserless has no lease id) while it runs; it ends
// when its socket closes, so a host that dies takes its leases with it and
// the next pool's sweep only drops the entries (see LeaseEnder).
//
// Set it up before use and do not copy it afterwards; it is safe for
// concurrent use by several pools.
type Browserless struct {
	// URL is the server, e.g. ws://127.0.0.1:3000 or
	// wss://production-sfo.browserless.io (http and https work too). An
	// empty path means the /chromium route; any other path is used as is.
	// Credentials in it are sent but never shown.
	URL string
	// Token is the server's TOKEN, sent as the token query parameter. It
	// never appears in errors, logs, traces or stats. Empty sends none.
	Token string
	// Args are extra Chromium flags for each leased browser (sent as
	// launch={"args":[...]}). Nil sends none.
	Args []string
	// LeaseTimeout caps one lease on the server (its timeout parameter, a
	// hard cap from the browser's start that traffic does not extend).
	// Zero means the server's TIMEOUT, which browserless defaults to 30 s:
	// set TIMEOUT on the server or this field above the pool's IdleTimeout
	// (10 minutes by default), or the server ends sessions in use (they
	// close with reason crashed).
	LeaseTimeout time.Duration
	// Header is sent with every request (for example a proxy's
	// Authorization). Nil sends none.
	Header http.Header
	// CleanupTimeout bounds how long a lease request given up on is still
	// followed (see the type's doc). Zero means
	// DefaultFleetCleanupTimeout.
	CleanupTimeout time.Duration

	bg fleetCleanups
}

// Launch implements Launcher: it dials the server and returns the leased
// browser once it answers CDP.
func (l *Browserless) Launch(ctx context.Context, spec LaunchSpec) (LaunchedBrowser, error) {
	endpoint := fleetEndpoint(l.URL)
	wsURL, err := l.leaseURL(spec.SessionID)
	if err != nil {
		return nil, fleetLaunchError(spec.SessionID, endpoint, err.Error(), "set Browserless.URL to the server, e.g. ws://127.0.0.1:3000", nil)
	}
	type dialed struct {
		t   *WebSocketTransport
		err error
	}
	res := make(chan dialed, 1)
	dctx, cancel := cleanupContext(ctx)
	go func() {
		t, err := DialWebSocket(dctx, wsURL, DialOptions{Header: l.Header})
		res <- dialed{t, err}
	}()
	var d dialed
	select {
	case d = <-res:
		cancel()
	case <-ctx.Done():
		// The server may have queued the handshake: it would still launch a
		// browser for it later. Follow it and close what it gives.
		stop := followFor(l.CleanupTimeout, cancel)
		l.bg.start(func() {
			defer cancel()
			defer stop()
			if d := <-res; d.t != nil {
				d.t.Close()
			}
		})
		return nil, fleetWaitError(ctx, spec.SessionID, endpoint)
	}
	if d.err != nil {
		return nil, l.dialError(ctx, spec.SessionID, endpoint, d.err)
	}
	b := &leasedBrowser{kind: FleetBrowserless, t: d.t, endpoint: endpoint}
	if browserlessTracked(spec.SessionID) {
		// The server frees the slot a moment after the socket closes: Stop
		// waits for that, so a slot handed on at once is really free.
		b.release = func(ctx context.Context) error { return l.waitReleased(ctx, spec.SessionID) }
	}
	// The lease exists from the handshake on: record it (no lease id: it
	// ends with this socket) before waiting for the browser to answer.
	if spec.OnSpawn != nil {
		if err := spec.OnSpawn(b.spawnInfo("")); err != nil {
			d.t.Close()
			return nil, err
		}
	}
	if b.version, err = probeVersion(ctx, d.t); err != nil {
		d.t.Close()
		return nil, fleetNoAnswerError(ctx, spec.SessionID, endpoint, err)
	}
	return b, nil
}

// LeaseFleet implements LeaseEnder: the server's leases are recorded as
// FleetBrowserless at URL without credentials or query (no token).
func (l *Browserless) LeaseFleet() (kind, endpoint string) {
	return FleetBrowserless, fleetEndpoint(l.URL)
}

// EndLease implements LeaseEnder. A browserless lease is one websocket: the
// server closes its browser and frees the slot when the socket closes, and
// a host that died (even by SIGKILL) had its sockets closed by the kernel.
// So a lease of this server whose host is gone has already ended: EndLease
// sends nothing and reports ended (the sweep drops the manifest entry). A
// host that hangs without dying keeps its lease, but then its owner is
// alive and the sweep does not ask.
func (l *Browserless) EndLease(ctx context.Context, info SpawnInfo) (bool, error) {
	if err := otherFleet(l, info); err != nil {
		return false, err
	}
	return true, nil
}

// leaseURL is the websocket URL of one lease, token included.
func (l *Browserless) leaseURL(sessionID string) (string, error) {
	if l.URL == "" {
		return "", errors.New("Browserless.URL is empty")
	}
	u, err := url.Parse(l.URL)
	if err != nil || u.Host == "" {
		return "", errors.New("Browserless.URL is not a URL with a host")
	}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme = "ws"
	case "https", "wss":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("Browserless.URL scheme %q is not ws, wss, http or https", u.Scheme)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/chromium"
	}
	q := u.Query()
	if l.Token != "" {
		q.Set("token", l.Token)
	}
	if l.LeaseTimeout > 0 {
		q.Set("timeout", strconv.FormatInt(l.LeaseTimeout.Milliseconds(), 10))
	}
	if len(l.Args) > 0 {
		b, _ := json.Marshal(map[string]any{"args": l.Args})
		q.Set("launch", string(b))
	}
	if browserlessTracked(sessionID) { // GET /sessions?trackingId= finds exactly this lease
		q.Set("trackingId", sessionID)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// browserlessTracked reports whether a session id can be the lease's
// trackingId (the server takes at most 31 of [0-9a-zA-Z_-]).
func browserlessTracked(sessionID string) bool { return len(sessionID) < 32 && isValidID(sessionID) }

// waitReleased polls GET /sessions until the server no longer lists the
// lease tracked as id, bounded by ctx: the server drops a browser from that
// list in the same step as it frees its slot. The lease itself ended with
// its socket: a server that cannot be reached (it died, and its browsers
// with it), that keeps its list from this client (401, 403, 404: a proxy
// in front of it, another token) or that answers something other than
// the list (another 4xx, a 200 that is not the JSON list: a proxy's page)
// cannot say more, and the lease counts as ended. A 5xx (a server busy
// closing a browser) is asked again.
func (l *Browserless) waitReleased(ctx context.Context, id string) error {
	var last error
	for {
		code, body, err := fleetCall(ctx, nil, http.MethodGet, l.httpURL("/sessions", url.Values{"trackingId": {id}}), l.Header, nil, 10*time.Second)
		var op *net.OpError
		if err != nil && ctx.Err() == nil && errors.As(err, &op) && op.Op == "dial" {
			return nil
		}
		if err == nil && code >= 400 && code < 500 {
			return nil
		}
		if err == nil && code == http.StatusOK {
			var list []struct {
				TrackingID string `json:"trackingId"`
			}
			if json.Unmarshal(body, &list) != nil {
				return nil // not the list: nothing to tell
			}
			listed := false
			for _, s := range list {
				listed = listed || s.TrackingID == id
			}
			if !listed {
				return nil
			}
			last = errors.New("the server still lists it")
		} else if err == nil {
			last = fmt.Errorf("GET /sessions: HTTP %d", code) // e.g. 500 while a browser is closing
		} else {
			last = err
		}
		t := time.NewTimer(25 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("the lease %s on %s was not confirmed ended: %v (%w)", id, fleetEndpoint(l.URL), last, ctx.Err())
		case <-t.C:
		}
	}
}

// httpURL is the URL of the server's HTTP API path (such as /sessions)
// with the token and the extra query values. A URL that reaches the server
// under a prefix (ws://proxy/bl/chromium: the route is its last part) keeps
// the prefix, and a token in the URL's query (browserless's documented
// form, ?token=) is sent when Token is empty.
func (l *Browserless) httpURL(path string, extra url.Values) string {
	u, err := url.Parse(l.URL)
	if err != nil {
		return ""
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	}
	token := cmp.Or(l.Token, u.Query().Get("token"))
	u.Path = browserlessPrefix(u.Path) + path
	u.RawPath = ""
	q := url.Values{}
	for k, v := range extra {
		q[k] = v
	}
	if token != "" {
		q.Set("token", token)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// browserlessPrefix is the part of a Browserless.URL's path before its
// route (/chromium, /chrome or /edge, optionally with /playwright or
// /stealth after it): the whole path when it ends in no route (the server
// at a proxy's /bl), "" for a server at the root.
func browserlessPrefix(p string) string {
	p = strings.TrimSuffix(p, "/")
	route := p
	for _, mode := range []string{"/playwright", "/stealth"} {
		route = strings.TrimSuffix(route, mode)
	}
	for _, r := range []string{"/chromium", "/chrome", "/edge"} {
		if strings.HasSuffix(route, r) {
			return strings.TrimSuffix(route, r)
		}
	}
	return p
}

// dialError maps a failed lease to the package's classes.
func (l *Browserless) dialError(ctx context.Context, id, endpoint string, err error) error {
	var he *HandshakeError
	if errors.As(err, &he) {
		switch he.StatusCode {
		case http.StatusTooManyRequests:
			return fleetFullError(id, endpoint, l.load(ctx), err)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fleetLaunchError(id, endpoint, "the server refused the token", "set Browserless.Token to the server's TOKEN", err)
		case http.StatusBadRequest:
			return fleetLaunchError(id, endpoint, "the server refused the lease request", "check Browserless.Args and LeaseTimeout, and that URL names a route this server has (default /chromium)", err)
		}
	}
	return fleetLaunchError(id, endpoint, "no lease", "check that the server runs and this machine reaches it (GET /pressure on it answers)", err)
}

// load describes how full the server is ("2 running, 0 queued, max 2"),
// or "" when it cannot tell within 300 ms (the
// capacity error stays fast; a loaded server may not answer that soon).
func (l *Browserless) load(ctx context.Context) string {
	code, b, err := fleetCall(context.WithoutCancel(ctx), nil, http.MethodGet, l.httpURL("/pressure", nil), l.Header, nil, 300*time.Millisecond)
	if err != nil || code != http.StatusOK {
		return ""
	}
	var p struct {
		Pressure struct {
			Running       int `json:"running"`
			Queued        int `json:"queued"`
			MaxConcurrent int `json:"maxConcurrent"`
		} `json:"pressure"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return fmt.Sprintf("%d running, %d queued, max %d", p.Pressure.Running, p.Pressure.Queued, p.Pressure.MaxConcurrent)
}

// WaitCleanups implements CleanupWaiter: it waits for the background
// ends of lease requests given up on (Pool.Close calls it).
func (l *Browserless) WaitCleanups() { l.bg.wait() }
