package cdptest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// poolTabFor is pageTab with the launcher's test given: tb sees what the
// browsers report (a panicking Go func, a leak).
func poolTabFor(t *testing.T, tb testing.TB, pages ...*cdptest.Page) *browserpool.Tab {
	t.Helper()
	tab := launchTab(t, cdptest.NewLauncher(tb, cdptest.WithPages(pages...)), pages[0].URL)
	return tab
}

func TestAPanicInAPagesGoFuncFailsTheCallAtOnceAndTheTestWithTheStack(t *testing.T) {
	typo := func(p *cdptest.Page) { p.Find("paragraph", "Typo").Hidden = false } // no such element: nil pointer
	for _, tc := range []struct {
		name string
		page *cdptest.Page
		act  func(*browserpool.Tab, browserpool.Snapshot) error
		what string
	}{
		{
			name: "Element.Does",
			page: cdptest.NewPage("https://a.test/", "A", cdptest.Button("Go").Does(typo)),
			act: func(tab *browserpool.Tab, s browserpool.Snapshot) error {
				return tab.Click(testCtx(t), s.Find("button", "Go"))
			},
			what: `Element.Does of button "Go"`,
		},
		{
			name: "Element.OnChange",
			page: cdptest.NewPage("https://a.test/", "A", cdptest.TextBox("Name").OnChange(typo)),
			act: func(tab *browserpool.Tab, s browserpool.Snapshot) error {
				return tab.Fill(testCtx(t), s.Find("textbox", "Name"), "x")
			},
			what: `Element.OnChange of textbox "Name"`,
		},
		{
			name: "Page.Script",
			page: cdptest.NewPage("https://a.test/", "A").Script("window.n", func(p *cdptest.Page) (any, error) {
				typo(p)
				return 1, nil
			}),
			act: func(tab *browserpool.Tab, _ browserpool.Snapshot) error {
				var n int
				return tab.Evaluate(testCtx(t), "window.n", &n)
			},
			what: `the Page.Script for "window.n"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := &fakeTB{TB: t}
			tab := poolTabFor(t, tb, tc.page)

			err := tc.act(tab, mustSnap(t, tab))

			want := "cdptest: " + tc.what + " panicked: runtime error: invalid memory address or nil pointer dereference"
			if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), want) {
				t.Errorf("the action's error is %v; want an ErrProtocol error saying %q", err, want)
			}
			reports := tb.reported()
			if len(reports) != 1 || !strings.HasPrefix(reports[0], want) || !strings.Contains(reports[0], "gofunc_test.go") {
				t.Errorf("the test was told %q; want one report of %q with the stack down to the func in gofunc_test.go", reports, want)
			}
		})
	}
}
