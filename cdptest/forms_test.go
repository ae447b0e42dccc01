package cdptest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// twoForms is a page with a search form and a login form, and the pages
// they submit to.
func twoForms() []*cdptest.Page {
	return []*cdptest.Page{
		cdptest.NewPage("https://a.test/", "Home",
			cdptest.Group("form", "Search", cdptest.SearchBox("Query"), cdptest.Button("Search").Submits("/search")),
			cdptest.Group("form", "Login", cdptest.TextBox("Email"), cdptest.Password("Password"), cdptest.Button("Log in").Submits("/login")),
			cdptest.TextBox("Outside"),
			cdptest.Button("Subscribe").Submits("/subscribe"),
		),
		cdptest.NewPage("https://a.test/search", "Search results"),
		cdptest.NewPage("https://a.test/login", "Logged in"),
		cdptest.NewPage("https://a.test/subscribe", "Subscribed"),
	}
}

// pageURL returns the tab's URL.
func pageURL(t *testing.T, tab *browserpool.Tab) string {
	t.Helper()
	info, err := tab.PageInfo(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return info.URL
}

func TestEnterInAFieldSubmitsTheFormTheFieldIsIn(t *testing.T) {
	for _, tc := range []struct {
		field, want string
	}{
		{"Query", "https://a.test/search?Query=socks"},
		{"Password", "https://a.test/login?Email=&Password=socks"}, // PageInfo would redact it: read from the browser
		// A field in no form submits with the page's own submit button,
		// never with another form's.
		{"Outside", "https://a.test/subscribe?Outside=socks"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			b, tab := pageTab(t, twoForms()...)
			ctx := testCtx(t)
			snap := mustSnap(t, tab)
			ref := snap.Find("textbox", tc.field) + snap.Find("searchbox", tc.field)
			if err := tab.Fill(ctx, ref, "socks"); err != nil {
				t.Fatal(err)
			}
			if err := tab.WaitNavigation(ctx, func(ctx context.Context) error { return tab.Press(ctx, "Enter") }); err != nil {
				t.Fatalf("Enter in %s: %v", tc.field, err)
			}
			if diff := cmp.Diff(tc.want, b.Targets()[0].URL); diff != "" {
				t.Errorf("the page Enter in %s led to (-want +got):\n%s", tc.field, diff)
			}
		})
	}
}

func TestAGetFormSubmitCarriesTheFormsNamedFieldsInTheQuery(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("https://a.test/form", "Form",
			cdptest.Group("form", "",
				cdptest.TextBox("Full name"),
				cdptest.Password("Pin"),
				cdptest.Select("Plan", "Free", "Pro"),
				cdptest.Checkbox("News", true),
				cdptest.Checkbox("Ads", false),
				cdptest.TextBox("Locked").WithValue("x").Disable(),
				cdptest.Button("Send").Submits("/sent?old=1#top"),
			),
			cdptest.TextBox("Elsewhere").WithValue("not in the form"),
		),
		cdptest.NewPage("https://a.test/sent", "Sent"),
	)
	ctx := testCtx(t)
	snap := mustSnap(t, tab)
	if err := tab.Fill(ctx, snap.Find("textbox", "Full name"), "Ann Lee&Co"); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Select(ctx, snap.Find("combobox", "Plan"), "Pro"); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitNavigation(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("button", "Send")) }); err != nil {
		t.Fatal(err)
	}
	// As Chromium: the form's fields in document order, the action's own
	// query replaced, disabled and unchecked fields left out.
	want := "https://a.test/sent?Full+name=Ann+Lee%26Co&Pin=&Plan=Pro&News=on#top"
	if diff := cmp.Diff(want, pageURL(t, tab)); diff != "" {
		t.Errorf("the URL after the form's submit (-want +got):\n%s", diff)
	}
}

func TestASubmitWithAnEmptyRequiredFieldStaysOnThePageAndFocusesTheField(t *testing.T) {
	pages := func(extra ...*cdptest.Element) []*cdptest.Page {
		form := cdptest.Group("form", "",
			cdptest.TextBox("Name"),
			cdptest.TextBox("Email").Require(),
			cdptest.TextBox("Team").Require().Disable(), // barred from validation
			readOnly(cdptest.TextBox("Code").Require()), // so is a read-only one
			cdptest.Checkbox("Terms", false).Require(),  // must be checked
			cdptest.Button("Send").Submits("/sent"),
		).Add(extra...)
		return []*cdptest.Page{
			cdptest.NewPage("https://a.test/req", "Req", form, cdptest.TextBox("Other").Require()),
			cdptest.NewPage("https://a.test/sent", "Sent"),
		}
	}
	_, tab := pageTab(t, pages()...)
	ctx := testCtx(t)
	snap := mustSnap(t, tab)

	if err := tab.Click(ctx, snap.Find("button", "Send")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("https://a.test/req", pageURL(t, tab)); diff != "" {
		t.Errorf("a click on Send with Email empty left the page (-want +got):\n%s", diff)
	}
	want := `- form
  - textbox "Name" @e1
  - textbox "Email" @e2 [focused, required]
  - textbox "Team" @e3 [disabled, required]
  - textbox "Code" @e4 [required, readonly]
  - checkbox "Terms" @e5 [required]
  - button "Send" @e6
- textbox "Other" @e7 [required]
`
	if diff := cmp.Diff(want, mustSnap(t, tab).Text); diff != "" {
		t.Errorf("after the blocked submit, Chromium focuses the first invalid field (-want +got):\n%s", diff)
	}

	if err := tab.Fill(ctx, snap.Find("textbox", "Email"), "a@b.c"); err != nil {
		t.Fatal(err)
	}
	if err := tab.Press(ctx, "Enter"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("https://a.test/req", pageURL(t, tab)); diff != "" {
		t.Errorf("Enter with Terms unchecked left the page (-want +got):\n%s", diff)
	}
	if err := tab.Click(ctx, snap.Find("checkbox", "Terms")); err != nil {
		t.Fatal(err)
	}
	// The required field outside the form does not hold the form back.
	if err := tab.WaitNavigation(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("button", "Send")) }); err != nil {
		t.Fatalf("the submit with every required field filled: %v", err)
	}
	if diff := cmp.Diff("https://a.test/sent?Name=&Email=a%40b.c&Code=&Terms=on", pageURL(t, tab)); diff != "" {
		t.Errorf("the submit with every required field filled (-want +got):\n%s", diff)
	}

	t.Run("hidden", func(t *testing.T) {
		// Chromium blocks the submit for a required field that is not
		// rendered too ("An invalid form control is not focusable"); the
		// focus stays where it was.
		_, tab := pageTab(t, pages(cdptest.TextBox("Token").Require().Hide())...)
		ctx := testCtx(t)
		snap := mustSnap(t, tab)
		tab.Fill(ctx, snap.Find("textbox", "Email"), "a@b.c")
		tab.Click(ctx, snap.Find("checkbox", "Terms"))
		if err := tab.Click(ctx, snap.Find("button", "Send")); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("https://a.test/req", pageURL(t, tab)); diff != "" {
			t.Errorf("a submit with an empty hidden required field left the page (-want +got):\n%s", diff)
		}
	})
}

// readOnly makes e read-only and returns it.
func readOnly(e *cdptest.Element) *cdptest.Element {
	e.ReadOnly = true
	return e
}
