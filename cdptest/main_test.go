package cdptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp"
	cdpruntime "github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// TestMain fails the run if a goroutine started by a test outlives it.
func TestMain(m *testing.M) {
	before := goroutines()
	code := m.Run()
	if code == 0 {
		if leaked := leakedSince(before, 5*time.Second); len(leaked) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: %d goroutine(s) outlived the tests:\n\n%s\n", len(leaked), strings.Join(leaked, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// goroutines returns the stack of every goroutine, by its "goroutine N"
// header.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	all := make(map[string]string)
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, " [")
		all[header] = g
	}
	return all
}

// leakedSince waits up to limit for every goroutine not in before to end,
// ignoring the test framework's and the runtime's own, and returns the
// stacks of those that did not. Goroutines end asynchronously after the
// calls that stop them return, so this polls the runtime: there is nothing
// to wait on.
func leakedSince(before map[string]string, limit time.Duration) []string {
	deadline := time.Now().Add(limit)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		var leaked []string
		for id, stack := range goroutines() {
			if _, old := before[id]; !old && !ignorable(stack) {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 || time.Now().After(deadline) {
			slices.Sort(leaked)
			return leaked
		}
		time.Sleep(wait)
	}
}

func ignorable(stack string) bool {
	for _, s := range []string{
		"testing.(*M).", "testing.tRunner(", "testing.runTests", "testing.runExample",
		"created by runtime.", "created by testing.", "os/signal.", "main.main(",
	} {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}

// noGoroutineLeftAfter registers a check, run after every cleanup
// registered later in the test (such as the mux's Close), that the test left
// no goroutine behind.
func noGoroutineLeftAfter(t *testing.T) {
	t.Helper()
	before := goroutines()
	t.Cleanup(func() {
		if leaked := leakedSince(before, 5*time.Second); len(leaked) > 0 {
			t.Errorf("%d goroutine(s) outlived the test:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
	})
}

// newMux starts a mux on b's transport and closes it when the test ends.
func newMux(t *testing.T, b *cdptest.Browser, opts cdpmux.Options) *cdpmux.Mux {
	t.Helper()
	m, err := cdpmux.New(b.Transport(), opts)
	if err != nil {
		t.Fatalf("cdpmux.New: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// page is one page target attached through the mux.
type page struct {
	targetID  string
	sessionID string
	conn      *rpcc.Conn
	c         *cdp.Client
}

// openPage creates a page at url and attaches to it through the mux.
func openPage(ctx context.Context, t *testing.T, m *cdpmux.Mux, url string) page {
	t.Helper()
	ct, err := cdp.NewClient(m.Browser()).Target.CreateTarget(ctx, target.NewCreateTargetArgs(url))
	if err != nil {
		t.Fatalf("Target.createTarget: %v", err)
	}
	conn, sid, err := m.Attach(ctx, string(ct.TargetID))
	if err != nil {
		t.Fatalf("Attach(%s): %v", ct.TargetID, err)
	}
	return page{targetID: string(ct.TargetID), sessionID: sid, conn: conn, c: cdp.NewClient(conn)}
}

// eval evaluates expr on p and returns the result's JSON value.
func eval(ctx context.Context, p page, expr string) (string, error) {
	r, err := p.c.Runtime.Evaluate(ctx, cdpruntime.NewEvaluateArgs(expr))
	if err != nil {
		return "", err
	}
	return string(r.Result.Value), nil
}

// rawConn drives a fake browser's transport directly.
type rawConn struct {
	t  *testing.T
	tr *cdptest.Transport
}

func newRaw(t *testing.T, b *cdptest.Browser) *rawConn {
	return &rawConn{t: t, tr: b.Transport()}
}

func (r *rawConn) send(msg string) {
	r.t.Helper()
	if err := r.tr.WriteMessage([]byte(msg)); err != nil {
		r.t.Fatalf("WriteMessage(%s): %v", msg, err)
	}
}

// next reads one message and returns it compacted.
func (r *rawConn) next() string {
	r.t.Helper()
	msg, err := r.tr.ReadMessage()
	if err != nil {
		r.t.Fatalf("ReadMessage: %v", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		r.t.Fatalf("ReadMessage returned invalid JSON %s: %v", msg, err)
	}
	return buf.String()
}

// nextN reads n messages.
func (r *rawConn) nextN(n int) []string {
	r.t.Helper()
	var msgs []string
	for range n {
		msgs = append(msgs, r.next())
	}
	return msgs
}

// fence sends a call that nothing delays and reads up to its reply,
// returning the messages before it: everything the browser had queued.
func (r *rawConn) fence() []string {
	r.t.Helper()
	r.send(`{"id":999999,"method":"Target.getTargets"}`)
	var before []string
	for {
		msg := r.next()
		if strings.HasPrefix(msg, `{"id":999999,`) {
			return before
		}
		before = append(before, msg)
	}
}
