package browserpool_test

import (
	"errors"
	"strings"
	"testing"

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
