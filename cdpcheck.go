// Room: connectivity checks and the patient websocket handshakes to browsers
// the pool did not launch. cdpConns.mu guards the table of handshakes under
// way, connections parked for a later Pool.Attach and connections in use; it
// is never held across a lookup, a dial, a CDP call or a close.
//
// Chrome 144+ may ask its user "Allow remote debugging?" for every new
// websocket connection, and holds the handshake until the user answers. A
// client that gives up and retries opens a second connection, which raises a
// second prompt: one approval turns into an endless loop. So the package
// keeps at most one handshake per browser in flight, process-wide: it waits
// for the user with no handshake timeout (bounded by CDPPromptPatience), every
// CheckCDP and Pool.Attach for that browser joins it, and a connection the
// user allowed is kept (parked, up to CDPParkTimeout) for the Pool.Attach that
// follows instead of being closed and opened again.

package browserpool

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/browser"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

// Bounds of the connectivity check and of the handshakes to a browser the
// user runs.
const (
	// CDPCheckTimeout bounds CheckCDP, and the HTTP probe of Pool.Attach,
	// when the caller's context has no earlier deadline.
	CDPCheckTimeout = 10 * time.Second
	// CDPPromptPatience bounds one websocket handshake to a browser the
	// user runs: how long the package waits for the user to answer
	// Chrome's "Allow remote debugging?" prompt. Callers stop waiting
	// earlier (their context ends); the handshake goes on.
	CDPPromptPatience = 5 * time.Minute
	// CDPParkTimeout is how long a connection the browser accepted stays
	// open, unclaimed, for the Pool.Attach that follows a CheckCDP (or an
	// Attach whose caller stopped waiting), before it is closed.
	CDPParkTimeout = 2 * time.Minute
)

// Classes of the errors CheckCDP and Pool.Attach return when a browser the
// user runs cannot be reached. Each error's hint says what to do.
var (
	// ErrCDPRefused: nothing accepts connections at the endpoint's port
	// (Chrome is not running with remote debugging, or on another port).
	ErrCDPRefused = errors.New("connection refused")
	// ErrCDPUnreachable: the endpoint's host name does not resolve, or no
	// route leads to the host.
	ErrCDPUnreachable = errors.New("host unreachable")
	// ErrCDPNotDevTools: something answers at the endpoint, but not as
	// Chrome's DevTools (another program, or a Chrome 144+ that serves no
	// HTTP discovery and needs its ws:// URL).
	ErrCDPNotDevTools = errors.New("not a DevTools endpoint")
	// ErrCDPTimeout: the endpoint did not answer before the deadline (the
	// caller's context, CDPCheckTimeout or CDPPromptPatience). The error
	// also matches context.DeadlineExceeded.
	ErrCDPTimeout = errors.New("DevTools endpoint did not answer")
	// ErrCDPPromptPending: the browser holds the websocket handshake, as
	// Chrome 144+ does until its user answers "Allow remote debugging?".
	// The handshake goes on: checking or attaching again joins it and never
	// raises a second prompt.
	ErrCDPPromptPending = errors.New("waiting for the user to allow remote debugging")
	// ErrCDPRejected: the browser refused or dropped the websocket
	// connection (the user declined the prompt, or a ws:// URL is stale).
	ErrCDPRejected = errors.New("DevTools connection rejected")
)

// CDPInfo describes a DevTools endpoint that answered CheckCDP.
type CDPInfo struct {
	Endpoint        string // the endpoint as http://host:port, the host as given
	Host            string // the host as given: a name or an IP
	Port            int    // the DevTools port
	Address         string // the address connected to (the host resolved), ip:port
	Browser         string // the browser's product, e.g. "Chrome/156.0.8078.108"
	ProtocolVersion string // e.g. "1.3"
	UserAgent       string
	SessionID       string // the id Pool.Attach gives its session: shared-cdp-<port>
}

// CheckCDP checks that a browser the user runs with remote debugging answers
// at endpoint, and says in words a user can act on why not. endpoint is a
// port ("9222", meaning 127.0.0.1), host:port ("host.docker.internal:9222"),
// http://host:port, or a browser websocket URL
// (ws://host:port/devtools/browser/<id>, as Chrome 144+ writes to
// DevToolsActivePort when remote debugging is turned on at
// chrome://inspect/#remote-debugging, which serves no HTTP discovery).
//
// A host name is resolved here and the browser is reached at its IP, because
// Chrome refuses HTTP and websocket requests whose Host header is a name
// other than localhost.
//
// The check opens the browser's websocket, as Pool.Attach will. If the
// browser holds the handshake (Chrome's "Allow remote debugging?" prompt),
// CheckCDP returns an ErrCDPPromptPending error when ctx ends, and the
// handshake goes on: a later CheckCDP or Pool.Attach joins it, and once the
// user allows it the connection is kept for Pool.Attach, so checking never
// raises a second prompt. ctx bounds the wait; CDPCheckTimeout bounds it when
// ctx has no earlier deadline.
//
// Errors are *Error values of class ErrCDPRefused, ErrCDPUnreachable,
// ErrCDPNotDevTools, ErrCDPTimeout, ErrCDPPromptPending, ErrCDPRejected, or
// ErrInvalidURL for an endpoint of no accepted form.
func CheckCDP(ctx context.Context, endpoint string) (CDPInfo, error) {
	return defaultCDPProbe.check(ctx, endpoint)
}

// cdpProbe resolves and probes DevTools endpoints. Its lookup is a value, so
// a test can give host names their own addresses without a global hook.
type cdpProbe struct {
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var defaultCDPProbe = cdpProbe{lookup: net.DefaultResolver.LookupNetIP}

func (pr cdpProbe) check(ctx context.Context, endpoint string) (CDPInfo, error) {
	const op = "CheckCDP"
	ep, perr := parseCDPEndpoint(op, endpoint)
	if perr != nil {
		return CDPInfo{}, perr
	}
	ctx, cancel := context.WithTimeout(ctx, CDPCheckTimeout)
	defer cancel()
	info := CDPInfo{Endpoint: ep.httpBase(), Host: ep.host, Port: ep.port, SessionID: attachedID(ep.port)}
	tg, err := pr.target(ctx, op, ep)
	if err != nil {
		return info, err
	}
	info.Address = tg.addr.String()
	d := cdpConns.forCheck(tg.wsURL)
	select {
	case <-d.done:
	case <-ctx.Done():
		return info, tg.waitError(op, ctx)
	}
	if d.err != nil {
		return info, tg.dialError(op, d.err)
	}
	info.Browser, info.ProtocolVersion, info.UserAgent = d.version.Product, d.version.ProtocolVersion, d.version.UserAgent
	return info, nil
}

// cdpEndpoint is a parsed DevTools endpoint.
type cdpEndpoint struct {
	host   string // as given, without brackets
	port   int
	secure bool   // https or wss
	wsPath string // "/devtools/browser/<id>" when a browser websocket URL was given
}

func (ep cdpEndpoint) hostPort() string { return net.JoinHostPort(ep.host, strconv.Itoa(ep.port)) }

func (ep cdpEndpoint) httpBase() string {
	if ep.secure {
		return "https://" + ep.hostPort()
	}
	return "http://" + ep.hostPort()
}

// attachedID is the id of the shared attached session of a port.
func attachedID(port int) string { return "shared-cdp-" + strconv.Itoa(port) }

// parseCDPEndpoint accepts "9222", ":9222", "host:port", http(s)://host:port
// (any path is ignored) and ws(s)://host:port[/devtools/browser/<id>].
func parseCDPEndpoint(op, raw string) (cdpEndpoint, *Error) {
	s := strings.TrimSpace(raw)
	bad := func(why string) (cdpEndpoint, *Error) {
		shown := redactURL(s)
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		e := newError(op, ErrInvalidURL, fmt.Sprintf("%q: %s", shown, why))
		e.Hint = "give the DevTools endpoint as a port (9222), host:port (host.docker.internal:9222), http://host:port, or the browser websocket URL ws://host:port/devtools/browser/<id>"
		return cdpEndpoint{}, e
	}
	var ep cdpEndpoint
	var portStr string
	switch {
	case s == "":
		return bad("the endpoint is empty")
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return bad("the URL is malformed")
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
		case "https", "wss":
			ep.secure = true
		default:
			return bad(fmt.Sprintf("scheme %q is not a DevTools scheme", strings.ToLower(u.Scheme)))
		}
		if u.User != nil {
			return bad("credentials in the URL are not allowed")
		}
		ep.host, portStr = u.Hostname(), u.Port()
		scheme := strings.ToLower(u.Scheme)
		if scheme == "ws" || scheme == "wss" {
			switch p := strings.TrimRight(u.Path, "/"); {
			case strings.HasPrefix(p, "/devtools/browser/") && len(p) > len("/devtools/browser/"):
				ep.wsPath = p
			case p == "":
			default:
				return bad("a websocket endpoint must be the browser's (/devtools/browser/<id>), not a page's")
			}
		}
	default:
		if p, ok := strings.CutPrefix(s, ":"); ok {
			s = p
		}
		if _, err := strconv.Atoi(s); err == nil {
			ep.host, portStr = "127.0.0.1", s
			break
		}
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return bad("expected a port, host:port or a URL")
		}
		ep.host, portStr = h, p
	}
	if ep.host == "" {
		return bad("the endpoint has no host")
	}
	if portStr == "" {
		return bad("the endpoint has no port (DevTools has no default port; Chrome's documentation uses 9222)")
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return bad(fmt.Sprintf("port %q is not a number from 1 to 65535", portStr))
	}
	ep.port = port
	return ep, nil
}

// cdpTarget is an endpoint resolved and probed: where its browser
// websocket is.
type cdpTarget struct {
	ep      cdpEndpoint
	addr    netip.AddrPort
	wsURL   string // the browser websocket, its host the resolved address
	product string // from GET /json/version; "" for a ws:// endpoint
}

// target resolves ep's host and, unless ep is a websocket URL, asks
// /json/version for the browser's websocket.
func (pr cdpProbe) target(ctx context.Context, op string, ep cdpEndpoint) (*cdpTarget, *Error) {
	ip, err := pr.resolve(ctx, op, ep)
	if err != nil {
		return nil, err
	}
	tg := &cdpTarget{ep: ep, addr: netip.AddrPortFrom(ip, uint16(ep.port))}
	if ep.wsPath != "" {
		tg.wsURL = tg.wsBase() + ep.wsPath
		return tg, nil
	}
	v, err := tg.askVersion(ctx, op)
	if err != nil {
		return nil, err
	}
	tg.product = v.Browser
	tg.wsURL = tg.wsBase() + v.path
	return tg, nil
}

// dialHost is the host:port to connect to: the resolved address, because
// Chrome refuses a Host header that names anything but an IP or localhost;
// for https and wss (a TLS proxy in front of the browser, whose certificate
// names the host) the host as given.
func (tg *cdpTarget) dialHost() string {
	if tg.ep.secure {
		return tg.ep.hostPort()
	}
	return tg.addr.String()
}

func (tg *cdpTarget) wsBase() string {
	if tg.ep.secure {
		return "wss://" + tg.dialHost()
	}
	return "ws://" + tg.dialHost()
}

// resolve returns the IP of ep's host, preferring IPv4 (Chrome listens on
// 127.0.0.1 by default).
func (pr cdpProbe) resolve(ctx context.Context, op string, ep cdpEndpoint) (netip.Addr, *Error) {
	if ip, err := netip.ParseAddr(ep.host); err == nil {
		return ip.Unmap(), nil
	}
	ips, err := pr.lookup(ctx, "ip", ep.host)
	if err == nil && len(ips) == 0 {
		err = &net.DNSError{Err: "no such host", Name: ep.host, IsNotFound: true}
	}
	if err != nil {
		if ce := ctxError(op, ctx); ce != nil {
			ce.Detail = fmt.Sprintf("resolving %s did not finish before the deadline", ep.host)
			if ce.Class == ErrCDPTimeout {
				ce.Hint = "the DNS server did not answer in time: check the host name, or give the host's IP"
			}
			return netip.Addr{}, ce
		}
		e := newError(op, ErrCDPUnreachable, "cannot resolve "+ep.host)
		e.Err = err
		e.Hint = unreachableHint(ep)
		return netip.Addr{}, e
	}
	best := ips[0]
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			best = ip
			break
		}
	}
	return best.Unmap(), nil
}

func unreachableHint(ep cdpEndpoint) string {
	return fmt.Sprintf("host.docker.internal exists inside Docker Desktop containers (macOS, Windows); on Linux use the host's IP (e.g. 172.17.0.1:%d) or run the container with --add-host=host.docker.internal:host-gateway; outside a container use 127.0.0.1:%d", ep.port, ep.port)
}

// ctxError returns the error for a ctx that has ended (nil if it has not):
// class ErrCDPTimeout for a deadline, context.Canceled when the caller gave
// up. Callers fill in Detail.
func ctxError(op string, ctx context.Context) *Error {
	switch ctx.Err() {
	case nil:
		return nil
	case context.DeadlineExceeded:
		e := newError(op, ErrCDPTimeout, "")
		e.Err = context.DeadlineExceeded
		return e
	default:
		e := newError(op, context.Canceled, "")
		e.Hint = "the caller stopped waiting; check again when ready"
		return e
	}
}

type jsonVersion struct {
	Browser      string `json:"Browser"`
	Protocol     string `json:"Protocol-Version"`
	UserAgent    string `json:"User-Agent"`
	WebSocketURL string `json:"webSocketDebuggerUrl"`
	path         string // the websocket URL's path
}

// askVersion asks GET /json/version.
func (tg *cdpTarget) askVersion(ctx context.Context, op string) (*jsonVersion, *Error) {
	ep := tg.ep
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	tr := &http.Transport{
		Proxy:             nil, // the endpoint is local or on the host's network: never through a proxy
		DialContext:       (&net.Dialer{}).DialContext,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{ServerName: ep.host},
	}
	defer tr.CloseIdleConnections()
	scheme := "http://"
	if ep.secure {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, scheme+tg.dialHost()+"/json/version", nil)
	if err != nil {
		e := newError(op, ErrInvalidURL, err.Error())
		return nil, e
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return nil, tg.connError(op, ctx, err, connected.Load(), "GET /json/version")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, tg.connError(op, ctx, err, true, "GET /json/version")
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	notDevTools := func(detail string) (*jsonVersion, *Error) {
		e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s answered GET /json/version with %s", ep.hostPort(), detail))
		e.Hint = notDevToolsHint(ep)
		return nil, e
	}
	if resp.StatusCode != http.StatusOK {
		if strings.Contains(string(body), "Host header is specified and is not an IP address or localhost") {
			e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s answered GET /json/version with HTTP %d: Chrome refuses a Host header that is a name other than localhost", ep.hostPort(), resp.StatusCode))
			e.Hint = "a proxy between here and Chrome rewrites the Host header: connect to Chrome's IP directly"
			return nil, e
		}
		shown := "no content type"
		if media != "" {
			shown = media
		}
		return notDevTools(fmt.Sprintf("HTTP %d (%s)", resp.StatusCode, shown))
	}
	v := new(jsonVersion)
	if err := json.Unmarshal(body, v); err != nil {
		if media == "text/html" {
			return notDevTools("an HTML page, not DevTools JSON")
		}
		return notDevTools(fmt.Sprintf("something that is not JSON (%s)", media))
	}
	u, err := url.Parse(v.WebSocketURL)
	if v.WebSocketURL == "" || err != nil || !strings.HasPrefix(u.Path, "/devtools/browser/") {
		return notDevTools("JSON without the browser's webSocketDebuggerUrl")
	}
	v.path = u.Path
	return v, nil
}

func notDevToolsHint(ep cdpEndpoint) string {
	return fmt.Sprintf("another program serves port %d, or it is Chrome 144+ with remote debugging turned on at chrome://inspect/#remote-debugging, which serves no /json/version: pass the browser websocket URL ws://%s<path> instead, with the path from line 2 of the DevToolsActivePort file in Chrome's user data dir; or give the port Chrome was started with via --remote-debugging-port", ep.port, ep.hostPort())
}

func refusedHint(ep cdpEndpoint) string {
	return fmt.Sprintf("start Chrome with remote debugging: quit every Chrome window, then run chrome --remote-debugging-port=%d --user-data-dir=<a separate profile dir> (Chrome 136+ ignores the port on the default profile; Chrome 144+ can instead turn it on at chrome://inspect/#remote-debugging); if Chrome already runs with the flag, another process may hold port %d: check with lsof -i :%d", ep.port, ep.port, ep.port)
}

// connError classifies a failure to reach the endpoint or to get its
// answer. connected says whether the TCP connection was made.
func (tg *cdpTarget) connError(op string, ctx context.Context, err error, connected bool, what string) *Error {
	ep := tg.ep
	hp := ep.hostPort()
	if ce := ctxError(op, ctx); ce != nil || isTimeout(err) {
		if ce == nil {
			ce = newError(op, ErrCDPTimeout, "")
			ce.Err = context.DeadlineExceeded
		}
		if ce.Class == ErrCDPTimeout {
			if connected {
				ce.Detail = fmt.Sprintf("%s accepted the connection but did not answer %s before the deadline", hp, what)
				ce.Hint = fmt.Sprintf("a process holds port %d without answering (a hung Chrome, or another program): check with lsof -i :%d, restart Chrome with --remote-debugging-port=%d, or retry with a longer deadline", ep.port, ep.port, ep.port)
			} else {
				ce.Detail = fmt.Sprintf("connecting to %s did not finish before the deadline", hp)
				ce.Hint = fmt.Sprintf("a firewall may drop the packets or the host is wrong: %s", unreachableHint(ep))
			}
		}
		return ce
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e := newError(op, ErrCDPRefused, "nothing listens on "+hp)
		e.Hint = refusedHint(ep)
		return e
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		e := newError(op, ErrCDPUnreachable, "no route to "+hp)
		e.Hint = unreachableHint(ep)
		return e
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s accepted the connection and closed it without answering %s", hp, what))
		e.Hint = notDevToolsHint(ep)
		return e
	}
	e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s did not answer %s as DevTools", hp, what))
	e.Err = err
	e.Hint = notDevToolsHint(ep)
	return e
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// waitError is the error for a caller whose ctx ended while the browser's
// websocket handshake was still under way.
func (tg *cdpTarget) waitError(op string, ctx context.Context) *Error {
	if ctx.Err() == context.Canceled {
		return ctxError(op, ctx)
	}
	hp := tg.ep.hostPort()
	var detail string
	if tg.product != "" {
		detail = fmt.Sprintf("%s answered GET /json/version as %s but holds the websocket connection, as Chrome does while its \"Allow remote debugging?\" dialog waits for an answer", hp, tg.product)
	} else {
		detail = fmt.Sprintf("%s accepted the connection but holds the websocket handshake, as Chrome does while its \"Allow remote debugging?\" dialog waits for an answer", hp)
	}
	e := newError(op, ErrCDPPromptPending, detail)
	e.Hint = "ask the user to click Allow in Chrome's \"Allow remote debugging?\" dialog (bring Chrome to the front if it is hidden), then check again or call Pool.Attach: the connection waiting on the dialog is kept and reused, so a retry never raises a second prompt"
	return e
}

// dialError classifies a handshake (or first call) that failed.
func (tg *cdpTarget) dialError(op string, err error) *Error {
	ep := tg.ep
	hp := ep.hostPort()
	var re *rpcc.ResponseError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e := newError(op, ErrCDPRefused, "nothing listens on "+hp+" any more")
		e.Hint = refusedHint(ep)
		return e
	case errors.Is(err, errPatienceOver):
		e := newError(op, ErrCDPTimeout, fmt.Sprintf("%s held the websocket connection for %v and nobody allowed it", hp, CDPPromptPatience))
		e.Err = context.DeadlineExceeded
		e.Hint = "check again and ask the user to click Allow in Chrome's \"Allow remote debugging?\" dialog while it is shown"
		return e
	case errors.As(err, &re):
		e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s accepted the websocket but did not answer Browser.getVersion", hp))
		e.Err = err
		e.Hint = notDevToolsHint(ep)
		return e
	case errors.Is(err, websocket.ErrBadHandshake):
		e := newError(op, ErrCDPRejected, fmt.Sprintf("%s refused the websocket upgrade to the browser", hp))
		e.Hint = rejectedHint(ep)
		return e
	}
	e := newError(op, ErrCDPRejected, fmt.Sprintf("%s closed the websocket connection", hp))
	e.Err = err
	e.Hint = rejectedHint(ep)
	return e
}

func rejectedHint(ep cdpEndpoint) string {
	return fmt.Sprintf("if Chrome asked \"Allow remote debugging?\", the answer was no: check again and ask the user to click Allow; a ws:// URL from an earlier run is stale once Chrome restarts: read the current one from DevToolsActivePort, or give http://%s if Chrome was started with --remote-debugging-port", ep.hostPort())
}

// errPatienceOver ends a handshake nobody answered within CDPPromptPatience.
var errPatienceOver = errors.New("websocket handshake: patience ran out")

// cdpConns is the process-wide table of connections to browsers the user
// runs, by browser websocket URL (its host the resolved address).
var cdpConns = &connTable{pending: map[string]*wsDial{}, inUse: map[string]*wsDial{}}

type connTable struct {
	mu      sync.Mutex
	pending map[string]*wsDial // guarded by mu; handshakes under way and parked connections
	inUse   map[string]*wsDial // guarded by mu; connections claimed by an attached session
}

// wsDial is one patient handshake: its connection, once made, is a mux with
// the browser's version asked. Fields before claimed are set by run before
// done is closed and read-only after.
type wsDial struct {
	url  string
	done chan struct{}

	m       *cdpmux.Mux
	version *browser.GetVersionReply
	err     error

	claimed bool        // guarded by connTable.mu; owned by a session, or expired
	park    *time.Timer // guarded by connTable.mu; closes a parked connection
}

func (d *wsDial) alive() bool {
	select {
	case <-d.done:
	default:
		return true // still dialing
	}
	if d.err != nil {
		return false
	}
	select {
	case <-d.m.Done():
		return false
	default:
		return true
	}
}

// forCheck returns the connection CheckCDP reports on: one in use by an
// attached session, else the pending or parked one, else a new handshake.
func (ct *connTable) forCheck(url string) *wsDial {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if d := ct.inUse[url]; d != nil && d.alive() {
		return d
	}
	return ct.pendingLocked(url)
}

// forAttach returns the pending or parked connection to url, starting a new
// handshake if there is none.
func (ct *connTable) forAttach(url string) *wsDial {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.pendingLocked(url)
}

func (ct *connTable) pendingLocked(url string) *wsDial {
	if d := ct.pending[url]; d != nil && d.alive() {
		return d
	}
	d := &wsDial{url: url, done: make(chan struct{})}
	ct.pending[url] = d
	go ct.run(d)
	return d
}

// run makes d's connection: a websocket handshake with no timeout of its own
// (the user may be looking at a prompt), bounded by CDPPromptPatience, then
// Browser.getVersion. The goroutine ends when the browser answers or fails,
// or the patience runs out.
func (ct *connTable) run(d *wsDial) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), CDPPromptPatience, errPatienceOver)
	defer cancel()
	t, err := cdpmux.DialWebSocket(ctx, d.url)
	if err != nil && ctx.Err() != nil {
		err = errPatienceOver
	}
	var m *cdpmux.Mux
	var v *browser.GetVersionReply
	if err == nil {
		m, err = cdpmux.New(t, cdpmux.Options{})
	}
	if err == nil {
		if v, err = cdp.NewClient(m.Browser()).Browser.GetVersion(ctx); err != nil {
			m.Close()
			m = nil
			if ctx.Err() != nil {
				err = errPatienceOver
			}
		}
	}
	ct.mu.Lock()
	d.m, d.version, d.err = m, v, err
	if err != nil {
		if ct.pending[d.url] == d {
			delete(ct.pending, d.url)
		}
	} else if !d.claimed {
		d.park = time.AfterFunc(CDPParkTimeout, func() { ct.expire(d) })
	}
	ct.mu.Unlock()
	close(d.done)
}

// claim makes d's connection the caller's; false if it failed, died or
// someone else has it. d must be done.
func (ct *connTable) claim(d *wsDial) bool {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if d.claimed || !d.alive() {
		return false
	}
	d.claimed = true
	if d.park != nil {
		d.park.Stop()
	}
	if ct.pending[d.url] == d {
		delete(ct.pending, d.url)
	}
	ct.inUse[d.url] = d
	return true
}

// release forgets a claimed connection; its owner closes it.
func (ct *connTable) release(d *wsDial) {
	ct.mu.Lock()
	if ct.inUse[d.url] == d {
		delete(ct.inUse, d.url)
	}
	ct.mu.Unlock()
}

// expire closes a parked connection nobody claimed.
func (ct *connTable) expire(d *wsDial) {
	ct.mu.Lock()
	if d.claimed {
		ct.mu.Unlock()
		return
	}
	d.claimed = true
	if ct.pending[d.url] == d {
		delete(ct.pending, d.url)
	}
	ct.mu.Unlock()
	d.m.Close()
}
