// Room: benchmarks of launch and of evaluate round trips against a bare
// floor. No locks.

package launch

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"
)

// The cold-start benchmark against a bare browser is in the root package
// (BenchmarkOpenToFirstEvaluate), measured through the whole Pool.

// BenchmarkEvaluate measures Runtime.evaluate("1+1") round trips on one page,
// through the mux over the pipe and through mafredri/cdp's own websocket to
// the page (rpcc.Dial on the page's webSocketDebuggerUrl), sequentially and
// from 8 goroutines.
func BenchmarkEvaluate(b *testing.B) {
	p := start(b, Options{})
	pg := openPage(b, p)
	var list []struct {
		ID string `json:"id"`
		WS string `json:"webSocketDebuggerUrl"`
	}
	jsonGet(b, p, "/json/list", &list)
	wsURL := ""
	for _, t := range list {
		if t.ID == string(pg.id) {
			wsURL = t.WS
		}
	}
	if wsURL == "" {
		b.Fatalf("page %s not in /json/list", pg.id)
	}
	conn, err := rpcc.DialContext(context.Background(), wsURL, rpcc.WithWriteBufferSize(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	clients := []struct {
		name string
		c    *cdp.Client
	}{{"mux-pipe", pg.client}, {"rpcc-websocket", cdp.NewClient(conn)}}
	ctx := context.Background()
	args := runtime.NewEvaluateArgs("1+1")
	for _, mode := range []struct {
		name       string
		goroutines int
	}{{"sequential", 1}, {"8-goroutines", 8}} {
		for _, cl := range clients {
			b.Run(cl.name+"/"+mode.name, func(b *testing.B) {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range mode.goroutines {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if _, err := cl.c.Runtime.Evaluate(ctx, args); err != nil {
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
