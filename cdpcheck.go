// Room: connectivity checks of browsers the pool did not launch, and the
// words that explain their failures. No locks: the patient handshakes and
// their table live in internal/devtools (a Pool owns one table; the plain
// CheckCDP makes one for its call and closes it), whose doc says why there is
// at most one handshake per browser in flight.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/devtools"
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
	UserAgent       string // the browser's User-Agent header
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
// The check opens the browser's websocket, as Pool.Attach will. CheckCDP
// belongs to no Pool and leaves nothing running: it closes its connection
// before it returns. If the browser holds the handshake (Chrome's "Allow
// remote debugging?" prompt), it returns an ErrCDPPromptPending error when
// ctx ends and withdraws its connection, so a later Pool.Attach asks the
// user again. To check a browser and then attach to it with one prompt, use
// Pool.CheckCDP, whose pending or allowed connection the same Pool's Attach
// reuses. ctx bounds the wait; CDPCheckTimeout bounds it when ctx has no
// earlier deadline.
//
// Errors are *Error values of class ErrCDPRefused, ErrCDPUnreachable,
// ErrCDPNotDevTools, ErrCDPTimeout, ErrCDPPromptPending, ErrCDPRejected, or
// ErrInvalidURL for an endpoint of no accepted form.
func CheckCDP(ctx context.Context, endpoint string) (CDPInfo, error) {
	conns := devtools.NewTable(CDPPromptPatience, CDPParkTimeout)
	defer conns.Close()
	return cdpProbe{conns: conns, oneShot: true}.check(ctx, "CheckCDP", endpoint)
}

// CheckCDP is the package's CheckCDP run by the pool: the same check and
// errors, but the connection it opens belongs to the pool. If the browser
// holds the handshake behind Chrome's "Allow remote debugging?" prompt, the
// handshake goes on after ctx ends (for at most CDPPromptPatience): checking
// again, and the pool's Attach and AttachFor, join it instead of raising a
// second prompt, and once the user allows it the connection is kept (for
// CDPParkTimeout) for the Attach that follows. Pool.Close ends it all.
// A closed pool gives ErrPoolClosed.
func (p *Pool) CheckCDP(ctx context.Context, endpoint string) (CDPInfo, error) {
	const op = "Pool.CheckCDP"
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return CDPInfo{}, newError(op, ErrPoolClosed, "")
	}
	return p.cdp.check(ctx, op, endpoint)
}

// cdpProbe resolves and probes DevTools endpoints. A Pool owns one (its
// connection table ends with the Pool); its lookup is a value, so a test can
// give host names their own addresses without a global hook.
type cdpProbe struct {
	lookup devtools.Lookup // nil means the system resolver
	conns  *devtools.Table
	// oneShot: conns ends when the check returns (the plain CheckCDP), so
	// a pending handshake is withdrawn rather than kept for a retry.
	oneShot bool
}

func (pr cdpProbe) check(ctx context.Context, op, endpoint string) (CDPInfo, error) {
	ep, perr := parseCDPEndpoint(op, endpoint)
	if perr != nil {
		return CDPInfo{}, perr
	}
	ctx, cancel := context.WithTimeout(ctx, CDPCheckTimeout)
	defer cancel()
	info := CDPInfo{Endpoint: ep.HTTPBase(), Host: ep.Host, Port: ep.Port, SessionID: attachedID(ep.Port)}
	tg, err := pr.target(ctx, op, ep)
	if err != nil {
		return info, err
	}
	info.Address = tg.Addr.String()
	h := pr.conns.ForCheck(tg.WSURL)
	select {
	case <-h.Done():
	case <-ctx.Done():
		return info, waitError(tg, op, ctx, pr.oneShot)
	}
	if h.Err != nil {
		return info, dialError(tg, op, h.Err)
	}
	info.Browser, info.ProtocolVersion, info.UserAgent = h.Version.Product, h.Version.ProtocolVersion, h.Version.UserAgent
	return info, nil
}

// attachedID is the id of the shared attached session of a port.
func attachedID(port int) string { return "shared-cdp-" + strconv.Itoa(port) }

// parseCDPEndpoint accepts "9222", ":9222", "host:port", http(s)://host:port
// (any path is ignored) and ws(s)://host:port[/devtools/browser/<id>].
func parseCDPEndpoint(op, raw string) (devtools.Endpoint, *Error) {
	ep, err := devtools.Parse(raw)
	if err == nil {
		return ep, nil
	}
	shown := redactURL(strings.TrimSpace(raw))
	if len(shown) > 80 {
		shown = shown[:80] + "..."
	}
	e := newError(op, ErrInvalidURL, fmt.Sprintf("%q: %s", shown, err.Error()))
	e.Hint = "give the DevTools endpoint as a port (9222), host:port (host.docker.internal:9222), http://host:port, or the browser websocket URL ws://host:port/devtools/browser/<id>"
	return devtools.Endpoint{}, e
}

// target resolves ep's host and, unless ep is a websocket URL, asks
// /json/version for the browser's websocket.
func (pr cdpProbe) target(ctx context.Context, op string, ep devtools.Endpoint) (*devtools.Target, *Error) {
	ip, err := pr.resolve(ctx, op, ep)
	if err != nil {
		return nil, err
	}
	tg := devtools.NewTarget(ep, ip)
	if ep.WSPath != "" {
		return tg, nil
	}
	if _, err := tg.AskVersion(ctx); err != nil {
		return nil, versionError(tg, op, ctx, err)
	}
	return tg, nil
}

// resolve returns the IP of ep's host, preferring IPv4 (Chrome listens on
// 127.0.0.1 by default).
func (pr cdpProbe) resolve(ctx context.Context, op string, ep devtools.Endpoint) (netip.Addr, *Error) {
	ip, err := devtools.Resolve(ctx, pr.lookup, ep)
	if err == nil {
		return ip, nil
	}
	if ce := ctxError(op, ctx); ce != nil {
		ce.Detail = fmt.Sprintf("resolving %s did not finish before the deadline", ep.Host)
		if ce.Class == ErrCDPTimeout {
			ce.Hint = "the DNS server did not answer in time: check the host name, or give the host's IP"
		}
		return netip.Addr{}, ce
	}
	e := newError(op, ErrCDPUnreachable, "cannot resolve "+ep.Host)
	e.Err = err
	e.Hint = unreachableHint(ep)
	return netip.Addr{}, e
}

func unreachableHint(ep devtools.Endpoint) string {
	return fmt.Sprintf("host.docker.internal exists inside Docker Desktop containers (macOS, Windows); on Linux use the host's IP (e.g. 172.17.0.1:%d) or run the container with --add-host=host.docker.internal:host-gateway; outside a container use 127.0.0.1:%d", ep.Port, ep.Port)
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

// versionError explains a failed GET /json/version.
func versionError(tg *devtools.Target, op string, ctx context.Context, err error) *Error {
	ep := tg.Endpoint
	var ce *devtools.ConnError
	var ae *devtools.AnswerError
	var re *devtools.RequestError
	switch {
	case errors.As(err, &ae) && ae.HostRefused:
		e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s answered GET /json/version with HTTP %d: Chrome refuses a Host header that is a name other than localhost", ep.HostPort(), ae.Status))
		e.Hint = "a proxy between here and Chrome rewrites the Host header: connect to Chrome's IP directly"
		return e
	case errors.As(err, &ae):
		e := newError(op, ErrCDPNotDevTools, fmt.Sprintf("%s answered GET /json/version with %s", ep.HostPort(), ae.Answer))
		e.Hint = notDevToolsHint(ep)
		return e
	case errors.As(err, &ce):
		return connError(tg, op, ctx, ce.Err, ce.Connected, "GET /json/version")
	case errors.As(err, &re):
		return newError(op, ErrInvalidURL, re.Err.Error())
	}
	return connError(tg, op, ctx, err, false, "GET /json/version")
}

func notDevToolsHint(ep devtools.Endpoint) string {
	return fmt.Sprintf("another program serves port %d, or it is Chrome 144+ with remote debugging turned on at chrome://inspect/#remote-debugging, which serves no /json/version: pass the browser websocket URL ws://%s<path> instead, with the path from line 2 of the DevToolsActivePort file in Chrome's user data dir; or give the port Chrome was started with via --remote-debugging-port", ep.Port, ep.HostPort())
}

func refusedHint(ep devtools.Endpoint) string {
	return fmt.Sprintf("start Chrome with remote debugging: quit every Chrome window, then run chrome --remote-debugging-port=%d --user-data-dir=<a separate profile dir> (Chrome 136+ ignores the port on the default profile; Chrome 144+ can instead turn it on at chrome://inspect/#remote-debugging); if Chrome already runs with the flag, another process may hold port %d: check with lsof -i :%d", ep.Port, ep.Port, ep.Port)
}

// connError classifies a failure to reach the endpoint or to get its
// answer. connected says whether the TCP connection was made.
func connError(tg *devtools.Target, op string, ctx context.Context, err error, connected bool, what string) *Error {
	ep := tg.Endpoint
	hp := ep.HostPort()
	if ce := ctxError(op, ctx); ce != nil || isTimeout(err) {
		if ce == nil {
			ce = newError(op, ErrCDPTimeout, "")
			ce.Err = context.DeadlineExceeded
		}
		if ce.Class == ErrCDPTimeout {
			if connected {
				ce.Detail = fmt.Sprintf("%s accepted the connection but did not answer %s before the deadline", hp, what)
				ce.Hint = fmt.Sprintf("a process holds port %d without answering (a hung Chrome, or another program): check with lsof -i :%d, restart Chrome with --remote-debugging-port=%d, or retry with a longer deadline", ep.Port, ep.Port, ep.Port)
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
func waitError(tg *devtools.Target, op string, ctx context.Context, withdrawn bool) *Error {
	if ctx.Err() == context.Canceled {
		return ctxError(op, ctx)
	}
	hp := tg.Endpoint.HostPort()
	var detail string
	if tg.Product != "" {
		detail = fmt.Sprintf("%s answered GET /json/version as %s but holds the websocket connection, as Chrome does while its \"Allow remote debugging?\" dialog waits for an answer", hp, tg.Product)
	} else {
		detail = fmt.Sprintf("%s accepted the connection but holds the websocket handshake, as Chrome does while its \"Allow remote debugging?\" dialog waits for an answer", hp)
	}
	e := newError(op, ErrCDPPromptPending, detail)
	e.Hint = "ask the user to click Allow in Chrome's \"Allow remote debugging?\" dialog (bring Chrome to the front if it is hidden), then check again or call Pool.Attach: the connection waiting on the dialog is kept and reused, so a retry never raises a second prompt"
	if withdrawn {
		e.Hint = "ask the user to allow remote debugging, then call Pool.Attach: this check belongs to no pool and withdrew its connection, so Chrome asks again; check with Pool.CheckCDP instead to keep the connection waiting on the dialog for the pool's Attach, so the user is asked once"
	}
	return e
}

// dialError classifies a handshake (or first call) that failed.
func dialError(tg *devtools.Target, op string, err error) *Error {
	ep := tg.Endpoint
	hp := ep.HostPort()
	var re *rpcc.ResponseError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		e := newError(op, ErrCDPRefused, "nothing listens on "+hp)
		e.Hint = refusedHint(ep)
		return e
	case errors.Is(err, devtools.ErrPatienceOver):
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

func rejectedHint(ep devtools.Endpoint) string {
	return fmt.Sprintf("if Chrome asked \"Allow remote debugging?\", the answer was no: check again and ask the user to click Allow; a ws:// URL from an earlier run is stale once Chrome restarts: read the current one from DevToolsActivePort, or give http://%s if Chrome was started with --remote-debugging-port", ep.HostPort())
}
