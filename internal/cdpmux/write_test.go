// Room: the coalesced write path's tests. gatedWriter.mu guards what it
// recorded.

package cdpmux_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/launch"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// gatedWriter is the mux's end of a pipe: once armed, the next Write waits
// for release before it goes to next (or, with fail set, fails instead of
// every Write after it). It records how many requests each Write carried
// from the arming on.
type gatedWriter struct {
	next    func([]byte) error
	entered chan struct{} // closed when the armed Write began
	release chan struct{} // closed by open: the armed Write goes on
	once    sync.Once

	mu     sync.Mutex
	armed  bool  // guarded by mu
	fail   bool  // guarded by mu; the Writes after the armed one fail
	counts []int // guarded by mu; requests per Write since the arming
}

func newGatedWriter(next func([]byte) error) *gatedWriter {
	return &gatedWriter{next: next, entered: make(chan struct{}), release: make(chan struct{})}
}

// arm makes the next Write wait for release; with fail, the Writes after
// it fail with io.ErrClosedPipe.
func (gw *gatedWriter) arm(fail bool) {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	gw.armed, gw.fail, gw.counts = true, fail, []int{}
}

func (gw *gatedWriter) Write(b []byte) (int, error) {
	n := 0
	for range frames(b) {
		n++
	}
	gw.mu.Lock()
	wait, fail := gw.armed && len(gw.counts) == 0, gw.fail && len(gw.counts) > 0
	if gw.counts != nil {
		gw.counts = append(gw.counts, n)
	}
	gw.mu.Unlock()
	if wait {
		close(gw.entered)
		<-gw.release
	}
	if fail {
		return 0, io.ErrClosedPipe
	}
	if err := gw.next(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (gw *gatedWriter) Close() error { return nil }

// open lets the armed Write go on. Tests also call it in a cleanup that
// runs before the mux's Close, so that a failing test does not hang.
func (gw *gatedWriter) open() { gw.once.Do(func() { close(gw.release) }) }

// perWrite returns the requests each Write carried since the arming.
func (gw *gatedWriter) perWrite() []int {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	return append([]int(nil), gw.counts...)
}

// waitQueued waits until n requests in all were queued for another
// caller's write.
func waitQueued(t *testing.T, m *cdpmux.Mux, n uint64) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for q, _ := m.Coalesced(); q < n; q, _ = m.Coalesced() {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued behind the held write after %v, want %d", q, hangLimit, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// evalAll evaluates "i+1" for i in [from, to) concurrently on p by direct
// calls and returns each call's error channel.
func evalAll(ctx context.Context, m *cdpmux.Mux, p page, from, to int) []<-chan error {
	var errcs []<-chan error
	for i := from; i < to; i++ {
		errc := make(chan error, 1)
		errcs = append(errcs, errc)
		go func() {
			got, err := callEval(ctx, m, p, fmt.Sprintf("%d+1", i))
			if err == nil && got != fmt.Sprint(i+1) {
				err = fmt.Errorf("%d+1 = %s, want %d", i, got, i+1)
			}
			errc <- err
		}()
	}
	return errcs
}

// queueBehindAWrite makes n+1 direct calls on p: the first one's write is
// held (gw armed, with fail: the writes after it fail) until the other n
// were queued behind it, then goes on. It returns the calls' errors.
func queueBehindAWrite(ctx context.Context, t *testing.T, m *cdpmux.Mux, gw *gatedWriter, p page, n int, fail bool) []<-chan error {
	t.Helper()
	gw.arm(fail)
	first := evalAll(ctx, m, p, 0, 1)
	<-gw.entered
	rest := evalAll(ctx, m, p, 1, n+1)
	waitQueued(t, m, uint64(n))
	gw.open()
	return append(first, rest...)
}

// awaitAll fails the test for each call that failed.
func awaitAll(t *testing.T, errcs []<-chan error) {
	t.Helper()
	for _, errc := range errcs {
		if err := await(t, errc); err != nil {
			t.Error(err)
		}
	}
}

// gatedMux starts a mux on b over a pipe whose writes go through a
// gatedWriter, and closes it when the test ends.
func gatedMux(t *testing.T, b *cdptest.Browser) (*cdpmux.Mux, *gatedWriter) {
	t.Helper()
	gw := newGatedWriter(fakeWriter{b.Transport()}.write)
	m, err := cdpmux.New(pipeBridgeTo(t, b.Transport(), gw), cdpmux.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	t.Cleanup(gw.open) // before the Close: a failing test must not hang
	return m, gw
}

func TestRequestsMadeDuringAWriteGoOutTogetherInTheNextWriteAndEachGetsItsReply(t *testing.T) {
	noGoroutineLeftAfter(t)
	b := cdptest.NewBrowser(t)
	m, gw := gatedMux(t, b)
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")

	awaitAll(t, queueBehindAWrite(ctx, t, m, gw, p, 5, false))

	if diff := cmp.Diff([]int{1, 5}, gw.perWrite()); diff != "" {
		t.Errorf("requests per write (-want +got):\n%s", diff)
	}
	if _, batches := m.Coalesced(); batches != 1 {
		t.Errorf("%d writes of queued requests, want 1", batches)
	}
	if got, err := callEval(ctx, m, p, "40+2"); err != nil || got != "42" {
		t.Errorf("40+2 after the batch = %q, %v; want 42, nil", got, err)
	}
}

func TestABatchThatFailsEndsTheMuxAndItsCallsAreNotReportedUnsent(t *testing.T) {
	noGoroutineLeftAfter(t)
	b := cdptest.NewBrowser(t)
	m, gw := gatedMux(t, b)
	ctx := t.Context()
	p := openPage(ctx, t, m, "about:blank")
	g := b.Hold("Runtime.evaluate") // the written request's reply must not beat the failure

	errcs := queueBehindAWrite(ctx, t, m, gw, p, 3, true)

	for i, errc := range errcs {
		err := await(t, errc)
		// Written (the first) or in a batch that may have been written in
		// part: either way not provably unsent.
		if !errors.Is(err, cdpmux.ErrConnClosed) || !errors.Is(err, io.ErrClosedPipe) || errors.Is(err, cdpmux.ErrNotSent) {
			t.Errorf("call %d: %v; want ErrConnClosed caused by the batch's write error, and not ErrNotSent", i, err)
		}
	}
	g.Release()
	if err := m.Err(); !errors.Is(err, cdpmux.ErrConnClosed) {
		t.Errorf("m.Err() = %v after a batch failed, want ErrConnClosed", err)
	}
	_, err := callEval(ctx, m, p, "1+1")
	if !errors.Is(err, cdpmux.ErrNotSent) || !errors.Is(err, cdpmux.ErrConnClosed) {
		t.Errorf("a call after the end: %v, want ErrNotSent and ErrConnClosed", err)
	}
	// Not sent is a class, not text: the message is the end's, on one line.
	if err != nil && (err.Error() != m.Err().Error() || strings.Contains(err.Error(), "\n")) {
		t.Errorf("a call after the end reads %q, want the mux's end %q alone", err, m.Err())
	}
}

// gatedPipe is a real browser's pipe transport whose request writes go
// through a gatedWriter: the browser gets what the mux batched exactly as
// the mux wrote it.
type gatedPipe struct {
	cdpmux.Transport
	cdpmux.ReadDeadliner
	fw cdpmux.FrameWriter
	gw *gatedWriter
}

func (gp gatedPipe) WriteMessage(b []byte) error {
	_, err := gp.gw.Write(gp.fw.AppendFrame(nil, b))
	return err
}
func (gp gatedPipe) AppendFrame(dst, msg []byte) []byte { return gp.fw.AppendFrame(dst, msg) }
func (gp gatedPipe) WriteFrames(b []byte) error {
	_, err := gp.gw.Write(b)
	return err
}

func TestChromiumAnswersEachRequestOfABatchWrittenInOneWrite(t *testing.T) {
	leakcheck.RequireBrowser(t)
	t.Parallel()
	ctx := t.Context()
	p, err := launch.Start(ctx, launch.Options{SessionDir: filepath.Join(t.TempDir(), "s"), NoPort: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	tr := p.Transport()
	fw, ok := tr.(cdpmux.FrameWriter)
	if !ok {
		t.Fatalf("the launched browser's pipe transport %T is no cdpmux.FrameWriter: the mux would not coalesce its writes", tr)
	}
	gw := newGatedWriter(fw.WriteFrames)
	m, err := cdpmux.New(gatedPipe{tr, tr.(cdpmux.ReadDeadliner), fw, gw}, cdpmux.Options{Cause: p.Cause})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	t.Cleanup(gw.open)
	tab := openPage(ctx, t, m, "about:blank")

	awaitAll(t, queueBehindAWrite(ctx, t, m, gw, tab, 7, false))

	if diff := cmp.Diff([]int{1, 7}, gw.perWrite()); diff != "" {
		t.Errorf("requests per write (-want +got):\n%s", diff)
	}
}
