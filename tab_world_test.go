package browserpool_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// builtinOverrides are ways pages replace the built-ins a library's
// injected JavaScript would lean on: an old library's Array methods, a
// polyfill's Event, a framework's wrapped or emptied addEventListener, a
// test shim's boxes and queries, a Promise of its own (a broken one, or a
// working one that is not the engine's, as zone.js's for Angular).
var builtinOverrides = map[string]string{
	"Array methods":                `Array.prototype.some = function() { return false }; Array.prototype.find = function() {}; Array.prototype.includes = function() { return false }; Array.prototype.map = function() { return [] }; Array.from = function() { return [] };`,
	"Event constructors":           `window.Event = function() { throw new Error("no Event") }; window.MouseEvent = window.Event; window.InputEvent = window.Event;`,
	"Element.matches and closest":  `Element.prototype.matches = function() { throw new Error("nope") }; Element.prototype.closest = function() { return null };`,
	"addEventListener":             `EventTarget.prototype.addEventListener = function() {}; EventTarget.prototype.removeEventListener = function() {};`,
	"composedPath and WeakSet":     `Event.prototype.composedPath = function() { throw new Error("cp") }; window.WeakSet = function() { return {add() {}, has() { return false }} };`,
	"tagName":                      `Object.defineProperty(Element.prototype, "tagName", {get() { return "X" }});`,
	"boxes and queries":            `Element.prototype.getClientRects = function() { return [] }; Element.prototype.getBoundingClientRect = function() { return {x: 0, y: 0, width: 0, height: 0, top: 0, left: 0, right: 0, bottom: 0} }; Element.prototype.checkVisibility = function() { return false }; Document.prototype.querySelector = function() { return null };`,
	"Promise and MutationObserver": `window.Promise = function() { this.then = function() {} }; window.MutationObserver = function() { throw new Error("no MO") };`,
	"a working Promise of its own": `(() => { const N = Promise; window.Promise = class ZoneAwarePromise { constructor(ex) { this.p = new N(ex) } then(a, b) { return this.p.then(a, b) } catch(b) { return this.p.catch(b) } } })();`,
}

// overridePage is a page with a button, a field and a select, and a
// paragraph that shows up 200 ms after the load, after script.
func overridePage(script string) string {
	return `<title>builtins</title><script>` + script + `</script>
<button onclick="clicks++; document.title = 'clicked ' + clicks">Press</button>
<input id="who" aria-label="Name">
<select id="size" aria-label="Size"><option value="s">Small</option><option value="l">Large</option></select>
<div id="later"></div>
<script>var clicks = 0; setTimeout(() => { later.innerHTML = '<p id="ready">ready</p>' }, 200)</script>`
}

func TestActionsWorkOnPagesThatReplacedTheBuiltinsTheirScriptsUse(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(overridePage(builtinOverrides[r.URL.Query().Get("o")])))
	})
	for name := range builtinOverrides {
		t.Run(name, func(t *testing.T) {
			if _, err := tab.Navigate(ctx, srv.URL+"/?o="+strings.ReplaceAll(name, " ", "+")); err != nil {
				t.Fatal(err)
			}
			s := snap(t, tab, browserpool.SnapshotOptions{})
			if err := tab.Click(ctx, ref(t, s, "button", "Press")); err != nil {
				t.Errorf("Click: %v", err)
			}
			if err := tab.Fill(ctx, ref(t, s, "textbox", "Name"), "Ann"); err != nil {
				t.Errorf("Fill: %v", err)
			}
			if _, err := tab.Select(ctx, ref(t, s, "combobox", "Size"), "Large"); err != nil {
				t.Errorf("Select: %v", err)
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a failure is this subtest's alone
			defer cancel()
			var shown string
			if err := tab.WaitCondition(wctx, `document.getElementById("ready") && document.getElementById("ready").textContent`, &shown); err != nil || shown != "ready" {
				t.Errorf("WaitCondition for the late paragraph = %q, %v; want its text %q", shown, err, "ready")
			}
			if err := tab.WaitVisible(wctx, "#ready"); err != nil {
				t.Errorf("WaitVisible: %v", err)
			}
			got := eval[[]any](t, tab, `[clicks, who.value, size.value]`)
			if diff := cmp.Diff([]any{1.0, "Ann", "l"}, got); diff != "" {
				t.Errorf("the page after one click, a fill and a select (clicks, field, select) (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateOnRunsInThePagesOwnWorld(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>app</title><button>Press</button><script>window.appName = "ledger"</script>`)
	var got string
	if err := tab.EvaluateOn(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press"), `el => window.appName + ":" + el.textContent`, &got); err != nil {
		t.Fatal(err)
	}
	if got != "ledger:Press" {
		t.Errorf("EvaluateOn saw %q; want the page's global and the element: %q", got, "ledger:Press")
	}
}

func TestAnIframeThatNavigatedGetsItsActionsOutOfItsScriptsReachAgain(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Write([]byte(`<title>top</title><iframe src="/frame1" title="Inner" style="width:600px;height:300px"></iframe>`))
		default: // each frame page breaks the Array methods
			w.Write([]byte(overridePage(builtinOverrides["Array methods"])))
		}
	})
	frameLoaded := func(path string) {
		t.Helper()
		if err := tab.WaitCondition(ctx, `frames[0].location.pathname === "`+path+`" && frames[0].document.readyState === "complete" && !!frames[0].document.getElementById("size")`, nil); err != nil {
			t.Fatal(err)
		}
	}
	frameLoaded("/frame1")
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press")); err != nil {
		t.Fatalf("Click in the first document: %v", err)
	}
	if got := eval[float64](t, tab, "frames[0].clicks"); got != 1 {
		t.Fatalf("the first document counted %v clicks; want 1", got)
	}

	// The frame navigates on its own: the main frame's document stays,
	// the frame's isolated world is gone with its document.
	if err := tab.Evaluate(ctx, `frames[0].location = "/frame2"`, nil); err != nil {
		t.Fatal(err)
	}
	frameLoaded("/frame2")
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press")); err != nil {
		t.Fatalf("Click in the frame's next document: %v", err)
	}
	if got := eval[float64](t, tab, "frames[0].clicks"); got != 1 {
		t.Errorf("the frame's next document counted %v clicks; want 1", got)
	}
}

// worldCalls counts, among b's calls, the isolated worlds made and the
// nodes resolved into one (DOM.resolveNode with executionContextId) or
// into the page's main world.
func worldCalls(b *cdptest.Browser) (made, isolated, main int) {
	for _, c := range b.Calls() {
		switch c.Method {
		case "Page.createIsolatedWorld":
			made++
		case "DOM.resolveNode":
			if strings.Contains(string(c.Params), `"executionContextId"`) {
				isolated++
			} else {
				main++
			}
		}
	}
	return made, isolated, main
}

func TestActionsResolveNodesInOneIsolatedWorldPerDocument(t *testing.T) {
	one := cdptest.NewPage("https://fake.test/one", "One", cdptest.Button("Go"), cdptest.TextBox("Name"))
	two := cdptest.NewPage("https://fake.test/two", "Two", cdptest.Button("Go"))
	l := cdptest.NewLauncher(t, cdptest.WithPages(one, two))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	b := l.Browsers()[0]
	act := func(url string, fill bool) {
		t.Helper()
		if _, err := tab.Navigate(ctx, url); err != nil {
			t.Fatal(err)
		}
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Go")); err != nil {
			t.Fatalf("Click on %s: %v", url, err)
		}
		if fill {
			if err := tab.Fill(ctx, ref(t, s, "textbox", "Name"), "Ann"); err != nil {
				t.Fatalf("Fill on %s: %v", url, err)
			}
		}
	}
	act(one.URL, true)
	made, isolated, main := worldCalls(b)
	if made != 1 || isolated == 0 || main != 0 {
		t.Fatalf("a click and a fill in one document made %d worlds and resolved %d nodes in one, %d in the main world; want 1 world holding them all", made, isolated, main)
	}

	// The next document has its own world: the first one is gone with
	// its document, and the fake refuses it as Chromium does.
	act(two.URL, false)
	if made2, _, main2 := worldCalls(b); made2 != 2 || main2 != 0 {
		t.Errorf("after a navigation and a click: %d worlds made, %d nodes in the main world; want a second world and none", made2, main2)
	}
}

func TestActionsUseThePagesWorldWhenTheBrowserMakesNoIsolatedOne(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "A", cdptest.Button("Go"))
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	b := l.Browsers()[0]
	b.Handle("Page.createIsolatedWorld", func(*cdptest.Call) (any, error) {
		return nil, &cdptest.Error{Code: -32000, Message: "Could not create isolated world"}
	})
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	button := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Go")
	for i := range 3 {
		if err := tab.Click(ctx, button); err != nil {
			t.Fatalf("Click %d: %v", i+1, err)
		}
	}
	if made, isolated, main := worldCalls(b); made != 1 || isolated != 0 || main != 3 {
		t.Errorf("3 clicks with the world refused: %d worlds asked for, %d nodes resolved in one, %d in the main world; want it asked once and every node in the main world", made, isolated, main)
	}
}
