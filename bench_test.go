package browserpool_test

import (
	"context"
	"testing"

	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool"
)

// BenchmarkTabOpenClose compares Session.OpenTab + CloseTab with the floor:
// Target.createTarget + Target.closeTarget sent raw on the same browser
// connection, in the same run.
func BenchmarkTabOpenClose(b *testing.B) {
	p := newRealPool(b, browserpool.Config{})
	ctx := context.Background()
	s, err := p.Open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			t, err := s.Browser().Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Browser().Target.CloseTarget(ctx, target.NewCloseTargetArgs(t.TargetID)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ours", func(b *testing.B) {
		for b.Loop() {
			t, err := s.OpenTab(ctx, "about:blank")
			if err != nil {
				b.Fatal(err)
			}
			if err := s.CloseTab(ctx, t.ID()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
