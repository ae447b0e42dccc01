package main

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// imageOf returns a result's image content, failing without one.
func imageOf(t *testing.T, res *mcp.CallToolResult) *mcp.ImageContent {
	t.Helper()
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			return ic
		}
	}
	t.Fatalf("no image content in %s", textOf(res))
	return nil
}

func TestFlowNavigateSnapshotClickFillScreenshotOverInMemoryTransport(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)

	nav := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	if !strings.Contains(nav, "browser_snapshot") {
		t.Errorf("navigate result does not point to browser_snapshot: %s", nav)
	}
	snap := ok(t, cs, "browser_snapshot", nil)
	email := find(t, `textbox "Email" (@e\d+)`, snap)
	goBtn := find(t, `button "Go" (@e\d+)`, snap)
	agree := find(t, `checkbox "I agree" (@e\d+)`, snap)
	plan := find(t, `combobox "Plan" (@e\d+)`, snap)

	ok(t, cs, "browser_type", map[string]any{"element": "Email", "ref": email, "text": "ann@example.com"})
	// Refs are accepted without their "@", as Playwright MCP writes them.
	ok(t, cs, "browser_click", map[string]any{"element": "Go", "ref": strings.TrimPrefix(goBtn, "@")})
	if snap := ok(t, cs, "browser_snapshot", nil); !strings.Contains(snap, "clicked ann@example.com") {
		t.Errorf("after typing and clicking, the snapshot does not show the page's answer:\n%s", snap)
	}

	ok(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{
		{"name": "Email", "type": "textbox", "ref": email, "value": "bob@example.com"},
		{"name": "I agree", "type": "checkbox", "ref": agree, "value": "true"},
		{"name": "Plan", "type": "combobox", "ref": plan, "value": "Pro"},
	}})
	got := ok(t, cs, "browser_evaluate", map[string]any{"function": `() => [document.getElementById('email').value, document.getElementById('agree').checked, document.getElementById('plan').value]`})
	if want := `["bob@example.com",true,"pro"]`; got != want {
		t.Errorf("form after browser_fill_form = %s, want %s", got, want)
	}
	// Filling a checkbox that is already checked leaves it checked.
	ok(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"type": "checkbox", "ref": agree, "value": "true"}}})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.getElementById('agree').checked"}); got != "true" {
		t.Errorf("checkbox after filling it true twice = %s, want true", got)
	}

	vw, _ := strconv.Atoi(ok(t, cs, "browser_evaluate", map[string]any{"function": "() => innerWidth"}))
	vh, _ := strconv.Atoi(ok(t, cs, "browser_evaluate", map[string]any{"function": "() => innerHeight"}))
	for _, tc := range []struct {
		args         map[string]any
		format       string
		wantW, wantH int
	}{
		{nil, "png", vw, vh},
		{map[string]any{"maxDimension": 200, "type": "jpeg", "filename": "small.jpg"}, "jpeg", 200, vh * 200 / vw},
		// The name alone makes a JPEG: the image says so, not png.
		{map[string]any{"maxDimension": 200, "filename": "named.jpeg"}, "jpeg", 200, vh * 200 / vw},
		// A name without an extension gets the tool's: the library
		// refuses it as it is.
		{map[string]any{"maxDimension": 200, "filename": "bare"}, "png", 200, vh * 200 / vw},
	} {
		res := call(t, cs, "browser_take_screenshot", tc.args)
		if res.IsError {
			t.Fatalf("browser_take_screenshot(%v): %s", tc.args, textOf(res))
		}
		img := imageOf(t, res)
		cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil {
			t.Fatalf("screenshot %v does not decode: %v", tc.args, err)
		}
		if format != tc.format || img.MIMEType != "image/"+tc.format {
			t.Errorf("screenshot %v is %s (%s), want %s", tc.args, format, img.MIMEType, tc.format)
		}
		// Scaling rounds: allow one pixel on the derived side.
		if cfg.Width != tc.wantW || cfg.Height < tc.wantH-1 || cfg.Height > tc.wantH+1 {
			t.Errorf("screenshot %v is %dx%d, want %dx%d", tc.args, cfg.Width, cfg.Height, tc.wantW, tc.wantH)
		}
		path := find(t, `saved to (\S+)`, textOf(res))
		if tc.args["filename"] == "bare" && filepath.Base(path) != "bare.png" {
			t.Errorf("a screenshot named bare was saved as %s, want bare.png", filepath.Base(path))
		}
		if saved, err := os.ReadFile(path); err != nil || !bytes.Equal(saved, img.Data) {
			t.Errorf("the saved file %s is not the image returned (err %v)", path, err)
		}
	}

	msg := fails(t, cs, "browser_click", map[string]any{"element": "gone", "ref": "@e999"})
	if !strings.Contains(msg, "browser_snapshot") || strings.Contains(msg, "Tab.") {
		t.Errorf("a bad ref's error does not send the agent to browser_snapshot in tool names:\n%s", msg)
	}
}

func TestDialogWaitsForBrowserHandleDialog(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	ask := find(t, `button "Ask" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))

	// The click opens a confirm dialog: the click was done (no error to
	// retry), and its result names the dialog and the tool that answers it.
	if msg := ok(t, cs, "browser_click", map[string]any{"ref": ask}); !strings.Contains(msg, `It opened a confirm dialog "Sure?"`) || !strings.Contains(msg, "browser_handle_dialog") {
		t.Errorf("the click's result does not name the dialog it opened and browser_handle_dialog:\n%s", msg)
	}
	if info := ok(t, cs, "browser_page_info", nil); !strings.Contains(info, "Sure?") {
		t.Errorf("browser_page_info does not show the open dialog: %s", info)
	}
	// An action while it is open is refused: it was not done.
	if msg := fails(t, cs, "browser_click", map[string]any{"ref": ask}); !strings.Contains(msg, "browser_handle_dialog") {
		t.Errorf("a click while the dialog is open does not fail naming browser_handle_dialog:\n%s", msg)
	}
	ok(t, cs, "browser_handle_dialog", map[string]any{"accept": true})
	ok(t, cs, "browser_wait_for", map[string]any{"text": "confirmed"})
}

func TestTabsAndSessionsOfOneClient(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{PerClient: 2})
	cs := connect(t, s)

	first := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	firstTab := find(t, `tab ([0-9A-F]+)\]`, first)
	opened := ok(t, cs, "browser_tabs", map[string]any{"action": "new", "url": site.URL + "/other"})
	newTab := find(t, `\* tab ([0-9A-F]+): "Other"`, opened)
	if strings.Count(opened, newTab) != 1 || !strings.HasPrefix(opened, "Opened a new tab; it is the active one") {
		t.Errorf("the result of opening a tab does not name it once, as the active one:\n%s", opened)
	}
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.title", "tab": firstTab}); got != `"Sign up"` {
		t.Errorf("evaluate in the first tab = %s", got)
	}
	if selected := ok(t, cs, "browser_tabs", map[string]any{"action": "select", "tab": firstTab}); strings.Count(selected, firstTab) != 1 || !strings.Contains(selected, "* tab "+firstTab) {
		t.Errorf("the result of selecting a tab does not name it once, as the active one:\n%s", selected)
	}
	closed := ok(t, cs, "browser_tabs", map[string]any{"action": "close", "tab": newTab})
	if strings.Contains(closed, newTab+":") {
		t.Errorf("the closed tab is still listed:\n%s", closed)
	}

	ok(t, cs, "browser_session_open", map[string]any{"name": "second", "url": site.URL + "/other"})
	msg := fails(t, cs, "browser_snapshot", nil)
	if !strings.Contains(msg, "default") || !strings.Contains(msg, "second") || !strings.Contains(msg, "browser_session_list") {
		t.Errorf("with two sessions and none named, the error does not list them and name browser_session_list:\n%s", msg)
	}
	if snap := ok(t, cs, "browser_snapshot", map[string]any{"session": "second"}); !strings.Contains(snap, "other page") {
		t.Errorf("snapshot of session second:\n%s", snap)
	}
	// A tab id alone finds its session among the client's.
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.title", "tab": firstTab}); got != `"Sign up"` {
		t.Errorf("evaluate by tab id alone = %s", got)
	}
	msg = fails(t, cs, "browser_session_open", map[string]any{"name": "third"})
	if !strings.Contains(msg, "browser_session_close") {
		t.Errorf("over the per-client limit the error does not name browser_session_close:\n%s", msg)
	}
	ok(t, cs, "browser_session_close", map[string]any{"session": "second"})
	if list := ok(t, cs, "browser_session_list", nil); strings.Contains(list, "second") || !strings.Contains(list, "default") {
		t.Errorf("after closing second, the list is:\n%s", list)
	}

	// With its last tab closed, the session opens the next URL in a new
	// tab, as a browser does.
	ok(t, cs, "browser_tabs", map[string]any{"action": "close", "tab": firstTab})
	again := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/other"})
	if !strings.Contains(again, "Navigated to") || strings.Contains(again, firstTab) {
		t.Errorf("browser_navigate after the last tab was closed: %s", again)
	}
	if snap := ok(t, cs, "browser_snapshot", nil); !strings.Contains(snap, "other page") {
		t.Errorf("the snapshot after navigating in a new tab:\n%s", snap)
	}
}

func TestTheOtherPageToolsAgainstRealChromium(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/tools"})
	snap := ok(t, cs, "browser_snapshot", map[string]any{"interactive": true})
	out := func() string {
		return ok(t, cs, "browser_evaluate", map[string]any{"function": "document.getElementById('out').textContent"})
	}

	ok(t, cs, "browser_hover", map[string]any{"ref": find(t, `button "Hover me" (@e\d+)`, snap)})
	if got := out(); got != `"hovered"` {
		t.Errorf("after browser_hover: %s", got)
	}

	ok(t, cs, "browser_type", map[string]any{"ref": find(t, `textbox "Name" (@e\d+)`, snap), "text": "Ann", "submit": true})
	if got := out(); got != `"entered Ann"` {
		t.Errorf("after browser_type with submit: %s", got)
	}
	ok(t, cs, "browser_press_key", map[string]any{"key": "Control+A"})
	ok(t, cs, "browser_type", map[string]any{"text": "Bob"}) // into the focused field, over the selection
	ok(t, cs, "browser_press_key", map[string]any{"key": "Enter"})
	if got := out(); got != `"entered Bob"` {
		t.Errorf("after browser_press_key and browser_type without a ref: %s", got)
	}
	long := "Bob Tables, whose name runs well past the middle of the field"
	ok(t, cs, "browser_type", map[string]any{"ref": find(t, `textbox "Name" (@e\d+)`, snap), "text": long})
	ok(t, cs, "browser_type", map[string]any{"ref": find(t, `textbox "Name" (@e\d+)`, snap), "text": "!", "slowly": true, "submit": true})
	if got := out(); got != `"entered `+long+`!"` {
		t.Errorf("after browser_type slowly, after what the field held: %s", got)
	}

	// Email and number fields take no caret from script: the keys still
	// go after what they hold.
	ok(t, cs, "browser_type", map[string]any{"ref": find(t, `textbox "Mail" (@e\d+)`, snap), "text": "example.com", "slowly": true})
	ok(t, cs, "browser_type", map[string]any{"ref": find(t, `spinbutton "Count" (@e\d+)`, snap), "text": "2", "slowly": true})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "() => [mail.value, count.value]"}); got != `["ann@example.com","42"]` {
		t.Errorf("after browser_type slowly into an email and a number field: %s", got)
	}

	sel := ok(t, cs, "browser_select_option", map[string]any{"ref": find(t, `listbox "Colors" (@e\d+)`, snap), "values": []string{"Red", "b"}})
	if !strings.Contains(sel, `["r" "b"]`) {
		t.Errorf("browser_select_option: %s", sel)
	}

	file := t.TempDir() + "/upload.txt"
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	ok(t, cs, "browser_file_upload", map[string]any{"ref": find(t, `button "File" (@e\d+)`, snap), "paths": []string{file}})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "async () => await document.getElementById('file').files[0].text()"}); got != `"hello"` {
		t.Errorf("the uploaded file reads %s", got)
	}

	dl := ok(t, cs, "browser_download", map[string]any{"ref": find(t, `link "Report" (@e\d+)`, snap)})
	path := find(t, ` to (\S+) \[session`, dl)
	if b, err := os.ReadFile(path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("the downloaded file %s holds %q (err %v)", path, b, err)
	}

	scrolled := ok(t, cs, "browser_scroll", map[string]any{"deltaY": 600})
	if y := find(t, `page is now at 0,(\d+) of`, scrolled); y == "0" {
		t.Errorf("browser_scroll did not move the page: %s", scrolled)
	}
	if info := ok(t, cs, "browser_page_info", nil); !strings.Contains(info, "Page: Tools") || strings.Contains(info, "scrolled to 0,0") {
		t.Errorf("browser_page_info after scrolling: %s", info)
	}

	ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Later" (@e\d+)`, snap)})
	ok(t, cs, "browser_wait_for", map[string]any{"text": "arrived later"})
	ok(t, cs, "browser_wait_for", map[string]any{"selector": "#late"})
	ok(t, cs, "browser_wait_for", map[string]any{"textGone": "waiting for nothing"})
	ok(t, cs, "browser_wait_for", map[string]any{"state": "load"})
	ok(t, cs, "browser_wait_for", map[string]any{"time": 0.05})
	if msg := fails(t, cs, "browser_wait_for", map[string]any{"text": "a", "selector": "b"}); !strings.Contains(msg, "exactly one") {
		t.Errorf("two conditions: %s", msg)
	}
	if msg := fails(t, cs, "browser_evaluate", map[string]any{"function": "() => { throw new Error('boom') }"}); !strings.Contains(msg, "boom") || !strings.Contains(msg, "browser_evaluate") {
		t.Errorf("a throwing function: %s", msg)
	}
	if msg := fails(t, cs, "browser_navigate", map[string]any{"url": "file:///etc/passwd"}); !strings.Contains(msg, "http://") || !strings.Contains(msg, "browser_navigate") {
		t.Errorf("a file URL: %s", msg)
	}
}

func TestToolResultsSayWhatAnAgentCannotSeeOtherwise(t *testing.T) {
	requireBrowser(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, formPage) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such page", http.StatusNotFound) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/", http.StatusFound) })
	mux.HandleFunc("/zone", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>zone</title><style>body{margin:0}</style><div id="zone" style="width:200px;height:100px;background:#eee">Drop here</div>
<script>document.addEventListener('click', e => { if (e.target.id === 'zone') document.title = 'zone clicked' });
document.addEventListener('mouseover', e => { if (e.target.id === 'zone') document.title = 'zone hovered' })</script>`)
	})
	mux.HandleFunc("/board", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>board</title><style>body{margin:0}</style><div id="todo" style="height:80px"><button id="card" draggable="true">Card</button></div>
<div id="done" style="width:200px;height:100px;background:#eee"></div>
<script>done.addEventListener('dragover', e => e.preventDefault()); done.addEventListener('drop', e => { e.preventDefault(); done.appendChild(card); });</script>`)
	})
	mux.HandleFunc("/scrolllist", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>list</title><style>body{margin:0}</style><div id="list" style="height:120px;width:200px;overflow:auto">`+strings.Repeat("<p>row</p>", 40)+`</div>`)
	})
	mux.HandleFunc("/popup", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Popup</title><a href="/" target="_blank">Terms</a><button>Stay</button>`)
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	s := newServer(t, Config{DialogTimeout: 300 * time.Millisecond})
	cs := connect(t, s)

	t.Run("navigate names an HTTP error status and where a redirect led", func(t *testing.T) {
		if msg := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/missing"}); !strings.Contains(msg, "HTTP 404 Not Found") {
			t.Errorf("navigate to a 404 page says:\n%s", msg)
		}
		if msg := ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/moved"}); !strings.Contains(msg, "redirected to "+site.URL+"/") || !strings.Contains(msg, "(HTTP 200)") {
			t.Errorf("navigate through a redirect says:\n%s", msg)
		}
	})

	t.Run("fill_form refuses a checkbox value other than true or false and a checkbox field that is not one", func(t *testing.T) {
		snap := ok(t, cs, "browser_snapshot", nil)
		agree, email := find(t, `checkbox "I agree" (@e\d+)`, snap), find(t, `textbox "Email" (@e\d+)`, snap)
		if msg := fails(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": agree, "type": "checkbox", "value": "yes", "name": "agree"}}}); !strings.Contains(msg, `"true" (checked) or "false"`) {
			t.Errorf("a checkbox value of yes:\n%s", msg)
		}
		if msg := fails(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": email, "type": "checkbox", "value": "true", "name": "email"}}}); !strings.Contains(msg, "is a textbox, not a checkbox") {
			t.Errorf("a textbox given as a checkbox:\n%s", msg)
		}
		// A field without its type: the SDK refuses the arguments; the
		// refusal reads like every other tool error.
		if msg := fails(t, cs, "browser_fill_form", map[string]any{"fields": []map[string]any{{"ref": email, "value": "a@b.c"}}}); !strings.HasPrefix(msg, "Error: the arguments do not match browser_fill_form's input schema") || !strings.Contains(msg, "\nNext: call browser_fill_form again") || !strings.Contains(msg, "type") {
			t.Errorf("a field without its type:\n%s", msg)
		}
	})

	t.Run("a click that opens a new tab says so and how to switch to it", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/popup"})
		msg := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `link "Terms" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
		if !strings.Contains(msg, "It opened a new tab ") || !strings.Contains(msg, " at "+site.URL+"/") || !strings.Contains(msg, "browser_tabs with action select") {
			t.Errorf("a click on a target=_blank link says:\n%s", msg)
		}
		if msg := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Stay" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))}); strings.Contains(msg, "new tab") {
			t.Errorf("a click that opens nothing says:\n%s", msg)
		}
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/"}) // where the next subtests start
	})

	t.Run("click at a point reaches what has no ref, and a text that is no ref says so", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/zone"})
		msg := fails(t, cs, "browser_click", map[string]any{"ref": "Drop here"})
		if !strings.Contains(msg, `"Drop here" is not a ref`) || !strings.Contains(msg, "at its point (x, y) with browser_click") {
			t.Errorf("a click given a text for a ref says:\n%s", msg)
		}
		if msg := fails(t, cs, "browser_click", map[string]any{"x": 50}); !strings.Contains(msg, "neither a ref nor both x and y") {
			t.Errorf("a click given x alone says:\n%s", msg)
		}
		ok(t, cs, "browser_hover", map[string]any{"x": 60, "y": 30})
		if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.title"}); got != `"zone hovered"` {
			t.Errorf("after a hover at 60, 30 the page's title is %s", got)
		}
		ok(t, cs, "browser_click", map[string]any{"x": 50, "y": 40})
		if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.title"}); got != `"zone clicked"` {
			t.Errorf("after a click at 50, 40 the page's title is %s", got)
		}
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/"}) // where the next subtests start
	})

	t.Run("drag drops a card onto a zone the snapshot gives no ref, at a point", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/board"})
		card := find(t, `button "Card" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))
		if msg := fails(t, cs, "browser_drag", map[string]any{"startRef": card}); !strings.Contains(msg, "neither an endRef nor both endX and endY") {
			t.Errorf("a drag without an end says:\n%s", msg)
		}
		ok(t, cs, "browser_drag", map[string]any{"startRef": card, "endX": 100, "endY": 150})
		if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "document.getElementById('card').parentNode.id"}); got != `"done"` {
			t.Errorf("after the drag the card is in %s, want done", got)
		}
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/"}) // where the next subtests start
	})

	t.Run("scroll at a point turns the wheel over a list the snapshot gives no ref", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/scrolllist"})
		if msg := fails(t, cs, "browser_scroll", map[string]any{"deltaY": 200, "x": 50}); !strings.Contains(msg, "only one of x and y") {
			t.Errorf("a scroll with x alone says:\n%s", msg)
		}
		ok(t, cs, "browser_scroll", map[string]any{"deltaY": 200, "x": 50, "y": 50})
		if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "new Promise(r => setTimeout(() => r(document.getElementById('list').scrollTop > 0), 300))"}); got != "true" {
			t.Errorf("after a scroll over the list, it has scrolled: %s", got)
		}
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/"})
	})

	t.Run("handle_dialog with none open says what became of the last one", func(t *testing.T) {
		if msg := fails(t, cs, "browser_handle_dialog", map[string]any{"accept": true}); !strings.Contains(msg, "the page has opened none") {
			t.Errorf("handle_dialog before any dialog:\n%s", msg)
		}
		ask := find(t, `button "Ask" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))
		ok(t, cs, "browser_click", map[string]any{"ref": ask}) // the confirm waits for an answer
		waitFor(t, "the server's dialog timeout to dismiss the confirm", func() bool {
			return !strings.Contains(ok(t, cs, "browser_page_info", nil), "Sure?")
		})
		if msg := fails(t, cs, "browser_handle_dialog", map[string]any{"accept": true}); !strings.Contains(msg, `the last one, a confirm dialog "Sure?", got no answer within the server's dialog timeout (300ms) and was dismissed`) {
			t.Errorf("handle_dialog after the timeout:\n%s", msg)
		}
	})

	t.Run("texts name the tools' arguments, not the library's Go names", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/"})
		if msg := ok(t, cs, "browser_snapshot", map[string]any{"maxChars": 200}); !strings.Contains(msg, "use interactive or a larger maxChars]") || strings.Contains(msg, "MaxChars") {
			t.Errorf("a cut snapshot:\n%s", msg)
		}
		if msg := fails(t, cs, "browser_session_open", map[string]any{"name": "a b/c"}); strings.Contains(msg, "ValidateID") || !strings.Contains(msg, `"a b/c"`) {
			t.Errorf("a session name with spaces:\n%s", msg)
		}
	})

	t.Run("download without a ref on a page that starts none says to pass the ref", func(t *testing.T) {
		was := downloadWait
		downloadWait = time.Second
		defer func() { downloadWait = was }()
		if msg := fails(t, cs, "browser_download", nil); !strings.Contains(msg, "started no download within 1s") || !strings.Contains(msg, "pass ref") {
			t.Errorf("download with nothing to download:\n%s", msg)
		}
	})
}
