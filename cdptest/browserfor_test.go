package cdptest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestBrowserForFindsTheFakeBrowserOfEachOfSessionsOpenedAtOnce(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := testCtx(t)
	// Opened at once, the sessions' launch order says nothing of which
	// browser is whose.
	sessions := make([]*browserpool.Session, 2)
	errs := make([]error, 2)
	done := make(chan struct{})
	for i := range sessions {
		go func() {
			sessions[i], errs[i] = p.Open(ctx)
			done <- struct{}{}
		}()
	}
	<-done
	<-done
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var found []*cdptest.Browser
	for _, s := range sessions {
		tab, err := s.Tab(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		b := l.BrowserFor(s)
		if b == nil {
			t.Fatalf("BrowserFor(%s) = nil", s.ID())
		}
		if !slices.ContainsFunc(b.Targets(), func(tg cdptest.Target) bool { return tg.ID == tab.ID() }) {
			t.Errorf("BrowserFor(%s) has targets %+v, not the session's tab %s", s.ID(), b.Targets(), tab.ID())
		}
		found = append(found, b)
	}
	if found[0] == found[1] {
		t.Fatalf("BrowserFor gave both sessions the same browser")
	}

	found[1].Exit(1)
	select {
	case <-sessions[1].Done():
	case <-ctx.Done():
		t.Fatal("the session whose browser exited did not end")
	}
	if err := sessions[1].Err(); !errors.Is(err, browserpool.ErrBrowserExited) {
		t.Errorf("the second session's Err = %v, want ErrBrowserExited", err)
	}
	if err := sessions[0].Err(); err != nil {
		t.Errorf("the first session's Err = %v, want nil: the fault was the second's alone", err)
	}
	if b := cdptest.NewLauncher(t).BrowserFor(sessions[0]); b != nil {
		t.Errorf("another launcher's BrowserFor(%s) = %p, want nil", sessions[0].ID(), b)
	}
}

// A test injects a fault into the browser of one session: here the
// browser of the second of two sessions exits, as in a crash, and only
// that session ends.
func ExampleLauncher_BrowserFor() {
	l := cdptest.NewLauncher(nil)
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{Launcher: l, Root: root})
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, _ := pool.Open(ctx)
	second, _ := pool.Open(ctx)

	l.BrowserFor(second).Exit(139)
	<-second.Done()

	fmt.Println("second:", errors.Is(second.Err(), browserpool.ErrBrowserExited))
	fmt.Println("first:", first.Err())

	// Output:
	// second: true
	// first: <nil>
}

// A tab's renderer crashes: the tab's next action fails, and the tab can
// be closed.
func ExampleBrowser_CrashTarget() {
	l := cdptest.NewLauncher(nil, cdptest.WithPages(cdptest.NewPage("https://a.test/", "A", cdptest.Button("Go"))))
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{Launcher: l, Root: root})
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, _ := pool.Open(ctx)
	tab, _ := sess.Tab(ctx, "")
	tab.Navigate(ctx, "https://a.test/")

	l.BrowserFor(sess).CrashTarget(tab.ID())
	_, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	fmt.Println(errors.Is(err, browserpool.ErrTabClosed))
	fmt.Println(sess.CloseTab(ctx, tab.ID()))

	// Output:
	// true
	// <nil>
}
