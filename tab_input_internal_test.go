package browserpool

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChordsBecomeUSKeyEventsWithModifiers(t *testing.T) {
	show := func(keys string) []string {
		evs, why := chordEvents(keys)
		if why != "" {
			return []string{"error: " + why}
		}
		var out []string
		for _, e := range evs {
			s := fmt.Sprintf("%s key=%q", e.Type, *e.Key)
			if e.Code != nil {
				s += " code=" + *e.Code
			}
			if e.WindowsVirtualKeyCode != nil {
				s += fmt.Sprintf(" vk=%d", *e.WindowsVirtualKeyCode)
			}
			if e.Text != nil {
				s += fmt.Sprintf(" text=%q", *e.Text)
			}
			s += fmt.Sprintf(" mods=%d", *e.Modifiers)
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		keys string
		want []string
	}{
		{"a", []string{`keyDown key="a" code=KeyA vk=65 text="a" mods=0`, `keyUp key="a" code=KeyA vk=65 mods=0`}},
		{"A", []string{`keyDown key="A" code=KeyA vk=65 text="A" mods=8`, `keyUp key="A" code=KeyA vk=65 mods=8`}},
		{"Enter", []string{`keyDown key="Enter" code=Enter vk=13 text="\r" mods=0`, `keyUp key="Enter" code=Enter vk=13 mods=0`}},
		{"esc", []string{`rawKeyDown key="Escape" code=Escape vk=27 mods=0`, `keyUp key="Escape" code=Escape vk=27 mods=0`}},
		{"Control+A", []string{
			`rawKeyDown key="Control" code=ControlLeft vk=17 mods=2`,
			`rawKeyDown key="a" code=KeyA vk=65 mods=2`, `keyUp key="a" code=KeyA vk=65 mods=2`,
			`keyUp key="Control" code=ControlLeft vk=17 mods=0`}},
		{"Shift+Tab", []string{
			`rawKeyDown key="Shift" code=ShiftLeft vk=16 mods=8`,
			`rawKeyDown key="Tab" code=Tab vk=9 mods=8`, `keyUp key="Tab" code=Tab vk=9 mods=8`,
			`keyUp key="Shift" code=ShiftLeft vk=16 mods=0`}},
		{"Shift+1", []string{
			`rawKeyDown key="Shift" code=ShiftLeft vk=16 mods=8`,
			`keyDown key="!" code=Digit1 vk=49 text="!" mods=8`, `keyUp key="!" code=Digit1 vk=49 mods=8`,
			`keyUp key="Shift" code=ShiftLeft vk=16 mods=0`}},
		{"Control++", []string{
			`rawKeyDown key="Control" code=ControlLeft vk=17 mods=2`,
			`rawKeyDown key="+" code=Equal vk=187 mods=10`, `keyUp key="+" code=Equal vk=187 mods=10`,
			`keyUp key="Control" code=ControlLeft vk=17 mods=0`}},
		{"Meta+Alt+F5", []string{
			`rawKeyDown key="Meta" code=MetaLeft vk=91 mods=4`, `rawKeyDown key="Alt" code=AltLeft vk=18 mods=5`,
			`rawKeyDown key="F5" code=F5 vk=116 mods=5`, `keyUp key="F5" code=F5 vk=116 mods=5`,
			`keyUp key="Alt" code=AltLeft vk=18 mods=4`, `keyUp key="Meta" code=MetaLeft vk=91 mods=0`}},
		{"é", []string{`keyDown key="é" text="é" mods=0`, `keyUp key="é" mods=0`}},
		{"Hyper+a", []string{`error: "Hyper" in "Hyper+a" is not a modifier (Control, Shift, Alt, Meta)`}},
		{"Bogus", []string{`error: "Bogus" is not a key name`}},
		{"a+", []string{`error: "a+" ends with '+'`}},
	} {
		if diff := cmp.Diff(c.want, show(c.keys)); diff != "" {
			t.Errorf("Press(%q) events (-want +got):\n%s", c.keys, diff)
		}
	}
}

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
