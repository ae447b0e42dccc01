package browserpool_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// A click that sends the page to a server that never answers leaves the
// tab waiting for it, and the browser holds every read of the tab until
// that navigation commits or fails. A read whose deadline ends then says
// which page the tab waits for and how to go on (it said only that the
// browser did not answer, and to retry), and Navigate elsewhere works.
func TestAReadHeldByAPendingNavigationSaysWhichPageTheTabWaitsFor(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	release := make(chan struct{})
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hang":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			w.Write([]byte(`<title>start</title><a href="/hang?token=s3cr3t">Slow report</a>`))
		}
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for /hang
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Slow report")); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := tab.Snapshot(short, browserpool.SnapshotOptions{})
	var e *browserpool.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) ||
		!strings.Contains(e.Detail, "the tab is waiting for "+srv.URL+"/hang") || !strings.Contains(e.Hint, "Tab.Navigate") {
		t.Fatalf("Snapshot while the tab waits for a server that never answers: %v; want the deadline's class naming the page the tab waits for, with a hint to navigate elsewhere", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("the error repeats the URL's token: %v", err)
	}
	if _, err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
		t.Fatalf("Navigate elsewhere, as the hint says: %v", err)
	}
	if _, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{}); err != nil {
		t.Errorf("Snapshot after navigating elsewhere: %v", err)
	}
}
