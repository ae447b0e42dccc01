package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// openFailingGridLaunch opens a session of a pool on f's Grid face whose
// se:cdp socket is refused, while the Grid answers dels DELETEs with 500,
// and returns the failed launch's error and its session id.
func openFailingGridLaunch(t *testing.T, f *fakeFleet, root string, dels int) (*browserpool.Pool, error, string) {
	t.Helper()
	f.mu.Lock()
	f.refuseSocket, f.failDel = true, dels
	f.mu.Unlock()
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: &browserpool.SeleniumGrid{URL: f.HTTP}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Open(ctxT(t))
	var e *browserpool.Error
	if !errors.As(err, &e) || e.Session == "" {
		t.Fatalf("Open on a Grid whose socket is refused: %v, want a browserpool error naming the session", err)
	}
	return p, err, e.Session
}

// A Grid launch that fails after the Grid made the session (its socket is
// refused) deletes the session; when that DELETE fails too, the session
// used to vanish from the record: no manifest entry, not counted as
// leaked, never ended by Pool.Close or the next sweep. It is a stray now:
// recorded, counted, and ended by Pool.Close's retry.
func TestAGridLaunchWhoseSessionCouldNotBeDeletedIsKeptAndEndedByPoolClose(t *testing.T) {
	f := startFakeFleet(t, 1, "")
	root := newRoot(t)
	p, err, id := openFailingGridLaunch(t, f, root, 1)
	if !errors.Is(err, browserpool.ErrLaunchFailed) || !strings.Contains(err.Error(), "the Grid session could not be ended: the pool tries again") || strings.Contains(err.Error(), "\n") {
		t.Errorf("the failed launch's error: %v\nwant ErrLaunchFailed saying the Grid session could not be ended, on one line", err)
	}
	if got := p.Stats().Leaked; got != 1 {
		t.Errorf("Stats.Leaked after the failed launch = %d, want 1", got)
	}
	if e, ok := entryOf(t, root, id); !ok || e.Fleet != "selenium-grid" || e.LeaseID == "" {
		t.Errorf("manifest entry of the failed launch: %+v (found %v), want the Grid lease kept", e, ok)
	}
	if got := f.gridSessions(); got != 1 {
		t.Fatalf("Grid sessions after the failed launch = %d, want the one it could not delete", got)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Pool.Close once the Grid deletes again: %v", err)
	}
	if got := f.gridSessions(); got != 0 {
		t.Errorf("Grid sessions after Pool.Close = %d, want 0", got)
	}
	if _, ok := entryOf(t, root, id); ok {
		t.Errorf("the stray's manifest entry is still there after Pool.Close ended it")
	}
}

// A stray the Grid never lets go is named by Pool.Close, with the fleet.
func TestPoolCloseNamesTheGridLeaseOfAFailedLaunchItCouldNotEnd(t *testing.T) {
	f := startFakeFleet(t, 1, "")
	root := newRoot(t)
	p, _, id := openFailingGridLaunch(t, f, root, 1<<20)
	err := p.Close()
	if !errors.Is(err, browserpool.ErrCloseFailed) {
		t.Fatalf("Pool.Close with a Grid refusing DELETE: %v, want ErrCloseFailed", err)
	}
	checkText(t, "Pool.Close", err, []string{"selenium-grid lease of the failed launch of session " + id, f.HTTP, "not confirmed ended", "HTTP 500", "check the fleet"}, []string{"\n"})
	if _, ok := entryOf(t, root, id); !ok {
		t.Errorf("the manifest lost the entry of a lease still held: the next NewPool could not end it")
	}
	f.mu.Lock()
	f.failDel = 0 // let the fleet's own cleanup end it
	f.mu.Unlock()
}
