package browserpool_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// dragFramePages are the pages of
// TestADragBetweenAFrameAndThePageEndsInBothAndLeavesThemClickable, by
// path: a page holding a frame of another site (a process of its own) or
// of its own, each with a draggable card, a drop zone and a button.
var dragFramePages = map[string]string{
	"/cross": `<div id="topzone" data-log role="region" aria-label="Top zone" tabindex="0" style="width:300px;height:60px">Top zone</div>
<div id="topcard" data-log draggable="true" role="button" aria-label="Top card" style="width:120px;height:30px">Top card</div>
<button id="topbutton" data-log>Top button</button>
<iframe title="Frame" src="{{other}}/frame" style="width:400px;height:200px"></iframe>`,
	"/same": `<div id="topzone" data-log role="region" aria-label="Top zone" tabindex="0" style="width:300px;height:60px">Top zone</div>
<div id="topcard" data-log draggable="true" role="button" aria-label="Top card" style="width:120px;height:30px">Top card</div>
<button id="topbutton" data-log>Top button</button>
<iframe title="Frame" src="/frame" style="width:400px;height:200px"></iframe>`,
	"/frame": `<div id="framecard" data-log draggable="true" role="button" aria-label="Frame card" style="width:120px;height:30px">Frame card</div>
<button id="framebutton" data-log>Frame button</button>
<div id="framezone" data-log role="region" aria-label="Frame zone" tabindex="0" style="width:300px;height:60px">Frame zone</div>`,
}

// dragFrameLog is the script of every drag frame page: each document logs
// the drag starts, drag ends, drops and clicks of its elements into a log
// of its own.
const dragFrameLog = `<script>
window.log = [];
for (const el of document.querySelectorAll('[data-log]')) {
  el.addEventListener('dragstart', e => { e.dataTransfer.setData('text/plain', el.id); log.push('dragstart:' + el.id); });
  el.addEventListener('dragend', () => log.push('dragend:' + el.id));
  el.addEventListener('dragover', e => e.preventDefault());
  el.addEventListener('drop', e => { e.preventDefault(); log.push('drop:' + el.id + '<' + e.dataTransfer.getData('text/plain')); });
  el.addEventListener('click', () => log.push('click:' + el.id));
}
</script>`

// docLog is the log of the document holding ref.
func docLog(t *testing.T, tab *browserpool.Tab, ref string) []string {
	t.Helper()
	var log []string
	if err := tab.EvaluateOn(ctxT(t), ref, "el => el.ownerDocument.defaultView.log", &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestADragBetweenAFrameAndThePageEndsInBothAndLeavesThemClickable(t *testing.T) {
	e := newAgentEnv(t)
	var other string // the server's origin under another site's name
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := dragFramePages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>drag</title>"+strings.ReplaceAll(page, "{{other}}", other)+dragFrameLog)
	}))
	t.Cleanup(srv.Close)
	other = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	// drag drags from onto to on page, then clicks the button of the frame
	// and of the page, and checks what each document saw: the drop in the
	// target's, one dragstart and one dragend in the source's, each click
	// in its own.
	drag := func(t *testing.T, page, from, to string) {
		tab := e.tab(t, srv.URL+page)
		s := snap(t, tab, browserpool.SnapshotOptions{})
		top, frame := ref(t, s, "button", "Top button"), ref(t, s, "button", "Frame button")
		src, dst := ref(t, s, "button", from), ref(t, s, "region", to)
		if err := tab.Drag(ctxT(t), src, dst); err != nil {
			t.Fatalf("Drag(%s, %s): %v", from, to, err)
		}
		srcID := strings.ToLower(strings.ReplaceAll(from, " ", ""))
		dstID := strings.ToLower(strings.ReplaceAll(to, " ", ""))
		if diff := cmp.Diff([]string{"dragstart:" + srcID, "dragend:" + srcID}, docLog(t, tab, src)); diff != "" {
			t.Errorf("what the source's document saw of the drag (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"drop:" + dstID + "<" + srcID}, docLog(t, tab, dst)); diff != "" {
			t.Errorf("what the target's document saw of the drag (-want +got):\n%s", diff)
		}
		for _, b := range []struct{ ref, id string }{{frame, "framebutton"}, {top, "topbutton"}} {
			if err := tab.Click(ctxT(t), b.ref); err != nil {
				t.Errorf("a click on %s after the drag: %v", b.id, err)
				continue
			}
			waitFor(t, "the click on "+b.id, func() bool { return slices.Contains(docLog(t, tab, b.ref), "click:"+b.id) })
		}
	}

	t.Run("a card dragged out of a cross-site frame drops on the page, and the frame ends its drag and takes clicks", func(t *testing.T) {
		drag(t, "/cross", "Frame card", "Top zone")
	})
	t.Run("a card dragged into a cross-site frame drops there, and the page ends its drag and takes clicks", func(t *testing.T) {
		drag(t, "/cross", "Top card", "Frame zone")
	})
	t.Run("a card dragged out of a same-site frame ends its drag once", func(t *testing.T) {
		drag(t, "/same", "Frame card", "Top zone")
	})
	t.Run("a card dragged into a same-site frame ends its drag once", func(t *testing.T) {
		drag(t, "/same", "Top card", "Frame zone")
	})
}
