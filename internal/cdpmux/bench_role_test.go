// Room: the read role's benchmark against real browsers. No locks.

package cdpmux_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/launch"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

// readerOnly hides a transport's read deadlines: its mux reads everything
// on its reader goroutine, as before direct callers could read.
type readerOnly struct{ cdpmux.Transport }

// benchTab starts a browser, builds a mux on its pipe (through wrap) and
// returns a direct-call handle on a blank page's session.
func benchTab(b *testing.B, wrap func(cdpmux.Transport) cdpmux.Transport) *cdpmux.Direct {
	ctx := context.Background()
	p, err := launch.Start(ctx, launch.Options{SessionDir: filepath.Join(b.TempDir(), "s"), NoPort: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop(context.Background()) })
	m, err := cdpmux.New(wrap(p.Transport()), cdpmux.Options{Cause: p.Cause})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	raw, err := m.Call(ctx, "", "Target.createTarget", []byte(`{"url":"about:blank"}`))
	if err != nil {
		b.Fatal(err)
	}
	var ct struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(raw, &ct); err != nil {
		b.Fatal(err)
	}
	conn, sid, err := m.Attach(ctx, ct.TargetID)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	d, err := m.Direct(sid)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkCallerReads makes the same sequential Runtime.evaluate on two
// browsers, alternately: one whose mux lets the caller read its own reply
// (the pipe as it is), one whose mux hands every reply over from its reader
// (the pipe's deadlines hidden). x-reader-median is the median of the
// iterations' ratios (caller-read / reader), which a load spike on the
// shared machine skews far less than the totals.
func BenchmarkCallerReads(b *testing.B) {
	leakcheck.RequireBrowser(b)
	ours := benchTab(b, func(t cdpmux.Transport) cdpmux.Transport { return t })
	old := benchTab(b, func(t cdpmux.Transport) cdpmux.Transport { return readerOnly{t} })
	ctx, cancel := context.WithCancel(context.Background()) // cancellable, as Tab.Evaluate's is
	defer cancel()
	params := []byte(`{"expression":"1+1","returnByValue":true,"awaitPromise":true}`)
	var to, tn time.Duration
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		if _, err := old.Call(ctx, "Runtime.evaluate", params); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := ours.Call(ctx, "Runtime.evaluate", params); err != nil {
			b.Fatal(err)
		}
		do, dn := t1.Sub(t0), time.Since(t1)
		to += do
		tn += dn
		ratios = append(ratios, dn.Seconds()/max(do.Seconds(), 1e-9))
	}
	slices.Sort(ratios)
	n := float64(b.N)
	b.ReportMetric(to.Seconds()*1e6/n, "µs-reader/op")
	b.ReportMetric(tn.Seconds()*1e6/n, "µs-caller/op")
	b.ReportMetric(tn.Seconds()/to.Seconds(), "x-reader")
	b.ReportMetric(ratios[len(ratios)/2], "x-reader-median")
}
