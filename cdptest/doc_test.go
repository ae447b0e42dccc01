package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// docEnv is what the actions of TestTheDocListsTheCDPMethodsEachActionUses
// act on: a session of fake browsers and a new tab on docPages' first
// page, with its snapshot.
type docEnv struct {
	ctx  context.Context
	l    *cdptest.Launcher
	pool *browserpool.Pool
	sess *browserpool.Session
	tab  *browserpool.Tab
	snap browserpool.Snapshot
	file string // a file to upload

	opened *browserpool.Tab // a tab the action opened, closed after it
}

func (e *docEnv) ref(role, name string) string { return e.snap.Find(role, name) }

// docPage has an element for every action, and a page to go to.
func docPages() []*cdptest.Page {
	return []*cdptest.Page{
		cdptest.NewPage("https://a.test/", "A",
			cdptest.TextBox("Name"),
			cdptest.Select("Plan", "Free", "Pro"),
			cdptest.FileInput("Avatar"),
			cdptest.Button("Go").Navigates("/b"),
			cdptest.Button("Nop"),
			cdptest.Button("Hi").Alerts("hi"),
			cdptest.Link("Get", "/f.csv").Downloads("f.csv", []byte("x")),
			cdptest.Text("x").WithID("x"),
		).Script("window.n", func(*cdptest.Page) (any, error) { return 1, nil }),
		cdptest.NewPage("https://a.test/b", "B"),
	}
}

// docActions are the actions whose calls doc.go lists, by the name the
// doc gives them. Each runs on a new tab at docPages' first page, after a
// snapshot; the calls of that setup are not counted.
var docActions = []struct {
	name string
	do   func(e *docEnv) error
}{
	{"Tab.Navigate", func(e *docEnv) error { _, err := e.tab.Navigate(e.ctx, "https://a.test/b"); return err }},
	{"Tab.Back", func(e *docEnv) error { _, err := e.tab.Back(e.ctx); return err }},
	{"Tab.Forward", func(e *docEnv) error { _, err := e.tab.Forward(e.ctx); return err }},
	{"Tab.Reload", func(e *docEnv) error { _, err := e.tab.Reload(e.ctx); return err }},
	{"Tab.Snapshot", func(e *docEnv) error { _, err := e.tab.Snapshot(e.ctx, browserpool.SnapshotOptions{}); return err }},
	{"Tab.Click", func(e *docEnv) error { return e.tab.Click(e.ctx, e.ref("button", "Nop")) }},
	{"Tab.Hover", func(e *docEnv) error { return e.tab.Hover(e.ctx, e.ref("button", "Nop")) }},
	{"Tab.ClickAt", func(e *docEnv) error { return e.tab.ClickAt(e.ctx, 700, 400) }},
	{"Tab.HoverAt", func(e *docEnv) error { return e.tab.HoverAt(e.ctx, 10, 10) }},
	{"Tab.Fill", func(e *docEnv) error { return e.tab.Fill(e.ctx, e.ref("textbox", "Name"), "x") }},
	{"Tab.Type", func(e *docEnv) error { return e.tab.Type(e.ctx, "y") }},
	{"Tab.Press", func(e *docEnv) error { return e.tab.Press(e.ctx, "Tab") }},
	{"Tab.Select", func(e *docEnv) error { _, err := e.tab.Select(e.ctx, e.ref("combobox", "Plan"), "Pro"); return err }},
	{"Tab.Upload", func(e *docEnv) error { return e.tab.Upload(e.ctx, e.ref("button", "Avatar"), e.file) }},
	{"Tab.Scroll", func(e *docEnv) error { return e.tab.Scroll(e.ctx, browserpool.ScrollOptions{DeltaY: 10}) }},
	{"Tab.Evaluate", func(e *docEnv) error { var n int; return e.tab.Evaluate(e.ctx, "window.n", &n) }},
	{"Tab.PageInfo", func(e *docEnv) error { _, err := e.tab.PageInfo(e.ctx); return err }},
	{"Tab.WaitLoad", func(e *docEnv) error { return e.tab.WaitLoad(e.ctx) }},
	{"Tab.WaitVisible", func(e *docEnv) error { return e.tab.WaitVisible(e.ctx, "#x") }},
	{"Tab.WaitCondition", func(e *docEnv) error { return e.tab.WaitCondition(e.ctx, "window.n", nil) }},
	{"Tab.WaitNetworkIdle", func(e *docEnv) error {
		return e.tab.WaitNetworkIdle(e.ctx, browserpool.NetworkIdleOptions{Quiet: 10 * time.Millisecond})
	}},
	{"Tab.Screenshot", func(e *docEnv) error {
		s, err := e.tab.Screenshot(e.ctx, browserpool.ScreenshotOptions{})
		os.Remove(s.Path)
		return err
	}},
	{"Tab.SetViewport", func(e *docEnv) error { return e.tab.SetViewport(e.ctx, 800, 600, 1) }},
	{"Tab.Console", func(e *docEnv) error { _, err := e.tab.Console(e.ctx); return err }},
	{"Tab.ClearConsole", func(e *docEnv) error { return e.tab.ClearConsole(e.ctx) }},
	{"Tab.Network", func(e *docEnv) error { _, err := e.tab.Network(e.ctx); return err }},
	{"Tab.AnswerDialog", func(e *docEnv) error {
		e.tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		defer e.tab.SetDialogHandler(nil)
		if err := e.tab.Click(e.ctx, e.ref("button", "Hi")); !errors.Is(err, browserpool.ErrDialogOpen) {
			return fmt.Errorf("the click that opens the dialog: %v, want ErrDialogOpen", err)
		}
		return e.tab.AnswerDialog(e.ctx, true, "")
	}},
	{"Tab.WaitNavigation", func(e *docEnv) error {
		return e.tab.WaitNavigation(e.ctx, func(ctx context.Context) error { return e.tab.Click(ctx, e.ref("button", "Go")) })
	}},
	{"Tab.WaitDownload", func(e *docEnv) error {
		d, err := e.tab.WaitDownload(e.ctx, func(ctx context.Context) error { return e.tab.Click(ctx, e.ref("link", "Get")) })
		os.Remove(d.Path)
		return err
	}},
	{"Session.OpenTab", func(e *docEnv) (err error) { e.opened, err = e.sess.OpenTab(e.ctx, "https://a.test/b"); return err }},
	{"Session.CloseTab", func(e *docEnv) error { return e.sess.CloseTab(e.ctx, e.tab.ID()) }},
	{"Session.Tabs", func(e *docEnv) error { _, err := e.sess.Tabs(e.ctx); return err }},
	{"Session.Cookies", func(e *docEnv) error { _, err := e.sess.Cookies(e.ctx); return err }},
	{"Session.SetCookies", func(e *docEnv) error {
		return e.sess.SetCookies(e.ctx, browserpool.Cookie{Name: "a", Value: "b", Domain: "a.test", Path: "/"})
	}},
	{"Session.ClearCookies", func(e *docEnv) error { return e.sess.ClearCookies(e.ctx) }},
	{"Session.StorageState", func(e *docEnv) error { _, err := e.sess.StorageState(e.ctx); return err }},
	{"Session.SetStorageState", func(e *docEnv) error {
		return e.sess.SetStorageState(e.ctx, browserpool.StorageState{Cookies: []browserpool.Cookie{{Name: "a", Value: "b", Domain: "a.test", Path: "/"}}})
	}},
}

// docSetup is what an action needs done before it, uncounted, besides a
// new tab and a snapshot.
var docSetup = map[string]func(e *docEnv) error{
	"Tab.Type": func(e *docEnv) error { return e.tab.Click(e.ctx, e.ref("textbox", "Name")) },
	"Tab.Back": func(e *docEnv) error { _, err := e.tab.Navigate(e.ctx, "https://a.test/b"); return err },
	"Tab.Forward": func(e *docEnv) error {
		if _, err := e.tab.Navigate(e.ctx, "https://a.test/b"); err != nil {
			return err
		}
		_, err := e.tab.Back(e.ctx)
		return err
	},
}

// docComposite are the actions that run another: the doc lists their own
// calls, and the test checks them with their action's (a click).
var docComposite = map[string]string{"Tab.WaitNavigation": "Tab.Click", "Tab.WaitDownload": "Tab.Click", "Tab.AnswerDialog": "Tab.Click"}

// notFaked are the actions doc.go says the fake does not answer: each
// fails on a fake page.
var notFaked = []struct {
	name string
	do   func(e *docEnv) error
}{
	{"Tab.Drag", func(e *docEnv) error { return e.tab.Drag(e.ctx, e.ref("button", "Go"), e.ref("button", "Hi")) }},
	{"Tab.DragTo", func(e *docEnv) error { return e.tab.DragTo(e.ctx, e.ref("button", "Go"), 10, 10) }},
	{"Tab.EvaluateOn", func(e *docEnv) error {
		var s string
		return e.tab.EvaluateOn(e.ctx, e.ref("button", "Go"), "el => el.id", &s)
	}},
	{"Tab.PDF", func(e *docEnv) error { _, err := e.tab.PDF(e.ctx, browserpool.PDFOptions{}); return err }},
	{"Session.StorageState of an origin", func(e *docEnv) error { _, err := e.sess.StorageState(e.ctx, "https://a.test"); return err }},
	{"Session.SetStorageState of an origin", func(e *docEnv) error {
		return e.sess.SetStorageState(e.ctx, browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: "https://a.test", LocalStorage: []browserpool.StorageItem{{Name: "k", Value: "v"}}}}})
	}},
}

// methodName is a CDP method as the doc writes it.
var methodName = regexp.MustCompile(`\b[A-Z][A-Za-z]+\.[a-z][A-Za-z]+\b`)

// docSection returns the bullets of the section of doc.go headed heading,
// by the names before their colon: for each, the CDP methods named before
// its first ";".
func docSection(t *testing.T, heading string) map[string][]string {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		text, ok := strings.CutPrefix(line, "//")
		if !ok {
			break
		}
		text = strings.TrimPrefix(text, " ")
		if strings.HasPrefix(text, "# ") {
			in = text == "# "+heading
			continue
		}
		if in {
			lines = append(lines, text)
		}
	}
	if len(lines) == 0 {
		t.Errorf("doc.go has no section %q", heading)
	}
	// A bullet is "  - Names: methods[; note]", its lines after the first
	// indented by four spaces.
	var bullets []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "  - "):
			bullets = append(bullets, strings.TrimPrefix(l, "  - "))
		case strings.HasPrefix(l, "    ") && len(bullets) > 0:
			bullets[len(bullets)-1] += " " + strings.TrimSpace(l)
		}
	}
	got := make(map[string][]string)
	for _, b := range bullets {
		names, rest, ok := strings.Cut(b, ": ")
		if !ok {
			t.Fatalf("doc.go section %q: the bullet %q has no \"Name: methods\"", heading, b)
		}
		rest, _, _ = strings.Cut(rest, ";")
		methods := methodName.FindAllString(rest, -1)
		for _, n := range strings.Split(names, ", ") {
			got[n] = methods
		}
	}
	return got
}

func TestTheDocListsTheCDPMethodsEachActionUses(t *testing.T) {
	l := cdptest.NewLauncher(t, cdptest.WithPages(docPages()...))
	pool, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := &docEnv{ctx: testCtx(t), l: l, pool: pool, file: filepath.Join(t.TempDir(), "avatar.png")}
	if err := os.WriteFile(e.file, []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	observed := make(map[string][]string)
	// record runs do and returns the methods it called, in the order of
	// their first call.
	var b *cdptest.Browser
	// Calls on other tabs (a closed tab's late cleanup) are not counted.
	record := func(name string, do func() error) {
		t.Helper()
		n := len(b.Calls())
		if err := do(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ms []string
		for _, c := range b.Calls()[n:] {
			ours := c.TargetID == "" || e.tab != nil && c.TargetID == e.tab.ID() || e.opened != nil && c.TargetID == e.opened.ID()
			if ours && !slices.Contains(ms, c.Method) {
				ms = append(ms, c.Method)
			}
		}
		observed[name] = ms
	}
	if e.sess, err = pool.Open(e.ctx); err != nil {
		t.Fatal(err)
	}
	b = l.BrowserFor(e.sess)
	observed["Pool.Open"] = nil
	for _, c := range b.Calls() {
		if !slices.Contains(observed["Pool.Open"], c.Method) {
			observed["Pool.Open"] = append(observed["Pool.Open"], c.Method)
		}
	}
	record("Session.Tab", func() (err error) { e.tab, err = e.sess.Tab(e.ctx, ""); return err })

	// Each action gets a new tab, so that what a tab does once (turn on
	// the console or the network log, make an isolated world) is seen in
	// each action's calls.
	fresh := func() {
		t.Helper()
		if e.tab, err = e.sess.OpenTab(e.ctx, "https://a.test/"); err != nil {
			t.Fatal(err)
		}
		if e.snap, err = e.tab.Snapshot(e.ctx, browserpool.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tidy := func() {
		t.Helper()
		for _, tab := range []*browserpool.Tab{e.tab, e.opened} {
			if tab == nil {
				continue
			}
			if err := e.sess.CloseTab(e.ctx, tab.ID()); err != nil && !errors.Is(err, browserpool.ErrTabNotFound) {
				t.Fatal(err)
			}
		}
		e.opened = nil
	}
	for _, a := range docActions {
		fresh()
		if setup := docSetup[a.name]; setup != nil {
			if err := setup(e); err != nil {
				t.Fatalf("before %s: %v", a.name, err)
			}
		}
		record(a.name, func() error { return a.do(e) })
		tidy()
	}
	for _, a := range notFaked {
		fresh()
		if err := a.do(e); !errors.Is(err, browserpool.ErrProtocol) {
			t.Errorf("%s on a fake page = %v; the doc lists it as not faked, so it should fail with a protocol error", a.name, err)
		}
		tidy()
	}

	documented := docSection(t, "Which CDP methods each action uses")
	want := make(map[string][]string)
	for name, ms := range documented {
		want[name] = slices.Sorted(slices.Values(ms))
	}
	got := make(map[string][]string)
	for name, ms := range observed {
		if inner, ok := docComposite[name]; ok {
			// The doc lists the composite's own calls: its action's are
			// added to them.
			ms = slices.DeleteFunc(slices.Clone(ms), func(m string) bool {
				return slices.Contains(observed[inner], m) && !slices.Contains(documented[name], m)
			})
		}
		got[name] = slices.Sorted(slices.Values(ms))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		var text strings.Builder
		for _, name := range slices.Sorted(maps.Keys(observed)) {
			fmt.Fprintf(&text, "//   - %s: %s\n", name, strings.Join(observed[name], ", "))
		}
		t.Errorf("doc.go's \"Which CDP methods each action uses\" does not match what the actions call on fake pages (-doc +calls):\n%s\nthe calls, in the order of their first use:\n%s", diff, text.String())
	}

	var notFakedNames []string
	for _, a := range notFaked {
		notFakedNames = append(notFakedNames, a.name)
	}
	var docNotFaked []string
	for name := range docSection(t, "Not faked") {
		docNotFaked = append(docNotFaked, name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(notFakedNames)), slices.Sorted(slices.Values(docNotFaked))); diff != "" {
		t.Errorf("the actions doc.go's \"Not faked\" names, and those this test finds failing (-failing +doc):\n%s", diff)
	}
}
