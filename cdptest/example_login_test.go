package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// A host program's agent logic, tested without Chromium: a login page and
// an accounts page described as data, and the program signing in, reading
// the accounts table, deleting an account (answering the confirm dialog),
// exporting a CSV and taking a screenshot, through the library's Tab
// actions exactly as it would on Chromium. It runs in milliseconds.
func Example_loginFlow() {
	login := cdptest.NewPage("https://app.test/login", "Sign in",
		cdptest.Heading(1, "Sign in"),
		cdptest.TextBox("Email"),
		cdptest.Password("Password"),
		cdptest.Button("Sign in").Does(func(p *cdptest.Page) {
			if p.Find("textbox", "Password").Value == "s3cret" {
				p.Navigate("/accounts")
			}
		}),
	)
	const readTable = `[...document.querySelectorAll("tr")].map(r => [...r.cells].map(c => c.textContent))`
	accounts := cdptest.NewPage("https://app.test/accounts", "Accounts",
		cdptest.Heading(1, "Accounts"),
		cdptest.Table([]string{"Name", "Plan"}, []string{"Ann", "Pro"}, []string{"Bob", "Free"}),
		cdptest.Button("Delete Bob").Confirms("Delete Bob?", func(p *cdptest.Page, ok bool) {
			if ok {
				p.Add(cdptest.Text("Bob deleted"))
			}
		}),
		cdptest.Link("Export CSV", "/export.csv").Downloads("accounts.csv", []byte("name,plan\nAnn,Pro\n")),
	).Script(readTable, func(*cdptest.Page) (any, error) {
		return [][]string{{"Name", "Plan"}, {"Ann", "Pro"}, {"Bob", "Free"}}, nil
	})

	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{
		Launcher: cdptest.NewLauncher(nil, cdptest.WithPages(login, accounts)),
		Root:     root,
	})
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, _ := pool.Open(ctx)
	tab, _ := sess.Tab(ctx, "")

	// Sign in.
	tab.Navigate(ctx, "https://app.test/login")
	snap, _ := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	fmt.Print(snap.Text)
	tab.Fill(ctx, snap.Find("textbox", "Email"), "ann@example.com")
	tab.Fill(ctx, snap.Find("textbox", "Password"), "s3cret")
	err := tab.WaitNavigation(ctx, func(ctx context.Context) error {
		return tab.Click(ctx, snap.Find("button", "Sign in"))
	})
	info, _ := tab.PageInfo(ctx)
	fmt.Println("signed in:", err == nil, info.Title)

	// Read the table.
	var rows [][]string
	tab.Evaluate(ctx, readTable, &rows)
	fmt.Println(rows)

	// Delete Bob: the dialog waits for the program's answer.
	tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Defer: time.Minute}
	})
	snap, _ = tab.Snapshot(ctx, browserpool.SnapshotOptions{Interactive: true})
	err = tab.Click(ctx, snap.Find("button", "Delete Bob"))
	fmt.Println("dialog open:", errors.Is(err, browserpool.ErrDialogOpen))
	tab.AnswerDialog(ctx, true, "")
	d := tab.Dialogs()[0]
	fmt.Println(d.Type, d.Message, d.Accepted)

	// Export and screenshot.
	dl, _ := tab.WaitDownload(ctx, func(ctx context.Context) error {
		return tab.Click(ctx, snap.Find("link", "Export CSV"))
	})
	data, _ := os.ReadFile(dl.Path)
	fmt.Printf("%s %q\n", dl.SuggestedName, data)
	shot, _ := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
	fmt.Println("screenshot", shot.Width, shot.Height)

	snap, _ = tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	fmt.Print(snap.Text)

	// Output:
	// - heading "Sign in" [level=1]
	// - textbox "Email" @e1
	// - textbox "Password" @e2
	// - button "Sign in" @e3
	// signed in: true Accounts
	// [[Name Plan] [Ann Pro] [Bob Free]]
	// dialog open: true
	// confirm Delete Bob? true
	// accounts.csv "name,plan\nAnn,Pro\n"
	// screenshot 1280 720
	// - heading "Accounts" [level=1]
	// - table
	//   - row headers=["Name", "Plan"]
	//   - row cells=["Ann", "Pro"]
	//   - row cells=["Bob", "Free"]
	// - button "Delete Bob" @e4
	// - link "Export CSV" @e5 url=/export.csv [focused]
	// - text "Bob deleted"
}
