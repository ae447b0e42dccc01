package main

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browserpool/browserpool"
)

// gatedLauncher holds each launch until release is closed, and says on
// started when the first one began.
type gatedLauncher struct {
	inner   browserpool.Launcher
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func (g *gatedLauncher) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.inner.Launch(ctx, spec)
}

// A client that cancels its call while its browser starts used to leave
// a session it could neither see nor close, counting against its limit:
// the server recorded a session's name only when the call that opened it
// returned it. The browser, once up, is the client's now: listed, closed
// by name, and reused.
func TestABrowserStillStartingWhenItsCallIsCancelledIsTheClientsToListAndClose(t *testing.T) {
	requireBrowser(t)
	g := &gatedLauncher{inner: &browserpool.LocalLauncher{}, started: make(chan struct{}), release: make(chan struct{})}
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: g}})
	cs := connect(t, s)

	ctx, cancel := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_session_open", Arguments: map[string]any{"name": "a"}})
		called <- err
	}()
	<-g.started
	cancel()
	if err := <-called; err == nil {
		t.Fatal("the cancelled browser_session_open returned no error")
	}
	close(g.release)

	waitFor(t, `browser_session_list shows session "a"`, func() bool {
		return strings.Contains(ok(t, cs, "browser_session_list", nil), `Session "a"`)
	})
	if n := len(s.pool.Sessions()); n != 1 {
		t.Errorf("%d browser sessions after the cancelled open; want the one it started", n)
	}
	if got := ok(t, cs, "browser_session_close", map[string]any{"session": "a"}); !strings.Contains(got, `Closed session "a"`) {
		t.Errorf("browser_session_close of the late session: %s", got)
	}
	waitFor(t, "the pool has no session", func() bool { return len(s.pool.Sessions()) == 0 })
}
