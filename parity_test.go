package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// parityTable is the expression the parity flow reads the accounts table
// with: Chromium runs it, the fake page scripts its value.
const parityTable = `[...document.querySelectorAll("tr")].map(r => [...r.cells].map(c => c.textContent))`

// parityPages are the fake twins of testdata/parity-login.html and
// parity-home.html, served at base.
func parityPages(base string) []*cdptest.Page {
	login := cdptest.NewPage(base+"/parity-login.html", "Sign in",
		cdptest.Heading(1, "Sign in"),
		cdptest.TextBox("Email"),
		cdptest.Password("Password"),
		cdptest.Select("Plan", "Free", "Pro"),
		cdptest.Checkbox("Remember me", false),
		cdptest.FileInput("Avatar"),
		cdptest.Button("Sign in").Navigates("/parity-home.html"),
	)
	home := cdptest.NewPage(base+"/parity-home.html", "Accounts",
		cdptest.Heading(1, "Accounts"),
		cdptest.Text("Welcome back").WithID("welcome"),
		cdptest.Table([]string{"Name", "Plan"}, []string{"Ann", "Pro"}, []string{"Bob", "Free"}),
		cdptest.Button("Delete Bob").Confirms("Delete Bob?", func(p *cdptest.Page, ok bool) {
			if ok {
				p.Add(cdptest.Text("Bob deleted"))
			}
		}),
		cdptest.Link("Export CSV", "/download?name=report.csv").Downloads("report.csv", []byte("id,value\n1,2\n")),
	).Script(`document.body.innerText.includes("Bob deleted")`, func(p *cdptest.Page) (any, error) {
		return p.Find("paragraph", "Bob deleted") != nil, nil
	}).Script(parityTable, func(p *cdptest.Page) (any, error) {
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
	return []*cdptest.Page{login, home}
}

// parityStep is one step of the agent flow: what it does, and what the
// caller sees of it (a result, or the error's op, class and detail).
type parityStep struct {
	name string
	do   func(ctx context.Context, f *parityFlow) (string, error)
}

// parityFlow is the state a flow's steps share.
type parityFlow struct {
	file string // a file to upload
	tab  *browserpool.Tab
	sess *browserpool.Session
	base string
	snap browserpool.Snapshot
}

// shown is what a caller sees of an error: op, class and detail (ids
// differ between browsers and are left out).
func shown(err error) string {
	var e *browserpool.Error
	if errors.As(err, &e) {
		return fmt.Sprintf("error %s: %v: %s", e.Op, e.Class, e.Detail)
	}
	return "error " + err.Error()
}

func (f *parityFlow) ref(role, name string) string { return f.snap.Find(role, name) }

var paritySteps = []parityStep{
	{"navigate", func(ctx context.Context, f *parityFlow) (string, error) {
		res, err := f.tab.Navigate(ctx, f.base+"/parity-login.html")
		return strings.TrimPrefix(res.URL, f.base), err
	}},
	{"snapshot", func(ctx context.Context, f *parityFlow) (s string, err error) {
		f.snap, err = f.tab.Snapshot(ctx, browserpool.SnapshotOptions{})
		return fmt.Sprintf("%s\n%s%v", f.snap.Title, f.snap.Text, f.snap.Refs), err
	}},
	{"fill email", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Fill(ctx, f.ref("textbox", "Email"), "ann@example.com")
	}},
	{"fill password", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Fill(ctx, f.ref("textbox", "Password"), "s3cret")
	}},
	{"type", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Type(ctx, ".org")
	}},
	{"press backspace", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Press(ctx, "Backspace")
	}},
	{"press an unknown key", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Press(ctx, "Hyper+Q")
	}},
	{"upload", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Upload(ctx, f.ref("button", "Avatar"), f.file)
	}},
	{"upload to a checkbox", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Upload(ctx, f.ref("checkbox", "Remember me"), f.file)
	}},
	{"fill a checkbox", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Fill(ctx, f.ref("checkbox", "Remember me"), "x")
	}},
	{"select", func(ctx context.Context, f *parityFlow) (string, error) {
		sel, err := f.tab.Select(ctx, f.ref("combobox", "Plan"), "Pro")
		return fmt.Sprint(sel), err
	}},
	{"select a missing option", func(ctx context.Context, f *parityFlow) (string, error) {
		sel, err := f.tab.Select(ctx, f.ref("combobox", "Plan"), "Gold")
		return fmt.Sprint(sel), err
	}},
	{"click the checkbox", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Click(ctx, f.ref("checkbox", "Remember me"))
	}},
	{"hover", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Hover(ctx, f.ref("button", "Sign in"))
	}},
	{"scroll", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Scroll(ctx, browserpool.ScrollOptions{DeltaY: 200})
	}},
	{"click at an empty point", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.ClickAt(ctx, 770, 480) // layouts differ: a point both leave empty
	}},
	{"a stale ref", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Click(ctx, "@e99")
	}},
	{"snapshot after the form", func(ctx context.Context, f *parityFlow) (s string, err error) {
		f.snap, err = f.tab.Snapshot(ctx, browserpool.SnapshotOptions{Interactive: true})
		return f.snap.Text, err
	}},
	{"page info", func(ctx context.Context, f *parityFlow) (string, error) {
		pi, err := f.tab.PageInfo(ctx)
		return fmt.Sprintf("%s %q viewport %dx%d scroll %d,%d", strings.TrimPrefix(pi.URL, f.base), pi.Title,
			pi.ViewportWidth, pi.ViewportHeight, pi.ScrollX, pi.ScrollY), err
	}},
	{"evaluate", func(ctx context.Context, f *parityFlow) (string, error) {
		var title string
		err := f.tab.Evaluate(ctx, "document.title", &title)
		return title, err
	}},
	{"sign in", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.WaitNavigation(ctx, func(ctx context.Context) error {
			return f.tab.Click(ctx, f.ref("button", "Sign in"))
		})
	}},
	{"wait load", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.WaitLoad(ctx)
	}},
	{"the old ref is stale", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.Click(ctx, f.ref("button", "Sign in"))
	}},
	{"wait visible", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.WaitVisible(ctx, "#welcome")
	}},
	{"wait network idle", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.WaitNetworkIdle(ctx, browserpool.NetworkIdleOptions{Quiet: 50 * time.Millisecond})
	}},
	{"read the table", func(ctx context.Context, f *parityFlow) (string, error) {
		var rows [][]string
		err := f.tab.Evaluate(ctx, parityTable, &rows)
		return fmt.Sprint(rows), err
	}},
	{"snapshot the accounts", func(ctx context.Context, f *parityFlow) (s string, err error) {
		f.snap, err = f.tab.Snapshot(ctx, browserpool.SnapshotOptions{})
		return f.snap.Text, err
	}},
	{"confirm, deferred and answered", func(ctx context.Context, f *parityFlow) (string, error) {
		f.tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		err := f.tab.Click(ctx, f.ref("button", "Delete Bob"))
		pi, _ := f.tab.PageInfo(ctx)
		open := "no dialog"
		if pi.Dialog != nil {
			open = pi.Dialog.Type + " " + pi.Dialog.Message
		}
		if aerr := f.tab.AnswerDialog(ctx, true, ""); aerr != nil {
			return open, aerr
		}
		return open + "; click: " + shown(err), nil
	}},
	{"the page went on", func(ctx context.Context, f *parityFlow) (string, error) {
		return "", f.tab.WaitCondition(ctx, `document.body.innerText.includes("Bob deleted")`, nil)
	}},
	{"dialogs", func(ctx context.Context, f *parityFlow) (string, error) {
		var ds []string
		for _, d := range f.tab.Dialogs() {
			ds = append(ds, fmt.Sprintf("%s %q accepted=%v by=%s", d.Type, d.Message, d.Accepted, d.By))
		}
		return strings.Join(ds, "; "), nil
	}},
	{"snapshot after the delete", func(ctx context.Context, f *parityFlow) (s string, err error) {
		f.snap, err = f.tab.Snapshot(ctx, browserpool.SnapshotOptions{})
		return f.snap.Text, err
	}},
	{"download", func(ctx context.Context, f *parityFlow) (string, error) {
		dl, err := f.tab.WaitDownload(ctx, func(ctx context.Context) error {
			return f.tab.Click(ctx, f.ref("link", "Export CSV"))
		})
		if err != nil {
			return "", err
		}
		data, err := os.ReadFile(dl.Path)
		return fmt.Sprintf("%s %q %s %d bytes %q", filepath.Base(dl.Path), dl.SuggestedName, strings.TrimPrefix(dl.URL, f.base), dl.Bytes, data), err
	}},
	{"screenshot", func(ctx context.Context, f *parityFlow) (string, error) {
		shot, err := f.tab.Screenshot(ctx, browserpool.ScreenshotOptions{JPEG: true, MaxDimension: 400})
		return fmt.Sprintf("%dx%d nonempty=%v", shot.Width, shot.Height, shot.Bytes > 0), err
	}},
}

// runParity runs the flow on tab and returns what the caller saw, step by
// step, then the tab's trace (actions, arguments and errors).
func runParity(t *testing.T, sess *browserpool.Session, tab *browserpool.Tab, base string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	file := filepath.Join(t.TempDir(), "avatar.png")
	if err := os.WriteFile(file, []byte("not really a png"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &parityFlow{tab: tab, sess: sess, base: base, file: file}
	var seen []string
	for _, st := range paritySteps {
		res, err := st.do(ctx, f)
		line := st.name + ": " + res
		if err != nil {
			line += " " + shown(err)
		}
		seen = append(seen, line)
	}
	for _, e := range tab.Trace() {
		args := strings.ReplaceAll(e.Args, base, "")
		line := "trace " + e.Action + " " + args
		if e.Err != "" {
			line += " ! " + strings.ReplaceAll(strings.ReplaceAll(e.Err, sess.ID(), "S"), tab.ID(), "T")
		}
		seen = append(seen, line)
	}
	return seen
}

// TestParityTheSameAgentFlowSeesTheSameOnAFakePageAndOnChromium runs one
// agent flow against fake pages (cdptest) and against their HTML twins in
// Chromium, and compares everything the caller sees.
func TestParityTheSameAgentFlowSeesTheSameOnAFakePageAndOnChromium(t *testing.T) {
	env := newAgentEnv(t)
	base := env.site.URL

	realTab := env.tab(t, "/parity-home.html")
	real := runParity(t, env.sess, realTab, base)

	l := cdptest.NewLauncher(t, cdptest.WithPages(parityPages(base)...))
	p := newFakePool(t, l, browserpool.Config{})
	s := mustOpen(t, ctxT(t), p)
	fakeTab, err := s.OpenTab(ctxT(t), base+"/parity-home.html") // as env.tab opened the real one: its navigation is traced
	if err != nil {
		t.Fatal(err)
	}
	fake := runParity(t, s, fakeTab, base)

	if diff := cmp.Diff(real, fake); diff != "" {
		t.Errorf("the fake differs from Chromium (-chromium +fake):\n%s", diff)
	}
	if testing.Verbose() {
		t.Logf("what the caller saw:\n%s", strings.Join(real, "\n"))
	}
}

// likeChromiumSteps are steps where the fake once differed from Chromium:
// a title's whitespace, line breaks filled into a one-line field (now
// refused by both), an
// empty element (never visible), Upload on a link with a relative href (the
// error names the link's URL, resolved), a legacy octal literal, Tab past the last
// control (the focus leaves the page), a list box's selection (in its
// options' order), and a load of the URL the tab is on (which replaces its
// history entry, forward entries kept). It returns what a caller sees.
func likeChromiumSteps(ctx context.Context, s *browserpool.Session, base, file string) []string {
	var out []string
	say := func(name string, v any, err error) {
		if err != nil {
			v = shown(err)
		}
		out = append(out, fmt.Sprintf("%s: %v", name, v))
	}
	tab, err := s.OpenTab(ctx, base+"/like.html")
	if err != nil {
		return []string{"open: " + shown(err)}
	}
	info, err := tab.PageInfo(ctx)
	say("title", fmt.Sprintf("%q", info.Title), err)
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	say("snapshot title", fmt.Sprintf("%q", snap.Title), err)
	ref := snap.Find("textbox", "Name")
	for _, v := range []string{"a\nb\r\nc\rd", "plain"} {
		say(fmt.Sprintf("fill %q", v), "ok", tab.Fill(ctx, ref, v))
		var got string
		err := tab.Evaluate(ctx, `document.querySelector("input").value`, &got)
		say("value", fmt.Sprintf("%q", got), err)
	}
	say("upload on a link with a relative href", "ok", tab.Upload(ctx, snap.Find("link", "Other"), file))
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	say("wait for an empty paragraph to show", "shown", tab.WaitVisible(short, "#empty"))
	cancel()
	for _, expr := range []string{"010", "0777", "08", "09.5", "1+1;"} {
		var n float64
		err := tab.Evaluate(ctx, expr, &n)
		say(expr, n, err)
	}
	keys, err := s.OpenTab(ctx, base+"/keys.html")
	if err != nil {
		return append(out, "open keys.html: "+shown(err))
	}
	ksnap, err := keys.Snapshot(ctx, browserpool.SnapshotOptions{})
	say("keys snapshot", ksnap.Title, err) // its text differs: the fake's list box options have no refs
	say("click One", "ok", keys.Click(ctx, ksnap.Find("textbox", "One")))
	for i, k := range []string{"Tab", "Tab", "Tab", "Tab"} {
		// Two, the list box, out of the page, One: typing digits into
		// the text fields only.
		say("press "+k, "ok", keys.Press(ctx, k))
		if i != 1 {
			say("type", "ok", keys.Type(ctx, fmt.Sprint(i)))
		}
		var v string
		err := keys.Evaluate(ctx, "vals", &v)
		say("fields", v, err)
	}
	sel, err := keys.Select(ctx, ksnap.Find("listbox", "Many"), "C", "A", "C")
	say("select C, A and C", sel, err)
	for _, step := range []struct {
		name string
		do   func() (browserpool.NavigateResult, error)
	}{
		{"the same URL", func() (browserpool.NavigateResult, error) { return tab.Navigate(ctx, base+"/like.html") }},
		{"back", func() (browserpool.NavigateResult, error) { return tab.Back(ctx) }},
		{"another page", func() (browserpool.NavigateResult, error) { return tab.Navigate(ctx, base+"/other.html") }},
		{"back", func() (browserpool.NavigateResult, error) { return tab.Back(ctx) }},
		{"the same URL, forward entry behind", func() (browserpool.NavigateResult, error) { return tab.Navigate(ctx, base+"/like.html") }},
		{"forward", func() (browserpool.NavigateResult, error) { return tab.Forward(ctx) }},
	} {
		res, err := step.do()
		say(step.name, strings.TrimPrefix(res.URL, base), err)
	}
	return out
}

func TestTheFakeDoesWhatChromiumDoesWhereItOnceDidNot(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{
		"/like.html":  "<!doctype html><title>  Hello\n\t  World  </title><label>Name <input name=n></label><p id=empty></p><a href=other.html>Other</a>",
		"/other.html": "<!doctype html><title>Other</title>",
		"/keys.html": "<!doctype html><title>Keys</title><script>Object.defineProperty(window, 'vals', {get: () => [...document.querySelectorAll('input')].map(i => i.value).join('|')})</script>" +
			"<label>One <input></label><label>Two <input></label><label>Many <select multiple><option>A</option><option>B</option><option>C</option></select></label>",
	})
	file := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(file, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	real := likeChromiumSteps(ctxT(t), mustOpen(t, ctxT(t), newRealPool(t, browserpool.Config{})), base, file)

	like := cdptest.NewPage(base+"/like.html", "  Hello\n\t  World  ", cdptest.TextBox("Name"), cdptest.Text("").WithID("empty"), cdptest.Link("Other", "other.html")).
		Script(`document.querySelector("input").value`, func(p *cdptest.Page) (any, error) { return p.Values()["Name"], nil })
	keys := cdptest.NewPage(base+"/keys.html", "Keys", cdptest.TextBox("One"), cdptest.TextBox("Two"), cdptest.ListBox("Many", "A", "B", "C")).
		Script("vals", func(p *cdptest.Page) (any, error) { v := p.Values(); return v["One"] + "|" + v["Two"], nil })
	l := cdptest.NewLauncher(t, cdptest.WithPages(like, keys, cdptest.NewPage(base+"/other.html", "Other")))
	fake := likeChromiumSteps(ctxT(t), mustOpen(t, ctxT(t), newFakePool(t, l, browserpool.Config{})), base, file)

	if diff := cmp.Diff(real, fake); diff != "" {
		t.Errorf("the fake differs from Chromium (-chromium +fake):\n%s", diff)
	}
	if testing.Verbose() {
		t.Logf("what the caller saw:\n%s", strings.Join(real, "\n"))
	}
}
