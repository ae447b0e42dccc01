// Room: the streamable HTTP front: Origin and bearer-token checks before the
// SDK's handler, and the POSTs carrying tool calls, so a call whose request
// is cut stops. Server.mu guards the POST table; no I/O under it.

package main

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures Server.HTTPHandler. The zero value accepts
// requests without a token and without an Origin header only (what MCP
// clients that are not web pages send).
type HTTPOptions struct {
	// Token, when set, must come as "Authorization: Bearer <Token>" on every
	// request. The command requires one when bound to a non-loopback
	// address.
	Token string
	// AllowedOrigins are the Origins (scheme://host[:port]) a web page may
	// call from. A request with any other Origin header is refused, which
	// keeps web pages the user visits away from the browsers.
	AllowedOrigins []string
	// SessionTimeout ends an MCP session (and so the client, and its
	// browsers) that sends no request for this long. It is not the idle
	// timeout of the browsers (Config.Pool.IdleTimeout), which closes only
	// the browser, and the client's next call says so. Zero means
	// DefaultSessionTimeout; negative means never.
	SessionTimeout time.Duration
}

// DefaultSessionTimeout is how long an MCP session over HTTP lives without
// a request: a client that went away without ending its session (DELETE)
// is forgotten after it.
const DefaultSessionTimeout = 24 * time.Hour

// postHeader is the header HTTPHandler sets on every POST it passes to the
// SDK: a number of its own for that HTTP request, which a tool handler
// reads from its request (RequestExtra.Header) to learn which POST carries
// its call. Whatever a client sends in it is replaced.
const postHeader = "X-Browserpool-Post"

// httpPost is one POST of the HTTP front: the cancels of the tool calls it
// carries.
type httpPost struct {
	calls   map[int]func()
	next    int
	carried bool // it carried a tool call: it ends once the call's answer went out
}

// HTTPHandler serves the MCP streamable HTTP transport at every path. Each
// MCP session (Mcp-Session-Id) is one client with its own browsers; ending
// the session (DELETE, or opts.SessionTimeout without a request) closes
// them. A browser idle for the pool's idle timeout is closed on its own,
// and the client's next call says so. A tool call whose POST is cut (the
// client's connection drops) is stopped: its result could never arrive.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0 // the SDK's never
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.cfg.Logger,
		SessionTimeout: timeout,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(opts.AllowedOrigins, strings.TrimSuffix(o, "/")) {
			http.Error(w, "browserpool-mcp: Origin "+o+" is not allowed (start the server with -allow-origin "+o+" to allow it)", http.StatusForbidden)
			return
		}
		if opts.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(opts.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="browserpool-mcp"`)
				http.Error(w, "browserpool-mcp: missing or wrong bearer token (send Authorization: Bearer <token>)", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost {
			id := s.postStarted()
			r.Header.Set(postHeader, id)
			// The SDK answers a POST's calls on its response and returns
			// once they are answered, or when the client's connection
			// drops, after which no answer can reach it (the server keeps
			// no event store to replay one).
			defer func() { s.postEnded(id, r.Context().Err() != nil) }()
		}
		if r.Method == http.MethodDelete {
			// The SDK's close of the session waits for the calls in
			// flight, and the server stops a client's calls only once its
			// session has ended: stop them first, or the DELETE (and the
			// client's browser) waits for the slowest call.
			s.stopCallsOf(r.Header.Get("Mcp-Session-Id"))
		}
		h.ServeHTTP(w, r)
	})
}

// stopCallsOf cancels the tool calls of the client whose MCP session id is
// sid, if there is one.
func (s *Server) stopCallsOf(sid string) {
	if sid == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss, c := range s.clients {
		if ss.ID() == sid {
			c.cancel()
		}
	}
}

// postStarted records a POST and returns its postHeader value.
func (s *Server) postStarted() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postSeq++
	id := strconv.FormatUint(s.postSeq, 10)
	s.posts[id] = &httpPost{calls: map[int]func(){}}
	return id
}

// postEnded forgets a POST; cut means its client's connection dropped
// before its calls were answered, which stops them.
func (s *Server) postEnded(id string, cut bool) {
	var stops []func()
	s.mu.Lock()
	if p := s.posts[id]; p != nil && cut {
		for _, stop := range p.calls {
			stops = append(stops, stop)
		}
	}
	delete(s.posts, id)
	s.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// watchPost registers stop, a call's cancel, with the POST that carries the
// call, and returns its unregistration. A POST already gone (cut before
// the call started: a POST ends normally only once its calls are
// answered) stops the call at once.
func (s *Server) watchPost(id string, stop func()) func() {
	s.mu.Lock()
	p := s.posts[id]
	if p == nil {
		s.mu.Unlock()
		stop()
		return func() {}
	}
	n := p.next
	p.next++
	p.calls[n] = stop
	p.carried = true
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(p.calls, n)
		s.mu.Unlock()
	}
}

// answering reports whether a POST that carried a tool call is still open:
// its answer has not gone out yet.
func (s *Server) answering() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.posts {
		if p.carried {
			return true
		}
	}
	return false
}
