// Room: the exported websocket transport, the one way a remote launcher
// reaches a browser. WebSocketTransport.mu guards the end state (err); the
// websocket's own reader and writer need no lock (the mux calls ReadMessage
// from one goroutine and WriteMessage from one at a time).

package browserpool

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// DialOptions configures DialWebSocket. The zero value dials with no extra
// headers, a handshake bounded by the context only, and the system's TLS
// roots.
type DialOptions struct {
	// Header is sent with the opening handshake (for example an
	// Authorization header). Nil sends none.
	Header http.Header
	// HandshakeTimeout bounds the opening handshake, including any time a
	// fleet keeps it waiting in its queue. Zero means the context alone
	// bounds it; negative is treated as zero.
	HandshakeTimeout time.Duration
	// TLSConfig is used for wss:// URLs. Nil means the default.
	TLSConfig *tls.Config
	// NetDialContext dials the TCP connection. Nil means a net.Dialer.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// HandshakeError is the cause of a failed websocket handshake to which the
// server answered with an HTTP status instead of upgrading (for example
// 401 for a wrong token, 429 for a full fleet). It never holds the URL.
type HandshakeError struct {
	StatusCode int    // the HTTP status, e.g. 429
	Status     string // the status line's text, e.g. "429 Too Many Requests"
	Body       string // the start of the reply body (at most 512 bytes), trimmed
}

// Error reports the status and the start of the body.
func (e *HandshakeError) Error() string {
	s := "websocket handshake refused: HTTP " + e.Status
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// WebSocketTransport carries CDP messages over one websocket. It implements
// [Transport], with no limit on a message's size either way (large messages
// go out in continuation frames; Chromium accepts up to ~100 MB). It is
// safe for the use Transport describes; Close and Exited may be called from
// any goroutine. Create one with DialWebSocket; whoever builds a Session on
// it (the Pool) closes it.
type WebSocketTransport struct {
	c      *websocket.Conn
	exited chan struct{} // closed on the first read error or Close

	once sync.Once
	mu   sync.Mutex
	err  error // guarded by mu; the first read error (or net.ErrClosed after Close)
}

// DialWebSocket opens a websocket to a DevTools endpoint (ws:// or wss://;
// http:// and https:// are taken as ws:// and wss://) and returns it once
// the server has upgraded. ctx bounds the handshake (its deadline, or its
// cancellation); the connection outlives it. On failure the error never
// contains the URL's query or credentials (tokens live there); a refusal
// with an HTTP status gives a *HandshakeError reachable with errors.As.
// Credentials in the URL (ws://user:password@host) are sent as Basic
// authorization unless opts.Header has an Authorization of its own.
func DialWebSocket(ctx context.Context, rawURL string, opts DialOptions) (*WebSocketTransport, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("websocket URL %s does not parse", fleetEndpoint(rawURL))
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	case "ws", "wss":
	default:
		return nil, fmt.Errorf("websocket URL %s: scheme must be ws, wss, http or https", fleetEndpoint(rawURL))
	}
	dial := opts.NetDialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	// The websocket library bounds the handshake by ctx's deadline only: a
	// cancelled ctx (no deadline) must end it too, so the connection's
	// deadline is set to the past when ctx ends.
	var (
		mu   sync.Mutex
		conn net.Conn // guarded by mu; the handshake's connection, once dialled
	)
	ended := func() {
		mu.Lock()
		defer mu.Unlock()
		if conn != nil {
			conn.SetDeadline(time.Unix(1, 0))
		}
	}
	stop := context.AfterFunc(ctx, ended)
	defer stop()
	d := websocket.Dialer{
		NetDialContext: func(dctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(dctx, network, addr)
			if err == nil {
				mu.Lock()
				conn = c
				mu.Unlock()
				if ctx.Err() != nil {
					ended() // ctx ended while dialling, before the watch could see c
				}
			}
			return c, err
		},
		TLSClientConfig: opts.TLSConfig,
		ReadBufferSize:  1 << 16,
		WriteBufferSize: 1 << 16,
	}
	if opts.HandshakeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.HandshakeTimeout)
		defer cancel()
	}
	// The websocket library refuses credentials in the URL: they go as
	// Basic authorization, as a browser or curl sends them, unless the
	// caller's headers already authorize.
	header, dialURL := opts.Header, *u
	if u.User != nil {
		dialURL.User = nil
		if header.Get("Authorization") == "" {
			header = header.Clone()
			if header == nil {
				header = http.Header{}
			}
			pw, _ := u.User.Password()
			header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
		}
	}
	c, resp, err := d.DialContext(ctx, dialURL.String(), header)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			he := &HandshakeError{StatusCode: resp.StatusCode, Status: resp.Status}
			if resp.Body != nil {
				// Scrubbed whole, then cut: a secret the server echoes
				// across the cut leaves no part of it.
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
				resp.Body.Close()
				he.Body = cutScrubbed(strings.TrimSpace(string(b)), 512, fleetSecrets(u, header))
			}
			return nil, he
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("websocket handshake with %s: %w", fleetEndpoint(rawURL), context.Cause(ctx))
		}
		return nil, fmt.Errorf("websocket handshake with %s: %s", fleetEndpoint(rawURL), scrub(err.Error(), fleetSecrets(u, header)))
	}
	if !stop() {
		// ctx ended as the handshake finished: the connection's deadline
		// is in the past.
		c.Close()
		return nil, fmt.Errorf("websocket handshake with %s: %w", fleetEndpoint(rawURL), context.Cause(ctx))
	}
	c.SetReadLimit(-1)
	return &WebSocketTransport{c: c, exited: make(chan struct{})}, nil
}

// fleetSecrets returns what must never be shown of a fleet's URL u and
// the headers sent to it: the query and its values (a token), the
// credentials and their password, the Basic authorization they make, and
// every header's value with its scheme's credentials (Bearer xyz: xyz).
func fleetSecrets(u *url.URL, h http.Header) []string {
	var secrets []string
	if u != nil && u.RawQuery != "" {
		secrets = append(secrets, u.RawQuery)
		for _, vs := range u.Query() {
			secrets = append(secrets, vs...)
		}
	}
	if u != nil && u.User != nil {
		secrets = append(secrets, u.User.String())
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw, base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
		}
	}
	for _, vs := range h {
		for _, v := range vs {
			secrets = append(secrets, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				secrets = append(secrets, strings.TrimSpace(cred))
			}
		}
	}
	// Longest first: a secret that holds another goes whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return secrets
}

// scrub replaces in s every secret of four bytes or more, as written and
// query-escaped, with REDACTED.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "REDACTED")
			s = strings.ReplaceAll(s, url.QueryEscape(v), "REDACTED")
		}
	}
	return s
}

// cutScrubbed scrubs s and cuts it to about n bytes, dropping a tail that
// is the start of a secret (of four bytes or more): a reply cut short
// before it arrived whole shows no part of it either.
func cutScrubbed(s string, n int, secrets []string) string {
	s = scrub(s, secrets)
	if len(s) <= n {
		return tailSafe(s, secrets)
	}
	return tailSafe(strings.ToValidUTF8(s[:n], ""), secrets) + "..."
}

// tailSafe drops from s a tail of four bytes or more that begins a secret.
func tailSafe(s string, secrets []string) string {
	for _, v := range secrets {
		for k := len(v) - 1; k >= 4; k-- {
			if strings.HasSuffix(s, v[:k]) {
				return s[:len(s)-k] + "REDACTED"
			}
		}
	}
	return s
}

// ReadMessage returns the next message. After the first error (the server
// closed, the network failed, Close was called) it keeps returning that
// error and Exited is closed.
func (w *WebSocketTransport) ReadMessage() ([]byte, error) {
	_, b, err := w.c.ReadMessage()
	if err != nil {
		w.end(err)
		return nil, w.Err()
	}
	return b, nil
}

// WriteMessage sends b as one text message, of any size.
func (w *WebSocketTransport) WriteMessage(b []byte) error {
	return w.c.WriteMessage(websocket.TextMessage, b)
}

// Close sends a close frame (bounded by one second) and closes the
// connection; a ReadMessage in progress returns. It is idempotent. For a
// fleet such as browserless this ends the lease.
func (w *WebSocketTransport) Close() error {
	w.once.Do(func() {
		w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	})
	err := w.c.Close()
	w.end(net.ErrClosed)
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Exited is closed on the transport's first read error or on Close: the
// remote end is gone for this client. A remote launcher's
// LaunchedBrowser.Exited can return it.
func (w *WebSocketTransport) Exited() <-chan struct{} { return w.exited }

// Err returns why the transport ended, or nil while it is open.
func (w *WebSocketTransport) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// fail ends the transport with err as its cause (Err, the lease's
// ExitErr): the remote end is known gone though the socket still stands.
func (w *WebSocketTransport) fail(err error) {
	w.end(err)
	w.c.Close()
}

func (w *WebSocketTransport) end(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	w.err = err
	close(w.exited)
}

// fleetEndpoint returns rawURL as scheme://host/path, without credentials,
// query or fragment (tokens live there), fit for errors and SessionInfo.
func fleetEndpoint(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		// Keep only what precedes any query or credentials.
		s, _, _ := strings.Cut(rawURL, "?")
		if i := strings.LastIndex(s, "@"); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// sameFleet reports whether two fleet endpoints (fleetEndpoint's) name one
// server: alike but for the case of the scheme and host, the ws and http
// spellings of a scheme, a default port, and trailing slashes (a lease
// recorded under http://grid:4444 is ended by a pool given
// http://grid:4444/).
func sameFleet(a, b string) bool {
	return fleetKey(a) == fleetKey(b)
}

// fleetKey is endpoint in sameFleet's canonical form.
func fleetKey(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return strings.TrimRight(endpoint, "/")
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	host := strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + strings.TrimRight(u.Path, "/")
}
