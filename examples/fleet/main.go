// Command fleet runs the same agent task twice through one Allocator with
// two computers: one a pool of local Chromium, the other a pool leasing
// browsers from a remote fleet (browserless v2 or Selenium Grid 4). It prints
// where each task ran. Nothing in the task knows which kind of browser it
// drives.
//
// Start a fleet first (scripts/fleet/install.sh installs both, cached):
//
//	scripts/fleet/run-browserless.sh 3000 local-token &   # browserless on 127.0.0.1:3000
//	go run ./examples/fleet -browserless ws://127.0.0.1:3000 -token local-token
//
//	scripts/fleet/run-grid.sh 4444 &                      # Selenium Grid on 127.0.0.1:4444
//	go run ./examples/fleet -grid http://127.0.0.1:4444
//
// The fleet's browsers load a page this program serves on 127.0.0.1, so the
// fleet must run on this machine (as the scripts do).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/browserpool/browserpool"
)

const page = `<!doctype html><title>fleet example</title>
<h1>Order form</h1>
<label>Quantity <input id="qty"></label>
<button onclick="document.getElementById('out').textContent = 'ordered ' + document.getElementById('qty').value">Order</button>
<p id="out">nothing ordered</p>`

var (
	blURL   = flag.String("browserless", "", "browserless URL, e.g. ws://127.0.0.1:3000")
	blToken = flag.String("token", "", "browserless token")
	gridURL = flag.String("grid", "", "Selenium Grid URL, e.g. http://127.0.0.1:4444")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	var fleet browserpool.Launcher
	var where string
	switch {
	case *blURL != "":
		fleet, where = &browserpool.Browserless{URL: *blURL, Token: *blToken}, "browserless at "+*blURL
	case *gridURL != "":
		fleet, where = &browserpool.SeleniumGrid{URL: *gridURL}, "Selenium Grid at "+*gridURL
	default:
		return errors.New("name a fleet: -browserless ws://127.0.0.1:3000 -token T, or -grid http://127.0.0.1:4444 (see the package doc for how to start one)")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	pageURL := "http://" + ln.Addr().String() + "/"

	root, err := os.MkdirTemp("", "fleet-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)

	// One Pool per computer: local Chromium, and the fleet.
	local, err := browserpool.NewPool(browserpool.Config{Root: root + "/local"})
	if err != nil {
		return err
	}
	defer local.Close()
	remote, err := browserpool.NewPool(browserpool.Config{Root: root + "/fleet", Launcher: fleet})
	if err != nil {
		return err
	}
	defer remote.Close()

	// Cap each computer at what it can run: a fleet of one browser queues
	// its second task in the allocator instead of getting a 429.
	alloc, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{
		{Name: "local", Pool: local, Cap: 1},
		{Name: "fleet", Pool: remote, Cap: 1},
	}})
	if err != nil {
		return err
	}
	defer alloc.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	places := map[string]string{"local": "local Chromium", "fleet": where}
	for i, computer := range []string{"local", "fleet"} {
		task := fmt.Sprintf("order-%d", i+1)
		if err := alloc.Bind(task, computer); err != nil {
			return err
		}
		start := time.Now()
		result, err := orderTask(ctx, alloc, task, pageURL)
		if err != nil {
			return fmt.Errorf("%s on %s: %w", task, computer, err)
		}
		fmt.Printf("%s ran on computer %q (%s): page says %q, in %v\n", task, computer, places[computer], result, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// orderTask is the agent task: it knows nothing of where its browser runs.
func orderTask(ctx context.Context, alloc *browserpool.Allocator, task, pageURL string) (string, error) {
	lease, err := alloc.Acquire(ctx, task, browserpool.AcquireOptions{})
	if err != nil {
		return "", err
	}
	state := browserpool.TaskFailed
	defer func() { alloc.Finish(context.WithoutCancel(ctx), task, state) }()

	tab, err := lease.Session().OpenTab(ctx, pageURL)
	if err != nil {
		return "", err
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		return "", err
	}
	if err := tab.Fill(ctx, snap.Find("textbox", "Quantity"), "3"); err != nil {
		return "", err
	}
	if err := tab.Click(ctx, snap.Find("button", "Order")); err != nil {
		return "", err
	}
	var out string
	if err := tab.Evaluate(ctx, `document.getElementById('out').textContent`, &out); err != nil {
		return "", err
	}
	state = browserpool.TaskCompleted
	return out, nil
}
