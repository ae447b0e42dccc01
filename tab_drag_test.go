package browserpool_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestDragMovesElementsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("an HTML5 drag and drop moves the card into the drop zone", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dnd.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Drag(ctx, ref(t, s, "button", "Card"), ref(t, s, "region", "Done")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('html5').textContent + ' / ' + document.getElementById('card').parentNode.id"); got != "dropped card on done / done" {
			t.Errorf("after the drag: %q, want %q", got, "dropped card on done / done")
		}
		var drag *browserpool.TraceEntry
		for _, te := range tab.Trace() {
			if te.Action == "drag" {
				drag = &te
			}
		}
		if drag == nil || drag.Err != "" || !strings.HasSuffix(drag.Args, "(html5)") || !strings.Contains(drag.Args, `button "Card" to`) {
			t.Errorf("drag trace entry = %+v, want a successful HTML5 drag of the card", drag)
		}
	})

	t.Run("a drag built on mouse events follows the mouse and releases on the target", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dnd.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Drag(ctx, ref(t, s, "button", "Handle"), ref(t, s, "region", "Bin")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('plain').textContent"); got != "released on bin after moves" {
			t.Errorf("after the drag: %q, want %q", got, "released on bin after moves")
		}
		// The mouse is up again: a click still works.
		if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Card")); err != nil {
			t.Errorf("click after a drag: %v", err)
		}
	})

	t.Run("DragTo drops the card at a point of the drop zone", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dnd.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		card := ref(t, s, "button", "Card")
		if err := tab.DragTo(ctx, card, -1, 10); !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("DragTo a point outside the viewport: %v, want ErrInvalidArgument", err)
		}
		at := eval[[2]float64](t, tab, "(r => [r.x + r.width / 2, r.y + r.height / 2])(document.getElementById('done').getBoundingClientRect())")
		if err := tab.DragTo(ctx, card, at[0], at[1]); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, tab, "document.getElementById('card').parentNode.id"); got != "done" {
			t.Errorf("after DragTo the card is in %q, want done", got)
		}
	})

	t.Run("unknown refs are typed errors", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dnd.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		card := ref(t, s, "button", "Card")
		for _, c := range [][2]string{{"@e999", card}, {card, "@e999"}, {"card", card}} {
			err := tab.Drag(ctx, c[0], c[1])
			var be *browserpool.Error
			if !(errors.Is(err, browserpool.ErrStaleRef) || errors.Is(err, browserpool.ErrInvalidArgument)) || !errors.As(err, &be) || be.Hint == "" {
				t.Errorf("Drag(%s, %s) = %v, want ErrStaleRef or ErrInvalidArgument with a hint", c[0], c[1], err)
			}
		}
		if got := eval[string](t, tab, "document.getElementById('card').parentNode.id"); got != "todo" {
			t.Errorf("the card moved to %q on refused drags", got)
		}
	})
}

// dragPages are the pages of TestDragReachesWhatAPersonWould, by path.
// Every element with data-log logs its presses, drag starts and drops into
// the top page's log; a frame of another site logs into its own (dragLog).
var dragPages = map[string]string{
	// A drop zone under a translucent overlay that takes drops too.
	"/covered": `<div id="source" data-log draggable="true" role="button" aria-label="Source" style="width:120px;height:40px">Source</div>
<div style="position:relative;width:300px;height:100px">
  <div id="zone" data-log role="region" aria-label="Zone" tabindex="0" style="width:300px;height:100px">Zone</div>
  <div id="overlay" data-log style="position:absolute;inset:0;background:rgba(0,0,0,.3)">Overlay</div>
</div>`,
	// A drop zone 1500 px below the source.
	"/far": `<div id="source" data-log draggable="true" role="button" aria-label="Source" style="width:120px;height:40px">Source</div>
<div style="height:1500px"></div>
<div id="zone" data-log role="region" aria-label="Zone" tabindex="0" style="width:300px;height:100px">Zone</div>`,
	// A drop zone in a frame below the fold.
	"/far-frame": `<div id="source" data-log draggable="true" role="button" aria-label="Source" style="width:120px;height:40px">Source</div>
<div style="height:1500px"></div>
<iframe title="Frame" src="/frame" style="width:400px;height:150px"></iframe>`,
	// The frame of the frame pages: a source and a drop zone.
	"/frame": `<div id="framesource" data-log draggable="true" role="button" aria-label="Frame source" style="width:120px;height:30px">Frame source</div>
<div id="framezone" data-log role="region" aria-label="Frame zone" tabindex="0" style="width:300px;height:60px">Frame zone</div>`,
	// The same frame from another site: the browser runs it in a process
	// of its own.
	"/far-cross-site-frame": `<div id="source" data-log draggable="true" role="button" aria-label="Source" style="width:120px;height:40px">Source</div>
<div style="height:1500px"></div>
<iframe title="Frame" src="{{other}}/frame" style="width:400px;height:150px"></iframe>
<div style="height:1500px"></div>`,
	// A draggable source the page moves away as it is pressed (without
	// preventing the press): Chromium then starts no drag.
	"/moves-away": `<div id="source" data-log draggable="true" role="button" aria-label="Source" style="width:120px;height:40px">Source</div>
<div id="zone" data-log role="region" aria-label="Zone" tabindex="0" style="width:300px;height:100px">Zone</div>
<script>source.addEventListener('mousedown', () => { source.style.marginLeft = '400px'; });</script>`,
	// A draggable image the page drags with mouse events: it prevents the
	// press, so the browser starts no HTML5 drag, and follows the mouse.
	"/mouse-image": `<img id="source" data-log alt="Source" width="60" height="40" src="data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' width='60' height='40'><rect width='60' height='40' fill='teal'/></svg>">
<div id="zone" data-log role="region" aria-label="Zone" tabindex="0" style="width:300px;height:100px;margin-top:200px">Zone</div>
<script>
let held = false;
source.addEventListener('mousedown', e => { held = true; e.preventDefault(); });
document.addEventListener('mouseup', e => { if (held) top.log.push('released on ' + document.elementFromPoint(e.clientX, e.clientY).id); held = false; });
</script>`,
}

// dragLog is the script every drag page runs: a frame of another site
// logs into a log of its own.
const dragLog = `<script>
const log = (() => { try { return top.log = top.log || []; } catch { return window.log = []; } })();
for (const el of document.querySelectorAll('[data-log]')) {
  el.addEventListener('mousedown', () => log.push('mousedown:' + el.id));
  el.addEventListener('dragstart', e => { e.dataTransfer.setData('text/plain', el.id); log.push('dragstart:' + el.id); });
  el.addEventListener('dragover', e => e.preventDefault());
  el.addEventListener('drop', e => { e.preventDefault(); log.push('drop:' + el.id + '<' + e.dataTransfer.getData('text/plain')); });
}
</script>`

// dragEvents is the part of the page's log that says what was dragged and
// dropped where (drag starts, drops and mouse releases); with a ref, of
// the log of the ref's document.
func dragEvents(t *testing.T, tab *browserpool.Tab, ref ...string) []string {
	t.Helper()
	var all []string
	if len(ref) == 0 {
		all = eval[[]string](t, tab, "top.log || []")
	} else if err := tab.EvaluateOn(ctxT(t), ref[0], "el => el.ownerDocument.defaultView.log", &all); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range all {
		if !strings.HasPrefix(s, "mousedown:") {
			out = append(out, s)
		}
	}
	return out
}

func TestDragReachesWhatAPersonWould(t *testing.T) {
	e := newAgentEnv(t)
	var other string // the server's origin under another site's name
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := dragPages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>drag</title>"+strings.ReplaceAll(page, "{{other}}", other)+dragLog)
	}))
	t.Cleanup(srv.Close)
	other = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	t.Run("a drop zone under an overlay is ErrCovered naming the overlay, and nothing is dropped", func(t *testing.T) {
		tab := e.tab(t, srv.URL+"/covered")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		err := tab.Drag(ctxT(t), ref(t, s, "button", "Source"), ref(t, s, "region", "Zone"))
		if !errors.Is(err, browserpool.ErrCovered) || !strings.Contains(err.Error(), `div#overlay "Overlay"`) || !strings.Contains(err.Error(), `region "Zone"`) {
			t.Errorf("Drag onto a covered zone = %v, want ErrCovered naming the zone and the overlay", err)
		}
		if diff := cmp.Diff([]string(nil), dragEvents(t, tab)); diff != "" {
			t.Errorf("the page saw a drag (-want +got):\n%s", diff)
		}
	})

	for _, c := range []struct{ name, page, zone, id string }{
		{"a drop zone 1500 px below the source gets the drop", "/far", "Zone", "zone"},
		{"a drop zone in a frame below the fold gets the drop", "/far-frame", "Frame zone", "framezone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tab := e.tab(t, srv.URL+c.page)
			s := snap(t, tab, browserpool.SnapshotOptions{})
			if err := tab.Drag(ctxT(t), ref(t, s, "button", "Source"), ref(t, s, "region", c.zone)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"dragstart:source", "drop:" + c.id + "<source"}, dragEvents(t, tab)); diff != "" {
				t.Errorf("what the page saw of the drag (-want +got):\n%s", diff)
			}
			if got := traced(tab, "drag"); len(got) != 1 || !strings.HasSuffix(got[0], "(html5)") {
				t.Errorf("traced drags = %q, want one HTML5 drag", got)
			}
		})
	}

	// The browser sends input into a frame of another site by where the
	// page last drew it: right after the scroll that brings the frame into
	// view, that was elsewhere. Each case drags thrice, in a new tab.
	t.Run("a drop zone in a cross-site frame below the fold gets the drop, each time", func(t *testing.T) {
		for range 3 {
			tab := e.tab(t, srv.URL+"/far-cross-site-frame")
			s := snap(t, tab, browserpool.SnapshotOptions{})
			zone := ref(t, s, "region", "Frame zone")
			if err := tab.Drag(ctxT(t), ref(t, s, "button", "Source"), zone); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"dragstart:source"}, dragEvents(t, tab)); diff != "" {
				t.Errorf("what the page saw of the drag (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"drop:framezone<source"}, dragEvents(t, tab, zone)); diff != "" {
				t.Errorf("what the frame saw of the drag (-want +got):\n%s", diff)
			}
		}
	})

	t.Run("a drag inside a cross-site frame below the fold drops, each time", func(t *testing.T) {
		for range 3 {
			tab := e.tab(t, srv.URL+"/far-cross-site-frame")
			s := snap(t, tab, browserpool.SnapshotOptions{})
			zone := ref(t, s, "region", "Frame zone")
			if err := tab.Drag(ctxT(t), ref(t, s, "button", "Frame source"), zone); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"dragstart:framesource", "drop:framezone<framesource"}, dragEvents(t, tab, zone)); diff != "" {
				t.Errorf("what the frame saw of the drag (-want +got):\n%s", diff)
			}
		}
	})

	t.Run("a draggable source that starts no drag is an error saying so", func(t *testing.T) {
		tab := e.tab(t, srv.URL+"/moves-away")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		err := tab.Drag(ctxT(t), ref(t, s, "button", "Source"), ref(t, s, "region", "Zone"))
		var be *browserpool.Error
		if !errors.Is(err, browserpool.ErrDragNotStarted) || !strings.Contains(err.Error(), "no drag") || !errors.As(err, &be) || be.Hint == "" {
			t.Errorf("Drag of a source the page moves away when pressed = %v, want ErrDragNotStarted saying no drag started, with a hint", err)
		}
		if diff := cmp.Diff([]string(nil), dragEvents(t, tab)); diff != "" {
			t.Errorf("the page saw a drag (-want +got):\n%s", diff)
		}
	})

	t.Run("a draggable image the page drags with the mouse is released on the target", func(t *testing.T) {
		tab := e.tab(t, srv.URL+"/mouse-image")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Drag(ctxT(t), ref(t, s, "image", "Source"), ref(t, s, "region", "Zone")); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"released on zone"}, dragEvents(t, tab)); diff != "" {
			t.Errorf("what the page saw of the drag (-want +got):\n%s", diff)
		}
	})
}

func TestElementsThePageMadeDraggableGetRefsAndDrag(t *testing.T) {
	ctx := ctxT(t)
	site := serve(t, map[string]string{"/": `<!doctype html><title>Sort</title>
<style>#bin { width: 200px; height: 80px; border: 2px dashed #888 }</style>
<ul id="fruit"><li draggable="true" id="apple">Apple</li><li draggable="true" id="pear">Pear</li><li>Fig (fixed)</li></ul>
<div draggable="true" id="card" onclick="this.dataset.opened = 1">Card with a click</div>
<p>Tag: <span draggable="true" id="tag">urgent</span></p>
<div id="bin">Drop here</div><p id="got">nothing</p>
<script>
for (const el of document.querySelectorAll('[draggable]')) el.addEventListener('dragstart', e => e.dataTransfer.setData('text/plain', el.id));
const bin = document.getElementById('bin');
bin.addEventListener('dragover', e => e.preventDefault());
bin.addEventListener('drop', e => { e.preventDefault(); document.getElementById('got').textContent = 'dropped ' + e.dataTransfer.getData('text/plain'); });
</script>`})
	p := newRealPool(t, browserpool.Config{})
	tab, err := mustOpen(t, ctx, p).OpenTab(ctx, site+"/")
	if err != nil {
		t.Fatal(err)
	}
	s := snap(t, tab, browserpool.SnapshotOptions{})
	want := `- listitem "Apple" @e1 [draggable]
- listitem "Pear" @e2 [draggable]
- text "Fig (fixed)"
- group "Card with a click" @e3 [clickable, draggable]
- text "Tag:"
- group "urgent" @e4 [draggable]
- text "Drop here"
- text "nothing"
`
	if diff := cmp.Diff(want, s.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	var box struct{ X, Y float64 }
	if err := tab.Evaluate(ctx, `(() => { const r = document.getElementById('bin').getBoundingClientRect(); return {X: r.x + r.width / 2, Y: r.y + r.height / 2} })()`, &box); err != nil {
		t.Fatal(err)
	}
	if err := tab.DragTo(ctx, ref(t, s, "listitem", "Pear"), box.X, box.Y); err != nil {
		t.Fatalf("DragTo(Pear, the bin): %v", err)
	}
	var got string
	if err := tab.Evaluate(ctx, "document.getElementById('got').textContent", &got); err != nil || got != "dropped pear" {
		t.Errorf("after dragging Pear to the bin the page says %q (%v), want dropped pear", got, err)
	}
}
