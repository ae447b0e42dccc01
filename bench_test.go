package browserpool_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/benchfloor"
)

// BenchmarkOpenToFirstEvaluate measures a cold session up to its first page
// evaluate (ms-to-eval/op) and back down, through the Pool ("ours": Open,
// the first tab, Evaluate("1+1"), Close) and with no library ("bare": the
// same binary, flags and environment, raw JSON on the pipe), interleaved in
// one run.
func BenchmarkOpenToFirstEvaluate(b *testing.B) {
	requireBrowser(b)
	exe, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("the bare floor needs chromium on PATH")
	}
	p := newRealPool(b, browserpool.Config{})
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		var toEval time.Duration
		for i := range b.N {
			t0 := time.Now()
			bb, err := benchfloor.Start(exe, filepath.Join(p.Config().Root, "sessions", fmt.Sprintf("bare-%d", i)))
			if err != nil {
				b.Fatal(err)
			}
			err = bb.FirstEvaluate()
			toEval += time.Since(t0)
			bb.Stop()
			if err != nil {
				b.Fatalf("%v\n%s", err, bb.Output())
			}
		}
		b.ReportMetric(toEval.Seconds()*1e3/float64(b.N), "ms-to-eval/op")
	})
	b.Run("ours", func(b *testing.B) {
		var toEval time.Duration
		for range b.N {
			t0 := time.Now()
			s, err := p.Open(ctx)
			if err != nil {
				b.Fatal(err)
			}
			tab, err := s.Tab(ctx, "")
			if err != nil {
				b.Fatal(err)
			}
			var two int
			if err := tab.Evaluate(ctx, "1+1", &two); err != nil || two != 2 {
				b.Fatal(two, err)
			}
			toEval += time.Since(t0)
			if err := s.Close(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(toEval.Seconds()*1e3/float64(b.N), "ms-to-eval/op")
	})
}

// BenchmarkEvaluate measures Tab.Evaluate("1+1") against the floor of a raw
// Runtime.evaluate on the same tab's CDP client, sequentially and from 8
// goroutines. (internal/launch's BenchmarkEvaluate compares the mux with
// mafredri/cdp's own per-page websocket.)
func BenchmarkEvaluate(b *testing.B) {
	p := newRealPool(b, browserpool.Config{})
	ctx := context.Background()
	tab, err := p.ResolveTab(ctx, browserpool.Ref{})
	if err != nil {
		b.Fatal(err)
	}
	args := runtime.NewEvaluateArgs("1+1").SetReturnByValue(true).SetAwaitPromise(true) // what Tab.Evaluate sends
	calls := map[string]func() error{
		"raw": func() error { _, err := tab.Client().Runtime.Evaluate(ctx, args); return err },
		"ours": func() error {
			var n int
			return tab.Evaluate(ctx, "1+1", &n)
		},
	}
	for _, g := range []int{1, 8} {
		for _, name := range []string{"raw", "ours"} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", name, g), func(b *testing.B) {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range g {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if err := calls[name](); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
			})
		}
	}
}

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
