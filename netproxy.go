// Room: the network policy's proxy, one per Pool (see netpolicy.go for
// why). netProxy.mu guards the open-connection set and the refusal log;
// no network I/O is done with it held.

package browserpool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mafredri/cdp/protocol/page"
)

// refusalLogSize bounds the proxy's log of recent refusals, which
// Tab.Navigate reads to name the rule that refused its page.
const refusalLogSize = 64

// idempotent are the methods a request may be repeated with.
var idempotent = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true, http.MethodTrace: true}

// lookupTimeout bounds the proxy's name lookup of one host.
const lookupTimeout = 10 * time.Second

// netRefusal is one refused or failed request.
type netRefusal struct {
	at     time.Time
	host   string
	rule   string // the policy rule that refused it, or ""
	netErr string // or the browser-style error the proxy met (net::ERR_NAME_NOT_RESOLVED, ...)
}

// netProxy is the pool's policy proxy on 127.0.0.1.
type netProxy struct {
	policy *netPolicy
	ln     *loopbackListener
	log    *slog.Logger
	lookup atomic.Pointer[lookupFunc] // nil: the system resolver (tests replace it)
	ctx    context.Context            // ends when the proxy closes
	cancel context.CancelFunc
	wg     sync.WaitGroup // the accept loop and every connection's goroutines

	mu       sync.Mutex
	conns    map[net.Conn]bool // guarded by mu; open connections, closed by close
	refusals []netRefusal      // guarded by mu; the last refusalLogSize refusals
	closed   bool              // guarded by mu
}

func startNetProxy(policy *netPolicy, log *slog.Logger) (*netProxy, error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	x := &netProxy{policy: policy, ln: ln, log: log, ctx: ctx, cancel: cancel, conns: make(map[net.Conn]bool)}
	x.wg.Add(1)
	go x.serve()
	return x, nil
}

// addr is the proxy's host:port.
func (x *netProxy) addr() string { return x.ln.addr() }

// close stops the proxy: its listener, every open connection, and waits
// for their goroutines.
func (x *netProxy) close() {
	if x == nil {
		return
	}
	x.mu.Lock()
	x.closed = true
	conns := make([]net.Conn, 0, len(x.conns))
	for c := range x.conns {
		conns = append(conns, c)
	}
	x.mu.Unlock()
	x.cancel()
	x.ln.close()
	for _, c := range conns {
		c.Close()
	}
	x.wg.Wait()
}

func (x *netProxy) track(c net.Conn, on bool) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if on && x.closed {
		return false
	}
	if on {
		x.conns[c] = true
	} else {
		delete(x.conns, c)
	}
	return true
}

func (x *netProxy) serve() {
	defer x.wg.Done()
	for {
		c, err := x.ln.accept()
		if err != nil {
			return
		}
		if !x.track(c, true) {
			c.Close()
			return
		}
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			defer x.track(c, false)
			defer c.Close()
			x.handle(c)
		}()
	}
}

func (x *netProxy) decide(host string) (netVerdict, error) {
	lookup := systemLookup
	if f := x.lookup.Load(); f != nil {
		lookup = *f
	}
	// The lookup's deadline is made only for a name: an IP literal (most
	// requests of a local test site) needs no timer.
	timed := func(ctx context.Context, host string) ([]netip.Addr, error) {
		ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
		defer cancel()
		return lookup(ctx, host)
	}
	v, err := x.policy.decide(x.ctx, timed, host)
	switch {
	case err != nil:
		x.note(host, "", "net::ERR_NAME_NOT_RESOLVED")
	case v.rule != "":
		x.note(host, v.rule, "")
		x.log.Info("browserpool: network policy refused a host", "host", host, "rule", v.rule)
	}
	return v, err
}

// note logs a refusal or failure for Tab.Navigate to explain.
func (x *netProxy) note(host, rule, netErr string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.refusals) == refusalLogSize {
		x.refusals = x.refusals[1:]
	}
	x.refusals = append(x.refusals, netRefusal{at: time.Now(), host: normHost(host), rule: rule, netErr: netErr})
}

// dialErrText names a dial failure the way the browser would.
func dialErrText(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "net::ERR_CONNECTION_REFUSED"
	case errors.As(err, &ne) && ne.Timeout():
		return "net::ERR_CONNECTION_TIMED_OUT"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "net::ERR_ADDRESS_UNREACHABLE"
	}
	return "net::ERR_CONNECTION_FAILED"
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// handle serves one browser connection: CONNECT tunnels, or a keep-alive
// series of absolute-form plain http requests, each decided on its own.
func (x *netProxy) handle(c net.Conn) {
	in := &headCap{r: c}
	br := bufio.NewReader(in)
	out := &relayOut{c: c}
	sites := siteConns{x: x}
	defer sites.closeAll()
	for {
		in.left = proxyHeadLimit
		req, err := http.ReadRequest(br)
		if err != nil {
			if in.left <= 0 {
				// As net/http's server answers; the connection ends.
				io.WriteString(c, "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}
			return
		}
		in.left = math.MaxInt64 // the body, or a tunnel's bytes
		if req.Method == http.MethodConnect {
			x.tunnel(c, br, req)
			return
		}
		if !x.forward(out, &sites, req) {
			return
		}
	}
}

// proxyHeadLimit bounds what the proxy reads of a request before its
// body: its line and headers, with the slack net/http's server allows
// over http.DefaultMaxHeaderBytes. Without it a client of the proxy (any
// local process can connect to it) could make it hold headers without end.
const proxyHeadLimit = http.DefaultMaxHeaderBytes + 4096

// headCap reads from r while left allows; then it reads as at the end of
// the stream. handle sets left before each request and lifts it after.
type headCap struct {
	r    io.Reader
	left int64 // read only by the connection's goroutine
}

func (h *headCap) Read(p []byte) (int, error) {
	if h.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= int64(n)
	return n, err
}

func (x *netProxy) tunnel(c net.Conn, br *bufio.Reader, req *http.Request) {
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
		return
	}
	v, err := x.decide(host)
	switch {
	case err != nil:
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nX-Browserpool-Error: %s\r\n\r\n", headerSafe(err.Error()))
		return
	case v.rule != "":
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nX-Browserpool-Blocked: %s\r\n\r\n", headerSafe(v.rule))
		return
	}
	up, err := x.dialAddrs(v.addrs, port)
	if err != nil {
		x.note(host, "", dialErrText(err))
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	if !x.track(up, true) {
		up.Close()
		return
	}
	defer x.track(up, false)
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		defer close(done)
		io.Copy(up, br) // browser to site
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	io.Copy(c, up) // site to browser
	c.Close()
	<-done
}

// forward relays one plain http request to the browser through w, over
// a connection to the site that sites keeps for the browser connection's
// next request to it; false ends the browser connection.
func (x *netProxy) forward(w *relayOut, sites *siteConns, req *http.Request) bool {
	c := w.c
	if req.URL == nil || req.URL.Host == "" {
		writeProxyPage(c, http.StatusBadRequest, "browserpool: the policy proxy only relays absolute http:// URLs")
		return false
	}
	host := req.URL.Hostname()
	v, err := x.decide(host)
	switch {
	case err != nil:
		return false // no answer: the request fails in the browser, as a failed lookup would
	case v.rule != "":
		drain(req)
		writeProxyPage(c, http.StatusForbidden, "browserpool: "+host+" is blocked by the network policy: "+v.rule)
		return true
	}
	port := req.URL.Port()
	if port == "" {
		port = "80"
	}
	req.RequestURI = ""
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	// A request that is safe to repeat (no body, an idempotent method, as
	// net/http's Transport decides) is sent again, once, on a new
	// connection when a kept one turns out closed by the site; any other
	// request first checks the kept connection.
	replayable := (req.Body == nil || req.Body == http.NoBody) && idempotent[req.Method]
	key := normHost(host) + " " + port
	for attempt := 0; ; attempt++ {
		sc, kept, err := sites.get(key, v.addrs, port, !replayable)
		if err != nil {
			// No answer: the request fails in the browser as a failed
			// connect would; Tab.Navigate names the cause from the log.
			x.note(host, "", dialErrText(err))
			return false
		}
		resp, err := sc.roundTrip(req, w)
		if err != nil {
			sites.drop(sc)
			if kept && replayable && attempt == 0 {
				continue
			}
			x.note(host, "", dialErrText(err))
			return false
		}
		if resp.Body != http.NoBody {
			resp.Body = relayBody{resp.Body, w}
		}
		err = resp.Write(w)
		resp.Body.Close()
		if err != nil || w.flush() != nil {
			sites.drop(sc)
			return false
		}
		if req.Close || resp.Close {
			sites.drop(sc)
		}
		return !req.Close && !resp.Close
	}
}

// relayFlushAt is the most a relayOut holds: the size of its buffer,
// made at its first response.
const relayFlushAt = 16 << 10

// relayOut is what forward writes a response to the browser through:
// Response.Write to a bare connection makes a system call for each piece
// of each header line (four per header). relayOut holds what it is given
// and sends it in one write before each read of the site's body
// (relayBody), when the next piece would not fit, and at the end: a small
// response goes out in two writes, and a body the site streams
// (server-sent events, a slow download) still reaches the browser as it
// arrives. It has no ReadFrom method, so that io.Copy reads the body
// through relayBody. One per browser connection, used by one goroutine.
type relayOut struct {
	c   net.Conn
	buf []byte // what is held; its capacity is relayFlushAt once made
	err error  // the first write error; every later write returns it
}

// Write holds p (see relayHold).
func (o *relayOut) Write(p []byte) (int, error) { return relayHold(o, p) }

// WriteString holds s (see relayHold): Response.Write's header writer
// uses it rather than copying each piece into a slice of its own.
func (o *relayOut) WriteString(s string) (int, error) { return relayHold(o, s) }

// relayHold appends p to what o holds, sending that first if p would not
// fit; a p of relayFlushAt bytes or more then goes on its own, uncopied
// when it is a slice.
func relayHold[T string | []byte](o *relayOut, p T) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if len(o.buf)+len(p) > relayFlushAt {
		if err := o.flush(); err != nil {
			return 0, err
		}
		if len(p) >= relayFlushAt {
			n, err := o.c.Write([]byte(p))
			if err != nil {
				o.err = err
			}
			return n, err
		}
	}
	if o.buf == nil {
		o.buf = make([]byte, 0, relayFlushAt)
	}
	o.buf = append(o.buf, p...)
	return len(p), nil
}

// flush sends what o holds.
func (o *relayOut) flush() error {
	if o.err != nil || len(o.buf) == 0 {
		return o.err
	}
	_, o.err = o.c.Write(o.buf)
	o.buf = o.buf[:0]
	return o.err
}

// relayBody is the site's response body, read by Response.Write: each
// read first sends what the relayOut holds, which may be the last the
// site sent before it paused.
type relayBody struct {
	io.ReadCloser
	out *relayOut
}

// Read sends what the relayOut holds, then reads the site's body.
func (b relayBody) Read(p []byte) (int, error) {
	if err := b.out.flush(); err != nil {
		return 0, err
	}
	return b.ReadCloser.Read(p)
}

func drain(req *http.Request) {
	if req.Body != nil {
		io.Copy(io.Discard, io.LimitReader(req.Body, 1<<20))
		req.Body.Close()
	}
}

func writeProxyPage(c net.Conn, code int, text string) {
	body := "<!doctype html><title>" + http.StatusText(code) + "</title><pre>" + htmlEscape(text) + "</pre>\n"
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\nCache-Control: no-store\r\nX-Browserpool-Blocked: %s\r\n\r\n%s",
		code, http.StatusText(code), len(body), headerSafe(text), body)
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func headerSafe(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }

func (x *netProxy) dialAddrs(addrs []netip.Addr, port string) (net.Conn, error) {
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("bad port %q", port)
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	var last error
	for _, a := range addrs {
		c, err := d.DialContext(x.ctx, "tcp", netip.AddrPortFrom(a, uint16(p)).String())
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// refusedSince returns the refusals logged at or after t.
func (x *netProxy) refusedSince(t time.Time) []netRefusal {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []netRefusal
	for _, r := range x.refusals {
		if !r.at.Before(t) {
			out = append(out, r)
		}
	}
	return out
}

// blockedNavigation returns an ErrBlockedByPolicy error when the policy
// refused the page a navigation started at start ended on (the URL asked
// for, or where a redirect took it); for a failed navigation, an
// ErrNavigation error naming what the proxy met (the browser only sees
// that its proxy gave no answer); else nil. It costs nothing unless the
// proxy refused something since start.
func (t *Tab) blockedNavigation(ctx context.Context, op string, start time.Time, rawURL string, failed bool) *Error {
	refused := t.s.p.net.refusedSince(start)
	if len(refused) == 0 {
		return nil
	}
	hosts := []string{}
	if u, err := url.Parse(rawURL); err == nil {
		hosts = append(hosts, normHost(u.Hostname()))
	}
	if tree, err := invoke[page.GetFrameTreeReply](ctx, t.direct, "Page.getFrameTree", nil); err == nil {
		f := tree.FrameTree.Frame
		for _, s := range []*string{&f.URL, f.UnreachableURL} {
			if s == nil {
				continue
			}
			if u, err := url.Parse(*s); err == nil && u.Hostname() != "" {
				hosts = append(hosts, normHost(u.Hostname()))
			}
		}
	}
	for i := len(refused) - 1; i >= 0; i-- {
		for _, h := range hosts {
			if refused[i].host != h || (refused[i].rule == "" && !failed) {
				continue
			}
			var e *Error
			if refused[i].rule != "" {
				e = newError(op, ErrBlockedByPolicy, fmt.Sprintf("%s: host %s refused by %s", redactURL(rawURL), h, refused[i].rule))
			} else {
				e = newError(op, ErrNavigation, fmt.Sprintf("%s: %s", redactURL(rawURL), refused[i].netErr))
			}
			e.Session, e.Tab = t.s.id, t.id
			return e
		}
	}
	return nil
}

// proxyAddr is the proxy's address for LaunchSpec.NetworkProxy, "" without
// a proxy.
func (x *netProxy) proxyAddr() string {
	if x == nil {
		return ""
	}
	return x.addr()
}

// withProxyArgs appends the flags routing a browser through the policy
// proxy at addr (none when addr is "").
func withProxyArgs(args []string, addr string) []string {
	if addr == "" {
		return args
	}
	return append(append([]string(nil), args...), "--proxy-server=http://"+addr, "--proxy-bypass-list=<-loopback>", "--"+webRTCPolicyFlag+"=disable_non_proxied_udp")
}
