package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestADialogOrLoadBetweenAFastOpenTabAndTheFirstNavigationIsNotLost(t *testing.T) {
	site := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	for i := range 2 { // the reused start-up tab, then a created one
		tab, err := s.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		// At once, before any action of the package waited for page
		// events: a dialog through the raw client...
		if _, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(`setTimeout(() => alert("early"), 0)`)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the early dialog in Tab.Dialogs", func() bool {
			ds := tab.Dialogs()
			return len(ds) == 1 && ds[0].Message == "early"
		})
		// ...and a load through the raw client.
		nav, err := tab.Client().Page.Navigate(ctx, page.NewNavigateArgs(site.URL+"/"))
		if err != nil {
			t.Fatal(err)
		}
		if nav.LoaderID == nil {
			t.Fatalf("tab %d: no loader id for a cross-document navigation", i)
		}
		waitFor(t, "the load event of the raw navigation", func() bool {
			return browserpool.LifecycleSeen(tab, string(*nav.LoaderID), "load")
		})
		if err := tab.WaitLoad(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTheReadmeFlowLeavesExactlyOneTab(t *testing.T) {
	site := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	sess, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := sess.OpenTab(ctx, site.URL+"/golden.html")
	if err != nil {
		t.Fatal(err)
	}
	tabs, err := sess.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []browserpool.TabInfo{{SessionID: sess.ID(), TabID: tab.ID(), Channel: browserpool.ChannelCDP, URL: site.URL + "/golden.html", Title: tabs[0].Title, Active: true}}
	if diff := cmp.Diff(want, tabs); diff != "" {
		t.Errorf("tabs after Pool.Open + Session.OpenTab (-want +got):\n%s", diff)
	}
	// The rest of the README's snippet, as written: the page loaded with
	// status 200, and the screenshot is the default 1280x720 viewport.
	var title string
	if err := tab.Evaluate(ctx, "document.title", &title); err != nil {
		t.Fatal(err)
	}
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "home.png"})
	if err != nil {
		t.Fatal(err)
	}
	nav, _ := tab.LastNavigation()
	type seen struct {
		Status, Width, Height int
		Title                 string
	}
	if diff := cmp.Diff(seen{200, 1280, 720, tabs[0].Title}, seen{nav.Status, shot.Width, shot.Height, title}); diff != "" {
		t.Errorf("the README's snippet saw (-want +got):\n%s", diff)
	}
	// The second OpenTab opens a second tab.
	if _, err := sess.OpenTab(ctx, "about:blank"); err != nil {
		t.Fatal(err)
	}
	if tabs, err := sess.Tabs(ctx); err != nil || len(tabs) != 2 {
		t.Fatalf("tabs after a second OpenTab: %d, %v; want 2", len(tabs), err)
	}
}

func TestOpenTabReturnsAtTheCallersDeadlineWhenTheAttachFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		s := mustOpen(t, context.Background(), p)
		mustTab(t, context.Background(), s) // the start-up tab is taken
		b := l.Browsers()[0]
		attach := b.Hold("Target.attachToTarget")
		closing := b.Hold("Target.closeTarget")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err := s.OpenTab(ctx, "about:blank")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("OpenTab with a held attach: %v, want DeadlineExceeded", err)
		}
		// The bubble's clock moves only when every goroutine waits: this
		// is exact, not a timing guess.
		if took := time.Since(start); took != time.Second {
			t.Errorf("OpenTab returned %v after its start; its deadline was 1s (the cleanup must not delay it)", took)
		}
		attach.Release()
		closing.Release()
		synctest.Wait()
		if n := len(b.Targets()); n != 1 {
			t.Errorf("%d targets after the background cleanup, want 1 (the start-up tab)", n)
		}
	})
}

func TestABrowserWithoutItsDevToolsPortWorksOverThePipe(t *testing.T) {
	p := newRealPool(t, browserpool.Config{Launcher: &browserpool.LocalLauncher{NoDevToolsPort: true}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if port := s.Info().Port; port != 0 {
		t.Errorf("SessionInfo.Port = %d with NoDevToolsPort, want 0", port)
	}
	var two int
	if err := mustTab(t, ctx, s).Evaluate(ctx, "1+1", &two); err != nil || two != 2 {
		t.Fatalf("Evaluate(1+1) = %d, %v", two, err)
	}
	cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", s.Info().PID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cl), "--remote-debugging-port") {
		t.Errorf("the browser was started with a DevTools port: %q", cl)
	}
}

func TestAFreshTabActsWithoutAGeneratedClientOrAConnGoroutineAndBuildsThemWhenAsked(t *testing.T) {
	requireBrowser(t)
	t.Parallel()
	site := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	// A navigation waits for the tab's setup calls.
	if res, err := tab.Navigate(ctx, site.URL+"/form.html"); err != nil || res.Status != 200 {
		t.Fatalf("Navigate = %+v, %v; want status 200", res, err)
	}
	var size string
	if err := tab.Evaluate(ctx, "innerWidth + 'x' + innerHeight", &size); err != nil || size != fmt.Sprintf("%dx%d", browserpool.DefaultViewportWidth, browserpool.DefaultViewportHeight) {
		t.Errorf("viewport = %q, %v; want the default", size, err)
	}
	// The actions an agent uses most go through the tab's direct handle.
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Click(ctx, ref(t, snap, "textbox", "Name")); err != nil {
		t.Fatalf("Click: %v", err)
	}
	if err := tab.Type(ctx, "Ada"); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatalf("Press: %v", err)
	}
	var name string
	if err := tab.WaitCondition(ctx, "document.getElementById('name').value", &name); err != nil || name != "Ada" {
		t.Errorf("the typed name = %q, %v; want Ada", name, err)
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{NoFile: true}); err != nil {
		t.Errorf("Screenshot: %v", err)
	}
	if _, err := tab.PageInfo(ctx); err != nil {
		t.Errorf("PageInfo: %v", err)
	}
	if _, err := tab.Reload(ctx); err != nil {
		t.Errorf("Reload: %v", err)
	}
	if browserpool.ClientBuilt(tab) {
		t.Errorf("the tab built its generated CDP client for its own actions")
	}
	if browserpool.ConnDialed(tab) {
		t.Errorf("the tab dialed an rpcc.Conn (a goroutine) for its own actions")
	}

	tree, err := tab.Client().Page.GetFrameTree(ctx)
	if err != nil || tree.FrameTree.Frame.URL != site.URL+"/form.html" {
		t.Fatalf("Page.getFrameTree through Client() = %+v, %v; want the site's frame", tree, err)
	}
	if !browserpool.ClientBuilt(tab) || !browserpool.ConnDialed(tab) {
		t.Errorf("Client() returned a client but the tab kept none (client built %v, conn dialed %v)", browserpool.ClientBuilt(tab), browserpool.ConnDialed(tab))
	}
}

func TestEveryTabASessionOpensIsVisibleUnlessTheTabsShareOneWindow(t *testing.T) {
	// Checked after the last one opened: a tab opened behind a later one
	// in the same window is hidden, with no animation frame.
	const probe = `new Promise(done => {
		requestAnimationFrame(() => done(document.visibilityState + ", animation frame"));
		setTimeout(() => done(document.visibilityState + ", no animation frame in 2s"), 2000);
	})`
	const visible, hidden = "visible, animation frame", "hidden, no animation frame in 2s"
	for _, tc := range []struct {
		name        string
		shareWindow bool
		want        []string
	}{
		{"a window each", false, []string{visible, visible, visible}},
		{"one window", true, []string{hidden, hidden, visible}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireBrowser(t)
			t.Parallel()
			p := newRealPool(t, browserpool.Config{TabsShareWindow: tc.shareWindow})
			ctx := ctxT(t)
			s := mustOpen(t, ctx, p)
			var tabs []*browserpool.Tab
			for range 3 {
				tab, err := s.OpenTab(ctx, "about:blank")
				if err != nil {
					t.Fatal(err)
				}
				tabs = append(tabs, tab)
			}
			var got []string
			for _, tab := range tabs {
				var state string
				if err := tab.Evaluate(ctx, probe, &state); err != nil {
					t.Fatal(err)
				}
				got = append(got, state)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("the tabs' visibility, oldest first (-want +got):\n%s", diff)
			}
		})
	}
}

// An OpenTab whose caller gives up while the browser creates the tab
// leaves no tab behind: the browser creates it anyway, and it is closed
// when its answer comes.
func TestAnOpenTabGivenUpOnLeavesNoTabBehind(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	mustTab(t, ctx, s) // the start-up tab
	kept := 1
	for i := range 20 {
		short, cancel := context.WithTimeout(ctx, time.Duration(100+i*700)*time.Microsecond)
		if _, err := s.OpenTab(short, "about:blank"); err == nil {
			kept++ // it came back before the deadline: the caller has it
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("OpenTab with a short deadline: %v", err)
		}
		cancel()
	}
	var n int
	waitFor(t, fmt.Sprintf("the browser to hold the %d tabs callers got", kept), func() bool {
		tabs, err := s.Tabs(ctx)
		n = len(tabs)
		return err == nil && n == kept
	})
}

// What the session remembers of closed tabs (so that Tabs leaves out one
// the browser still lists for a moment) does not grow for ever in a
// session whose tabs are never listed.
func TestClosedTabsAreForgottenEvenIfTabsIsNeverCalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})
		ctx := t.Context()
		s, err := p.Open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			tab, err := s.OpenTab(ctx, "about:blank")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CloseTab(ctx, tab.ID()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Minute)
		tab, err := s.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CloseTab(ctx, tab.ID()); err != nil {
			t.Fatal(err)
		}
		if n := browserpool.ClosingTabs(s); n != 1 {
			t.Errorf("the session remembers %d closed tabs a minute after 200 closes and one more, want 1", n)
		}
		p.Close()
	})
}
