package cdptest_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
)

func TestElementsWrittenAsStructLiteralsActAsTheConstructorsOnes(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		&cdptest.Element{Role: "textbox", Name: "Lit"},
		&cdptest.Element{Role: "searchbox", Name: "Find"},
		&cdptest.Element{Role: "textbox", Name: "Pin", Secret: true},
		&cdptest.Element{Role: "checkbox", Name: "Agree"},
		&cdptest.Element{Role: "combobox", Name: "Color", Options: []string{"red", "green"}},
		&cdptest.Element{Role: "button", Name: "Go"},
	))
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	for _, step := range []struct {
		what string
		do   func() error
	}{
		{"Fill Lit", func() error { return tab.Fill(ctx, snap.Find("textbox", "Lit"), "x") }},
		{"Fill Find", func() error { return tab.Fill(ctx, snap.Find("searchbox", "Find"), "y") }},
		{"Fill Pin", func() error { return tab.Fill(ctx, snap.Find("textbox", "Pin"), "1234") }},
		{"Click Agree", func() error { return tab.Click(ctx, snap.Find("checkbox", "Agree")) }},
		{"Select green", func() error { _, err := tab.Select(ctx, snap.Find("combobox", "Color"), "green"); return err }},
		{"Press Tab", func() error { return tab.Press(ctx, "Tab") }},
	} {
		if err := step.do(); err != nil {
			t.Errorf("%s: %v", step.what, err)
		}
	}
	want := `- textbox "Lit" @e1 value="x"
- searchbox "Find" @e2 value="y"
- textbox "Pin" @e3 value="••••"
- checkbox "Agree" @e4 [checked]
- combobox "Color" @e5 value="green" options=["red", "green"] [collapsed]
- button "Go" @e6 [focused]
`
	if diff := cmp.Diff(want, mustSnap(t, tab).Text); diff != "" {
		t.Errorf("the literal elements after Fill, Click, Select and Tab (-want +got):\n%s", diff)
	}
}

func TestALiteralSelectShowsItsFirstOptionChosen(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		&cdptest.Element{Role: "combobox", Name: "Color", Options: []string{"red", "green"}}))
	want := `- combobox "Color" @e1 value="red" options=["red", "green"] [collapsed]` + "\n"
	if diff := cmp.Diff(want, mustSnap(t, tab).Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}

func TestPageURLsAreNormalisedAsChromiumDoes(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("HTTPS://A.TEST/up", "Upper"),
		cdptest.NewPage("https://a.test:443/port", "Port"),
		cdptest.NewPage("http://b.test:80", "Bare"),
		cdptest.NewPage("http://b.test:8080/other", "Other port"),
	)
	ctx := testCtx(t)
	var got []string
	for _, u := range []string{
		"https://a.test/up",
		"https://a.test/port",
		"HTTPS://A.Test:443/port?Q=1#F",
		"http://B.TEST/",
		"http://b.test:8080/other",
	} {
		res, err := tab.Navigate(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %d", info.URL, info.Title, res.Status))
	}
	want := []string{
		"https://a.test/up Upper 200",
		"https://a.test/port Port 200",
		"https://a.test/port?Q=1#F Port 200",
		"http://b.test/ Bare 200",
		"http://b.test:8080/other Other port 200",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("URL, title and status of each navigation (-want +got):\n%s", diff)
	}
}
