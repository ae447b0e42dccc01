package browserpool

import (
	"strings"
	"testing"
)

func TestClickVerdictTrustsOnlyAClickOrAPressThePageTookAway(t *testing.T) {
	shown := clickReport{Connected: true, Shown: true}
	with := func(f func(*clickReport)) clickReport {
		r := shown
		f(&r)
		return r
	}
	for _, c := range []struct {
		name string
		r    clickReport
		want clickOutcome
	}{
		{"a click reached it", with(func(r *clickReport) { r.Pressed, r.Clicked = true, true }), clickLanded},
		{"a click reached it through its label", with(func(r *clickReport) { r.Clicked = true; r.PressOn = "label" }), clickLanded},
		{"pressed, then the page removed it", with(func(r *clickReport) { r.Pressed, r.Connected, r.Shown = true, false, false }), clickLanded},
		{"pressed, then the page hid it", with(func(r *clickReport) { r.Pressed, r.Shown = true, false }), clickLanded},
		{"pressed, then the page disabled it", with(func(r *clickReport) { r.Pressed, r.Disabled = true, true }), clickLanded},
		{"pressed, then its document went away", clickReport{Pressed: true, gone: true}, clickLanded},
		{"pressed, then it moved and the release landed elsewhere", with(func(r *clickReport) { r.Pressed, r.ReleaseOn = true, "div" }), clickMissed},
		{"pressed, and the release went outside its frame", with(func(r *clickReport) { r.Pressed = true }), clickMissed},
		{"the press landed on something else", with(func(r *clickReport) { r.PressOn, r.ReleaseOn = "div#overlay", "div#overlay" }), clickMissed},
		{"nothing of the click reached its document", shown, clickMissed},
		{"its document went away before the press was confirmed", clickReport{gone: true}, clickLost},
		{"disabled before the press", clickReport{refused: true}, clickDisabled},
	} {
		if got := c.r.outcome(); got != c.want {
			t.Errorf("%s: outcome %d, want %d", c.name, got, c.want)
		}
	}
}

func TestAMissedClickInThePagesOwnFrameSaysNoInputReachedThePage(t *testing.T) {
	top := &frameSess{targetID: "T"}
	x := &tabExt{t: &Tab{id: "T", s: &Session{id: "s-1"}}}
	x.refs.top = top
	inFrame := &frameSess{targetID: "F"}
	for _, c := range []struct {
		name     string
		tg       refTarget
		want     string
		wantHint string
	}{
		{"an element of the page's own frame", refTarget{f: top, role: "link", name: "Next"},
			"no mouse event of the press at (10, 20) reached the page", "Session.OpenTab"},
		{"an element of a same-process iframe", refTarget{f: top, frame: "CHILD", role: "link", name: "Next"},
			"landed outside its frame", ""},
		{"an element of an out-of-process iframe", refTarget{f: inFrame, role: "link", name: "Next"},
			"landed outside its frame", ""},
	} {
		err := x.missed("Tab.Click", "@e1", c.tg, clickReport{Connected: true, Shown: true}, 10, 20, 3)
		e, ok := err.(*Error)
		if !ok || !strings.Contains(e.Detail, c.want) || strings.Contains(e.Hint, "Session.OpenTab") != (c.wantHint != "") {
			t.Errorf("%s: %v (hint %q); want the detail to say %q, and a new tab offered only for the page's own frame", c.name, err, e.Hint, c.want)
		}
	}
}
