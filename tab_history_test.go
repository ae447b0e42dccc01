package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestHistoryGoesBackForwardAndReloadsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("a round trip back and forward lands on each page loaded", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if _, err := tab.Navigate(ctx, e.site.URL+"/popup.html?token=abc123def456ghi789jkl"); err != nil {
			t.Fatal(err)
		}
		res, err := tab.Back(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.URL != e.site.URL+"/form.html" || res.LoaderID == "" || res.Status != 200 || res.FinalURL != e.site.URL+"/form.html" {
			t.Errorf("Back = %+v, want URL and FinalURL %s/form.html, a loader id and status 200", res, e.site.URL)
		}
		if got := eval[string](t, tab, "document.title + ' ' + document.readyState"); got != "Sign up complete" {
			t.Errorf("after Back: title and readyState = %q, want %q", got, "Sign up complete")
		}
		res, err = tab.Forward(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.URL != e.site.URL+"/popup.html?token=REDACTED" || strings.Contains(res.URL, "abc123") {
			t.Errorf("Forward URL = %q, want %s/popup.html?token=REDACTED (its token redacted)", res.URL, e.site.URL)
		}
		if got := eval[string](t, tab, "document.title"); got != "Popup opener" {
			t.Errorf("after Forward: title = %q, want %q", got, "Popup opener")
		}
		if _, err := tab.Forward(ctx); !errors.Is(err, browserpool.ErrNoHistory) {
			t.Errorf("Forward at the last entry = %v, want ErrNoHistory", err)
		}
		// Back twice: the tab opened with a URL started on about:blank,
		// which is not an entry to go back to (Chromium cannot attach to
		// it again: every later move failed).
		if _, err := tab.Back(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := tab.Back(ctx); !errors.Is(err, browserpool.ErrNoHistory) {
			t.Errorf("Back at the first page loaded = %v, want ErrNoHistory", err)
		}
		if got := eval[string](t, tab, "document.title"); got != "Sign up" {
			t.Errorf("after a refused Back: title = %q, want the first page's", got)
		}
		if _, err := tab.Forward(ctx); err != nil {
			t.Errorf("Forward after a refused Back: %v", err)
		}
	})

	t.Run("back over a fragment stays in the document", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.Evaluate(ctx, "window.marker = 7; location.hash = 'second'", nil); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "location.hash === '#second'")
		res, err := tab.Back(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.LoaderID != "" {
			t.Errorf("Back over a fragment reported loader %q, want none (same document)", res.LoaderID)
		}
		if got := eval[string](t, tab, "location.hash + ' ' + window.marker"); got != " 7" {
			t.Errorf("after Back: hash and marker = %q, want %q", got, " 7")
		}
	})

	t.Run("reload loads a new document", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/form.html")
		if err := tab.Evaluate(ctx, "window.marker = 1", nil); err != nil {
			t.Fatal(err)
		}
		res, err := tab.Reload(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.URL != e.site.URL+"/form.html" || res.LoaderID == "" || res.Status != 200 || res.FinalURL != e.site.URL+"/form.html" {
			t.Errorf("Reload = %+v, want URL and FinalURL %s/form.html, a loader id and status 200", res, e.site.URL)
		}
		if got := eval[string](t, tab, "typeof window.marker + ' ' + document.readyState"); got != "undefined complete" {
			t.Errorf("after Reload: %q, want %q", got, "undefined complete")
		}
	})

	t.Run("an empty history is a typed error with a hint and changes nothing", func(t *testing.T) {
		ctx := ctxT(t)
		tab, err := e.sess.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		defer e.sess.CloseTab(ctx, tab.ID())
		for name, f := range map[string]func() (browserpool.NavigateResult, error){"Back": func() (browserpool.NavigateResult, error) { return tab.Back(ctx) }, "Forward": func() (browserpool.NavigateResult, error) { return tab.Forward(ctx) }} {
			_, err := f()
			var be *browserpool.Error
			if !errors.Is(err, browserpool.ErrNoHistory) || !errors.As(err, &be) || be.Hint == "" || be.Tab != tab.ID() {
				t.Errorf("%s on a new tab = %v, want ErrNoHistory naming the tab, with a hint", name, err)
			}
		}
		if got := eval[string](t, tab, "location.href"); got != "about:blank" {
			t.Errorf("location after refused moves = %q, want about:blank", got)
		}
	})
}

// After a navigation that failed the tab shows Chromium's error page, on
// which Page calls answer "Not attached to an active page" for a moment.
func TestBackFromTheErrorPageOfAFailedNavigationGoesBack(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{"/a": `<!doctype html><title>A</title>a`})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, "http://127.0.0.1:1/"); !errors.Is(err, browserpool.ErrNavigation) {
		t.Fatalf("Navigate to an unsafe port: %v; want ErrNavigation", err)
	}
	res, err := tab.Back(ctx)
	if err != nil {
		t.Fatalf("Back from the error page: %v", err)
	}
	if got := eval[string](t, tab, "location.href"); got != base+"/a" || res.URL != base+"/a" {
		t.Errorf("after Back the tab shows %s (result %s); want %s/a", got, res.URL, base)
	}
}

// A same-document navigation is the page's at once and in the browser's
// history some milliseconds later: Back right after one went to the entry
// before it (or said there was none).
func TestBackRightAfterSameDocumentNavigationsGoesToTheEntryBefore(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{"/f": `<!doctype html><title>F</title><p id=a>a</p>`})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, base+"/f")
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	back := func() string {
		res, err := tab.Back(ctx)
		if err != nil {
			return err.Error()
		}
		return strings.TrimPrefix(res.URL, base)
	}
	for i := range 10 {
		// Navigate to two fragments, then Back.
		a, b := fmt.Sprintf("/f#a%d", i), fmt.Sprintf("/f#b%d", i)
		for _, u := range []string{a, b} {
			if _, err := tab.Navigate(ctx, base+u); err != nil {
				t.Fatal(err)
			}
		}
		got, want = append(got, back()), append(want, a)
		// The page's own pushState twice (a single-page app's links),
		// then Back.
		pa, pb := fmt.Sprintf("/f/p%d", i), fmt.Sprintf("/f/q%d", i)
		if err := tab.Evaluate(ctx, fmt.Sprintf("history.pushState(null, '', %q), history.pushState(null, '', %q), 1", pa, pb), nil); err != nil {
			t.Fatal(err)
		}
		got, want = append(got, back()), append(want, pa)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("where Back went (-want +got):\n%s", diff)
	}
}

// A page busy in a script holds a history move or a reload (it does not
// unload); when the navigation bound runs out, the error said the
// caller's context had ended and to retry with a longer deadline.
func TestBackAndReloadOfAPageBusyInAScriptTimeOutSayingToCloseTheTab(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{"/a": "<title>A</title>", "/b": "<title>B</title>"})
	p := newRealPool(t, browserpool.Config{NavigationTimeout: 2 * time.Second})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	for _, move := range []string{"back", "reload"} {
		tab, err := s.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		navigateUnderLoad(t, ctx, tab, base+"/a")
		navigateUnderLoad(t, ctx, tab, base+"/b")
		if err := tab.Evaluate(ctx, "setTimeout(() => { for (;;) {} }, 50), 1", nil); err != nil {
			t.Fatal(err)
		}
		for { // until the loop has begun: the page stops answering
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err := tab.Evaluate(short, "1", nil)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				break
			}
		}
		if move == "back" {
			_, err = tab.Back(ctx)
		} else {
			_, err = tab.Reload(ctx)
		}
		var be *browserpool.Error
		if !errors.Is(err, browserpool.ErrTimeout) || !errors.As(err, &be) || !strings.Contains(be.Detail, "did not let the tab leave it") || !strings.Contains(be.Hint, "Session.CloseTab") {
			t.Errorf("%s from a busy page: %v; want ErrTimeout saying the page held it and to close the tab", move, err)
		}
	}
}
