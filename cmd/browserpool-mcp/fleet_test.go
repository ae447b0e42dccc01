package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/fleettest"
)

func TestFleetFlagsChooseOneLauncherAndRefuseWhatCannotGoTogether(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parse([]string{"-browserless", "ws://127.0.0.1:3000", "-fleet-token-file", tokenFile}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	bl, ok := o.cfg.Pool.Launcher.(*browserpool.Browserless)
	if !ok || bl.URL != "ws://127.0.0.1:3000" || bl.Token != "s3cret" {
		t.Errorf("-browserless gave launcher %#v, want Browserless at ws://127.0.0.1:3000 with the file's token", o.cfg.Pool.Launcher)
	}
	o, err = parse([]string{"-selenium-grid", "http://127.0.0.1:4444", "-grid-capabilities", `{"browserName":"chrome"}`}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := o.cfg.Pool.Launcher.(*browserpool.SeleniumGrid)
	if !ok || g.URL != "http://127.0.0.1:4444" {
		t.Fatalf("-selenium-grid gave launcher %#v, want SeleniumGrid at http://127.0.0.1:4444", o.cfg.Pool.Launcher)
	}
	if diff := cmp.Diff(map[string]any{"browserName": "chrome"}, g.Capabilities); diff != "" {
		t.Errorf("-grid-capabilities (-want +got):\n%s", diff)
	}
	if o, err := parse(nil, io.Discard); err != nil || o.cfg.Pool.Launcher != nil {
		t.Errorf("no fleet flag: launcher %v, err %v; want the local default", o.cfg.Pool.Launcher, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-browserless", "ws://a", "-selenium-grid", "http://b"}, "not both"},
		{[]string{"-browserless", "ws://a", "-cdp-endpoint", "9222"}, "-cdp-endpoint"},
		{[]string{"-selenium-grid", "http://b", "-browser", "/usr/bin/chromium"}, "-browser"},
		{[]string{"-selenium-grid", "http://b", "-grid-capabilities", "[1]"}, "JSON object"},
		{[]string{"-selenium-grid", "http://b", "-fleet-token-file", tokenFile}, "for -browserless"},
		{[]string{"-browserless", "ws://a", "-grid-capabilities", "{}"}, "for -selenium-grid"},
		{[]string{"-grid-capabilities", "{}"}, "need -selenium-grid or -browserless"},
		{[]string{"-browserless", "ws://a", "-fleet-token-file", filepath.Join(t.TempDir(), "missing")}, "-fleet-token-file"},
	} {
		_, err := parse(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parse(%q) error = %v, want one mentioning %q", tc.args, err, tc.want)
		}
	}
}

func TestBrowserlessFlagLeasesEachClientsBrowserFromTheFleet(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 2, Token: "fleet-s3cret"})
	t.Setenv(FleetTokenEnv, srv.Token)
	o, err := parse([]string{"-browserless", srv.URL}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, o.cfg)
	cs := connect(t, s)

	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	snap := ok(t, cs, "browser_snapshot", nil)
	find(t, `button "Go" (@e\d+)`, snap)
	list := ok(t, cs, "browser_session_list", nil)
	if want := "leased from the browserless fleet at " + srv.URL; !strings.Contains(list, want) {
		t.Errorf("browser_session_list does not say where the browser runs (want %q):\n%s", want, list)
	}
	if strings.Contains(list, srv.Token) {
		t.Errorf("browser_session_list shows the fleet token:\n%s", list)
	}
	if n := srv.Leases(t); n != 1 {
		t.Errorf("browserless runs %d browsers for one client, want 1", n)
	}
	ok(t, cs, "browser_session_close", map[string]any{"session": "default"})
	fleettest.WaitFor(t, "the lease to end on the server", func() bool { return srv.Leases(t) == 0 })
}
