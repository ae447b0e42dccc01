package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectHTTP connects a real SDK client to an HTTP server.
func connectHTTP(t *testing.T, url string, client *http.Client) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// sessionInfo returns the pool's view of a live session.
func sessionInfo(s *Server, id string) (browserpool.SessionInfo, bool) {
	for _, se := range s.pool.Sessions() {
		if se.ID() == id {
			return se.Info(), true
		}
	}
	return browserpool.SessionInfo{}, false
}

func TestHTTPClientsGetSeparateBrowsersAndADisconnectReclaimsOnlyItsOwn(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(HTTPOptions{}))
	t.Cleanup(hs.Close)
	a := connectHTTP(t, hs.URL, hs.Client())
	b := connectHTTP(t, hs.URL, hs.Client())

	navA := ok(t, a, "browser_navigate", map[string]any{"url": site.URL})
	navB := ok(t, b, "browser_navigate", map[string]any{"url": site.URL + "/other"})
	sessA, tabA := find(t, `session (\S+), tab`, navA), find(t, `tab ([0-9A-F]+)\]`, navA)
	sessB, tabB := find(t, `session (\S+), tab`, navB), find(t, `tab ([0-9A-F]+)\]`, navB)
	if sessA == sessB {
		t.Fatalf("both clients got session %s", sessA)
	}
	infoA, okA := sessionInfo(s, sessA)
	infoB, okB := sessionInfo(s, sessB)
	if !okA || !okB || infoA.PID == infoB.PID || infoA.PID == 0 || infoA.ProfileDir == infoB.ProfileDir {
		t.Fatalf("the clients do not have two browsers: A %+v, B %+v", infoA, infoB)
	}

	// A sees only its own session, and cannot resolve B's session or tab.
	if list := ok(t, a, "browser_session_list", nil); strings.Contains(list, sessB) || strings.Contains(list, tabB) || !strings.Contains(list, sessA) {
		t.Errorf("A's session list shows B's session or misses its own:\n%s", list)
	}
	if msg := fails(t, a, "browser_snapshot", map[string]any{"session": sessB}); !strings.Contains(msg, "browser_session_list") || strings.Contains(msg, "other page") {
		t.Errorf("A naming B's session:\n%s", msg)
	}
	for _, tool := range []string{"browser_snapshot", "browser_page_info"} {
		msg := fails(t, a, tool, map[string]any{"tab": tabB})
		if !strings.Contains(msg, "browser_tabs") || strings.Contains(msg, "Other") || strings.Contains(msg, sessB) {
			t.Errorf("A naming B's tab in %s:\n%s", tool, msg)
		}
	}
	if msg := fails(t, a, "browser_tabs", map[string]any{"action": "close", "tab": tabB}); !strings.Contains(msg, "browser_tabs") {
		t.Errorf("A closing B's tab:\n%s", msg)
	}
	if got := ok(t, b, "browser_evaluate", map[string]any{"function": "document.title", "tab": tabB}); got != `"Other"` {
		t.Errorf("B's tab after A's attempts: title %s", got)
	}
	_ = tabA
	// Error texts name the client by a hash of its MCP session id, never the
	// id itself (which lets its holder speak in the session).
	if msg := fails(t, a, "browser_session_open", map[string]any{"name": "second"}); a.ID() == "" || strings.Contains(msg, a.ID()) || !strings.Contains(msg, "client=mcp-") {
		t.Errorf("over the limit, A's error (session id %q):\n%s", a.ID(), msg)
	}

	// A leaves: its browser process and profile dir go; B keeps working.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// The close path removes the session, stops the browser, then deletes
	// the profile dir.
	waitFor(t, "A's browser process and profile dir are gone", func() bool {
		_, live := sessionInfo(s, sessA)
		_, err := os.Stat(infoA.ProfileDir)
		return !live && errors.Is(syscall.Kill(infoA.PID, 0), syscall.ESRCH) && errors.Is(err, os.ErrNotExist)
	})
	if got := ok(t, b, "browser_evaluate", map[string]any{"function": "() => document.title"}); got != `"Other"` {
		t.Errorf("B after A left: title %s", got)
	}
	if _, live := sessionInfo(s, sessB); !live {
		t.Errorf("B's session closed when A left")
	}
}

// post sends an MCP initialize request as a client would, with extra
// headers, and returns the response's status and body.
func post(t *testing.T, url string, header map[string]string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestHTTPRefusesForeignOriginsAndMissingTokens(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	open := httptest.NewServer(s.HTTPHandler(HTTPOptions{AllowedOrigins: []string{"http://localhost:6274"}}))
	t.Cleanup(open.Close)
	locked := httptest.NewServer(s.HTTPHandler(HTTPOptions{Token: "s3cret"}))
	t.Cleanup(locked.Close)

	for _, tc := range []struct {
		name   string
		url    string
		header map[string]string
		want   int
	}{
		{"no Origin", open.URL, nil, http.StatusOK},
		{"an allowed Origin", open.URL, map[string]string{"Origin": "http://localhost:6274"}, http.StatusOK},
		{"a foreign Origin", open.URL, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"another localhost port", open.URL, map[string]string{"Origin": "http://localhost:9999"}, http.StatusForbidden},
		{"no token", locked.URL, nil, http.StatusUnauthorized},
		{"a wrong token", locked.URL, map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"the token", locked.URL, map[string]string{"Authorization": "Bearer s3cret"}, http.StatusOK},
	} {
		status, body := post(t, tc.url, tc.header)
		if status != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, status, tc.want, body)
		}
	}
	// Close the sessions the raw initializes made.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNonLoopbackHTTPNeedsAToken(t *testing.T) {
	t.Setenv(TokenEnv, "")
	for _, addr := range []string{"0.0.0.0:8931", ":8931", "192.168.1.5:8931", "[::]:8931", "example.com:8931"} {
		if _, err := parse([]string{"-http", addr}, io.Discard); err == nil || !strings.Contains(err.Error(), "token") {
			t.Errorf("-http %s without a token: err %v, want one asking for a token", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:8931", "localhost:8931", "[::1]:8931"} {
		if _, err := parse([]string{"-http", addr}, io.Discard); err != nil {
			t.Errorf("-http %s: %v", addr, err)
		}
	}
	t.Setenv(TokenEnv, "s3cret")
	if o, err := parse([]string{"-http", "0.0.0.0:8931"}, io.Discard); err != nil || o.token != "s3cret" {
		t.Errorf("-http 0.0.0.0 with $%s: %v", TokenEnv, err)
	}
}
