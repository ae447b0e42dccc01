package browserpool_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
)

// closeInBrowser closes tab id as its user would, over the browser's own
// HTTP endpoint (a connection that is none of the pool's), and waits until
// the browser no longer lists it.
func closeInBrowser(t *testing.T, c *userChrome, id string) {
	t.Helper()
	resp, err := http.Get("http://" + c.endpoint() + "/json/close/" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, "the browser to close tab "+id, func() bool {
		return !slices.ContainsFunc(c.pages(t), func(p jsonListPage) bool { return p.ID == id })
	})
}

// A workflow's selected tab with no label (Open made it), closed by the
// user, was "not found" in this workflow, and the hint sent the caller back
// to that same tab, again and again (found by helper 86's audit). It is
// now ErrTabClosed, and forgotten.
func TestAnAttachedWorkflowsUnlabeledSelectedTabTheUserClosedIsErrTabClosedAndForgotten(t *testing.T) {
	t.Parallel()
	base := serve(t, attachPages)
	chrome := startUserChrome(t, base+"/user")
	p := newAttachPool(t)
	ctx := ctxT(t)
	v := attachFor(t, p, chrome.endpoint(), "wf")
	if _, err := v.Open(ctx, base+"/profile"); err != nil {
		t.Fatal(err)
	}
	sel, ok := v.Selected()
	if !ok || sel.Label != "" {
		t.Fatalf("after Open: selected %+v (%v), want an unlabeled selected tab", sel, ok)
	}
	closeInBrowser(t, chrome, sel.ID)

	err := v.Do(ctx, sel.ID, func(*browserpool.Tab) error { return nil })
	if !errors.Is(err, browserpool.ErrTabClosed) || !strings.Contains(err.Error(), "this workflow's selected tab, is gone: it was closed in the browser") {
		t.Errorf("Do on the selected tab the user closed: %v, want ErrTabClosed saying it was closed in the browser", err)
	}
	if s, ok := v.Selected(); ok {
		t.Errorf("the closed tab is still this workflow's selected tab: %+v", s)
	}
	err = v.Do(ctx, "", func(*browserpool.Tab) error { return nil })
	if !errors.Is(err, browserpool.ErrTabRequired) || strings.Contains(err.Error(), sel.ID) {
		t.Errorf("Do with no tab after that: %v, want ErrTabRequired whose hint no longer names %s", err, sel.ID)
	}
}

// Waiting for the port lock of an attached browser said only that the
// action before had not finished: retrying failed the same way while
// another workflow's never-ending action held it, and nothing said whose
// (found by helper 86's audit). The error names it and how long it held.
func TestGivingUpOnAnAttachedPortNamesTheActionHoldingIt(t *testing.T) {
	t.Parallel()
	base := serve(t, attachPages)
	chrome := startUserChrome(t, base+"/user")
	p := newAttachPool(t)
	ctx := ctxT(t)
	a := attachFor(t, p, chrome.endpoint(), "wfA")
	b := attachFor(t, p, chrome.endpoint(), "wfB")
	if _, err := a.NewTab(ctx, "a", base+"/search"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewTab(ctx, "b", base+"/profile"); err != nil {
		t.Fatal(err)
	}
	actx, stop := context.WithCancel(ctx)
	held := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- a.Do(actx, "a", func(tab *browserpool.Tab) error {
			close(held)
			return tab.Evaluate(actx, `new Promise(() => {})`, nil)
		})
	}()
	<-held
	bctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err := b.Do(bctx, "b", func(tab *browserpool.Tab) error { return tab.Evaluate(bctx, "document.title", nil) })
	stop()
	<-done
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "workflow wfA's AttachedView.Do has held the browser for") || !strings.Contains(err.Error(), "give its calls a deadline") {
		t.Errorf("workflow B while A's action never ends: %v, want a deadline error naming workflow wfA's AttachedView.Do and how to end it", err)
	}
}

// In a browser the pool attached to, a dialog the user's page opened after
// the workflow's action had returned was dismissed by the pool: the user
// never saw it and the page got Cancel (found by helper 86's audit). It is
// left open for the user now; the tab's actions fail fast meanwhile, and
// the user's answer is reported.
func TestAnAttachedBrowsersOwnDialogIsLeftToItsUserWhenNoActionRuns(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{"/user": `<title>User tab</title><script>
		window.later = () => setTimeout(() => { window.answer = confirm("Delete your draft?") }, 300)
	</script>`})
	chrome := startUserChrome(t, base+"/user")
	p := newAttachPool(t)
	ctx := ctxT(t)
	v := attachFor(t, p, chrome.endpoint(), "wf")
	var user jsonListPage
	for _, pg := range chrome.pages(t) {
		if strings.HasSuffix(pg.URL, "/user") {
			user = pg
		}
	}
	person := newPageUser(t, ctx, user.WebSocketDebuggerURL)
	var tab *browserpool.Tab
	// The browser lists the tab at its URL as its first navigation starts:
	// the page's script may not have run yet.
	waitFor(t, "the user's page to run its script", func() bool {
		var ready bool
		err := v.Do(ctx, user.ID, func(t *browserpool.Tab) error {
			tab = t
			return t.Evaluate(ctx, `typeof later === "function"`, &ready)
		})
		return err == nil && ready
	})
	// The user's own script opens it (over their connection): no action of
	// the pool's runs then, however late the pool notes its last one ended.
	person.call(3, "Runtime.evaluate", map[string]any{"expression": "later(), 1"})
	// The confirm opens with no action running (an action running then
	// would make it the action's): the pool leaves it open for the user
	// and says so in the trace.
	waitFor(t, "the pool to leave the user's confirm open", func() bool {
		return slices.ContainsFunc(tab.Trace(), func(e browserpool.TraceEntry) bool {
			return e.Action == "dialog" && strings.Contains(e.Args, "left open for the browser's user")
		})
	})
	// The trace says so as the pool decides; the confirm is the tab's open
	// dialog (what the actions below fail on) a moment later.
	waitFor(t, "the confirm to be the tab's open dialog", func() bool {
		info, err := tab.PageInfo(ctx)
		return err == nil && info.Dialog != nil
	})
	err := v.Do(ctx, user.ID, func(t *browserpool.Tab) error { return t.Evaluate(ctx, "1", nil) })
	if !errors.Is(err, browserpool.ErrDialogOpen) || !strings.Contains(err.Error(), "the browser is the user's") {
		t.Fatalf("an action while the user's confirm is open: %v (dialogs answered: %+v), want ErrDialogOpen saying it is left for the user", err, tab.Dialogs())
	}
	// The user answers OK in their browser.
	person.call(2, "Page.handleJavaScriptDialog", map[string]any{"accept": true})
	waitFor(t, "the user's answer to be reported", func() bool { return len(tab.Dialogs()) == 1 })
	d := tab.Dialogs()[0]
	if d.Type != "confirm" || d.Message != "Delete your draft?" || !d.Accepted || d.By != browserpool.DialogByUser {
		t.Errorf("the dialog reported: %+v, want the confirm, accepted by its user", d)
	}
	var answer bool
	if err := v.Do(ctx, user.ID, func(t *browserpool.Tab) error { return t.Evaluate(ctx, "window.answer", &answer) }); err != nil || !answer {
		t.Errorf("the page's confirm() returned %v (%v), want true, the user's answer", answer, err)
	}
	// A dialog the workflow's own action opens is the action's, not the
	// user's: dismissed at once as in a browser of the pool's, whether or
	// not the action's context can end.
	if err := v.Do(ctx, user.ID, func(t *browserpool.Tab) error {
		return t.Evaluate(context.Background(), `alert("from the agent"), 1`, nil)
	}); err != nil {
		t.Errorf("an action whose page opened an alert: %v, want it dismissed and the action done", err)
	}
	if ds := tab.Dialogs(); len(ds) != 2 || ds[1].Message != "from the agent" || ds[1].By != browserpool.DialogDismissed {
		t.Errorf("the dialogs answered: %+v, want the agent's alert dismissed", ds)
	}
}

// pageUser is a DevTools connection of its own to a page, standing in for
// the browser's user: Chromium lets a connection answer only a dialog that
// opened while its Page domain was on, so it is made before the dialog.
type pageUser struct {
	t *testing.T
	c *websocket.Conn
}

func newPageUser(t *testing.T, ctx context.Context, wsURL string) *pageUser {
	t.Helper()
	c, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	u := &pageUser{t, c}
	u.call(1, "Page.enable", nil)
	return u
}

// call sends method and waits for its reply, failing the test on an error.
func (u *pageUser) call(id int, method string, params any) {
	u.t.Helper()
	if err := u.c.WriteJSON(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		u.t.Fatal(err)
	}
	for {
		var reply struct {
			ID    int `json:"id"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := u.c.ReadJSON(&reply); err != nil {
			u.t.Fatal(err)
		}
		if reply.ID != id {
			continue // an event
		}
		if reply.Error != nil {
			u.t.Fatalf("the user's %s: %s", method, reply.Error.Message)
		}
		return
	}
}

// A tab of a browser the pool attached to, still on the first navigation
// its user began (here the browser's command line), showed its initial
// empty document: WaitLoad returned at once and the page read as an empty
// about:blank. WaitLoad waits for that first page now.
func TestWaitLoadOnAnAttachedTabStillOnItsFirstNavigationWaitsForItsPage(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	base := serveRoutes(t, map[string]http.HandlerFunc{"/slow": func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		htmlRoute(`<title>Slow first page</title><p>Here at last`)(w, r)
	}})
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	t.Cleanup(answer)
	chrome := startUserChrome(t, base+"/slow")
	p := newAttachPool(t)
	ctx := ctxT(t)
	v := attachFor(t, p, chrome.endpoint(), "wf")
	var id string
	for _, pg := range chrome.pages(t) {
		if strings.HasSuffix(pg.URL, "/slow") {
			id = pg.ID
		}
	}
	var title string
	err := v.Do(ctx, id, func(t *browserpool.Tab) error {
		// The server answers only once the wait has begun.
		time.AfterFunc(300*time.Millisecond, answer)
		if err := t.WaitLoad(ctx); err != nil {
			return err
		}
		return t.Evaluate(ctx, "document.title", &title)
	})
	if err != nil {
		t.Fatal(err)
	}
	if title != "Slow first page" {
		t.Errorf("the title after WaitLoad = %q, want the first page's %q", title, "Slow first page")
	}
}

// waitEvent reads the connection's messages until event method comes.
func (u *pageUser) waitEvent(method string) {
	u.t.Helper()
	for {
		var msg struct {
			Method string `json:"method"`
		}
		if err := u.c.ReadJSON(&msg); err != nil {
			u.t.Fatal(err)
		}
		if msg.Method == method {
			return
		}
	}
}

// A dialog already open in the user's tab when a workflow first reaches it
// is the user's. DevTools neither reports it to a connection made after it
// opened nor lets that connection answer it, and it holds the page: the
// workflow's first action runs out of time with a hint that names such a
// dialog (it named only a busy script), and the dialog stays open for its
// user.
func TestAnActionHeldByADialogOpenBeforeTheAttachSaysTheUserMayHaveADialogOpen(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{"/user": `<title>User tab</title>`})
	chrome := startUserChrome(t, base+"/user")
	ctx := ctxT(t)
	var user jsonListPage
	waitFor(t, "the user's tab to be listed", func() bool {
		for _, pg := range chrome.pages(t) {
			if strings.HasSuffix(pg.URL, "/user") {
				user = pg
				return true
			}
		}
		return false
	})
	person := newPageUser(t, ctx, user.WebSocketDebuggerURL)
	// The browser lists the tab at its URL as its first navigation starts:
	// the confirm must open in the user's page, not in the empty document
	// before it.
	waitFor(t, "the user's page to load", func() bool {
		return person.evaluate(3, `document.readyState === "complete" && location.pathname === "/user"`) == "true"
	})
	person.call(2, "Runtime.evaluate", map[string]any{"expression": `setTimeout(() => { window.answer = confirm("Leave the page?") }, 0), 1`})
	person.waitEvent("Page.javascriptDialogOpening")

	p := newAttachPool(t)
	v := attachFor(t, p, chrome.endpoint(), "wf")
	var tab *browserpool.Tab
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := v.Do(actx, user.ID, func(t *browserpool.Tab) error {
		tab = t
		return t.Evaluate(actx, "1", nil)
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "if the browser's user has a dialog open on the page") {
		t.Errorf("the first action on a tab whose user's confirm is open: %v, want a deadline error whose hint names the user's dialog", err)
	}
	if tab == nil {
		t.Fatal("the action never reached the tab")
	}
	if ds := tab.Dialogs(); len(ds) != 0 {
		t.Errorf("the pool answered %+v; want the user's confirm left to them", ds)
	}
	// Still open: its user answers it, and the tab takes commands again;
	// the page's script got the user's answer.
	person.call(4, "Page.handleJavaScriptDialog", map[string]any{"accept": true})
	var answer bool
	if err := v.Do(ctx, user.ID, func(t *browserpool.Tab) error { return t.Evaluate(ctx, "window.answer", &answer) }); err != nil || !answer {
		t.Errorf("the page's confirm() returned %v (%v) once its user answered, want true", answer, err)
	}
}

// evaluate evaluates expr in the page over the user's connection and
// returns its value as JSON ("" on an exception).
func (u *pageUser) evaluate(id int, expr string) string {
	u.t.Helper()
	if err := u.c.WriteJSON(map[string]any{"id": id, "method": "Runtime.evaluate", "params": map[string]any{"expression": expr, "returnByValue": true}}); err != nil {
		u.t.Fatal(err)
	}
	for {
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				Result struct {
					Value json.RawMessage `json:"value"`
				} `json:"result"`
			} `json:"result"`
		}
		if err := u.c.ReadJSON(&reply); err != nil {
			u.t.Fatal(err)
		}
		if reply.ID == id {
			return string(reply.Result.Result.Value)
		}
	}
}
