package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/rpcc"
)

// BenchmarkSnapshot1000Items compares Tab.Snapshot with its floor, the raw
// Accessibility.getFullAXTree round trip (reply kept as bytes), on a page
// of 1,000 list items (links, buttons and text: about 2,700 elements and
// 5,700 accessibility nodes), interleaved on one tab.
func BenchmarkSnapshot1000Items(b *testing.B) {
	if _, err := exec.LookPath("chromium"); err != nil && os.Getenv("BROWSERPOOL_REQUIRE_BROWSER") != "1" {
		b.Skip("no Chromium found")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>Big</title><h1>Big page</h1><ul>")
		for i := range 1000 {
			switch i % 3 {
			case 0:
				fmt.Fprintf(w, "<li><a href=\"/item/%d\">Item %d</a></li>", i, i)
			case 1:
				fmt.Fprintf(w, "<li><button>Action %d</button></li>", i)
			default:
				fmt.Fprintf(w, "<li>Text %d</li>", i)
			}
		}
	}))
	defer srv.Close()
	p, err := NewPool(Config{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := p.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tab, err := s.OpenTab(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor=raw-getFullAXTree", func(b *testing.B) {
		for b.Loop() {
			var raw json.RawMessage
			if err := rpcc.Invoke(ctx, "Accessibility.getFullAXTree", struct{}{}, &raw, tab.conn); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Tab.Snapshot", func(b *testing.B) {
		var snap Snapshot
		for b.Loop() {
			if snap, err = tab.Snapshot(ctx, SnapshotOptions{MaxChars: -1}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(snap.Lines), "lines")
		b.ReportMetric(float64(len(snap.Text)), "chars")
	})
}

func TestPrintNeverPassesTheLimitAndGivesRefsOnlyToShownLines(t *testing.T) {
	var lines []snapLine
	for i := range 50 {
		l := snapLine{depth: i % 3, role: "button", name: fmt.Sprintf("Button number %d", i), interactive: true}
		l.key = nodeKey{"T", dom.BackendNodeID(i + 1)}
		l.target = refTarget{node: l.key.node}
		lines = append(lines, l, snapLine{depth: 1, role: "text", name: "some text"})
	}
	for _, limit := range []int{1, 40, 120, 200, 1000, 5000} {
		var r refTable
		r.setup()
		text, refs, shown, omitted := r.print("L", nil, lines, false, limit)
		if len(text) > limit {
			t.Errorf("limit %d: %d characters", limit, len(text))
		}
		if shown+omitted != len(lines) {
			t.Errorf("limit %d: %d shown + %d omitted != %d lines", limit, shown, omitted, len(lines))
		}
		if len(r.live) != len(refs) || strings.Count(text, "@e") != len(refs) {
			t.Errorf("limit %d: %d live refs, %d listed, %d in the text", limit, len(r.live), len(refs), strings.Count(text, "@e"))
		}
		if omitted > 0 && limit >= 200 && !strings.Contains(text, "[truncated: ") {
			t.Errorf("limit %d: no truncation line in\n%s", limit, text)
		}
	}
}

func TestRefsKeepTheirNumbersAndNumbersAreNeverReused(t *testing.T) {
	line := func(node int, name string) snapLine {
		return snapLine{role: "button", name: name, interactive: true, key: nodeKey{"T", dom.BackendNodeID(node)}}
	}
	var r refTable
	r.setup()
	_, refs1, _, _ := r.print("L1", nil, []snapLine{line(1, "a"), line(2, "b")}, false, -1)
	_, refs2, _, _ := r.print("L1", nil, []snapLine{line(3, "new"), line(2, "b")}, false, -1)
	_, refs3, _, _ := r.print("L2", nil, []snapLine{line(1, "other doc")}, false, -1)
	got := [][]SnapshotRef{refs1, refs2, refs3}
	want := [][]SnapshotRef{
		{{"@e1", "button", "a"}, {"@e2", "button", "b"}},
		{{"@e3", "button", "new"}, {"@e2", "button", "b"}},
		{{"@e4", "button", "other doc"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refs of three snapshots (-want +got):\n%s", diff)
	}
	if _, ok := r.live[1]; ok {
		t.Error("@e1 of the old document is still live")
	}
}
