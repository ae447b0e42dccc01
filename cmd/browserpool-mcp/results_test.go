package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/browserpool/browserpool"
	"github.com/google/go-cmp/cmp"
)

// resultsSite serves the pages of the tests below: images in data: URLs,
// a page that closes its own tab, a form of two checkboxes.
func resultsSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	page := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	page("/", `<!doctype html><title>Home</title><p>home</p>`)
	page("/images", `<!doctype html><title>Images</title><body><script>
for (let i = 0; i < 3; i++) {
	const im = new Image();
	im.src = 'data:image/svg+xml;base64,' + btoa('<svg xmlns="http://www.w3.org/2000/svg"><!--' + 'z'.repeat(20000) + i + '--></svg>');
	document.body.appendChild(im);
}
fetch('/api?q=' + 'x'.repeat(500)).then(r => r.text());
</script>`)
	page("/opener", `<!doctype html><title>Opener</title><button onclick="window.open('/selfclose')">Open</button>`)
	page("/selfclose", `<!doctype html><title>Self-closing</title><button onclick="window.close()">Close me</button>`)
	page("/form", `<!doctype html><title>Form</title>
<label><input type="checkbox" id="a"> Alpha</label>
<label><input type="checkbox" id="b" checked> Beta</label>
<div role="checkbox" aria-checked="false" tabindex="0" id="c" onclick="this.setAttribute('aria-checked', this.getAttribute('aria-checked') === 'true' ? 'false' : 'true')">Gamma</div>
<label>Name <input id="name"></label>
<label style="cursor:pointer"><input type="checkbox" id="d" style="display:none"> Delta</label>
<label>Size <select id="size"><option>S</option><option>L</option></select></label>`)
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "{}") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestASnapshotWithANegativeMaxCharsIsRefusedSayingWhatWorks(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	msg := fails(t, connect(t, s), "browser_snapshot", map[string]any{"maxChars": -1})
	want := "Error: browser_snapshot got maxChars -1: it takes 0 (the default, 30000 characters) or a positive number of characters\n" +
		"Next: call browser_snapshot again without maxChars, or with a bound such as 60000; interactive true makes the snapshot shorter"
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("browser_snapshot with maxChars -1 (-want +got):\n%s", diff)
	}
}

func TestTheNetworkListingShortensLongURLsAndLeavesOutTheBrowsersErrorPage(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	ok(t, cs, "browser_network_requests", nil) // the log starts here
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/images"})
	var list string
	waitFor(t, "the images and the fetch done in the log", func() bool {
		list = ok(t, cs, "browser_network_requests", nil)
		return strings.Count(list, "data:image/svg+xml") == 3 && strings.Contains(list, "xxx… => [200]")
	})
	// Chromium refuses port 9 at once, and shows its error page, whose
	// images are data: URLs of its own.
	fails(t, cs, "browser_navigate", map[string]any{"url": "http://127.0.0.1:9/"})
	list = ok(t, cs, "browser_network_requests", nil)
	for line := range strings.Lines(list) {
		if n := utf8.RuneCountInString(line); n > 300 {
			t.Errorf("a line of %d characters in the network listing: %.300s…", n, line)
		}
	}
	for _, want := range []string{
		"[GET] data:image/svg+xml;base64 (26,",
		"[GET] " + site.URL + "/api?q=xxxxxxxx",
		"xxx… => [200]",
		"[GET] http://127.0.0.1:9/ => failed: net::ERR_UNSAFE_PORT Document",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the network listing has no %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "data:image/png") || !strings.Contains(list, "the browser's error page loaded after a failed page load are left out") {
		t.Errorf("the network listing shows the images of Chromium's error page, or does not say they are left out:\n%s", list)
	}
}

func TestEvaluateReturnsTextAsItsCharactersInItsKeysOrder(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	got := ok(t, cs, "browser_evaluate", map[string]any{"function": `() => ({zeta: "Grüße – 東京", alpha: "<b>&</b>", line: "a\n\"b\"", n: [1.5, true, null, {}, []]})`})
	want := `{"zeta":"Grüße – 東京","alpha":"<b>&</b>","line":"a\n\"b\"","n":[1.5,true,null,{},[]]}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("browser_evaluate of non-ASCII text (-want +got):\n%s", diff)
	}
	// A result over the bound is cut between two characters.
	got = ok(t, cs, "browser_evaluate", map[string]any{"function": `() => "€".repeat(10000)`})
	if want := `"` + strings.Repeat("€", 6666) + "… (cut at 19999 of 30002 bytes"; !utf8.ValidString(got) || !strings.HasPrefix(got, want) {
		t.Errorf("browser_evaluate of 10000 euro signs = %.60q…%q, want it to start %.60q…%q", got, got[max(0, len(got)-80):], want, want[len(want)-40:])
	}
}

func TestAClickWhosePageClosesItsTabSaysSoAndNamesTheActiveTab(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/opener"})
	opener := find(t, `tab (\S+)\]`, ok(t, cs, "browser_snapshot", nil))
	opened := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Open" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
	popup := find(t, `new tab (\S+) `, opened)
	ok(t, cs, "browser_tabs", map[string]any{"action": "select", "tab": popup})
	ok(t, cs, "browser_wait_for", map[string]any{"text": "Close me"})
	msg := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Close me" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
	want := fmt.Sprintf(`Then the page closed this tab (window.close()). The session's active tab is now %s: "Opener" %s/opener; page tools without tab act on it. To work in another tab, call browser_tabs with action list, then action select.`, opener, site.URL)
	if !strings.Contains(msg, want) {
		t.Errorf("the click that made the page close its tab says:\n%s\nwant it to contain:\n%s", msg, want)
	}
}

func TestTypingWithNothingFocusedSaysToClickTheFieldOrPassItsRef(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	msg := fails(t, cs, "browser_type", map[string]any{"text": "hello"})
	if want := "\nNext: click the field with browser_click, or pass its ref to browser_type; for a page's shortcut key use browser_press_key"; !strings.HasSuffix(msg, want) {
		t.Errorf("browser_type with nothing focused:\n%s\nwant it to end %q", msg, want)
	}
}

func TestAnActionThatRanIntoABusyScriptSaysToLookBeforeRepeatingIt(t *testing.T) {
	requireBrowser(t)
	site := hangSite(t)
	s := newServer(t, Config{CallTimeout: 3 * time.Second})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/hang"})
	msg := fails(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Freeze" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
	want := "\nNext: the action may have started a script that is still running (if it never returns, it is stopped in a moment): call browser_snapshot in a few seconds to see what the action did, before repeating the action"
	if !strings.HasSuffix(msg, want) || strings.Contains(msg, "call the tool again") {
		t.Errorf("a click that froze the page:\n%s\nwant it to end %q", msg, want)
	}
	waitFor(t, "the page to answer again", func() bool {
		res := call(t, cs, "browser_evaluate", map[string]any{"function": "1 + 1"})
		return !res.IsError && textOf(res) == "2"
	})
}

func TestGoingBackToAPageWhoseLoadFailedSaysTheTabShowsTheErrorPage(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	fails(t, cs, "browser_navigate", map[string]any{"url": "http://127.0.0.1:9/"})
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/opener"})
	// The library may answer with the failed load's result or with its
	// error: either says what the tab shows and what to do.
	res := call(t, cs, "browser_navigate_back", nil)
	msg := textOf(res)
	want := "Navigated to http://127.0.0.1:9/, but its load failed: the tab shows the browser's error page [session "
	if res.IsError {
		want = "\nNext: the tab shows the browser's error page for that entry: call browser_navigate with a URL that works, or browser_navigate_back again to go past it"
	}
	if !strings.Contains(msg, want) {
		t.Errorf("going back to a page whose load failed:\n%s\nwant it to contain %q", msg, want)
	}
}

func TestAHistoryEntryWhoseLoadFailedReadsAsSuchEitherWayTheLibraryTellsIt(t *testing.T) {
	r := browserpool.NavigateResult{SessionID: "s-1", TabID: "T1", URL: "http://127.0.0.1:9/", FinalURL: "chrome-error://chromewebdata/"}
	want := "Navigated to http://127.0.0.1:9/, but its load failed: the tab shows the browser's error page [session s-1, tab T1]. Call browser_snapshot to read the error, then browser_navigate with a URL that works."
	if diff := cmp.Diff(want, navigated(r)); diff != "" {
		t.Errorf("navigated to an error page (-want +got):\n%s", diff)
	}
	err := &browserpool.Error{Op: "Tab.Forward", Session: "s-1", Tab: "T1", Class: browserpool.ErrNavigation, Detail: "http://127.0.0.1:9/: net::ERR_UNSAFE_PORT"}
	want = "Error: browserpool: browser_navigate_forward session=s-1 tab=T1: navigation failed: http://127.0.0.1:9/: net::ERR_UNSAFE_PORT\n" +
		"Next: the tab shows the browser's error page for that entry: call browser_navigate with a URL that works, or browser_navigate_forward again to go past it"
	if diff := cmp.Diff(want, describeFor("browser_navigate_forward", err)); diff != "" {
		t.Errorf("a forward navigation whose load failed (-want +got):\n%s", diff)
	}
}

func TestErrorsOfOneToolDoingAnothersWorkNameItAndWhatItTakes(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/form"})
	snap := ok(t, cs, "browser_snapshot", nil)
	alpha := find(t, `checkbox "Alpha" (@e\d+)`, snap)
	size := find(t, `combobox "Size" (@e\d+)`, snap)

	msg := fails(t, cs, "browser_download", map[string]any{"ref": "@e9999"})
	if !strings.HasPrefix(msg, "Error: browserpool: browser_download session=") {
		t.Errorf("browser_download of a stale ref is not its own error:\n%s", msg)
	}
	for _, c := range []struct{ ref, next string }{
		{alpha, fmt.Sprintf(`Next: give field %s the type "checkbox" and the value "true" (checked) or "false"`, alpha)},
		{size, fmt.Sprintf(`Next: give field %s the type "combobox" and the value the option's value or label`, size)},
	} {
		msg = fails(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"type": "textbox", "ref": c.ref, "value": "abc"}}})
		if !strings.HasPrefix(msg, "Error: browserpool: browser_fill_form session=") || !strings.HasSuffix(msg, c.next) {
			t.Errorf("browser_fill_form of %s as a textbox:\n%s\nwant it to be browser_fill_form's error ending %q", c.ref, msg, c.next)
		}
	}
	msg = fails(t, cs, "browser_tabs", map[string]any{"action": "new", "url": "example"})
	if want := "\nNext: call browser_tabs again with action new and an http:// or https:// URL (or no url, for a blank tab)"; !strings.HasSuffix(msg, want) {
		t.Errorf("browser_tabs action new with a URL without scheme:\n%s\nwant it to end %q", msg, want)
	}
}

func TestFillFormReadsCheckboxesWithoutASnapshotOfThePage(t *testing.T) {
	requireBrowser(t)
	site := resultsSite(t)
	var trace lockedBuffer
	s := newServer(t, Config{Trace: &trace})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/form"})
	snap := ok(t, cs, "browser_snapshot", nil)
	ok(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{
		{"type": "checkbox", "ref": find(t, `checkbox "Alpha" (@e\d+)`, snap), "value": "true"},
		{"type": "checkbox", "ref": find(t, `checkbox "Beta" (@e\d+)`, snap), "value": "false"},
		{"type": "checkbox", "ref": find(t, `checkbox "Gamma" (@e\d+)`, snap), "value": "true"},
		// The label of a hidden checkbox has the ref: it stands for it.
		{"type": "checkbox", "ref": find(t, `clickable "Delta" (@e\d+) \(the label of a hidden checkbox\)`, snap), "value": "true"},
	}})
	got := ok(t, cs, "browser_evaluate", map[string]any{"function": `() => [a.checked, b.checked, c.getAttribute("aria-checked"), d.checked]`})
	if diff := cmp.Diff(`[true,false,"true",true]`, got); diff != "" {
		t.Errorf("the checkboxes after browser_fill_form (-want +got):\n%s", diff)
	}
	waitFor(t, "the trace to have the evaluate after the fill", func() bool { return strings.Contains(trace.String(), `d.checked]`) })
	if n := strings.Count(trace.String(), `"action":"snapshot"`); n != 1 {
		t.Errorf("the trace has %d snapshots, want only the one asked for: browser_fill_form reads a checkbox without one:\n%s", n, trace.String())
	}
	msg := fails(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"type": "checkbox", "ref": find(t, `textbox "Name" (@e\d+)`, snap), "value": "true"}}})
	if !strings.Contains(msg, "is a textbox, not a checkbox") {
		t.Errorf("browser_fill_form of a textbox as a checkbox:\n%s", msg)
	}
}
