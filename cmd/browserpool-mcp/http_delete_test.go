package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that ends its HTTP session (DELETE) while a call waits: the
// call stops and the client's browser closes at once. The SDK's close
// waited for the call (here up to 100 s) before the server stopped it.
func TestEndingAnHTTPSessionStopsItsCallsAndClosesItsBrowser(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	cs := connectHTTP(t, hs.URL, hs.Client())
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_wait_for", Arguments: map[string]any{"text": "never there", "timeout": 100}})
		waiting <- err
	}()
	waitFor(t, "the wait to be in flight", func() bool { return s.calls.Load() > 0 })
	// The DELETE an MCP client sends to end its session (as the SDK's
	// client does on Close, which also waits for its own calls).
	closed := make(chan error, 1)
	go func() {
		req, err := http.NewRequest(http.MethodDelete, hs.URL, nil)
		if err != nil {
			closed <- err
			return
		}
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := hs.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		closed <- err
	}()
	// Far below the wait's 100 s: a bound for a hang, not a timing.
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("ending the HTTP session waited for the call in flight")
	}
	waitFor(t, "the client's browser to close", func() bool { return len(s.pool.Sessions()) == 0 })
	cancel()
	<-waiting
}
