package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// lastDialog returns the tab's latest answered dialog without its times.
func lastDialog(t *testing.T, tab *browserpool.Tab) browserpool.Dialog {
	t.Helper()
	ds := tab.Dialogs()
	if len(ds) == 0 {
		t.Fatal("no dialog was reported")
	}
	d := ds[len(ds)-1]
	if d.Opened.IsZero() || d.Closed.Before(d.Opened) {
		t.Errorf("dialog times: opened %v, closed %v", d.Opened, d.Closed)
	}
	return d
}

var ignoreDialogTimes = cmpopts.IgnoreFields(browserpool.Dialog{}, "Opened", "Closed", "URL")

func TestDialogsOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)

	t.Run("without a handler an alert is dismissed and reported", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Alert")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'alert done'")
		want := browserpool.Dialog{Type: "alert", Message: "Hello!", By: browserpool.DialogDismissed}
		if diff := cmp.Diff(want, lastDialog(t, tab), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialog (-want +got):\n%s", diff)
		}
		if d := lastDialog(t, tab); d.URL != e.site.URL+"/dialogs.html" {
			t.Errorf("dialog URL = %q", d.URL)
		}
		// The trace says who closed it, once (it read "dismissed
		// (dismissed)").
		var got []string
		for _, en := range tab.Trace() {
			if en.Action == "dialog" {
				got = append(got, en.Args)
			}
		}
		want2 := []string{`alert "Hello!": dismissed, as every dialog is without a handler (Tab.SetDialogHandler)`}
		if diff := cmp.Diff(want2, got); diff != "" {
			t.Errorf("the trace's dialog entries (-want +got):\n%s", diff)
		}
	})

	t.Run("a click that opened an alert returns with the alert already reported", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
			time.Sleep(100 * time.Millisecond) // an answer that takes a while
			return browserpool.DialogReply{}
		})
		if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Alert")); err != nil {
			t.Fatal(err)
		}
		want := []browserpool.Dialog{{Type: "alert", Message: "Hello!", By: browserpool.DialogByHandler}}
		if diff := cmp.Diff(want, tab.Dialogs(), ignoreDialogTimes); diff != "" {
			t.Errorf("dialogs as Click returns (-want +got):\n%s", diff)
		}
		var got []string
		for _, en := range tab.Trace() {
			if en.Action == "dialog" {
				got = append(got, en.Args)
			}
		}
		if diff := cmp.Diff([]string{`alert "Hello!": dismissed by the tab's dialog handler`}, got); diff != "" {
			t.Errorf("the trace's dialog entries (-want +got):\n%s", diff)
		}
	})

	t.Run("a prompt accepted without text keeps its default text", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Accept: true}
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Prompt")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'prompt anon'")
		if err := tab.Evaluate(ctx, "document.getElementById('out').textContent = ''", nil); err != nil {
			t.Fatal(err)
		}
		tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		if err := tab.Click(ctx, ref(t, s, "button", "Prompt")); !errors.Is(err, browserpool.ErrDialogOpen) {
			t.Fatalf("Click opening a deferred prompt: %v; want ErrDialogOpen", err)
		}
		if err := tab.AnswerDialog(ctx, true, ""); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'prompt anon'")
	})

	t.Run("a handler answers confirm and prompt", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		var seen []browserpool.Dialog
		tab.SetDialogHandler(func(d browserpool.Dialog) browserpool.DialogReply {
			seen = append(seen, d) // the watcher calls handlers one at a time
			return browserpool.DialogReply{Accept: true, PromptText: "Zed"}
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Confirm")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'confirm true'")
		if err := tab.Click(ctx, ref(t, s, "button", "Prompt")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'prompt Zed'")
		want := []browserpool.Dialog{
			{Type: "confirm", Message: "Delete everything?", Accepted: true, By: browserpool.DialogByHandler},
			{Type: "prompt", Message: "Your name?", DefaultPrompt: "anon", Accepted: true, By: browserpool.DialogByHandler},
		}
		if diff := cmp.Diff(want, tab.Dialogs(), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialogs (-want +got):\n%s", diff)
		}
		if len(seen) != 2 || seen[1].DefaultPrompt != "anon" {
			t.Errorf("the handler saw %+v", seen)
		}
	})

	t.Run("a deferred dialog is shown by PageInfo and stops actions until answered", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		err := tab.Click(ctx, ref(t, s, "button", "Confirm"))
		if !errors.Is(err, browserpool.ErrDialogOpen) || !strings.Contains(err.Error(), `confirm "Delete everything?"`) || !strings.Contains(err.Error(), "Tab.AnswerDialog") {
			t.Fatalf("Click that opens a deferred confirm: error = %v, want ErrDialogOpen quoting it and pointing to Tab.AnswerDialog", err)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Dialog == nil || info.Dialog.Type != "confirm" || info.Dialog.Message != "Delete everything?" || info.Title != "" {
			t.Fatalf("PageInfo during a dialog = %+v, want only the dialog", info)
		}
		if _, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{}); !errors.Is(err, browserpool.ErrDialogOpen) {
			t.Errorf("Snapshot during a dialog: error = %v, want ErrDialogOpen", err)
		}
		if err := tab.AnswerDialog(ctx, true, ""); err != nil {
			t.Fatal(err)
		}
		waitJS(t, tab, "document.getElementById('out').textContent === 'confirm true'")
		want := browserpool.Dialog{Type: "confirm", Message: "Delete everything?", Accepted: true, By: browserpool.DialogByCaller}
		if diff := cmp.Diff(want, lastDialog(t, tab), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialog (-want +got):\n%s", diff)
		}
		if err := tab.AnswerDialog(ctx, true, ""); !errors.Is(err, browserpool.ErrInvalidArgument) {
			t.Errorf("AnswerDialog with no dialog open: error = %v, want ErrInvalidArgument", err)
		}
	})

	t.Run("an Evaluate that opens a deferred dialog is stopped by it, whatever its caller's context", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		type key struct{}
		callers := []struct {
			name string
			ctx  context.Context
		}{
			{"Background", context.Background()},
			{"a value that never ends", context.WithValue(context.Background(), key{}, 1)},
			{"a deadline", ctx},
		}
		for i, c := range callers {
			msg := fmt.Sprintf("asked by %s?", c.name)
			done := make(chan error, 1)
			go func() { done <- tab.Evaluate(c.ctx, fmt.Sprintf("confirm(%q)", msg), nil) }()
			var err error
			select {
			case err = <-done:
			case <-ctx.Done():
				t.Fatalf("%s: Evaluate(confirm) was still waiting for the deferred dialog when the test's context ended", c.name)
			}
			if !errors.Is(err, browserpool.ErrDialogOpen) || !strings.Contains(err.Error(), msg) {
				t.Errorf("%s: Evaluate(confirm) error = %v, want ErrDialogOpen quoting %q", c.name, err, msg)
			}
			if err := tab.Evaluate(c.ctx, "1", nil); !errors.Is(err, browserpool.ErrDialogOpen) {
				t.Errorf("%s: Evaluate while the dialog is open: error = %v, want ErrDialogOpen", c.name, err)
			}
			if err := tab.AnswerDialog(ctx, true, ""); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var n int
			if err := tab.Evaluate(c.ctx, fmt.Sprintf("%d+1", i), &n); err != nil || n != i+1 {
				t.Errorf("%s: Evaluate once the dialog is answered = %d, %v; want %d", c.name, n, err, i+1)
			}
		}
	})

	t.Run("an unanswered deferred dialog is dismissed when its time is up", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: 200 * time.Millisecond}
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Prompt")); !errors.Is(err, browserpool.ErrDialogOpen) {
			t.Fatalf("Click: error = %v, want ErrDialogOpen", err)
		}
		// Acting on the page fails fast while the dialog is open: watch the
		// reports instead.
		waitFor(t, "the deferred dialog to time out", func() bool { return len(tab.Dialogs()) > 0 })
		waitJS(t, tab, "document.getElementById('out').textContent === 'prompt null'")
		want := browserpool.Dialog{Type: "prompt", Message: "Your name?", DefaultPrompt: "anon", By: browserpool.DialogTimedOut}
		if diff := cmp.Diff(want, lastDialog(t, tab), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialog (-want +got):\n%s", diff)
		}
	})

	t.Run("a deferred dialog closed by a navigation is reported as closed by the page", func(t *testing.T) {
		ctx := ctxT(t)
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		s := snap(t, tab, browserpool.SnapshotOptions{})
		if err := tab.Click(ctx, ref(t, s, "button", "Alert")); !errors.Is(err, browserpool.ErrDialogOpen) {
			t.Fatalf("Click: error = %v, want ErrDialogOpen", err)
		}
		if _, err := tab.Navigate(ctx, e.site.URL+"/form.html"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the dialog to be reported closed", func() bool {
			ds := tab.Dialogs()
			return len(ds) > 0 && ds[len(ds)-1].By == browserpool.DialogClosedByPage
		})
		if info, err := tab.PageInfo(ctx); err != nil || info.Dialog != nil || info.Title != "Sign up" {
			t.Errorf("PageInfo after the navigation = %+v, %v", info, err)
		}
	})

	t.Run("a Navigate whose page opens a deferred dialog returns at once and the load follows the answer", func(t *testing.T) {
		ctx := ctxT(t)
		base := serve(t, map[string]string{"/alerting": `<!doctype html><title>before</title><script>alert("loading"); document.title = "after"</script>`})
		tab := e.tab(t, "/dialogs.html")
		tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
			return browserpool.DialogReply{Defer: time.Minute}
		})
		// The page cannot fire its load event before the alert is
		// answered: a Navigate waiting for it would wait the minute out.
		_, err := tab.Navigate(ctx, base+"/alerting")
		if !errors.Is(err, browserpool.ErrDialogOpen) || !strings.Contains(err.Error(), `the navigation opened an alert "loading"`) {
			t.Fatalf("Navigate to a page that alerts: error = %v, want ErrDialogOpen quoting the alert", err)
		}
		if err := tab.AnswerDialog(ctx, true, ""); err != nil {
			t.Fatal(err)
		}
		if err := tab.WaitLoad(ctx); err != nil {
			t.Fatal(err)
		}
		if title := eval[string](t, tab, "document.title"); title != "after" {
			t.Errorf("title after the answer = %q, want the page's script to have gone on", title)
		}
		want := browserpool.Dialog{Type: "alert", Message: "loading", Accepted: true, By: browserpool.DialogByCaller}
		if diff := cmp.Diff(want, lastDialog(t, tab), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialog (-want +got):\n%s", diff)
		}
	})

	t.Run("a dialog that opens while nothing acts on the tab does not wedge it", func(t *testing.T) {
		ctx := ctxT(t)
		tab, err := e.sess.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e.sess.CloseTab(ctx, tab.ID())
		})
		// OpenTab returns before the renderer is up; a raw call (not an
		// action of the package) waits for it, so that the short deadline
		// below measures the alert, not the renderer's start.
		if _, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("0")); err != nil {
			t.Fatal(err)
		}
		// No action of the tab has run yet. If the tab's dialogs are not
		// watched from its start, the evaluation that opens the alert
		// hangs until its context ends; they are: the alert is dismissed
		// at once. (The deadline only bounds a failure: a short one was
		// exceeded on a loaded machine while the alert was dismissed.)
		short, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := tab.Evaluate(short, "alert('early'); document.title = 'after'", nil); err != nil {
			t.Fatalf("Evaluate(alert): %v, want the alert dismissed and the script done", err)
		}
		info, err := tab.PageInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Title != "after" || info.Dialog != nil {
			t.Errorf("PageInfo = %+v, want the page's title after the alert", info)
		}
		want := []browserpool.Dialog{{Type: "alert", Message: "early", By: browserpool.DialogDismissed}}
		if diff := cmp.Diff(want, tab.Dialogs(), ignoreDialogTimes); diff != "" {
			t.Errorf("reported dialogs (-want +got):\n%s", diff)
		}
	})
}

func TestActionsWhoseContextNeverEndsAreStoppedByADeferredDialogAndGoOnOnceItIsAnswered(t *testing.T) {
	const url = "https://fake.test/delete"
	page := cdptest.NewPage(url, "Delete",
		cdptest.Button("Delete").Confirms("Delete it?", nil),
	).Script("1+1", func(*cdptest.Page) (any, error) { return 2, nil })
	p := newFakePool(t, cdptest.NewLauncher(t, cdptest.WithPages(page)), browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	if _, err := tab.Navigate(ctx, url); err != nil {
		t.Fatal(err)
	}
	tab.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply {
		return browserpool.DialogReply{Defer: time.Minute}
	})
	button := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Delete")

	// Eight callers evaluate with context.Background, before, while and
	// after the click opens the dialog: each call returns 2 or
	// ErrDialogOpen, and none waits for the dialog's minute.
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for !stop.Load() {
				var n int
				if err := tab.Evaluate(context.Background(), "1+1", &n); err != nil && !errors.Is(err, browserpool.ErrDialogOpen) || err == nil && n != 2 {
					errs <- fmt.Errorf("Evaluate = %d, %v; want 2 or ErrDialogOpen", n, err)
					return
				}
			}
		})
	}
	if err := tab.Click(context.Background(), button); err != nil && !errors.Is(err, browserpool.ErrDialogOpen) {
		t.Errorf("Click: %v, want nil or ErrDialogOpen", err)
	}
	if err := tab.Evaluate(context.Background(), "1+1", nil); !errors.Is(err, browserpool.ErrDialogOpen) {
		t.Errorf("Evaluate once the click opened the dialog: error = %v, want ErrDialogOpen", err)
	}
	stop.Store(true)
	joined := make(chan struct{})
	go func() { wg.Wait(); close(joined) }()
	select {
	case <-joined:
	case <-time.After(30 * time.Second):
		t.Fatal("an Evaluate was still waiting for the deferred dialog 30 s after it opened")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	if err := tab.AnswerDialog(ctx, true, ""); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tab.Evaluate(context.Background(), "1+1", &n); err != nil || n != 2 {
		t.Errorf("Evaluate once the dialog is answered = %d, %v; want 2", n, err)
	}
}

// The browser answers the call whose script opened a dialog only once the
// dialog is answered, and may answer it before the reply to the pool's own
// answer. Evaluate still returns with the dialog in Dialogs (TestAnAttached
// BrowsersOwnDialogIsLeftToItsUserWhenNoActionRuns failed so on real
// Chromium under load).
func TestAnEvaluateWhoseScriptOpenedAnAlertReturnsWithTheAlertInDialogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, tab := fakeTab(t)
		ctx := context.Background()
		sid := browserpool.TabCDPSessionID(tab)
		b.Handle("Runtime.evaluate", func(*cdptest.Call) (any, error) {
			return map[string]any{"result": map[string]any{"type": "number", "value": 1}}, nil
		})
		b.Handle("Page.handleJavaScriptDialog", func(*cdptest.Call) (any, error) { return map[string]any{}, nil })
		evaluated := b.Hold("Runtime.evaluate")
		answered := b.Hold("Page.handleJavaScriptDialog")
		type result struct {
			err     error
			dialogs []browserpool.Dialog
		}
		done := make(chan result, 1)
		go func() {
			err := tab.Evaluate(ctx, `alert("from the agent"), 1`, nil)
			done <- result{err, tab.Dialogs()}
		}()
		if err := evaluated.Wait(ctx, 1); err != nil {
			t.Fatal(err)
		}
		b.Emit(sid, "Page.javascriptDialogOpening", map[string]any{
			"url": "about:blank", "frameId": tab.ID(), "message": "from the agent", "type": "alert", "hasBrowserHandler": false, "defaultPrompt": "",
		})
		if err := answered.Wait(ctx, 1); err != nil {
			t.Fatal(err)
		}
		// The evaluate's reply first, and everything settles before the
		// answer's reply comes.
		evaluated.Release()
		synctest.Wait()
		answered.Release()
		r := <-done
		if r.err != nil {
			t.Fatalf("Evaluate whose alert the tab dismissed: %v, want nil", r.err)
		}
		var got []string
		for _, d := range r.dialogs {
			got = append(got, fmt.Sprintf("%s %q %s", d.Type, d.Message, d.By))
		}
		if diff := cmp.Diff([]string{`alert "from the agent" dismissed`}, got); diff != "" {
			t.Errorf("Dialogs() as Evaluate returned (-want +got):\n%s", diff)
		}
	})
}
