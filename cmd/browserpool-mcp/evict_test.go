package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two clients opening browsers at once, with one slot left under
// -max-sessions: one gets it, the other is refused, and a third client's
// recent browser is never closed to make room. The server used to check
// the grace before asking the tracker, so both checks could pass while a
// slot was free, and the second open then closed the third client's
// browser.
func TestConcurrentOpensAtTheLimitNeverCloseAnotherClientsRecentBrowser(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{Global: 2, EvictGrace: time.Hour})
	a, b, c := connect(t, s), connect(t, s), connect(t, s)
	sessA := find(t, `session (\S+), tab`, ok(t, a, "browser_navigate", map[string]any{"url": site.URL}))
	var wg sync.WaitGroup
	msgs := make([]string, 2)
	refused := make([]bool, 2)
	errs := make([]error, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i, cl := range []*mcp.ClientSession{b, c} {
		wg.Go(func() {
			res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": site.URL + "/other"}})
			if errs[i] = err; err == nil {
				msgs[i], refused[i] = textOf(res), res.IsError
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if refused[0] == refused[1] {
		t.Fatalf("B refused %v, C refused %v: want exactly one refused\nB: %s\nC: %s", refused[0], refused[1], msgs[0], msgs[1])
	}
	for i, m := range msgs {
		if refused[i] && !strings.Contains(m, "would close another client's") {
			t.Errorf("the refusal does not say why:\n%s", m)
		}
	}
	nav := ok(t, a, "browser_evaluate", map[string]any{"function": "document.title"})
	if nav != `"Sign up"` {
		t.Errorf("A's page after the two opens: %s", nav)
	}
	if list := ok(t, a, "browser_session_list", nil); !strings.Contains(list, sessA) || strings.Contains(list, "was closed") {
		t.Errorf("A's sessions after the two opens:\n%s", list)
	}
}
