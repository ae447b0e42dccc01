package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// readTable is the expression the host program reads the accounts table
// with; the fake page scripts its value.
const readTable = `[...document.querySelectorAll("table tr")].map(r => [...r.cells].map(c => c.textContent))`

// app is a small web app: a login page and an accounts page with a table,
// a delete button that asks for confirmation, and a CSV export.
func app() []*cdptest.Page {
	login := cdptest.NewPage("https://app.test/login", "Sign in",
		cdptest.Heading(1, "Sign in"),
		cdptest.TextBox("Email"),
		cdptest.Password("Password"),
		cdptest.Button("Sign in").Does(func(p *cdptest.Page) {
			if p.Find("textbox", "Password").Value != "s3cret" {
				p.Add(cdptest.Text("Wrong email or password"))
				return
			}
			p.Navigate("/accounts")
		}),
	)
	accounts := cdptest.NewPage("https://app.test/accounts", "Accounts",
		cdptest.Heading(1, "Accounts"),
		cdptest.Table([]string{"Name", "Plan"}, []string{"Ann", "Pro"}, []string{"Bob", "Free"}),
		cdptest.Button("Delete Bob").Confirms("Delete Bob?", func(p *cdptest.Page, ok bool) {
			if ok {
				p.Add(cdptest.Text("Bob deleted"))
			}
		}),
		cdptest.Link("Export CSV", "/export.csv").Downloads("accounts.csv", []byte("name,plan\nAnn,Pro\n")),
	).Script(readTable, func(p *cdptest.Page) (any, error) {
		var rows [][]string
		for _, r := range p.Find("table", "").Children {
			var cells []string
			for _, c := range r.Children {
				cells = append(cells, c.Name)
			}
			rows = append(rows, cells)
		}
		return rows, nil
	})
	return []*cdptest.Page{login, accounts}
}

// loginFlow is the host program under test: it signs in, reads the
// accounts, deletes Bob (confirming), exports the CSV and takes a
// screenshot. It returns what it saw.
type flowResult struct {
	LoginSnapshot string
	Rows          [][]string
	AfterDelete   string
	Dialogs       []string
	Download      string
	CSV           string
	Shot          string
}

// renumberer returns a function that writes refs as @e1, @e2… in the
// order it first meets them, over all the texts it is given.
func renumberer() func(string) string {
	seen := map[string]string{}
	return func(text string) string {
		return refNumber.ReplaceAllStringFunc(text, func(r string) string {
			if n, ok := seen[r]; ok {
				return n
			}
			seen[r] = fmt.Sprintf("@e%d", len(seen)+1)
			return seen[r]
		})
	}
}

var refNumber = regexp.MustCompile(`@e[0-9]+`)

func loginFlow(ctx context.Context, tab *browserpool.Tab) (flowResult, error) {
	var res flowResult
	if _, err := tab.Navigate(ctx, "https://app.test/login"); err != nil {
		return res, err
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		return res, err
	}
	// Ref numbers are unique across a session's tabs: the flow's refs are
	// written in the order it first saw them, whatever the tabs before.
	rn := renumberer()
	res.LoginSnapshot = rn(snap.Text)
	if err := tab.Fill(ctx, snap.Find("textbox", "Email"), "ann@example.com"); err != nil {
		return res, err
	}
	if err := tab.Fill(ctx, snap.Find("textbox", "Password"), "s3cret"); err != nil {
		return res, err
	}
	if err := tab.WaitNavigation(ctx, func(ctx context.Context) error {
		return tab.Click(ctx, snap.Find("button", "Sign in"))
	}); err != nil {
		return res, err
	}
	if err := tab.Evaluate(ctx, readTable, &res.Rows); err != nil {
		return res, err
	}
	tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Accept: d.Type == "confirm" && d.Message == "Delete Bob?"}
	})
	snap, err = tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		return res, err
	}
	if err := tab.Click(ctx, snap.Find("button", "Delete Bob")); err != nil {
		return res, err
	}
	// The handler answers on the tab's watcher goroutine, which records
	// the dialog as the click returns: wait for the record.
	for len(tab.Dialogs()) == 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	for _, d := range tab.Dialogs() {
		res.Dialogs = append(res.Dialogs, d.Type+" "+d.Message+" accepted="+map[bool]string{true: "yes", false: "no"}[d.Accepted])
	}
	snap, err = tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		return res, err
	}
	res.AfterDelete = rn(snap.Text)
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error {
		return tab.Click(ctx, snap.Find("link", "Export CSV"))
	})
	if err != nil {
		return res, err
	}
	res.Download = filepath.Base(dl.Path)
	defer os.Remove(dl.Path) // the session is shared by later runs
	data, err := os.ReadFile(dl.Path)
	if err != nil {
		return res, err
	}
	res.CSV = string(data)
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
	if err != nil {
		return res, err
	}
	defer os.Remove(shot.Path)
	f, err := os.Open(shot.Path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		return res, err
	}
	res.Shot = fmt.Sprintf("%s %dx%d", format, cfg.Width, cfg.Height)
	return res, nil
}

// shared is the pool of fake browsers serving app(), and its session, that
// the login tests share: a pool's creation sweeps the machine's processes
// and a session's opening writes the pool's manifest (tens of
// milliseconds, far more on a busy machine), which twenty runs of a
// millisecond flow should not pay each. Each test gets its own tab.
// TestMain closes the pool.
var shared struct {
	once sync.Once
	pool *browserpool.Pool
	sess *browserpool.Session
	root string
	err  error
}

func closeShared() {
	if shared.pool != nil {
		shared.pool.Close()
		os.RemoveAll(shared.root)
	}
}

// fakeTab opens a tab in the shared session of fake browsers serving
// app(); the tab is closed when the test ends.
func fakeTab(t testing.TB) (*browserpool.Session, *browserpool.Tab) {
	t.Helper()
	shared.once.Do(func() {
		if shared.root, shared.err = os.MkdirTemp("", "browserpool-cdptest-"); shared.err != nil {
			return
		}
		l := cdptest.NewLauncher(nil, cdptest.WithPages(app()...))
		if shared.pool, shared.err = browserpool.NewPool(browserpool.Config{Launcher: l, Root: shared.root}); shared.err != nil {
			return
		}
		shared.sess, shared.err = shared.pool.Open(context.Background())
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	s := shared.sess
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.CloseTab(context.Background(), tab.ID()); err != nil {
			t.Errorf("closing the tab: %v", err)
		}
	})
	return s, tab
}

func TestTheLoginFlowRunsOnFakePagesAsOnChromium(t *testing.T) {
	_, tab := fakeTab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := loginFlow(ctx, tab)
	if err != nil {
		t.Fatal(err)
	}
	want := flowResult{
		LoginSnapshot: `- heading "Sign in" [level=1]
- textbox "Email" @e1
- textbox "Password" @e2
- button "Sign in" @e3
`,
		Rows: [][]string{{"Name", "Plan"}, {"Ann", "Pro"}, {"Bob", "Free"}},
		AfterDelete: `- heading "Accounts" [level=1]
- table
  - row headers=["Name", "Plan"]
  - row cells=["Ann", "Pro"]
  - row cells=["Bob", "Free"]
- button "Delete Bob" @e4 [focused]
- link "Export CSV" @e5 url=/export.csv
- text "Bob deleted"
`,
		Dialogs:  []string{"confirm Delete Bob? accepted=yes"},
		Download: "accounts.csv",
		CSV:      "name,plan\nAnn,Pro\n",
		Shot:     "png 1280x720",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the flow saw (-want +got):\n%s", diff)
	}
}

func TestTheLoginFlowShowsAWrongPasswordOnThePage(t *testing.T) {
	_, tab := fakeTab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := tab.Navigate(ctx, "https://app.test/login"); err != nil {
		t.Fatal(err)
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(ctx, snap.Find("textbox", "Password"), "nope"); err != nil {
		t.Fatal(err)
	}
	if err := tab.Click(ctx, snap.Find("button", "Sign in")); err != nil {
		t.Fatal(err)
	}
	snap, err = tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Ref numbers are unique across the session's tabs (the tests share
	// one session): the refs are those the snapshot gave.
	email, password, signIn := snap.Find("textbox", "Email"), snap.Find("textbox", "Password"), snap.Find("button", "Sign in")
	want := `- heading "Sign in" [level=1]
- textbox "Email" ` + email + `
- textbox "Password" ` + password + ` value="••••"
- button "Sign in" ` + signIn + ` [focused]
- text "Wrong email or password"
`
	if diff := cmp.Diff(want, snap.Text); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	var trace []string
	for _, e := range tab.Trace() {
		trace = append(trace, e.Action+" "+e.Args)
	}
	if diff := cmp.Diff([]string{
		"navigate https://app.test/login",
		"snapshot interactive=false max=0 -> 4 lines, 3 refs",
		`fill ` + password + ` textbox "Password" ***`,
		`click ` + signIn + ` button "Sign in"`,
		"snapshot interactive=false max=0 -> 5 lines, 3 refs",
	}, trace); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

func TestAnExpressionTheFakePageCannotEvaluateFailsEvaluateNamingIt(t *testing.T) {
	_, tab := fakeTab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out any = "untouched"
	err := tab.Evaluate(ctx, "document.cookie", &out)
	if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), `cannot evaluate "document.cookie"`) || !strings.Contains(err.Error(), "Page.Script") {
		t.Errorf("Evaluate(document.cookie) = %v; want an ErrProtocol error naming the expression and Page.Script", err)
	}
	if out != "untouched" {
		t.Errorf("out = %v, want it untouched", out)
	}
}
