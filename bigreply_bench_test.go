package browserpool_test

import (
	"context"
	"testing"

	"github.com/mafredri/cdp/protocol/accessibility"

	"github.com/browserpool/browserpool"
)

// BenchmarkBigReply: a full AX tree of about 3,000 nodes (one reply of
// about 1.5 MB) on a real tab. mux-only is the reply as the mux hands it
// over (read from the pipe, routed by its envelope, not decoded: its
// allocs/op are what the transport and the mux cost a big message);
// typed-client adds mafredri/cdp's decode into []AXNode, as Tab.Client()
// users pay it. Run with -benchmem.
func BenchmarkBigReply(b *testing.B) {
	p := newRealPool(b, browserpool.Config{})
	ctx := context.Background()
	s, err := p.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		b.Fatal(err)
	}
	var n int
	if err := tab.Evaluate(ctx, bigDOM, &n); err != nil {
		b.Fatal(err)
	}
	b.Run("mux-only", func(b *testing.B) {
		var size int
		for b.Loop() {
			raw, err := browserpool.MuxCall(ctx, tab, "Accessibility.getFullAXTree", nil)
			if err != nil {
				b.Fatal(err)
			}
			size = len(raw)
		}
		b.ReportMetric(float64(size)/(1<<20), "MiB-reply")
	})
	b.Run("typed-client", func(b *testing.B) {
		for b.Loop() {
			r, err := tab.Client().Accessibility.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs())
			if err != nil || len(r.Nodes) < 3000 {
				b.Fatal(len(r.Nodes), err)
			}
		}
	})
}
