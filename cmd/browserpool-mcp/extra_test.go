package main

import (
	"bytes"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// extraSite serves two pages that log, fetch and hold a box of known size.
func extraSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/one", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>One</title><script>console.log("hello from one"); console.error("broken widget")</script>
<button id="box" aria-label="Box" style="display:block;width:120px;height:80px;padding:0;border:0;margin:0;background:#c33">box</button>
<button onclick="fetch('/api/items?page=2')">Load more</button>`)
	})
	mux.HandleFunc("/two", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Two</title><p>two</p>`)
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Long</title><body style="height:10000px;margin:0"><p>top</p></body>`)
	})
	mux.HandleFunc("/dates", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Dates</title><label>Due <input id="due" type="date"></label><label>Seats <input id="seats" type="number"></label>`)
	})
	mux.HandleFunc("/files", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Files</title><a href="/notes">Notes</a>`)
	})
	mux.HandleFunc("/notes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="notes.txt"`)
		fmt.Fprint(w, "notes")
	})
	mux.HandleFunc("/framed", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Framed</title><iframe src="/inner"></iframe>`)
	})
	mux.HandleFunc("/inner", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p id="msg">waiting</p><script>setTimeout(() => msg.textContent = "inner clicked", 200)</script>`)
	})
	mux.HandleFunc("/api/items", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestTheHistoryConsoleNetworkResizeAndPDFToolsAgainstRealChromium(t *testing.T) {
	requireBrowser(t)
	site := extraSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)

	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/one"})
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/two"})
	if back := ok(t, cs, "browser_navigate_back", nil); !strings.Contains(back, "/one") {
		t.Errorf("browser_navigate_back: %s", back)
	}
	if fwd := ok(t, cs, "browser_navigate_forward", nil); !strings.Contains(fwd, "/two") {
		t.Errorf("browser_navigate_forward: %s", fwd)
	}
	if msg := fails(t, cs, "browser_navigate_forward", nil); !strings.Contains(msg, "browser_navigate") {
		t.Errorf("browser_navigate_forward at the end of the history: %s", msg)
	}
	ok(t, cs, "browser_navigate_back", nil)

	// The page logged before the first call: its messages are there.
	if all := ok(t, cs, "browser_console_messages", nil); !strings.Contains(all, "[info] hello from one") || !strings.Contains(all, "[error] broken widget") {
		t.Errorf("browser_console_messages:\n%s", all)
	}
	if errs := ok(t, cs, "browser_console_messages", map[string]any{"onlyErrors": true}); strings.Contains(errs, "hello") || !strings.Contains(errs, "1 console errors") {
		t.Errorf("browser_console_messages onlyErrors:\n%s", errs)
	}

	// The log started when the first tool reached the tab, before the
	// first navigation: the pages loaded since are there.
	if first := ok(t, cs, "browser_network_requests", nil); !strings.Contains(first, "[GET] "+site.URL+"/one => [200] Document") || !strings.Contains(first, "[GET] "+site.URL+"/two => [200] Document") {
		t.Errorf("the first browser_network_requests does not list the pages loaded before it:\n%s", first)
	}
	snap := ok(t, cs, "browser_snapshot", nil)
	ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Load more" (@e\d+)`, snap)})
	waitFor(t, "the fetch in the network log", func() bool {
		return strings.Contains(ok(t, cs, "browser_network_requests", nil), "[GET] "+site.URL+"/api/items?page=2 => [200] Fetch")
	})

	box := find(t, `button "Box" (@e\d+)`, snap)
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "(el) => el.id + ' ' + el.textContent", "ref": box}); got != `"box box"` {
		t.Errorf("browser_evaluate on a ref = %s", got)
	}
	res := call(t, cs, "browser_take_screenshot", map[string]any{"ref": box})
	if res.IsError {
		t.Fatalf("browser_take_screenshot of a ref: %s", textOf(res))
	}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(imageOf(t, res).Data)); err != nil || cfg.Width != 120 || cfg.Height != 80 {
		t.Errorf("the element's screenshot is %dx%d (%v), want the box's 120x80", cfg.Width, cfg.Height, err)
	}

	ok(t, cs, "browser_resize", map[string]any{"width": 400, "height": 700})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "() => [innerWidth, innerHeight]"}); got != "[400,700]" {
		t.Errorf("the viewport after browser_resize = %s, want [400,700]", got)
	}

	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/long"})
	if msg := ok(t, cs, "browser_take_screenshot", map[string]any{"fullPage": true}); !strings.Contains(msg, "unreadable") || !strings.Contains(msg, "browser_scroll") {
		t.Errorf("a full-page screenshot of a 10000 px page does not say it is scaled past reading:\n%s", msg)
	}

	saved := ok(t, cs, "browser_pdf_save", map[string]any{"filename": "one.pdf"})
	path := find(t, `to (\S+one\.pdf)`, saved)
	if b, err := os.ReadFile(path); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Errorf("the saved PDF %s does not read as one (err %v)", path, err)
	}
}

func TestWaitForReadsFramesAndGivesUpAtItsTimeoutNamingWhatItWaitedFor(t *testing.T) {
	requireBrowser(t)
	site := extraSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/framed"})
	ok(t, cs, "browser_wait_for", map[string]any{"text": "inner clicked"}) // in the page's own frame
	ok(t, cs, "browser_wait_for", map[string]any{"textGone": "waiting"})
	msg := fails(t, cs, "browser_wait_for", map[string]any{"text": "never there", "timeout": 0.5})
	if !strings.Contains(msg, `the text "never there" did not appear within 500ms`) || !strings.Contains(msg, "timeout") {
		t.Errorf("a wait that runs out:\n%s", msg)
	}
}

func TestFillFormFillsDateAndNumberFieldsAsTextboxes(t *testing.T) {
	requireBrowser(t)
	site := extraSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/dates"})
	snap := ok(t, cs, "browser_snapshot", map[string]any{"interactive": true})
	// Their roles (Date, spinbutton) are no field types of the tool's
	// (Playwright MCP's five): its description sends them to textbox.
	ok(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{
		{"type": "textbox", "ref": find(t, `"Due" (@e\d+)`, snap), "value": "2024-02-29"},
		{"type": "textbox", "ref": find(t, `"Seats" (@e\d+)`, snap), "value": "3"},
	}})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "() => [due.value, seats.value]"}); got != `["2024-02-29","3"]` {
		t.Errorf("after browser_fill_form with the fields' roles as types: %s", got)
	}
}

func TestADownloadAClickStartedIsToldOnceWithWhereItWasSaved(t *testing.T) {
	requireBrowser(t)
	site := extraSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/files"})
	notes := find(t, `link "Notes" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))
	told := 0
	var note string
	check := func(out string) {
		if i := strings.Index(out, "a download completed"); i >= 0 {
			told++
			note = out[i:]
		}
	}
	check(ok(t, cs, "browser_click", map[string]any{"ref": notes}))
	waitFor(t, "a note of the download", func() bool {
		check(ok(t, cs, "browser_page_info", nil))
		return told > 0
	})
	check(ok(t, cs, "browser_page_info", nil))
	if told != 1 || !strings.Contains(note, `"notes.txt" (5 bytes)`) || !strings.Contains(note, "notes.txt") {
		t.Errorf("the download was told %d times; last note %q; want once, naming notes.txt and its path", told, note)
	}
	path := find(t, `saved to (\S+notes\.txt)`, note)
	if b, err := os.ReadFile(path); err != nil || string(b) != "notes" {
		t.Errorf("the file the note names: %q, %v", b, err)
	}
	// browser_download's own result says where its file went: no note
	// repeats it.
	if got := ok(t, cs, "browser_download", map[string]any{"ref": notes}); strings.Contains(got, "Note:") || !strings.Contains(got, "notes (1).txt") {
		t.Errorf("browser_download: %s", got)
	}
	if got := ok(t, cs, "browser_page_info", nil); strings.Contains(got, "a download completed") {
		t.Errorf("a note repeats browser_download's download: %s", got)
	}
}

// A request the server answered and whose load then failed (its body cut
// short) lists both: the status and the failure.
func TestANetworkRequestAnsweredThenFailedListsItsStatusAndItsFailure(t *testing.T) {
	requireBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cut" {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close() // 993 bytes short
			}
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Cut</title>`)
	}))
	t.Cleanup(srv.Close)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": srv.URL})
	ok(t, cs, "browser_evaluate", map[string]any{"function": "() => fetch('/cut').then(r => r.text()).catch(e => String(e))"})
	want := "[GET] " + srv.URL + "/cut => [200], then failed: net::ERR_CONTENT_LENGTH_MISMATCH Fetch"
	var got string
	waitFor(t, "the cut request in the log", func() bool {
		got = ok(t, cs, "browser_network_requests", nil)
		return strings.Contains(got, want)
	})
}

// A tab a page just opened, whose first page has not committed yet, is
// listed as loading one, not as titled "" at no URL.
func TestATabStillLoadingItsFirstPageIsListedAsSuch(t *testing.T) {
	requireBrowser(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select { // the page comes once the test is done
			case <-release:
			case <-r.Context().Done():
				return
			}
			fmt.Fprint(w, `<!doctype html><title>Slow</title>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Opener</title><button onclick="window.open('/slow')">Open</button>`)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handler
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": srv.URL})
	ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Open" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
	list := ok(t, cs, "browser_tabs", map[string]any{"action": "list"})
	if strings.Contains(list, `: "" `) || !strings.Contains(list, ": (no page yet: it is loading one)") {
		t.Errorf("browser_tabs list right after a page opened a slow tab:\n%s\nwant the new tab listed as loading its page", list)
	}
}
