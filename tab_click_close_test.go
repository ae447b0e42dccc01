package browserpool_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/browserpool/browserpool"
)

func TestAClickWhosePageClosesItsTabIsDoneAndTheTabBeforeItIsActive(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/popup" {
			w.Write([]byte(`<title>popup</title><button onclick="window.close()">Close me</button>
<button onclick="setTimeout(() => window.close(), 100)">Close soon</button>`))
			return
		}
		w.Write([]byte(`<title>opener</title><button onclick="window.open('/popup')">Open</button>`))
	}))
	t.Cleanup(srv.Close)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	opener := mustTab(t, ctx, s)
	if _, err := opener.Navigate(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	for _, button := range []string{"Close me", "Close soon"} {
		if err := opener.Click(ctx, ref(t, snap(t, opener, browserpool.SnapshotOptions{}), "button", "Open")); err != nil {
			t.Fatal(err)
		}
		id := popupID(t, ctx, opener)
		popup, err := s.ActivateTab(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := popup.WaitLoad(ctx); err != nil {
			t.Fatal(err)
		}
		if err := popup.Click(ctx, ref(t, snap(t, popup, browserpool.SnapshotOptions{}), "button", button)); err != nil {
			t.Errorf("Click on %q, a button that closes its own tab: %v; want nil (the click was done)", button, err)
		}
		waitFor(t, "the browser to drop the closed tab", func() bool {
			tabs, err := s.Tabs(ctx)
			return err == nil && !slices.ContainsFunc(tabs, func(ti browserpool.TabInfo) bool { return ti.TabID == id })
		})
		active, err := s.Tab(ctx, "")
		if err != nil || active != opener {
			t.Fatalf("the active tab after the page closed its own (%q): %v, %v; want the tab used before it (%s)", button, active, err, opener.ID())
		}
		if _, err := active.PageInfo(ctx); err != nil {
			t.Errorf("PageInfo on the active tab: %v", err)
		}
	}
}

func TestAClickOnATabAnotherCallerClosesMeanwhileFailsAsClosed(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	pressed := make(chan struct{}, 1)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pressed" {
			select {
			case pressed <- struct{}{}:
			default:
			}
			return
		}
		// The release keeps the page busy, so the click is in flight when
		// the tab is closed.
		w.Write([]byte(`<title>busy</title><button onmouseup="navigator.sendBeacon('/pressed'); const t0 = Date.now(); while (Date.now() - t0 < 5000) {}">Busy</button>`))
	})
	s := tab.Session()
	busy := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Busy")
	clicked := make(chan error, 1)
	go func() { clicked <- tab.Click(ctx, busy) }()
	<-pressed
	if err := s.CloseTab(ctx, tab.ID()); err != nil {
		t.Fatal(err)
	}
	if err := <-clicked; !errors.Is(err, browserpool.ErrTabClosed) {
		t.Errorf("a click on a tab another caller closed meanwhile returned %v; want ErrTabClosed (the page did not close its tab)", err)
	}
}

// popupID waits until the session lists a tab other than opener's (the
// window a click of opener's opened) and returns its id.
func popupID(t *testing.T, ctx context.Context, opener *browserpool.Tab) string {
	t.Helper()
	var id string
	waitFor(t, "the popup", func() bool {
		tabs, err := opener.Session().Tabs(ctx)
		i := slices.IndexFunc(tabs, func(ti browserpool.TabInfo) bool { return ti.TabID != opener.ID() })
		if err == nil && i >= 0 {
			id = tabs[i].TabID
		}
		return id != ""
	})
	return id
}
