package browserpool_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// TestHoverReachesAnElementInACrossSiteFrameBelowTheFold: the browser
// sends input into a frame of another site by where the page last drew
// it, and right after the scroll that brings the frame into view that was
// elsewhere; Hover waits for the frame to be drawn where it now is. Each
// round hovers in a new tab.
func TestHoverReachesAnElementInACrossSiteFrameBelowTheFold(t *testing.T) {
	e := newAgentEnv(t)
	var other string // the server's origin under another site's name
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/frame" {
			fmt.Fprint(w, `<!doctype html><title>frame</title>
<div id="menu" role="button" aria-label="Menu" tabindex="0" style="width:200px;height:40px">Menu</div>
<script>window.hovered = []; menu.addEventListener('mouseenter', () => hovered.push('menu'));</script>`)
			return
		}
		fmt.Fprint(w, `<!doctype html><title>far frame</title><div style="height:1500px"></div>
<iframe title="Frame" src="`+other+`/frame" style="width:400px;height:150px"></iframe><div style="height:1500px"></div>`)
	}))
	t.Cleanup(srv.Close)
	other = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for round := range 3 {
		tab := e.tab(t, srv.URL)
		menu := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Menu")
		if err := tab.Hover(ctxT(t), menu); err != nil {
			t.Fatal(err)
		}
		var hovered []string
		if err := tab.EvaluateOn(ctxT(t), menu, "el => el.ownerDocument.defaultView.hovered", &hovered); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"menu"}, hovered); diff != "" {
			t.Errorf("round %d: what the frame saw of the hover (-want +got):\n%s", round, diff)
		}
	}
}
