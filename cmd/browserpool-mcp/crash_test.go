package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// crashTab kills the renderer of the client's tab id, as a page that runs
// out of memory does.
func crashTab(t *testing.T, s *Server, id string) {
	t.Helper()
	ctx := context.Background()
	for _, se := range s.pool.Sessions() {
		if tab, err := se.Tab(ctx, id); err == nil {
			_ = tab.Client().Page.Crash(ctx) // its own reply may never come
			return
		}
	}
	t.Fatalf("no session has tab %s", id)
}

func TestACrashedTabIsTheCallingToolsErrorAndNavigateReplacesIt(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	tab := find(t, `tab ([0-9A-F]+)\]`, ok(t, cs, "browser_navigate", map[string]any{"url": site.URL}))
	goBtn := find(t, `button "Go" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))
	crashTab(t, s, tab)

	// Every call on the tab fails, naming the tool called and saying, as
	// browser_tabs does, that the tab is listed but crashed.
	var msg string
	waitFor(t, "a click to fail on the crashed tab", func() bool {
		res := call(t, cs, "browser_click", map[string]any{"ref": goBtn})
		msg = textOf(res)
		return res.IsError && strings.Contains(msg, "crashed")
	})
	msg = textOf(call(t, cs, "browser_click", map[string]any{"ref": goBtn}))
	if !strings.HasPrefix(msg, "Error: browserpool: browser_click ") || strings.Contains(msg, "browser_tabs session=") || strings.Contains(msg, "the tab is gone") ||
		!strings.Contains(msg, "still lists the tab") || !strings.Contains(msg, "browser_navigate without tab") {
		t.Errorf("a click on the crashed tab:\n%s", msg)
	}
	if list := ok(t, cs, "browser_tabs", map[string]any{"action": "list"}); !strings.Contains(list, "* tab "+tab) || !strings.Contains(list, "crashed") {
		t.Errorf("browser_tabs does not list the crashed tab as such:\n%s", list)
	}

	// browser_navigate without a tab closes the crashed active tab and
	// opens the URL in a new one, saying so.
	nav := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/other"})
	if !strings.Contains(nav, "The active tab "+tab+" had crashed: it was closed, and the URL opened in a new tab") || strings.Contains(nav, "tab "+tab+"]") {
		t.Errorf("browser_navigate with the active tab crashed:\n%s", nav)
	}
	if snap := ok(t, cs, "browser_snapshot", nil); !strings.Contains(snap, "other page") {
		t.Errorf("the snapshot after navigating away from the crash:\n%s", snap)
	}
	if list := ok(t, cs, "browser_tabs", map[string]any{"action": "list"}); strings.Contains(list, tab) {
		t.Errorf("the crashed tab is still listed:\n%s", list)
	}
}

func TestNavigateToAURLThatAnswersWithAFileSavesItAndAnAbortSuggestsNoDownload(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)

	// Three first calls at once: they share the session that opens, and
	// a navigation another one cut short is not taken for a download.
	var results []<-chan string
	for range 3 {
		results = append(results, callAsync(cs, "browser_navigate", map[string]any{"url": site.URL + "/other"}))
	}
	for _, r := range results {
		if got := <-r; strings.Contains(got, "download") {
			t.Errorf("a navigation racing two others:\n%s", got)
		}
	}

	got := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/report.csv"})
	path := find(t, `The URL is a file, not a page: saved "report.csv" \(8 bytes\) to (\S+) \[session`, got)
	if b, err := os.ReadFile(path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("the saved file %s holds %q (err %v)", path, b, err)
	}
	if again := ok(t, cs, "browser_page_info", nil); strings.Contains(again, "download completed") {
		t.Errorf("a note repeats the file browser_navigate saved:\n%s", again)
	}
}
