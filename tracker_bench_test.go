package browserpool

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// benchSession is a live session without a browser: the tracker benchmarks
// measure the tracker's own bookkeeping, not a browser.
func benchSession(p *Pool, id string) *Session {
	s := &Session{p: p, id: id, created: time.Now(), done: make(chan struct{}), state: StateLive, tabs: map[string]*Tab{}, ours: true}
	s.lastUsed.Store(time.Now().UnixNano())
	return s
}

func benchTracker(b *testing.B, n int) *Tracker {
	p := &Pool{log: slog.New(slog.DiscardHandler), sessions: map[string]*Session{}}
	tr, err := NewTracker(TrackerConfig{Pool: p, Global: n + 1})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		e := &tracked{workflow: fmt.Sprintf("w%d", i), name: "main", created: time.Now(), opened: make(chan struct{})}
		e.s = benchSession(p, fmt.Sprintf("s-%d", i))
		close(e.opened)
		tr.addLocked(e)
	}
	return tr
}

// BenchmarkTrackerWith10000Sessions measures the reuse path of Open and
// Touch with 10,000 tracked sessions.
func BenchmarkTrackerWith10000Sessions(b *testing.B) {
	const n = 10000
	tr := benchTracker(b, n)
	ctx := context.Background()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("w%d", i)
	}
	b.Run("OpenReuse", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := tr.Open(ctx, names[i%n], "main"); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Touch", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if !tr.Touch(names[i%n], "main") {
				b.Fatal("not tracked")
			}
			i++
		}
	})
	b.Run("TouchParallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				tr.Touch(names[i%n], "main")
				i++
			}
		})
	})
}
