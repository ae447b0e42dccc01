package cdptest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// TestMain fails the run if a goroutine started by a test outlives it
// (once the pool the tests share is closed).
func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{AfterTests: closeShared})
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

// fakeTB records what the browser reports to its test: the cleanup check,
// a page's panicking Go func. Errorf may be called from any goroutine.
type fakeTB struct {
	testing.TB
	cleanups []func()

	mu     sync.Mutex
	errors []string // guarded by mu
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

// reported returns what Errorf recorded so far.
func (f *fakeTB) reported() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errors)
}

func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
