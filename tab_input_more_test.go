// Room: the input actions' other tests on real Chromium: concurrency,
// pages that open windows, frames without scripts, Fill's edge cases, a
// staying beforeunload page, refused points; and the click benchmark
// (tab_input_test.go has TestInputOnRealChromium).

package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// BenchmarkClickByRef measures one click by ref: scroll into view, box,
// hit test and the three mouse events.
func BenchmarkClickByRef(b *testing.B) {
	e := newAgentEnv(b)
	tab := e.tab(b, "/covered.html")
	ctx := ctxT(b)
	if err := tab.Evaluate(ctx, "document.getElementById('banner').remove(); window.n = 0; document.getElementById('buy').onclick = () => n++", nil); err != nil {
		b.Fatal(err)
	}
	s := snap(b, tab, browserpool.SnapshotOptions{})
	buy := ref(b, s, "button", "Buy now")
	b.ResetTimer()
	for b.Loop() {
		if err := tab.Click(ctx, buy); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := eval[int](b, tab, "n"); n < b.N {
		b.Fatalf("%d clicks counted, want %d", n, b.N)
	}
}

func TestGoroutinesClickingOneTabAtOnceEachLandEveryClick(t *testing.T) {
	// Two buttons far apart (one needs a scroll), each counting its clicks.
	base := serve(t, map[string]string{"/": `<!doctype html><title>two</title><body style="height:4000px;margin:0">
<button id="a" style="position:absolute;top:20px" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">A</button>
<button id="b" style="position:absolute;top:2500px" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">B</button></body>`})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/")
	if err != nil {
		t.Fatal(err)
	}
	sn := snap(t, tab, browserpool.SnapshotOptions{})
	refs := []string{ref(t, sn, "button", "A"), ref(t, sn, "button", "B")}
	const clicks = 10
	errs := make(chan error, 2*clicks)
	var wg sync.WaitGroup
	for _, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range clicks {
				errs <- tab.Click(ctx, r)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a click failed: %v", err)
		}
	}
	var got [2]int
	if err := tab.Evaluate(ctx, "[+document.getElementById('a').dataset.n, +document.getElementById('b').dataset.n]", &got); err != nil {
		t.Fatal(err)
	}
	if got != [2]int{clicks, clicks} {
		t.Errorf("clicks counted by A and B = %v, want %d each", got, clicks)
	}
}

// A page that opens a window (a target=_blank link) is hidden behind it,
// and Chromium draws no frame for a hidden page: its clicks and
// screenshots waited for ever.
func TestATabWhosePageOpenedAWindowStillTakesClicksAndScreenshots(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{
		"/":      `<!doctype html><title>Opener</title><a href="/other" target="_blank">New tab</a><button onclick="document.title='clicked'">Mark</button>`,
		"/other": `<!doctype html><title>Other</title>other`,
	})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, 30*time.Second)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/")
	if err != nil {
		t.Fatal(err)
	}
	sn := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Click(ctx, ref(t, sn, "link", "New tab")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the new tab to open", func() bool { tabs, _ := s.Tabs(ctx); return len(tabs) == 2 })
	if err := tab.Click(ctx, ref(t, sn, "button", "Mark")); err != nil {
		t.Fatalf("a click on the opener after its page opened a window: %v", err)
	}
	if got := eval[string](t, tab, "document.title"); got != "clicked" {
		t.Errorf("title after the click = %q, want clicked", got)
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{NoFile: true}); err != nil {
		t.Fatalf("a screenshot of the opener: %v", err)
	}
}

// In a frame sandboxed without allow-scripts nothing can confirm a click:
// it is sent once (a link followed once), and Click says it went out.
func TestAClickInAFrameThatRunsNoScriptsIsSentOnce(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/order":
			hits.Add(1)
			w.Write([]byte("<p>order</p>"))
		default:
			fmt.Fprintf(w, `<title>mail</title><iframe sandbox="allow-popups" srcdoc="<a href='http://%s/order' target=_blank>View order</a>" width=400 height=200></iframe>`, r.Host)
		}
	})
	var link string
	waitFor(t, "the sandboxed frame's link in a snapshot", func() bool {
		s, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
		link = s.Find("link", "View order")
		return err == nil && link != ""
	})
	if err := tab.Click(ctx, link); err != nil {
		t.Fatalf("Click in a frame that runs no scripts: %v", err)
	}
	waitFor(t, "the link to be followed", func() bool { return hits.Load() >= 1 })
	// The frame's sandbox keeps the page's scripts from running, not the
	// package's isolated world: the click is watched and confirmed there.
	if tr := tab.Trace(); strings.Contains(tr[len(tr)-1].Args, "unconfirmed") {
		t.Errorf("the click's trace entry %q says it was unconfirmed; want it confirmed from the isolated world", tr[len(tr)-1].Args)
	}
	// Each click opens the order in a new tab.
	if n := hits.Load(); n != 1 {
		t.Errorf("the link was followed %d times, want 1", n)
	}
}

// Fields that format what is typed (a phone mask, uppercase) keep the
// page's form of the value, and Fill succeeds saying what the page made of
// it; a field that cancels what is typed (digits only) is not forced: Fill
// says the page refused it.
func TestFillKeepsThePagesFormOfTheValueAndNeverForcesARefusedOne(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>masks</title>
<label>Phone <input id=phone></label>
<label>Code <input id=upper></label>
<label>Digits <input id=digits></label>
<script>
phone.addEventListener('input', () => {
	const d = phone.value.replace(/\D/g, '').slice(0, 10);
	phone.value = d.length < 4 ? d : d.length < 7 ? '(' + d.slice(0, 3) + ') ' + d.slice(3) : '(' + d.slice(0, 3) + ') ' + d.slice(3, 6) + '-' + d.slice(6);
});
upper.addEventListener('input', () => { upper.value = upper.value.toUpperCase(); });
digits.addEventListener('beforeinput', e => { if (e.data && /\D/.test(e.data)) e.preventDefault(); });
</script>`))
	})
	s := snap(t, tab, browserpool.SnapshotOptions{})
	for _, c := range []struct{ field, value, want string }{
		{"Phone", "5551234567", "(555) 123-4567"},
		{"Code", "hello", "HELLO"},
		{"Digits", "1234", "1234"},
	} {
		if err := tab.Fill(ctx, ref(t, s, "textbox", c.field), c.value); err != nil {
			t.Errorf("Fill(%s, %q): %v, want the page's form of it kept", c.field, c.value, err)
		}
		if got := eval[string](t, tab, map[string]string{"Phone": "phone", "Code": "upper", "Digits": "digits"}[c.field]+".value"); got != c.want {
			t.Errorf("%s holds %q after Fill(%q), want %q", c.field, got, c.value, c.want)
		}
	}
	phoneEntry := ""
	for _, en := range tab.Trace() {
		if en.Action == "fill" && strings.Contains(en.Args, `"Phone"`) {
			phoneEntry = en.Args
		}
	}
	if !strings.Contains(phoneEntry, `(the page made it "(555) 123-4567")`) {
		t.Errorf("the phone's trace entry %q does not say what the page made of the value", phoneEntry)
	}
	err := tab.Fill(ctx, ref(t, s, "textbox", "Digits"), "12ab34")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "refused the typed text") {
		t.Errorf("Fill of letters into a digits-only field: %v, want ErrInvalidArgument saying the page refused it", err)
	}
	if got := eval[string](t, tab, "digits.value"); got != "1234" {
		t.Errorf("the digits-only field holds %q after a refused fill, want its value kept (1234)", got)
	}
}

func TestFillOnAnEditableElementSaysWhatItHoldsAndWhenThePageRefusedTheText(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>notes</title>
<div contenteditable role=textbox aria-label="Note" id=note>draft</div>
<div contenteditable role=textbox aria-label="Locked" id=locked>locked</div>
<script>locked.addEventListener('beforeinput', e => e.preventDefault())</script>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Fill(ctx, ref(t, s, "textbox", "Note"), "hello world"); err != nil {
		t.Fatalf("Fill of an editable div: %v", err)
	}
	if got := eval[string](t, tab, "note.innerText"); got != "hello world" {
		t.Errorf("the editable div holds %q; want %q", got, "hello world")
	}
	fills := traced(tab, "fill")
	if got := fills[len(fills)-1]; strings.Contains(got, "the page made it") {
		t.Errorf("the fill's trace %q says the page changed a value it kept", got)
	}
	// The element keeps runs of spaces and a trailing one as no-break
	// spaces: no refusal, and no change of the page's.
	for _, v := range []string{"two  spaces", "two  spaces", "trailing "} {
		if err := tab.Fill(ctx, ref(t, s, "textbox", "Note"), v); err != nil {
			t.Errorf("Fill(%q) of an editable div: %v", v, err)
		}
		fills := traced(tab, "fill")
		if got := fills[len(fills)-1]; strings.Contains(got, "the page made it") {
			t.Errorf("the fill of %q traced %q: the page changed nothing", v, got)
		}
	}
	err := tab.Fill(ctx, ref(t, s, "textbox", "Locked"), "new text")
	if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "refused the typed text") {
		t.Errorf("Fill of an editable div whose page cancels typing: %v; want ErrInvalidArgument saying the page refused it", err)
	}
	if got := eval[string](t, tab, "locked.innerText"); got != "locked" {
		t.Errorf("the locked div holds %q; want its text kept", got)
	}
}

// Navigating away from a page that asks to confirm leaving (beforeunload),
// with the default dismissal, leaves the tab on it: Navigate says so and
// how to accept such dialogs, not that the URL may be a download.
func TestNavigateAwayFromABeforeunloadPageSaysThePageStayed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			w.Write([]byte("<title>next</title>"))
			return
		}
		w.Write([]byte(`<title>draft</title><button onclick="document.title='touched'">Touch</button>
<script>addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = ''; });</script>`))
	}))
	t.Cleanup(srv.Close)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	if _, err := tab.Navigate(ctx, srv.URL+"/next"); err != nil { // somewhere to go back to
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	// Chromium asks only on a page the user has interacted with.
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Click(ctx, ref(t, s, "button", "Touch")); err != nil {
		t.Fatal(err)
	}
	_, err := tab.Navigate(ctx, srv.URL+"/next")
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "beforeunload") || !strings.Contains(err.Error(), "SetDialogHandler") || strings.Contains(err.Error(), "WaitDownload") {
		t.Fatalf("Navigate away from a beforeunload page: %v, want ErrNavigation saying the page stayed and how to accept the dialog", err)
	}
	for name, move := range map[string]func(context.Context) (browserpool.NavigateResult, error){"Back": tab.Back, "Reload": tab.Reload} {
		_, err := move(ctx)
		if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "beforeunload") {
			t.Errorf("%s from a beforeunload page: %v, want ErrNavigation saying the page stayed", name, err)
		}
		if got := eval[string](t, tab, "location.pathname"); got != "/" {
			t.Errorf("after %s the tab is at %q, want it still on the page (/)", name, got)
		}
	}
	tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Accept: d.Type == "beforeunload"}
	})
	if _, err := tab.Navigate(ctx, srv.URL+"/next"); err != nil {
		t.Errorf("Navigate with beforeunload dialogs accepted: %v", err)
	}
}

// A click on an element that lets the pointer through (pointer-events:
// none) says so, not that whatever is under it covers it.
func TestAClickOnAnElementWithoutPointerEventsSaysSo(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>inert</title><button style="pointer-events: none">Pay</button>`))
	})
	err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Pay"))
	if !errors.Is(err, browserpool.ErrInvalidArgument) || errors.Is(err, browserpool.ErrCovered) || !strings.Contains(err.Error(), "pointer-events: none") {
		t.Errorf("Click on a pointer-events:none button: %v, want ErrInvalidArgument saying it takes no pointer input", err)
	}
}

func TestPointsOutsideTheViewportAndScrollsThatAreNoNumberAreRefused(t *testing.T) {
	// The page's own idea of its size is not the viewport's.
	ctx, tab, _ := htmlTab(t, `<title>points</title><button style="margin:40px">Press</button><script>Object.defineProperty(window, "innerWidth", {value: 100})</script>`)
	press := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press")
	for name, err := range map[string]error{
		"ClickAt past the right edge": tab.ClickAt(ctx, 5000, 10),
		"ClickAt below the bottom":    tab.ClickAt(ctx, 10, 5000),
		"HoverAt a negative point":    tab.HoverAt(ctx, -5, -5),
		"DragTo past the viewport":    tab.DragTo(ctx, press, 1e6, 1e6),
		"Scroll by NaN":               tab.Scroll(ctx, browserpool.ScrollOptions{DeltaY: math.NaN()}),
		"Scroll at a point outside":   tab.Scroll(ctx, browserpool.ScrollOptions{DeltaY: 100, X: 9000, Y: 10}),
	} {
		if !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("%s: %v; want ErrInvalidArgument (the browser would send the event nowhere and say nothing)", name, err)
		}
	}
	if err := tab.ClickAt(ctx, 5000, 10); err == nil || !strings.Contains(err.Error(), "×") {
		t.Errorf("ClickAt past the edge: %v; want the viewport's size in the error", err)
	}
	for _, x := range []float64{60, 600} {
		if err := tab.ClickAt(ctx, x, 50); err != nil {
			t.Errorf("ClickAt(%g, 50) inside the viewport: %v", x, err)
		}
	}
}
