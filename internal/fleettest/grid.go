// Room: the Selenium Grid test server. No locks: a Grid is used by the
// test that started it.

package fleettest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// GridOptions configures StartGrid. Zero fields mean: one session slot, a
// 300 s session idle timeout, a 300 s session-request timeout.
type GridOptions struct {
	MaxSessions    int           // node max-sessions
	SessionTimeout time.Duration // node session-timeout (idle sessions end)
	RequestTimeout time.Duration // sessionqueue session-request-timeout (whole seconds, at least 1)
}

// Grid is a running Selenium Grid 4 standalone.
type Grid struct {
	URL      string // http://127.0.0.1:PORT (give it to browserpool.SeleniumGrid.URL)
	Chromium string // the browser binary its node is configured with
	s        *server
}

// StartGrid starts a Selenium Grid standalone with one Chromium driver
// configuration on a free 127.0.0.1 port and returns it once GET /status
// says ready. It is stopped at tb's cleanup.
func StartGrid(tb testing.TB, opts GridOptions) *Grid {
	tb.Helper()
	in, err := Install()
	if err != nil {
		unavailable(tb, "selenium grid", err)
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = 1
	}
	secs := func(d time.Duration, def int) int {
		if d <= 0 {
			return def
		}
		return max(1, int(d.Round(time.Second)/time.Second))
	}
	dir := shortDir(tb)
	s, port := startOnFreePort(tb, "selenium grid", func(port int) (*server, func() bool, error) {
		toml := fmt.Sprintf(`[server]
host = "127.0.0.1"
port = %d

[node]
detect-drivers = false
selenium-manager = false
max-sessions = %d
session-timeout = %d
override-max-sessions = true

[[node.driver-configuration]]
display-name = "chromium"
webdriver-executable = %q
max-sessions = %d
stereotype = '{"browserName":"chrome","platformName":"linux","goog:chromeOptions":{"binary":%q}}'

[sessionqueue]
session-request-timeout = %d
session-request-timeout-period = 1
`, port, opts.MaxSessions, secs(opts.SessionTimeout, 300), in.Chromedriver, opts.MaxSessions, in.Chromium, secs(opts.RequestTimeout, 300))
		cfg := filepath.Join(dir, "grid.toml")
		if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
			return nil, nil, err
		}
		// -XX:-UsePerfData: the JVM's perf data goes to /tmp/hsperfdata_<user>
		// whatever java.io.tmpdir says; the server leaves nothing there.
		s, err := start(dir, filepath.Join(dir, "server.log"), env(dir), in.Java,
			"-XX:-UsePerfData", "-Djava.io.tmpdir="+dir, "-jar", in.GridJar, "standalone", "--config", cfg)
		g := &Grid{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
		return s, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			st, err := g.Status(ctx)
			return err == nil && st.Ready
		}, err
	})
	return &Grid{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Chromium: in.Chromium, s: s}
}

// Status is the part of GET /status the tests read.
type Status struct {
	Ready bool
	Slots int // slots on all nodes
	Busy  int // slots holding a session
}

// Status returns the Grid's readiness and slot use.
func (g *Grid) Status(ctx context.Context) (Status, error) {
	code, body, err := get(ctx, g.URL+"/status")
	if err != nil {
		return Status{}, err
	}
	if code != http.StatusOK {
		return Status{}, fmt.Errorf("GET /status: HTTP %d", code)
	}
	var r struct {
		Value struct {
			Ready bool `json:"ready"`
			Nodes []struct {
				Slots []struct {
					Session any `json:"session"`
				} `json:"slots"`
			} `json:"nodes"`
		} `json:"value"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return Status{}, fmt.Errorf("GET /status: %v", err)
	}
	st := Status{Ready: r.Value.Ready}
	for _, n := range r.Value.Nodes {
		for _, s := range n.Slots {
			st.Slots++
			if s.Session != nil {
				st.Busy++
			}
		}
	}
	return st, nil
}

// Counts is what Grid's GraphQL says of its sessions.
type Counts struct {
	Sessions int `json:"sessionCount"`
	Max      int `json:"maxSession"`
	Queued   int `json:"sessionQueueSize"`
}

// Counts returns the Grid's session, slot and queue counts.
func (g *Grid) Counts(ctx context.Context) (Counts, error) {
	q := []byte(`{"query":"{ grid { sessionCount maxSession sessionQueueSize } }"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(q))
	if err != nil {
		return Counts{}, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		return Counts{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Grid Counts `json:"grid"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return Counts{}, fmt.Errorf("POST /graphql: HTTP %d: %v", resp.StatusCode, err)
	}
	return r.Data.Grid, nil
}

// SessionIDs returns the ids of the sessions the Grid holds now.
func (g *Grid) SessionIDs(ctx context.Context) ([]string, error) {
	q := []byte(`{"query":"{ sessionsInfo { sessions { id } } }"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/graphql", bytes.NewReader(q))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			SessionsInfo struct {
				Sessions []struct {
					ID string `json:"id"`
				} `json:"sessions"`
			} `json:"sessionsInfo"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("POST /graphql: HTTP %d: %v", resp.StatusCode, err)
	}
	var ids []string
	for _, s := range r.Data.SessionsInfo.Sessions {
		ids = append(ids, s.ID)
	}
	return ids, nil
}

// Delete ends session id as a client other than the pool would
// (DELETE /session/{id}).
func (g *Grid) Delete(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, g.URL+"/session/"+id, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("DELETE /session/%s: HTTP %d", id, resp.StatusCode)
	}
	return nil
}

// Leases returns the number of sessions the Grid holds now, failing the
// test if it cannot tell.
func (g *Grid) Leases(tb testing.TB) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := g.Counts(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return c.Sessions
}

// Capabilities returns alwaysMatch capabilities that run this Grid's
// Chromium headless, with the flags this machine needs.
func (g *Grid) Capabilities() map[string]any {
	return map[string]any{"browserName": "chrome", "goog:chromeOptions": map[string]any{
		"binary": g.Chromium,
		"args":   []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"},
	}}
}

// Stop stops the server now (it is stopped at cleanup otherwise).
func (g *Grid) Stop() { g.s.stop() }
