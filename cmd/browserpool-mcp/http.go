// Room: the streamable HTTP front: Origin and bearer-token checks before the
// SDK's handler. No locks.

package main

import (
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

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
}

// HTTPHandler serves the MCP streamable HTTP transport at every path. Each
// MCP session (Mcp-Session-Id) is one client with its own browsers; ending
// the session (DELETE, or the idle timeout) closes them.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger:         s.cfg.Logger,
		SessionTimeout: s.pool.Config().IdleTimeout,
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
		h.ServeHTTP(w, r)
	})
}
