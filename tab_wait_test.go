package browserpool_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
)

func TestWaitsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("network idle settles while a websocket and an event stream stay open", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/websocket.html")
		waitJS(t, tab, "document.getElementById('ws').textContent === 'ws echo hi' && document.getElementById('events').textContent === 'event hello'")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		fetch := ref(t, s, "button", "Fetch slowly")
		start := time.Now()
		err := tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{
			Action: func(ctx context.Context) error { return tab.Click(ctx, fetch) },
		})
		if err != nil {
			t.Fatal(err)
		}
		// The fetch takes 700 ms; idle means it has finished.
		if got := eval[string](t, tab, "document.getElementById('slow').textContent"); got != "slow done" {
			t.Errorf("network idle returned after %v with the slow fetch unfinished (#slow = %q)", time.Since(start), got)
		}
	})

	t.Run("network idle names the requests still in flight when time runs out", func(t *testing.T) {
		tab := e.tab(t, "/websocket.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		hang := ref(t, s, "button", "Hang")
		// /hang never answers, so the wait always runs out; the deadline
		// only has to outlast the click on a loaded machine.
		ctx, cancel := context.WithTimeout(ctxT(t), 8*time.Second)
		defer cancel()
		err := tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{
			Action: func(ctx context.Context) error { return tab.Click(ctx, hang) },
		})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 requests in flight: [Fetch "+e.site.URL+"/hang]") {
			t.Errorf("error = %v, want DeadlineExceeded naming the /hang fetch", err)
		}
		// Polling pages can allow requests to stay in flight.
		if err := tab.WaitNetworkIdle(ctxT(t), browserpool.NetworkIdleOptions{MaxInflight: 1, Quiet: 100 * time.Millisecond}); err != nil {
			t.Errorf("MaxInflight 1: %v", err)
		}
	})

	t.Run("wait visible waits for an element shown later and refuses bad selectors", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.Evaluate(ctx, `setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id="late" style="visibility: hidden">late</p>'), 50);
			setTimeout(() => { document.getElementById('late').style.visibility = 'visible'; window.shownAt = performance.now(); }, 250)`, nil); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitVisible(ctx, "#late"); err != nil {
			t.Fatal(err)
		}
		if shown := eval[bool](t, tab, "window.shownAt !== undefined"); !shown {
			t.Error("WaitVisible returned before the element became visible")
		}
		if err := tab.WaitVisible(ctx, "p[["); !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("WaitVisible(p[[) error = %v, want ErrInvalidArgument", err)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		// The page answered every poll: the hint is the wait's, not the
		// one for a page kept busy by its script.
		if err := tab.WaitVisible(short, "#never"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "#never") ||
			!strings.Contains(err.Error(), "pass a longer deadline to wait longer") || strings.Contains(err.Error(), "keeps it busy") {
			t.Errorf("WaitVisible(#never) error = %v, want DeadlineExceeded naming the selector, with the wait's own hint", err)
		}
	})

	t.Run("wait condition returns the value and survives a navigation", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.Evaluate(ctx, "setTimeout(() => { window.answer = {n: 42} }, 100)", nil); err != nil {
			t.Fatal(err)
		}
		var got struct{ N int }
		if err := tab.WaitCondition(ctx, "window.answer", &got); err != nil || got.N != 42 {
			t.Fatalf("WaitCondition = %+v, %v; want {N: 42}", got, err)
		}
		if err := tab.Evaluate(ctx, "setTimeout(() => { location.href = '/covered.html' }, 100)", nil); err != nil {
			t.Fatal(err)
		}
		var title string
		if err := tab.WaitCondition(ctx, "document.title === 'Covered' && document.title", &title); err != nil || title != "Covered" {
			t.Errorf("WaitCondition across a navigation = %q, %v", title, err)
		}
		var js *browserpool.JSError
		if err := tab.WaitCondition(ctx, "noSuchThing.x", nil); !errors.Is(err, browserpool.ErrJavaScript) || !errors.As(err, &js) || !strings.Contains(js.Message, "noSuchThing") {
			t.Errorf("a throwing condition: error = %v, want ErrJavaScript", err)
		}
	})

	t.Run("wait condition takes an expression ending in semicolons and says how to wait on statements", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		var n int
		if err := tab.WaitCondition(ctx, "document.title.length;; \n", &n); err != nil || n == 0 {
			t.Errorf("WaitCondition(%q) = %d, %v; want the title's length, as Evaluate gives", "document.title.length;; \n", n, err)
		}
		err := tab.WaitCondition(ctx, "const n = document.title.length; n > 0", nil)
		var be *browserpool.Error
		if !errors.Is(err, browserpool.ErrJavaScript) || !errors.As(err, &be) || !strings.Contains(be.Hint, "not statements") {
			t.Errorf("statements: error = %v; want ErrJavaScript whose hint says WaitCondition takes one expression", err)
		}
	})

	t.Run("wait load waits for the current document, never an old one's load", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.WaitLoad(ctx); err != nil {
			t.Fatalf("WaitLoad on a loaded page: %v", err)
		}
		// The new document commits at once but loads only when its
		// 600 ms image has: the old document's load must not count.
		if err := tab.Evaluate(ctx, `location.href = '/slowload.html'`, nil); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.title === 'Slow load'")
		if err := tab.WaitLoad(ctx); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.readyState"); got != "complete" {
			t.Errorf("after WaitLoad: readyState = %q", got)
		}
	})

	t.Run("wait navigation waits for the page an action opens", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		err := tab.WaitNavigation(ctx, func(ctx context.Context) error {
			return tab.Evaluate(ctx, `setTimeout(() => { location.href = '/slowload.html' }, 50)`, nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := eval[[]string](t, tab, "[document.readyState, document.title]"); !cmp.Equal(got, []string{"complete", "Slow load"}) {
			t.Errorf("after WaitNavigation: readyState, title = %q", got)
		}
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := tab.WaitNavigation(short, nil); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no navigation committed") {
			t.Errorf("WaitNavigation with nothing navigating: error = %v", err)
		}
	})

	t.Run("wait navigation without an action counts a navigation the latest action made that has committed already", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		// The action navigates at once; by the time WaitNavigation
		// starts, the new document may well have committed.
		if err := tab.Evaluate(ctx, `location.href = '/slowload.html'`, nil); err != nil {
			t.Fatal(err)
		}
		// Watched through the raw client: an action would count as the
		// tab's latest.
		waitFor(t, "the new document to commit", func() bool {
			r, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("document.title").SetReturnByValue(true))
			return err == nil && string(r.Result.Value) == `"Slow load"`
		})
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := tab.WaitNavigation(short, nil); err != nil {
			t.Fatalf("WaitNavigation(nil) after the action's navigation committed: %v", err)
		}
		if got := eval[[]string](t, tab, "[document.readyState, document.title]"); !cmp.Equal(got, []string{"complete", "Slow load"}) {
			t.Errorf("after WaitNavigation: readyState, title = %q", got)
		}
	})

	t.Run("page info tells url, title, viewport, scroll and size, with tokens redacted", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/covered.html?access_token=abc123&x=1#frag")
		if err := tab.Evaluate(ctx, "scrollTo(0, 300)", nil); err != nil {
			t.Fatal(err)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := browserpool.PageInfo{SessionID: e.sess.ID(), TabID: tab.ID(), URL: e.site.URL + "/covered.html?access_token=REDACTED&x=1#frag", Title: "Covered",
			ViewportWidth: info.ViewportWidth, ViewportHeight: info.ViewportHeight, ScrollY: 300, PageWidth: info.PageWidth, PageHeight: 2400}
		if diff := cmp.Diff(want, info); diff != "" || info.ViewportWidth < 300 || info.ViewportHeight < 300 || info.PageWidth < info.ViewportWidth-20 {
			t.Errorf("PageInfo (-want +got):\n%s", diff)
		}
	})
}

func TestATabAPageJustOpenedIsReadAsThePageItOpens(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/popup" {
			time.Sleep(300 * time.Millisecond) // the popup sits on its empty first document meanwhile
			w.Write([]byte(`<title>popup</title><button>In the popup</button>`))
			return
		}
		w.Write([]byte(`<title>opener</title><button onclick="window.open('/popup')">Open</button><button onclick="window.open()">Open blank</button>`))
	}))
	t.Cleanup(srv.Close)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	opener := mustTab(t, ctx, s)
	if _, err := opener.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	open := func(button string) *browserpool.Tab {
		t.Helper()
		if err := opener.Click(ctx, ref(t, snap(t, opener, browserpool.SnapshotOptions{}), "button", button)); err != nil {
			t.Fatal(err)
		}
		id := popupID(t, ctx, opener)
		popup, err := s.ActivateTab(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return popup
	}
	check := func(what string, popup *browserpool.Tab) {
		t.Helper()
		if sn := snap(t, popup, browserpool.SnapshotOptions{}); sn.Find("button", "In the popup") == "" || sn.URL != srv.URL+"/popup" {
			t.Errorf("%s: the snapshot of %s reads %q, not the page it opens", what, sn.URL, sn.Text)
		}
	}

	popup := open("Open")
	if err := popup.WaitLoad(ctx); err != nil {
		t.Fatal(err)
	}
	if info, err := popup.PageInfo(ctx); err != nil || info.URL != srv.URL+"/popup" || info.Title != "popup" {
		t.Errorf("PageInfo after WaitLoad on the popup: %+v, %v; want the popup's page, loaded", info, err)
	}
	check("after WaitLoad", popup)
	if err := s.CloseTab(ctx, popup.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActivateTab(ctx, opener.ID()); err != nil {
		t.Fatal(err)
	}
	popup = open("Open")
	check("without a wait", popup)
	if err := s.CloseTab(ctx, popup.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ActivateTab(ctx, opener.ID()); err != nil {
		t.Fatal(err)
	}

	// A popup opened without a URL stays on its empty document: the wait
	// ends (after its bound) and the snapshot reads it as it is.
	blank := open("Open blank")
	if err := blank.WaitLoad(ctx); err != nil {
		t.Errorf("WaitLoad on a popup opened without a URL: %v", err)
	}
	if sn := snap(t, blank, browserpool.SnapshotOptions{}); sn.Text != "" {
		t.Errorf("the snapshot of a popup opened without a URL reads %q", sn.Text)
	}
}
