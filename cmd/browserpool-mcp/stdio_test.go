package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveStdio starts this test binary as the server (see TestMain) with
// args, connects a real SDK client to it over its stdin and stdout, and
// returns the client. Closing the client ends the server.
func serveStdio(t testing.TB, args ...string) *mcp.ClientSession {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=1", serveArgsEnv+"="+string(a))
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestStdioSubprocessServesTheToolsAndLeavesNothingWhenTheClientLeaves(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	root := newRoot(t)
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	cs := serveStdio(t, "-root", root, "-trace", trace)

	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	snap := ok(t, cs, "browser_snapshot", nil)
	goBtn := find(t, `button "Go" (@e\d+)`, snap)
	ok(t, cs, "browser_click", map[string]any{"ref": goBtn})
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "() => document.getElementById('out').textContent"}); got != `"clicked "` {
		t.Errorf("after the click over stdio: %s", got)
	}
	if msg := fails(t, cs, "browser_click", map[string]any{"ref": "@e999"}); !strings.Contains(msg, "browser_snapshot") {
		t.Errorf("bad ref over stdio:\n%s", msg)
	}
	procs, err := leakcheck.Processes(root)
	if err != nil || len(procs) == 0 {
		t.Fatalf("no browser process under the server's root (err %v)", err)
	}

	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server's browsers and profiles are gone", func() bool {
		procs, err := leakcheck.Processes(root)
		ents, _ := os.ReadDir(root + "/sessions")
		return err == nil && len(procs) == 0 && len(ents) == 0
	})
	tr, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(tr), `"action":"click"`) {
		t.Errorf("the -trace file lacks the click (err %v):\n%s", err, tr)
	}
}

// BenchmarkEvaluateRoundTrip compares a browser_evaluate call through a
// real client and the server (in the same process over in-memory
// transports, and as a subprocess over stdio) with a direct Tab.Evaluate,
// on browsers of the same kind in the same run.
func BenchmarkEvaluateRoundTrip(b *testing.B) {
	requireBrowser(b)
	b.Run("direct", func(b *testing.B) {
		p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(b)})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		ctx := context.Background()
		se, err := p.Open(ctx)
		if err != nil {
			b.Fatal(err)
		}
		tab, err := se.Tab(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		var n int
		b.ResetTimer()
		for b.Loop() {
			if err := tab.Evaluate(ctx, "1+1", &n); err != nil || n != 2 {
				b.Fatal(n, err)
			}
		}
	})
	b.Run("mcp-inmemory", func(b *testing.B) {
		s, err := NewServer(Config{Pool: browserpool.Config{Root: newRoot(b)}})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		cs := connect(b, s)
		args := map[string]any{"function": "1+1"}
		ok(b, cs, "browser_evaluate", args) // launches the browser
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_evaluate", Arguments: args})
			if err != nil || res.IsError || textOf(res) != "2" {
				b.Fatal(err, textOf(res))
			}
		}
		b.StopTimer()
		cs.Close()
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		cs := serveStdio(b, "-root", newRoot(b))
		args := map[string]any{"function": "1+1"}
		ok(b, cs, "browser_evaluate", args) // launches the browser
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_evaluate", Arguments: args})
			if err != nil || res.IsError || textOf(res) != "2" {
				b.Fatal(err, textOf(res))
			}
		}
		b.StopTimer()
		cs.Close()
	})
}
