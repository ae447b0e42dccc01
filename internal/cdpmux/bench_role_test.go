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
	tabs, _ := benchTabs(b, wrap, 1)
	return tabs[0]
}

// benchTabs is benchTab with n blank pages on the one browser, and the mux.
func benchTabs(b *testing.B, wrap func(cdpmux.Transport) cdpmux.Transport, n int) ([]*cdpmux.Direct, *cdpmux.Mux) {
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
	var tabs []*cdpmux.Direct
	for range n {
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
		tabs = append(tabs, d)
	}
	return tabs, m
}

// BenchmarkCallerReads makes the same sequential Runtime.evaluate on two
// browsers, alternately: one whose mux lets the caller read its own reply
// (the pipe as it is), one whose mux hands every reply over from its reader
// (the pipe's deadlines hidden). x-reader-median is the median of the
// iterations' ratios (caller-read / reader), which a load spike on the
// shared machine skews far less than the totals. Two browsers are not
// equally fast on a loaded machine (the one started first tends to be
// quicker), so each sub-benchmark starts them in the other order.
func BenchmarkCallerReads(b *testing.B) {
	leakcheck.RequireBrowser(b)
	same := func(t cdpmux.Transport) cdpmux.Transport { return t }
	hidden := func(t cdpmux.Transport) cdpmux.Transport { return readerOnly{t} }
	b.Run("caller-started-first", func(b *testing.B) {
		ours := benchTab(b, same)
		benchAlternate(b, ours, benchTab(b, hidden))
	})
	b.Run("reader-started-first", func(b *testing.B) {
		old := benchTab(b, hidden)
		benchAlternate(b, benchTab(b, same), old)
	})
}

func benchAlternate(b *testing.B, ours, old *cdpmux.Direct) {
	ctx, cancel := context.WithCancel(context.Background()) // cancellable, as Tab.Evaluate's is
	defer cancel()
	params := []byte(`{"expression":"1+1","returnByValue":true,"awaitPromise":true}`)
	call := func(d *cdpmux.Direct) func() time.Duration {
		return func() time.Duration {
			t0 := time.Now()
			if _, err := d.Call(ctx, "Runtime.evaluate", params); err != nil {
				b.Fatal(err)
			}
			return time.Since(t0)
		}
	}
	alternate(b, "reader", "caller", call(old), call(ours))
}

// alternate times old and ours once per iteration, each going first every
// other iteration, and reports µs-<oldName>/op, µs-<ourName>/op and
// x-<oldName> (ours ÷ old from the totals) with x-<oldName>-median (the
// median of the iterations' own ratios).
func alternate(b *testing.B, oldName, ourName string, old, ours func() time.Duration) {
	var to, tn time.Duration
	var ratios []float64
	first := false
	for b.Loop() {
		var do, dn time.Duration
		if first = !first; first {
			do = old()
			dn = ours()
		} else {
			dn = ours()
			do = old()
		}
		to += do
		tn += dn
		ratios = append(ratios, dn.Seconds()/max(do.Seconds(), 1e-9))
	}
	slices.Sort(ratios)
	n := float64(b.N)
	b.ReportMetric(to.Seconds()*1e6/n, "µs-"+oldName+"/op")
	b.ReportMetric(tn.Seconds()*1e6/n, "µs-"+ourName+"/op")
	b.ReportMetric(tn.Seconds()/to.Seconds(), "x-"+oldName)
	b.ReportMetric(ratios[len(ratios)/2], "x-"+oldName+"-median")
}
