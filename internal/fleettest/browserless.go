// Room: the browserless test server. No locks: a Browserless is used by
// the test that started it.

package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BrowserlessOptions configures StartBrowserless. Zero fields mean: one
// running browser, no queue, a 5-minute lease cap, the token "fleettest".
type BrowserlessOptions struct {
	Concurrent int           // CONCURRENT: browsers running at once
	Queued     int           // QUEUED: handshakes waiting; negative means 0
	Timeout    time.Duration // TIMEOUT: hard cap per lease
	Token      string        // TOKEN
}

// Browserless is a running browserless server.
type Browserless struct {
	URL   string // ws://127.0.0.1:PORT (give it to browserpool.Browserless.URL)
	HTTP  string // http://127.0.0.1:PORT
	Token string
	s     *server
}

// StartBrowserless starts browserless on a free 127.0.0.1 port with its own
// directory and returns it once GET /active answers 204 (never
// /json/version, which launches a browser). It is stopped at tb's cleanup.
func StartBrowserless(tb testing.TB, opts BrowserlessOptions) *Browserless {
	tb.Helper()
	in, err := Install()
	if err != nil {
		unavailable(tb, "browserless", err)
	}
	if opts.Concurrent <= 0 {
		opts.Concurrent = 1
	}
	if opts.Queued < 0 {
		opts.Queued = 0
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.Token == "" {
		opts.Token = "fleettest"
	}
	dir := shortDir(tb)
	for _, d := range []string{"data", "downloads"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	s, port := startOnFreePort(tb, "browserless", func(port int) (*server, func() bool, error) {
		s, err := start(in.BrowserlessDir, filepath.Join(dir, "server.log"), env(dir,
			"HOST=127.0.0.1", "PORT="+itoa(port), "TOKEN="+opts.Token,
			"CONCURRENT="+itoa(opts.Concurrent), "QUEUED="+itoa(opts.Queued),
			"TIMEOUT="+itoa(int(opts.Timeout.Milliseconds())),
			"ROUTES="+in.BrowserlessRoutes, "PLAYWRIGHT_BROWSERS_PATH="+in.BrowserlessBrowsers,
			"DATA_DIR="+filepath.Join(dir, "data"), "DOWNLOAD_DIR="+filepath.Join(dir, "downloads"),
			"METRICS_JSON_PATH="+filepath.Join(dir, "metrics.json"), "ENABLE_DEBUGGER=false",
			"NODE_ENV=production",
		), in.Node, in.BrowserlessMain)
		active := fmt.Sprintf("http://127.0.0.1:%d/active?token=%s", port, opts.Token)
		return s, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			code, _, err := get(ctx, active)
			return err == nil && code == http.StatusNoContent
		}, err
	})
	return &Browserless{URL: fmt.Sprintf("ws://127.0.0.1:%d", port), HTTP: fmt.Sprintf("http://127.0.0.1:%d", port), Token: opts.Token, s: s}
}

// Session is one browser browserless runs, as GET /sessions lists it.
type Session struct {
	BrowserID  string `json:"browserId"`
	TrackingID string `json:"trackingId"`
}

// Sessions returns the browsers the server runs now.
func (b *Browserless) Sessions(ctx context.Context) ([]Session, error) {
	code, body, err := get(ctx, b.HTTP+"/sessions?token="+b.Token)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET /sessions: HTTP %d: %s", code, body)
	}
	var all []Session
	if err := json.Unmarshal(body, &all); err != nil {
		return nil, fmt.Errorf("GET /sessions: %v", err)
	}
	// One entry per target: keep one per browser.
	seen := map[string]bool{}
	var out []Session
	for _, s := range all {
		if !seen[s.BrowserID] {
			seen[s.BrowserID] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// Leases returns the number of browsers the server runs now, failing the
// test if it cannot tell within 10 s (GET /sessions answers 500 while a
// browser is closing: it is asked again).
func (b *Browserless) Leases(tb testing.TB) int {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s, err := b.Sessions(ctx)
		cancel()
		if err == nil {
			return len(s)
		}
		if time.Now().After(deadline) {
			tb.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pressure is GET /pressure's running and queued counts.
type Pressure struct {
	Running int `json:"running"`
	Queued  int `json:"queued"`
}

// Pressure returns how many browsers run and how many handshakes wait.
func (b *Browserless) Pressure(ctx context.Context) (Pressure, error) {
	code, body, err := get(ctx, b.HTTP+"/pressure?token="+b.Token)
	if err != nil {
		return Pressure{}, err
	}
	if code != http.StatusOK {
		return Pressure{}, fmt.Errorf("GET /pressure: HTTP %d", code)
	}
	var p struct {
		Pressure Pressure `json:"pressure"`
	}
	err = json.Unmarshal(body, &p)
	return p.Pressure, err
}

// Stop stops the server now (it is stopped at cleanup otherwise).
func (b *Browserless) Stop() { b.s.stop() }
