package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// describedTool returns a tool's description and its input schema as JSON.
func describedTool(t *testing.T, s *Server, name string) (string, string) {
	t.Helper()
	for _, tl := range listTools(t, connect(t, s)) {
		if tl.Name == name {
			b, err := json.Marshal(tl.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			return tl.Description, string(b)
		}
	}
	t.Fatalf("no tool %s", name)
	return "", ""
}

func TestToolTextsNameTheirOwnArgumentsAndTheServersSettings(t *testing.T) {
	s := newServer(t, Config{ScreenshotMax: 1000, Pool: browserpool.Config{Launcher: noLauncher{}}})
	if _, sc := describedTool(t, s, "browser_hover"); strings.Contains(sc, "click") {
		t.Errorf("browser_hover's arguments speak of a click: %s", sc)
	}
	desc, sc := describedTool(t, s, "browser_take_screenshot")
	if !strings.Contains(desc, "at most 1000 px") || !strings.Contains(sc, "default (1000)") || strings.Contains(desc+sc, "1800") {
		t.Errorf("browser_take_screenshot with -screenshot-max 1000:\n%s\n%s", desc, sc)
	}

	// Arguments refused before any browser opens, in the tool's words.
	cs := connect(t, s)
	if msg := fails(t, cs, "browser_resize", map[string]any{"width": 0, "height": 100}); strings.Contains(msg, "scale") || !strings.Contains(msg, "1 to 10000") {
		t.Errorf("browser_resize to a width of 0:\n%s", msg)
	}
	if msg := fails(t, cs, "browser_take_screenshot", map[string]any{"fullPage": true, "ref": "@e1"}); strings.Contains(msg, "FullPage") || strings.Contains(msg, "Clip") || !strings.Contains(msg, "fullPage") {
		t.Errorf("browser_take_screenshot with fullPage and a ref:\n%s", msg)
	}
}

func TestPageTextsSayWhatIsThereInAnAgentsWords(t *testing.T) {
	requireBrowser(t)
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, formPage) })
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Other</title><p>other page</p>`)
	})
	mux.HandleFunc("/alert", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Alert</title><button onclick="alert('Hi')">Warn</button>`)
	})
	mux.HandleFunc("/opener", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Opener</title><button onclick="window.open('/slow')">Slow</button>`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, `<!doctype html><title>Slow</title>`)
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Long</title>`+strings.Repeat(`<button>press</button>`, 100))
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	defer close(release)
	// The alert stays open for 5 s: long enough for the click and the
	// page_info after it to see it open on a loaded machine (300 ms was not).
	s := newServer(t, Config{PerClient: 2, DialogTimeout: 5 * time.Second})
	cs := connect(t, s)

	t.Run("an alert is an alert", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/alert"})
		if msg := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Warn" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))}); !strings.Contains(msg, `It opened an alert "Hi"`) {
			t.Errorf("a click that opens an alert:\n%s", msg)
		}
		if info := ok(t, cs, "browser_page_info", nil); !strings.HasPrefix(info, `An alert is open and waits for browser_handle_dialog: "Hi" [session`) {
			t.Errorf("browser_page_info with an alert open:\n%s", info)
		}
		waitFor(t, "the server's dialog timeout to dismiss the alert", func() bool {
			return !strings.Contains(ok(t, cs, "browser_page_info", nil), "waits for browser_handle_dialog")
		})
		if msg := fails(t, cs, "browser_handle_dialog", map[string]any{"accept": true}); !strings.Contains(msg, `the last one, an alert "Hi", got no answer`) {
			t.Errorf("browser_handle_dialog after the alert was dismissed:\n%s", msg)
		}
	})

	t.Run("a new tab still loading is said to be loading", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/opener"})
		msg := ok(t, cs, "browser_click", map[string]any{"ref": find(t, `button "Slow" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))})
		if !strings.Contains(msg, "It opened a new tab ") || strings.Contains(msg, " at ;") || !strings.Contains(msg, "still loading") {
			t.Errorf("a click that opens a tab whose page has not come yet:\n%s", msg)
		}
	})

	t.Run("a cut interactive snapshot does not advise interactive", func(t *testing.T) {
		ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/long"})
		if msg := ok(t, cs, "browser_snapshot", map[string]any{"interactive": true, "maxChars": 200}); strings.Contains(msg, "use interactive") || !strings.Contains(msg, "maxChars") {
			t.Errorf("a cut interactive snapshot:\n%s", msg)
		}
	})

	t.Run("a tab of another of the client's sessions is said to be there", func(t *testing.T) {
		ok(t, cs, "browser_session_open", map[string]any{"name": "second", "url": site.URL + "/other"})
		other := find(t, `\* tab ([0-9A-F]+): "Other"`, ok(t, cs, "browser_tabs", map[string]any{"session": "second", "action": "list"}))
		msg := fails(t, cs, "browser_snapshot", map[string]any{"session": "default", "tab": other})
		if !strings.Contains(msg, `it is a tab of your session "second"`) {
			t.Errorf("naming a tab with the wrong one of the client's sessions:\n%s", msg)
		}
		// Over the per-client limit the error speaks to the client.
		msg = fails(t, cs, "browser_session_open", map[string]any{"name": "third"})
		if !strings.Contains(msg, "you already have 2 browser sessions open (the limit per client is 2): [default, second]") || strings.Contains(msg, "client client-") {
			t.Errorf("over the per-client limit:\n%s", msg)
		}
	})
}

// An action that leads to a page whose <title> is not parsed yet reports
// the page by its URL, not as titled "".
func TestAnActionThatLoadsAPageNotYetTitledReportsItsURL(t *testing.T) {
	requireBrowser(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/slow" {
			fmt.Fprint(w, "<!doctype html><body><p>first part</p>")
			w.(http.Flusher).Flush()
			select { // the title comes once the test is done
			case <-release:
			case <-r.Context().Done():
				return
			}
			fmt.Fprint(w, "<title>Slow</title>")
			return
		}
		fmt.Fprint(w, `<!doctype html><title>Start</title><a href="/slow">Go slow</a>`)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handler
	s := newServer(t, Config{})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": srv.URL})
	link := find(t, `link "Go slow" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))
	got := ok(t, cs, "browser_click", map[string]any{"ref": link})
	if strings.Contains(got, `Page: ""`) || !strings.Contains(got, "Page: "+srv.URL+"/slow") {
		t.Errorf("browser_click onto a page whose title has not come yet: %s; want the page named by its URL", got)
	}
}
