package browserpool_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/browserpool/browserpool"
)

// myFleet is a launcher for a fleet that hands out one browser per
// websocket (as browserless does) and wants a bearer token: DialWebSocket
// does the work, and the lease ends when the socket closes.
type myFleet struct {
	URL   string // the fleet's websocket endpoint
	Token string
}

// Launch implements browserpool.Launcher. ctx carries the pool's
// LaunchTimeout: it bounds the wait for a free browser.
func (f *myFleet) Launch(ctx context.Context, spec browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	t, err := browserpool.DialWebSocket(ctx, f.URL, browserpool.DialOptions{
		Header: http.Header{"Authorization": {"Bearer " + f.Token}},
	})
	if err != nil {
		return nil, err // a *HandshakeError (errors.As) tells 401 from 429
	}
	if spec.OnSpawn != nil {
		if err := spec.OnSpawn(browserpool.SpawnInfo{}); err != nil {
			t.Close()
			return nil, err
		}
	}
	return &myLease{t: t}, nil
}

// myLease is one leased browser as the pool drives it.
type myLease struct {
	t *browserpool.WebSocketTransport
}

func (l *myLease) Transport() browserpool.Transport { return l.t }
func (l *myLease) Info() browserpool.SpawnInfo      { return browserpool.SpawnInfo{} }
func (l *myLease) Exited() <-chan struct{}          { return l.t.Exited() } // closed on the first read error
func (l *myLease) ExitErr() error                   { return l.t.Err() }
func (l *myLease) Stop(ctx context.Context) error   { return l.t.Close() } // closing the socket ends the lease

// A launcher for another fleet in a few lines, on the exported websocket
// transport. The fleet here is an in-process fake (a Go test server that
// upgrades each connection to a fresh cdptest browser).
func Example_customFleetLauncher() {
	fleet := startFakeFleet(nil, 1, "my-t0ken")
	defer fleet.Close()

	root := exampleRoot()
	defer os.RemoveAll(root)
	pool, err := browserpool.NewPool(browserpool.Config{
		Root:     root,
		Launcher: &myFleet{URL: fleet.URL + "/lease", Token: "my-t0ken"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	ctx := context.Background()
	s, err := pool.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	tab, err := s.Tab(ctx, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	var n int
	if err := tab.Evaluate(ctx, "1+2", &n); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("1+2 =", n, "on a leased browser; leases:", fleet.leases())
	s.Close(ctx)
	for deadline := time.Now().Add(5 * time.Second); fleet.leases() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("leases after Close:", fleet.leases())
	// Output:
	// 1+2 = 3 on a leased browser; leases: 1
	// leases after Close: 0
}
