package browserpool

import (
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
