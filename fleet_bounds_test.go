package browserpool_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// A proxy in front of browserless may answer GET /sessions with a page of
// its own: that says nothing of the lease, which ended with its socket, so
// the close counts it ended rather than waiting out CloseTimeout and
// reporting a leak whose reason read "<nil>".
func TestFleetFakeASessionListThatIsNotTheListCountsTheLeaseEnded(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	f.mu.Lock()
	f.listStatus, f.listBody = http.StatusOK, "<html>bad gateway</html>"
	f.mu.Unlock()
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.Browserless{URL: f.URL}, LaunchTimeout: time.Minute, CloseTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if err := s.Close(ctx); err != nil {
		t.Fatalf("closing a lease whose server answers its session list with a page: %v", err)
	}
	if st := p.Stats(); st.Leaked != 0 || st.CloseFailures != 0 {
		t.Errorf("Stats Leaked %d, CloseFailures %d; want 0 and 0", st.Leaked, st.CloseFailures)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Pool.Close: %v", err)
	}
}

// A lease that drops right after the readiness probe fails the launch; the
// launch then stops it, and while the server's session list keeps failing
// (HTTP 500) that stop is bounded by CloseTimeout like any close: Open
// returns its error, and Pool.Close returns, instead of both waiting for
// the server to recover.
func TestFleetFakeALeaseThatDropsAsItStartsDoesNotHoldUpOpenOrPoolClose(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	f.mu.Lock()
	f.dropAfterProbe = true
	f.listStatus, f.listBody = http.StatusInternalServerError, "busy"
	f.mu.Unlock()
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: &browserpool.Browserless{URL: f.URL}, LaunchTimeout: time.Minute, CloseTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	// The bounds below are far above what either call needs (a second or
	// two): they only stop a hang from lasting until the test's deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s, err := p.Open(ctx); err == nil {
		// The drop raced the launch's last check: the session ends as
		// crashed instead.
		<-s.Done()
	} else if ctx.Err() != nil {
		t.Fatalf("Open did not return before its 30 s deadline: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		f.mu.Lock()
		f.listStatus = 0 // let Close end
		f.mu.Unlock()
		<-closed
		t.Fatal("Pool.Close did not return within 30 s while the session list failed")
	}
}

// Browserless.URL may carry credentials (a proxy's Basic authentication in
// front of the server): they go as an Authorization header. The websocket
// library refuses them in the URL, which failed every lease with
// "malformed ws or wss URL".
func TestFleetFakeBrowserlessURLCredentialsAreSentAsBasicAuthorization(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	u := "ws://alice:s3cret-pw@" + strings.TrimPrefix(f.URL, "ws://")
	p := newFleetPool(t, &browserpool.Browserless{URL: u}, 0)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	f.mu.Lock()
	got := f.headers[len(f.headers)-1].Get("Authorization")
	f.mu.Unlock()
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret-pw")); got != want {
		t.Errorf("the lease's handshake Authorization = %q, want %q", got, want)
	}
	if strings.Contains(fmt.Sprint(s.Info()), "s3cret-pw") {
		t.Errorf("the session's info shows the password: %+v", s.Info())
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A fleet that granted the lease, whose browser then never answers CDP, is
// not full: the launch's timeout used to blame a full queue (browserless),
// or read as a local launch failure (Grid). Both say now that the lease
// was granted and its browser did not answer.
func TestFleetFakeAGrantedLeaseWhoseBrowserNeverAnswersIsNotCalledFull(t *testing.T) {
	f := startFakeFleet(t, 2, "")
	f.mu.Lock()
	f.silentLease = true
	f.mu.Unlock()
	for _, l := range []browserpool.Launcher{&browserpool.Browserless{URL: f.URL}, &browserpool.SeleniumGrid{URL: f.HTTP}} {
		p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: l, LaunchTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Open(ctxT(t))
		if !errors.Is(err, browserpool.ErrTimeout) {
			t.Errorf("%T: Open of a lease whose browser never answers: %v, want ErrTimeout", l, err)
		}
		checkText(t, fmt.Sprintf("%T's Open", l), err, []string{"granted a lease, but its browser did not answer CDP before the launch deadline", "check the fleet's browsers"}, []string{"full", "queue"})
		if err := p.Close(); err != nil {
			t.Errorf("%T: Pool.Close: %v", l, err)
		}
	}
	if got := f.gridSessions(); got != 0 {
		t.Errorf("Grid sessions left: %d, want 0", got)
	}
}
