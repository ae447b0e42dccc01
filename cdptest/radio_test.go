package cdptest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
)

func TestRadiosOfAGroupAreCheckedOneAtATime(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("https://a.test/", "A",
			cdptest.Group("form", "",
				cdptest.Radio("size", "Small", false),
				cdptest.Radio("size", "Medium", true),
				&cdptest.Element{Role: "radio", Name: "Large", RadioGroup: "size"},
				cdptest.Radio("wrap", "Gift wrap", false),
				cdptest.Button("Order").Submits("/order"),
			),
			// A radio with the same group in another form is another group.
			cdptest.Group("form", "", cdptest.Radio("size", "Other form", true)),
		),
		cdptest.NewPage("https://a.test/order", "Ordered"),
	)
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	var got []string
	see := func() {
		t.Helper()
		got = append(got, mustSnap(t, tab).Text)
	}
	see()
	if err := tab.Click(ctx, snap.Find("radio", "Large")); err != nil {
		t.Fatal(err)
	}
	see()
	// Arrows move the choice through the group, wrapping round.
	pressAll(t, tab, "ArrowDown")
	see()
	pressAll(t, tab, "ArrowUp")
	see()
	// Tab leaves the group at once: only its checked radio is in the tab
	// order.
	pressAll(t, tab, "Tab")
	see()
	radios := func(small, medium, large, wrap, other string) string {
		return "- form\n" +
			`  - radio "Small" @e1` + small + "\n" +
			`  - radio "Medium" @e2` + medium + "\n" +
			`  - radio "Large" @e3` + large + "\n" +
			`  - radio "Gift wrap" @e4` + wrap + "\n" +
			`  - button "Order" @e5` + "\n" +
			"- form\n" +
			`  - radio "Other form" @e6` + other + "\n"
	}
	want := []string{
		radios("", " [checked]", "", "", " [checked]"),
		radios("", "", " [checked, focused]", "", " [checked]"),
		radios(" [checked, focused]", "", "", "", " [checked]"),
		radios("", "", " [checked, focused]", "", " [checked]"),
		radios("", "", " [checked]", " [focused]", " [checked]"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the radios after a click, ArrowDown, ArrowUp and Tab (-want +got):\n%s", diff)
	}
	pressAll(t, tab, " ")
	if err := tab.WaitNavigation(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("button", "Order")) }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("https://a.test/order?size=Large&wrap=Gift+wrap", pageURL(t, tab)); diff != "" {
		t.Errorf("the order's URL: a checked radio submits its group and its name (-want +got):\n%s", diff)
	}
}
