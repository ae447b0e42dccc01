package browserpool_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

func TestASnapshotTakenAsThePageNavigatesReadsOneDocument(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/b":
			time.Sleep(20 * time.Millisecond) // the commit lands while snapshots run
			w.Write([]byte(`<title>bravo</title><p>bravo page</p><a href="/a">back</a>`))
		case "/a":
			w.Write([]byte(`<title>alpha</title><p>alpha page</p><a href="/b">on</a><script>setTimeout(() => location = '/b', 30)</script>`))
		default: // the tab's first page: no navigation of its own races the first round's
			w.Write([]byte(`<title>start</title>`))
		}
	})
	mixed := 0
	for round := range 15 {
		if _, err := tab.Navigate(ctx, srv.URL+"/a"); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			s, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			atB := strings.HasSuffix(s.URL, "/b")
			if strings.Contains(s.Text, "alpha page") && atB || strings.Contains(s.Text, "bravo page") && !atB {
				mixed++
				t.Errorf("round %d: a snapshot at %s reads another document:\n%s", round, s.URL, s.Text)
			}
			if atB {
				break
			}
		}
	}
	if mixed > 0 {
		t.Logf("%d mixed snapshots", mixed)
	}
}
