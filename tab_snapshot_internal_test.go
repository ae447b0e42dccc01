package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSnapshot1000Items compares Tab.Snapshot with its floor, the raw
// Accessibility.getFullAXTree round trip (reply kept as bytes), on a page
// of 1,000 list items (links, buttons and text: about 2,700 elements and
// 5,700 accessibility nodes), interleaved on one tab; and shows the part
// of it the raw DOMSnapshot.captureSnapshot round trip takes (the
// clickable elements).
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
			if err := tab.direct.Invoke(ctx, "Accessibility.getFullAXTree", struct{}{}, &raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What finding the clickable elements costs a snapshot (one call per
	// snapshot and process).
	b.Run("part=raw-captureSnapshot", func(b *testing.B) {
		for b.Loop() {
			var raw json.RawMessage
			if err := tab.direct.Invoke(ctx, "DOMSnapshot.captureSnapshot", struct {
				Styles []string `json:"computedStyles"`
			}{[]string{"cursor"}}, &raw); err != nil {
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
