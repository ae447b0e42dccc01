package cdptest_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestClearConsoleWorksOnAFakePage(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"))
	ctx := testCtx(t)
	if err := tab.ClearConsole(ctx); err != nil {
		t.Errorf("ClearConsole: %v", err)
	}
	msgs, err := tab.Console(ctx)
	if err != nil || len(msgs) != 0 {
		t.Errorf("Console after ClearConsole = %v, %v; want none, nil", msgs, err)
	}
}

// fatalTB is a test's t as a page func sees it: FailNow ends the calling
// goroutine, as testing.T's does.
type fatalTB struct {
	testing.TB
	mu     sync.Mutex
	failed []string // guarded by mu
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.failed = append(f.failed, format)
	f.mu.Unlock()
	runtime.Goexit()
}

func TestAPageFuncThatCallsFatalFailsTheCallInsteadOfHangingIt(t *testing.T) {
	tb := &fatalTB{TB: t}
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A",
		cdptest.Button("Go").Does(func(p *cdptest.Page) { tb.Fatalf("assertion in Does failed") }),
		cdptest.Text("after"),
	))
	ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Second)
	defer cancel()
	snap := mustSnap(t, tab)
	// The click runs on a goroutine of its own: were the page func run on
	// the goroutine that writes the request, Goexit would end it there.
	clicked := make(chan error, 1)
	go func() { clicked <- tab.Click(ctx, snap.Find("button", "Go")) }()
	var err error
	select {
	case err = <-clicked:
	case <-time.After(3 * time.Second):
		t.Fatal("Click on a button whose Does calls t.Fatal has not returned in 3 s")
	}
	want := "the page func called t.FailNow/t.Fatal; use t.Error in page funcs"
	if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), want) {
		t.Errorf("Click on a button whose Does calls t.Fatal = %v; want an ErrProtocol error saying %q", err, want)
	}
	// The browser still answers.
	if _, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{}); err != nil {
		t.Errorf("Snapshot after the page func's t.Fatal: %v", err)
	}
}
