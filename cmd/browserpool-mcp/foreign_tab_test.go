package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A page tool or browser_tabs naming a tab, from a client with no browser
// yet, used to launch the client's default browser before finding that
// the tab was not its own (another client's, say): it is refused now with
// no browser launched. So are a tab action without a tab and an unknown
// action.
func TestNamingATabWithoutASessionLaunchesNoBrowser(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	owner, other := connect(t, s), connect(t, s)
	ok(t, owner, "browser_navigate", map[string]any{"url": site.URL})
	tab := find(t, `\* tab ([0-9A-F]+):`, ok(t, owner, "browser_tabs", map[string]any{"action": "list"}))

	want := "Error: you have no browser session yet, so no tab \"" + tab + "\"\n" +
		"Next: call the tool without tab (a page tool opens your browser), or browser_tabs with action new to open a tab"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_snapshot", map[string]any{"tab": tab}},
		{"browser_tabs", map[string]any{"action": "select", "tab": tab}},
		{"browser_tabs", map[string]any{"action": "close", "tab": tab}},
	} {
		if diff := cmp.Diff(want, fails(t, other, c.tool, c.args)); diff != "" {
			t.Errorf("%s %v from a client with no session (-want +got):\n%s", c.tool, c.args, diff)
		}
	}
	fails(t, other, "browser_tabs", map[string]any{"action": "close"})
	fails(t, other, "browser_tabs", map[string]any{"action": "shuffle"})
	if n := len(s.pool.Sessions()); n != 1 {
		t.Errorf("%d browser sessions; want only the owner's", n)
	}
}
