// Command quickstart is browserpool's tour in one run: it serves a small page
// on 127.0.0.1, opens a browser session, opens the page in a tab, lists the
// tabs, evaluates JavaScript, takes a snapshot and clicks by ref, takes a
// screenshot into the session's output directory, prints what it did and the
// pool's stats, and leaves no process or profile directory behind.
//
// Its root is stable (<user cache dir>/browserpool-quickstart), so a run
// that is killed anyway (SIGKILL) leaves what it had to the next run's
// orphan sweep, which only ever cleans a root that is used again. SIGINT,
// SIGTERM and SIGPIPE (`quickstart | head -5`) end the run through
// Pool.Close like a normal exit.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/browserpool/browserpool"
)

const page = `<!doctype html>
<html><head><title>browserpool quickstart</title></head>
<body>
  <h1>Hello from browserpool</h1>
  <p id="count">clicked 0 times</p>
  <button onclick="n++; document.getElementById('count').textContent = 'clicked ' + n + ' times'">Count</button>
  <script>let n = 0;</script>
</body></html>`

var keep = flag.String("out", "", "keep the screenshot in this directory (by default the session's artifacts are removed on exit)")

func main() {
	flag.Parse()
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	// A signal ends the run through the deferred Pool.Close below, which
	// stops the browser and removes its profile. SIGPIPE is caught too: a
	// reader that goes away (`| head -5`) would otherwise kill the program
	// before it cleans up.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	// A local page to drive, on loopback only.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	// Everything the pool writes goes under one stable root: the orphan
	// sweep of the next run cleans whatever a killed run left there.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	root := filepath.Join(cache, "browserpool-quickstart")
	out := filepath.Join(root, "output")
	if *keep != "" {
		out = *keep // artifacts outlive the run there
	}

	pool, err := browserpool.NewPool(browserpool.Config{Root: root, OutputDir: out})
	if err != nil {
		return err
	}
	defer pool.Close()

	start := time.Now()
	sess, err := pool.Open(ctx)
	if err != nil {
		return err
	}
	info := sess.Info()
	if *keep == "" {
		// Artifacts are kept by the pool (Config.OutputDir); this demo
		// prunes its own on the way out.
		defer os.RemoveAll(info.OutputDir)
	}
	fmt.Printf("opened session %s in %v: %s, pid %d, DevTools port %d\n",
		sess.ID(), time.Since(start).Round(time.Millisecond), info.Version, info.PID, info.Port)

	tab, err := sess.OpenTab(ctx, url)
	if err != nil {
		return err
	}
	fmt.Printf("opened %s in tab %s (channel %s)\n", url, tab.ID(), tab.Channel())

	tabs, err := sess.Tabs(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("the session has %d tabs:\n", len(tabs))
	for _, t := range tabs {
		mark := " "
		if t.Active {
			mark = "*"
		}
		fmt.Printf("  %s %s %q %s\n", mark, t.TabID, t.Title, t.URL)
	}

	var title string
	if err := tab.Evaluate(ctx, "document.title", &title); err != nil {
		return err
	}
	fmt.Printf("evaluated document.title: %q\n", title)

	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		return err
	}
	fmt.Printf("snapshot of %q (%d refs):\n%s", snap.Title, len(snap.Refs), snap.Text)
	count := snap.Find("button", "Count")
	if err := tab.Click(ctx, count); err != nil {
		return err
	}
	var clicked string
	if err := tab.Evaluate(ctx, "document.getElementById('count').textContent", &clicked); err != nil {
		return err
	}
	fmt.Printf("clicked %s: %q\n", count, clicked)

	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "quickstart.png"})
	if err != nil {
		return err
	}
	fmt.Printf("screenshot: %s (%dx%d, %d bytes)\n", shot.Path, shot.Width, shot.Height, shot.Bytes)
	if *keep == "" {
		fmt.Println("  (removed on exit; run with -out DIR to keep it)")
	}

	// Bad input gets a clear error and loses nothing.
	if _, err := tab.Navigate(ctx, "file:///etc/passwd"); err != nil {
		fmt.Printf("refused as expected: %v\n", err)
	}

	if err := sess.Close(ctx); err != nil {
		return err
	}
	if err := pool.Close(); err != nil {
		return err
	}
	st := pool.Stats()
	fmt.Printf("stats: launches=%d launch_failures=%d closes=%v live=%d\n",
		st.Launches, st.LaunchFailures, st.Closes, st.SessionsInUse+st.SessionsIdle)
	if _, err := os.Stat(info.ProfileDir); os.IsNotExist(err) {
		fmt.Println("the profile dir is gone and the browser has exited; bye")
	}
	return nil
}
