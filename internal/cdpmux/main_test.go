// Room: the test harness of the mux: TestMain and its leak gate, and the
// helpers that drive a cdptest fake browser through the mux. No locks.

package cdpmux_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp"
	cdpruntime "github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// TestMain fails the run if a goroutine started by a test outlives it.
func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

// noGoroutineLeftAfter registers a check, run after every cleanup
// registered later in the test (such as the mux's Close), that the test left
// no goroutine behind. Goroutines end asynchronously after the calls that
// stop them return, so it polls the runtime: there is nothing to wait on.
func noGoroutineLeftAfter(t *testing.T) {
	t.Helper()
	before := leakcheck.Goroutines()
	t.Cleanup(func() {
		deadline := time.Now().Add(leakcheck.Timeout)
		for {
			leaked := leakcheck.Since(before)
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				var b strings.Builder
				for _, g := range leaked {
					fmt.Fprintf(&b, "\n\n%s", g.Stack)
				}
				t.Errorf("%d goroutine(s) outlived the test:%s", len(leaked), b.String())
				return
			}
			time.Sleep(leakcheck.Interval)
		}
	})
}

// overPipe makes newMux carry b's connection over a real pipe (pipeBridge),
// so that direct callers read their own replies. Set only by
// TestTheMuxSuiteOverAPipe, whose subtests run one after another (no test
// of this package is parallel).
var overPipe bool

// newMux starts a mux on b's transport (over a pipe with overPipe) and
// closes it when the test ends.
func newMux(t *testing.T, b *cdptest.Browser, opts cdpmux.Options) *cdpmux.Mux {
	t.Helper()
	var tr cdpmux.Transport = b.Transport()
	if overPipe {
		tr = pipeBridge(t, b.Transport())
	}
	m, err := cdpmux.New(tr, opts)
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

// pipeBridge carries the fake's messages to the mux through a real pipe and
// a PipeTransport, whose reads have deadlines; the mux's writes go straight
// to the fake. A dropped connection arrives as a message cut short.
func pipeBridge(t *testing.T, tr *cdptest.Transport) cdpmux.Transport {
	t.Helper()
	return pipeBridgeTo(t, tr, fakeWriter{tr})
}

// pipeBridgeTo is pipeBridge with the mux's writes going to w.
func pipeBridgeTo(t *testing.T, tr *cdptest.Transport, w io.WriteCloser) *cdpmux.PipeTransport {
	t.Helper()
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer pw.Close()
		for {
			msg, err := tr.ReadMessage()
			if errors.Is(err, io.ErrUnexpectedEOF) {
				pw.WriteString(`{"id":`)
			}
			if err != nil {
				return
			}
			if _, err := pw.Write(append(msg, 0)); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { // after the mux's Close, which closes tr
		tr.Close()
		<-done
	})
	return cdpmux.NewPipeTransport(r, w)
}

// fakeWriter hands each NUL-terminated request to the fake; one Write may
// carry several (the mux coalesces concurrent writes).
type fakeWriter struct{ tr *cdptest.Transport }

func (fw fakeWriter) Write(b []byte) (int, error) {
	if err := fw.write(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (fw fakeWriter) write(b []byte) error {
	for frame := range frames(b) {
		if err := fw.tr.WriteMessage(frame); err != nil {
			return err
		}
	}
	return nil
}

// frames yields the NUL-terminated messages of b, without their NULs.
func frames(b []byte) iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			i := bytes.IndexByte(b, 0)
			if i < 0 {
				panic(fmt.Sprintf("a write ends in an unterminated message: %q", b))
			}
			if !yield(b[:i]) {
				return
			}
			b = b[i+1:]
		}
	}
}

func (fw fakeWriter) Close() error { return fw.tr.Close() }
