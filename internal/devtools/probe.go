// Room: GET /json/version. No locks.

package devtools

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
)

// Target is an endpoint resolved (and, unless it is a websocket URL,
// probed): where its browser websocket is.
type Target struct {
	Endpoint Endpoint
	Addr     netip.AddrPort // the resolved address
	WSURL    string         // the browser websocket, its host the resolved address
	Product  string         // from GET /json/version; "" for a ws:// endpoint
}

// NewTarget returns ep at ip. For a websocket endpoint WSURL is set; else
// call AskVersion.
func NewTarget(ep Endpoint, ip netip.Addr) *Target {
	tg := &Target{Endpoint: ep, Addr: netip.AddrPortFrom(ip, uint16(ep.Port))}
	if ep.WSPath != "" {
		tg.WSURL = tg.wsBase() + ep.WSPath
	}
	return tg
}

// DialHost is the host:port to connect to: the resolved address, because
// Chrome refuses a Host header that names anything but an IP or localhost;
// for https and wss (a TLS proxy in front of the browser, whose certificate
// names the host) the host as given.
func (tg *Target) DialHost() string {
	if tg.Endpoint.Secure {
		return tg.Endpoint.HostPort()
	}
	return tg.Addr.String()
}

func (tg *Target) wsBase() string {
	if tg.Endpoint.Secure {
		return "wss://" + tg.DialHost()
	}
	return "ws://" + tg.DialHost()
}

// Version is the answer of GET /json/version.
type Version struct {
	Browser      string `json:"Browser"`
	Protocol     string `json:"Protocol-Version"`
	UserAgent    string `json:"User-Agent"`
	WebSocketURL string `json:"webSocketDebuggerUrl"`
}

// ConnError is a failure to reach the endpoint or to read its answer.
type ConnError struct {
	Connected bool  // the TCP connection was made
	Err       error // as the HTTP client returned it
}

func (e *ConnError) Error() string { return e.Err.Error() }
func (e *ConnError) Unwrap() error { return e.Err }

// AnswerError is an answer that is not DevTools'.
type AnswerError struct {
	// Answer completes "answered GET /json/version with ...", e.g.
	// "HTTP 404 (text/html)" or "an HTML page, not DevTools JSON".
	Answer string
	// Status is the HTTP status.
	Status int
	// HostRefused: Chrome refused the Host header (a proxy rewrote it).
	HostRefused bool
}

func (e *AnswerError) Error() string { return "answered GET /json/version with " + e.Answer }

// RequestError is a request that could not be built.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// AskVersion asks GET /json/version and fills tg.WSURL and tg.Product from
// the answer. Errors are *ConnError, *AnswerError or *RequestError.
func (tg *Target) AskVersion(ctx context.Context) (*Version, error) {
	ep := tg.Endpoint
	var connected atomic.Bool
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }}
	tr := &http.Transport{
		Proxy:             nil, // the endpoint is local or on the host's network: never through a proxy
		DialContext:       (&net.Dialer{}).DialContext,
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{ServerName: ep.Host},
	}
	defer tr.CloseIdleConnections()
	scheme := "http://"
	if ep.Secure {
		scheme = "https://"
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, scheme+tg.DialHost()+"/json/version", nil)
	if err != nil {
		return nil, &RequestError{Err: err}
	}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return nil, &ConnError{Connected: connected.Load(), Err: err}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, &ConnError{Connected: true, Err: err}
	}
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	answer := func(a string) (*Version, error) {
		return nil, &AnswerError{Answer: a, Status: resp.StatusCode}
	}
	if resp.StatusCode != http.StatusOK {
		if strings.Contains(string(body), "Host header is specified and is not an IP address or localhost") {
			return nil, &AnswerError{Answer: fmt.Sprintf("HTTP %d", resp.StatusCode), Status: resp.StatusCode, HostRefused: true}
		}
		shown := "no content type"
		if media != "" {
			shown = media
		}
		return answer(fmt.Sprintf("HTTP %d (%s)", resp.StatusCode, shown))
	}
	v := new(Version)
	if err := json.Unmarshal(body, v); err != nil {
		if media == "text/html" {
			return answer("an HTML page, not DevTools JSON")
		}
		return answer(fmt.Sprintf("something that is not JSON (%s)", media))
	}
	u, err := url.Parse(v.WebSocketURL)
	if v.WebSocketURL == "" || err != nil || !strings.HasPrefix(u.Path, "/devtools/browser/") {
		return answer("JSON without the browser's webSocketDebuggerUrl")
	}
	tg.Product = v.Browser
	tg.WSURL = tg.wsBase() + u.Path
	return v, nil
}
