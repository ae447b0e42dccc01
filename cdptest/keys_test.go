package cdptest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// controls is a page of one control of each kind.
func controls() []*cdptest.Page {
	return []*cdptest.Page{
		cdptest.NewPage("https://a.test/", "Controls",
			cdptest.Group("form", "",
				cdptest.Select("Color", "red", "green", "blue"),
				cdptest.Checkbox("Agree", false),
				cdptest.SearchBox("Q").WithValue("abc"),
				cdptest.Button("Go").Does(func(p *cdptest.Page) { p.Add(cdptest.Text("went")) }),
				cdptest.FileInput("Avatar"),
				cdptest.Button("Send").Submits("/sent"),
			),
		),
		cdptest.NewPage("https://a.test/sent", "Sent"),
	}
}

// pressAll presses each key in turn.
func pressAll(t *testing.T, tab *browserpool.Tab, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if err := tab.Press(testCtx(t), k); err != nil {
			t.Fatalf("Press(%q): %v", k, err)
		}
	}
}

func TestKeysChromiumActsOnChangeTheFocusedControl(t *testing.T) {
	_, tab := pageTab(t, controls()...)
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	if _, err := tab.Select(ctx, snap.Find("combobox", "Color"), "green"); err != nil {
		t.Fatal(err)
	}
	var got []string
	see := func(role, name string) {
		t.Helper()
		for _, line := range strings.Split(mustSnap(t, tab).Text, "\n") {
			if strings.Contains(line, role+` "`+name+`"`) {
				got = append(got, strings.TrimSpace(line))
			}
		}
	}
	// A closed select moves its choice, stopping at either end (Linux).
	for _, k := range []string{"ArrowDown", "ArrowDown", "Home", "ArrowUp", "End", "ArrowUp"} {
		pressAll(t, tab, k)
		see("combobox", "Color")
	}
	// Space toggles a checkbox, types in a text field, clicks a button.
	pressAll(t, tab, "Tab", " ")
	see("checkbox", "Agree")
	pressAll(t, tab, " ")
	see("checkbox", "Agree")
	pressAll(t, tab, "Tab", " ", "d")
	see("searchbox", "Q")
	// Escape clears a search field.
	pressAll(t, tab, "Escape")
	see("searchbox", "Q")
	pressAll(t, tab, "Tab", " ", "Enter")
	see("text", "went")

	opts := `options=["red", "green", "blue"] [collapsed`
	want := []string{
		`- combobox "Color" @e1 value="blue" ` + opts + `, focused]`,
		`- combobox "Color" @e1 value="blue" ` + opts + `, focused]`,
		`- combobox "Color" @e1 value="red" ` + opts + `, focused]`,
		`- combobox "Color" @e1 value="red" ` + opts + `, focused]`,
		`- combobox "Color" @e1 value="blue" ` + opts + `, focused]`,
		`- combobox "Color" @e1 value="green" ` + opts + `, focused]`,
		`- checkbox "Agree" @e2 [checked, focused]`,
		`- checkbox "Agree" @e2 [focused]`,
		`- searchbox "Q" @e3 value="abc d" [focused]`,
		`- searchbox "Q" @e3 [focused]`,
		`- text "went"`,
		`- text "went"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the controls after each key (-want +got):\n%s", diff)
	}
}

func TestEnterOnACheckboxSubmitsItsForm(t *testing.T) {
	_, tab := pageTab(t, controls()...)
	ctx := testCtx(t)
	if err := tab.Click(ctx, mustSnap(t, tab).Find("checkbox", "Agree")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := tab.WaitNavigation(short, func(ctx context.Context) error { return tab.Press(ctx, "Enter") }); err != nil {
		t.Fatalf("Enter on the focused checkbox: %v", err)
	}
	if diff := cmp.Diff("https://a.test/sent?Color=red&Agree=on&Q=abc&Avatar=", pageURL(t, tab)); diff != "" {
		t.Errorf("the page Enter on the checkbox led to (-want +got):\n%s", diff)
	}
}

func TestAKeyTheFakeDoesNotModelOnAFocusedControlIsAnErrorSayingSo(t *testing.T) {
	for _, tc := range []struct {
		role, name, key, want string
	}{
		{"searchbox", "Q", "ArrowLeft", `cdptest does not model the key "ArrowLeft" on the focused searchbox "Q"`},
		{"combobox", "Color", "Enter", `cdptest does not model the key "Enter" on the focused combobox "Color"`},
		{"combobox", "Color", "g", `cdptest does not model the key "g" on the focused combobox "Color"`},
		{"checkbox", "Agree", "PageDown", `cdptest does not model the key "PageDown" on the focused checkbox "Agree"`},
		{"button", "Avatar", " ", `cdptest does not model the key " " on the focused file input "Avatar"`},
		{"searchbox", "Q", "Control+C", `cdptest does not model the key "c" (with Control) on the focused searchbox "Q"`},
	} {
		t.Run(tc.key, func(t *testing.T) {
			_, tab := pageTab(t, controls()...)
			ctx := testCtx(t)
			// Focus the control with the keyboard: a click on a file input
			// would open a chooser.
			for k := 0; !focusedOn(t, tab, tc.role, tc.name); k++ {
				if k > 10 {
					t.Fatalf("Tab never reached %s %q:\n%s", tc.role, tc.name, mustSnap(t, tab).Text)
				}
				pressAll(t, tab, "Tab")
			}
			err := tab.Press(ctx, tc.key)
			if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Press(%q) on %s %q = %v; want an ErrProtocol error saying %q", tc.key, tc.role, tc.name, err, tc.want)
			}
		})
	}
}

// focusedOn reports whether the tab's focus is on the element of role and
// name.
func focusedOn(t *testing.T, tab *browserpool.Tab, role, name string) bool {
	t.Helper()
	for _, line := range strings.Split(mustSnap(t, tab).Text, "\n") {
		if strings.Contains(line, role+` "`+name+`"`) && strings.Contains(line, "focused") {
			return true
		}
	}
	return false
}

func TestShiftTabWithNothingFocusedFocusesTheLastControl(t *testing.T) {
	_, tab := pageTab(t, controls()...)
	pressAll(t, tab, "Shift+Tab")
	if !focusedOn(t, tab, "button", "Send") {
		t.Errorf("Shift+Tab with nothing focused: Chromium focuses the last control, Send:\n%s", mustSnap(t, tab).Text)
	}
	pressAll(t, tab, "Shift+Tab")
	if !focusedOn(t, tab, "button", "Avatar") {
		t.Errorf("a second Shift+Tab: Chromium focuses the control before Send, Avatar:\n%s", mustSnap(t, tab).Text)
	}
}
