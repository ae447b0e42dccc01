// Room: tests of the policy proxy's plain http relay, driven by Go
// clients (no browser: netpolicy_test.go runs Chromium through it). No
// locks of their own.

package browserpool

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// startTestProxy starts a proxy with the default policy, closed at
// cleanup, and returns a client that sends every request through it on one
// kept-alive connection.
func startTestProxy(t testing.TB) (*netProxy, *http.Client) {
	t.Helper()
	policy, err := NetworkPolicy{}.compile()
	if err != nil {
		t.Fatal(err)
	}
	x, err := startNetProxy(policy, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.close)
	pu, err := url.Parse("http://" + x.addr())
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{Proxy: http.ProxyURL(pu), MaxConnsPerHost: 1, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return x, &http.Client{Transport: tr}
}

// getWithin sends a GET through c that gives up after 10 s.
func getWithin(t *testing.T, c *http.Client, u string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// writeCounter is a browser's connection to the proxy, seen from the
// proxy's side: it counts the proxy's writes.
type writeCounter struct {
	net.Conn
	writes atomic.Int32
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// connectToProxy hands x one end of an in-memory connection, as its
// listener would a browser's, and returns the other end and the counter of
// x's writes; cleanup closes it and waits for x to be done with it.
func connectToProxy(t *testing.T, x *netProxy) (net.Conn, *writeCounter) {
	t.Helper()
	browser, proxySide := net.Pipe()
	counted := &writeCounter{Conn: proxySide}
	handled := make(chan struct{})
	go func() {
		defer close(handled)
		defer proxySide.Close()
		x.handle(counted)
	}()
	t.Cleanup(func() { browser.Close(); <-handled })
	browser.SetDeadline(time.Now().Add(30 * time.Second))
	return browser, counted
}

func TestTheProxySendsAResponsesHeadAndBodyInTwoWritesAndKeepsThemIntact(t *testing.T) {
	const page = "<!doctype html><title>t</title><p>hello</p>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-One", "1")
		w.Header().Add("X-Two", "a")
		w.Header().Add("X-Two", "b")
		io.WriteString(w, page)
	}))
	defer srv.Close()
	x, _ := startTestProxy(t)
	browser, counted := connectToProxy(t, x)
	br := bufio.NewReader(browser)
	type seen struct {
		Status int
		Type   string
		One    string
		Two    []string
		Length int64
		Body   string
	}
	for i := range 2 { // twice, on the same connection
		counted.writes.Store(0)
		if _, err := fmt.Fprintf(browser, "GET %s/p HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, strings.TrimPrefix(srv.URL, "http://")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: reading the proxy's response: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("request %d: reading the body: %v", i, err)
		}
		got := seen{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-One"), resp.Header.Values("X-Two"), resp.ContentLength, string(body)}
		want := seen{200, "text/html", "1", []string{"a", "b"}, int64(len(page)), page}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("request %d: the response through the proxy (-want +got):\n%s", i, diff)
		}
		if n := counted.writes.Load(); n > 2 {
			t.Errorf("request %d: the proxy wrote the response in %d writes, want at most 2 (its head, then its body)", i, n)
		}
	}
}

func TestAHugeResponseHeaderGoesThroughWhole(t *testing.T) {
	huge := strings.Repeat("v", 200_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Huge", huge)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	x, _ := startTestProxy(t)
	browser, _ := connectToProxy(t, x)
	if _, err := fmt.Fprintf(browser, "GET %s/ HTTP/1.1\r\nHost: %s\r\n\r\n", srv.URL, strings.TrimPrefix(srv.URL, "http://")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(browser), nil)
	if err != nil {
		t.Fatalf("reading the proxy's response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "ok" || resp.Header.Get("X-Huge") != huge {
		t.Fatalf("got a %d-byte X-Huge and body %q, %v; want the site's 200,000 bytes and %q", len(resp.Header.Get("X-Huge")), body, err, "ok")
	}
}

// captureConn is a connection that keeps what is written to it.
type captureConn struct {
	net.Conn // nil: only Write is called
	got      []byte
}

func (c *captureConn) Write(p []byte) (int, error) {
	c.got = append(c.got, p...)
	return len(p), nil
}

func TestTheRelayHoldsNoMoreThanItsBufferAndSendsEverythingInOrder(t *testing.T) {
	conn := &captureConn{}
	o := &relayOut{c: conn}
	var want []byte
	pieces := []string{
		"HTTP/1.1 200 OK\r\n", strings.Repeat("h", relayFlushAt-1), "x", // fills it exactly
		strings.Repeat("H", 5*relayFlushAt), ": ", "\r\n",
		strings.Repeat("a", relayFlushAt-1), strings.Repeat("b", relayFlushAt-1), // the second does not fit
		strings.Repeat("c", relayFlushAt), strings.Repeat("d", relayFlushAt), // each alone is a buffer's worth
	}
	for i := range 3000 { // small pieces, 60 KB in all
		pieces = append(pieces, fmt.Sprintf("X-%04d: v\r\n", i))
	}
	for i, p := range append(pieces, strings.Repeat("b", 3*relayFlushAt), "tail") {
		var err error
		if i%2 == 0 {
			_, err = o.WriteString(p)
		} else {
			_, err = o.Write([]byte(p))
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
		if len(o.buf) > relayFlushAt || cap(o.buf) != relayFlushAt {
			t.Fatalf("after piece %d (%d bytes) the relay holds %d bytes in room for %d; want at most %d in its buffer of %[5]d", i, len(p), len(o.buf), cap(o.buf), relayFlushAt)
		}
	}
	if err := o.flush(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(conn.got, want) {
		t.Errorf("the connection got %d bytes, not the %d given in order", len(conn.got), len(want))
	}
}

func TestAStreamedResponseReachesTheBrowserPieceByPiece(t *testing.T) {
	next := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: event %d\n\n", i)
			w.(http.Flusher).Flush()
			select { // the next event only once the client has this one
			case <-next:
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer srv.Close()
	defer close(next)
	_, client := startTestProxy(t)
	resp, err := getWithin(t, client, srv.URL)
	if err != nil {
		t.Fatalf("the response's head did not reach the client: %v", err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() != "" {
				lines <- sc.Text()
			}
		}
	}()
	for i := range 3 {
		select {
		case got := <-lines:
			if want := fmt.Sprintf("data: event %d", i); got != want {
				t.Fatalf("line %d = %q, want %q", i, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d did not reach the client within 10s: the proxy held it back", i)
		}
		if i < 2 {
			next <- struct{}{}
		}
	}
}

func TestAResponseTheSiteCutsShortReachesTheBrowserAsFarAsItWent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, "the first part")
		w.(http.Flusher).Flush()
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	defer srv.Close()
	_, client := startTestProxy(t)
	resp, err := getWithin(t, client, srv.URL)
	if err != nil {
		t.Fatalf("the response's head did not reach the client: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if string(b) != "the first part" || err == nil {
		t.Errorf("body = %q, %v; want the first part, then an error", b, err)
	}
}

func TestALargeBodyGoesThroughWhole(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 20_000) // 320 KB, past relayFlushAt many times
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("chunked") {
			for i := 0; i < len(big); i += 1000 {
				io.WriteString(w, big[i:i+1000])
			}
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		io.WriteString(w, big)
	}))
	defer srv.Close()
	_, client := startTestProxy(t)
	for _, q := range []string{"", "?chunked"} {
		resp, err := getWithin(t, client, srv.URL+"/"+q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != big {
			t.Errorf("%q: got %d bytes, %v; want the %d bytes the site sent", q, len(b), err, len(big))
		}
	}
}

// BenchmarkPolicyProxy measures what the policy proxy adds to a plain http
// request (a 42-byte page on loopback, keep-alive on both sides): direct
// is the same client without the proxy.
func BenchmarkPolicyProxy(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<!doctype html><title>t</title><p>hello</p>")
	}))
	defer srv.Close()
	_, proxied := startTestProxy(b)
	direct := &http.Client{Transport: &http.Transport{}}
	defer direct.Transport.(*http.Transport).CloseIdleConnections()
	for _, c := range []struct {
		name   string
		client *http.Client
	}{{"direct", direct}, {"proxied", proxied}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.client.Get(srv.URL + "/")
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

func TestTheProxyKeepsABrowsersBurstOfSiteConnectionsForTheNextBurst(t *testing.T) {
	// A browser fetches a page's images from one host over 6 connections
	// at once. The site counts the connections the proxy opens to it.
	const burst = 6
	var opened atomic.Int32
	var inFlight atomic.Int32
	all := make(chan struct{})
	var release atomic.Pointer[chan struct{}]
	release.Store(&all)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Answer only when the whole burst is in: the proxy must hold 6
		// site connections at once.
		ch := *release.Load()
		if inFlight.Add(1) == burst {
			close(ch)
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, "img")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	x, _ := startTestProxy(t)
	pu, err := url.Parse("http://" + x.addr())
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), MaxIdleConnsPerHost: burst, DisableCompression: true}}
	defer browser.Transport.(*http.Transport).CloseIdleConnections()
	fetchBurst := func() {
		next := make(chan struct{})
		inFlight.Store(0)
		release.Store(&next)
		errs := make(chan error, burst)
		for i := range burst {
			go func() {
				resp, err := getWithin(t, browser, fmt.Sprintf("%s/i%d.png", srv.URL, i))
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errs <- err
			}()
		}
		for range burst {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	fetchBurst()
	if n := opened.Load(); n != burst {
		t.Fatalf("the first burst opened %d site connections, want %d", n, burst)
	}
	// Each of the browser's connections keeps its site connection. The
	// browser's own connection goes back to its idle set just after the
	// response's end reached it, so a burst right after may still open a
	// new one, and a site connection with it; by the fourth, none.
	var news []int32
	for range 4 {
		before := opened.Load()
		fetchBurst()
		news = append(news, opened.Load()-before)
		if news[len(news)-1] == 0 {
			return
		}
	}
	t.Errorf("every later burst opened new site connections (%v), want one that reused the first burst's %d", news, burst)
}

// oneShotSite is a site that answers one request per connection and then
// closes it without saying so (no Connection: close), as a server whose
// keep-alive timeout ran out between two requests does. It counts the
// connections it accepted and the requests it answered, body included.
func oneShotSite(t *testing.T) (addr string, conns *atomic.Int32, bodies chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = new(atomic.Int32)
	bodies = make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					c.Close()
					return
				}
				body, _ := io.ReadAll(req.Body)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				c.Close()
				// Closed before the test sends its next request (it
				// waits for this).
				bodies <- req.Method + " " + string(body)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String(), conns, bodies
}

func TestARequestOnASiteConnectionTheSiteClosedGoesOutOnANewOne(t *testing.T) {
	addr, conns, bodies := oneShotSite(t)
	x, _ := startTestProxy(t)
	browser, _ := connectToProxy(t, x)
	br := bufio.NewReader(browser)
	var got []string
	for i, req := range []string{
		"GET http://%s/a HTTP/1.1\r\nHost: %s\r\n\r\n",
		// The site closed the first connection: a GET is sent again.
		"GET http://%s/b HTTP/1.1\r\nHost: %s\r\n\r\n",
		// A body cannot be sent twice: the connection is checked first.
		"POST http://%s/c HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\n\r\nhello",
		// Nor is a method that is not idempotent repeated, body or not.
		"POST http://%s/d HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n",
	} {
		if _, err := fmt.Fprintf(browser, req, addr, addr); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: the browser got no response: %v", i, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil || string(body) != "ok" {
			t.Fatalf("request %d: body %q, %v", i, body, err)
		}
		got = append(got, <-bodies)
	}
	if diff := cmp.Diff([]string{"GET ", "GET ", "POST hello", "POST "}, got); diff != "" {
		t.Errorf("what the site received (-want +got):\n%s", diff)
	}
	if n := conns.Load(); n != 4 {
		t.Errorf("the site accepted %d connections, want 4 (one per request)", n)
	}
}

func TestAnInterimResponseReachesTheBrowserBeforeTheFinalOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\ndone")
	}()
	x, _ := startTestProxy(t)
	browser, _ := connectToProxy(t, x)
	br := bufio.NewReader(browser)
	addr := ln.Addr().String()
	fmt.Fprintf(browser, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", addr, addr)
	var got []string
	for range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		got = append(got, fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Link"), body))
	}
	if diff := cmp.Diff([]string{"103 </s.css>; rel=preload ", "200  done"}, got); diff != "" {
		t.Errorf("responses the browser read (-want +got):\n%s", diff)
	}
}

func TestARequestWhoseHeadersNeverEndIsRefusedAfterAMegabyte(t *testing.T) {
	x, _ := startTestProxy(t)
	browser, _ := connectToProxy(t, x)
	// Two megabytes of header lines, then the end of the request: to a
	// blocked site, which the proxy would refuse at once had it read them.
	go func() {
		w := bufio.NewWriter(browser)
		fmt.Fprintf(w, "GET http://169.254.169.254/ HTTP/1.1\r\nHost: 169.254.169.254\r\n")
		for i := range 40_000 {
			fmt.Fprintf(w, "X-Pad-%d: %s\r\n", i, strings.Repeat("p", 40))
		}
		io.WriteString(w, "\r\n")
		w.Flush() // fails once the proxy has closed the connection
	}()
	resp, err := http.ReadResponse(bufio.NewReader(browser), nil)
	if err != nil {
		t.Fatalf("reading the proxy's answer: %v; want 431 after a megabyte of headers", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !resp.Close {
		t.Errorf("the proxy answered %s (close %v); want 431 Request Header Fields Too Large and the connection closed", resp.Status, resp.Close)
	}
}
