package cdpmux_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mafredri/cdp"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// Regression tests for two bugs found in internal/cdpmux with this fake.

// Bug 1 (latent with Chrome): Mux.targets maps a target to one session,
// so Target.targetCrashed ends only the last session attached to the
// crashed target, and calls pending on an earlier one hang until their
// context ends; after that last session detaches, the map forgets the
// target altogether. Chrome hides this for pages because it also sends
// Inspector.targetCrashed on every session, which the mux handles; it
// bites whenever the browser-level event is the only one that arrives.
func TestMuxTargetCrashedEndsEverySessionOfTheTarget(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	m := newMux(t, b, cdpmux.Options{})
	ctx := t.Context()
	var ps []page
	for range 2 {
		conn, sid, err := m.Attach(ctx, "TARGET_1")
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, page{targetID: "TARGET_1", sessionID: sid, conn: conn, c: cdp.NewClient(conn)})
	}
	g := b.Hold("Runtime.evaluate")
	first := inFlight(ctx, t, g, 1, ps[0], "1")
	second := inFlight(ctx, t, g, 2, ps[1], "2")

	b.Emit("", "Target.targetCrashed", map[string]any{"targetId": "TARGET_1", "status": "crashed", "errorCode": 139})

	for i, errc := range []<-chan error{first, second} {
		if err := await(t, errc); !errors.Is(err, cdpmux.ErrTargetCrashed) {
			t.Errorf("pending call on session %d: %v, want ErrTargetCrashed", i+1, err)
		}
	}
}

// brokenWrites is a transport whose writes fail (the browser went away)
// before its reader has noticed: the window between a browser's death and
// the mux's reader seeing EOF.
type brokenWrites struct {
	*cdptest.Transport
	broken chan struct{} // closed: writes fail
}

func (bw *brokenWrites) WriteMessage(msg []byte) error {
	select {
	case <-bw.broken:
		return io.ErrClosedPipe
	default:
		return bw.Transport.WriteMessage(msg)
	}
}

// Bug 2: a failed transport write returns a bare "cdpmux: writing X: io:
// read/write on closed pipe", which is not ErrConnClosed, and leaves the mux
// running on a dead transport: every later call fails the same untyped way
// until the reader happens to see EOF. (The mux also joins ErrNotSent to
// such errors, but rpcc.Conn.send replaces a write error by the conn's own
// close error whenever the conn closed meanwhile, which it does as soon as
// the mux ends the session, so ErrNotSent cannot be relied on through rpcc;
// only ErrConnClosed is asserted.)
func TestMuxWriteFailureEndsTheMuxWithErrConnClosed(t *testing.T) {
	b := cdptest.NewBrowser(t)
	bw := &brokenWrites{Transport: b.Transport(), broken: make(chan struct{})}
	m, err := cdpmux.New(bw, cdpmux.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	close(bw.broken)

	_, err = cdp.NewClient(m.Browser()).Browser.GetVersion(context.Background())

	if !errors.Is(err, cdpmux.ErrConnClosed) || !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("call over a broken transport: %v; want ErrConnClosed caused by the write error", err)
	}
	if err := m.Err(); !errors.Is(err, cdpmux.ErrConnClosed) {
		t.Errorf("m.Err() = %v: the mux still runs on a transport that cannot be written", err)
	}
}
