package browserpool

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
)

// stubAllocator returns an allocator whose one computer opens and closes
// sessions instantly (one pre-made live session handed out again and
// again), so what remains is the allocator's own work: binding, the slot
// accounting, the FIFO queue and the hand-off of freed slots to parked
// waiters. Zero budget means the default (30 s).
func stubAllocator(tb testing.TB, capacity int, budget time.Duration) *Allocator {
	tb.Helper()
	s := &Session{id: "s-stub", state: StateLive, done: make(chan struct{})}
	a, err := NewAllocator(AllocatorConfig{Computers: []Computer{{Name: "c1", Pool: &Pool{}, Cap: capacity}}, Budget: budget})
	if err != nil {
		tb.Fatal(err)
	}
	a.openFn = func(context.Context, *computer) (*Session, error) { return s, nil }
	a.closeFn = func(*Session, CloseReason) error { return nil }
	tb.Cleanup(func() { a.Close() })
	return a
}

// BenchmarkAllocatorHandoff measures acquire/finish pairs per second through
// the allocator with g goroutines contending for a cap of 4, against
// x/sync/semaphore (the floor for a fair FIFO queue) doing the same
// acquire/release with the same contention in the same run. Sessions are
// stubs (see stubAllocator): this is the queue, not the browser.
//
// Variants: ctx=background is a context that cannot end, so the launch runs
// on the caller's goroutine and Finish closes on it too; ctx=cancellable is
// one that can, so each launch and each close runs on a goroutine of the
// allocator (the launch can then be handed on if its caller leaves, and
// Finish can stop waiting). budget=none waits without a timer; budget=30s
// is the default, a timer per queued acquire.
func BenchmarkAllocatorHandoff(b *testing.B) {
	for _, g := range []int{1, 8, 256} {
		b.Run(fmt.Sprintf("goroutines=%d/semaphore", g), func(b *testing.B) {
			sem := semaphore.NewWeighted(4)
			ctx := context.Background()
			runHandoff(b, g, func(int) error {
				if err := sem.Acquire(ctx, 1); err != nil {
					return err
				}
				sem.Release(1)
				return nil
			})
		})
		for _, v := range []struct {
			name        string
			cancellable bool
			budget      time.Duration
		}{
			{"ctx=background/budget=none", false, -1},
			{"ctx=background/budget=30s", false, 0},
			{"ctx=cancellable/budget=30s", true, 0},
		} {
			b.Run(fmt.Sprintf("goroutines=%d/allocator/%s", g, v.name), func(b *testing.B) {
				a := stubAllocator(b, 4, v.budget)
				ctx := context.Background()
				if v.cancellable {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				tasks := make([]string, g)
				for i := range tasks {
					tasks[i] = fmt.Sprintf("g%d", i)
				}
				runHandoff(b, g, func(i int) error {
					if _, err := a.Acquire(ctx, tasks[i], AcquireOptions{Computer: "c1"}); err != nil {
						return err
					}
					return a.Finish(ctx, tasks[i], TaskCompleted)
				})
			})
		}
	}
}

// runHandoff runs b.N calls of pair spread over g goroutines (goroutine i
// passes i) and reports pairs/s.
func runHandoff(b *testing.B, g int, pair func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	per, extra := b.N/g, b.N%g
	b.ResetTimer()
	for i := range g {
		n := per
		if i < extra {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if err := pair(i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
}

// TestAllocatorHammerGivesBackEverySlotAndAuditsEachTransitionOnce hammers
// the stub allocator from many goroutines with contexts that end at random
// points (before, while queued, while launching) and short budgets, then
// checks that every slot came back, the queue is empty, and each task's
// audit events follow the allowed transitions exactly once each.
func TestAllocatorHammerGivesBackEverySlotAndAuditsEachTransitionOnce(t *testing.T) {
	var mu sync.Mutex
	var events []AuditEvent
	a := stubAllocator(t, 3, 0)
	a.cfg.Budget = 50 * time.Microsecond
	a.events = newEventQueue(a.log)
	a.cfg.Audit = func(ev AuditEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := fmt.Sprintf("g%d", i)
			for j := range 200 {
				ctx, cancel := context.WithCancel(context.Background())
				if j%7 == 0 {
					ctx = context.Background() // launches inline
				}
				if j%3 == 0 {
					cancel() // gives up before it starts
				}
				if j%5 == 0 {
					go cancel() // gives up at some point of the wait
				}
				if _, err := a.Acquire(ctx, task, AcquireOptions{Computer: "c1"}); err == nil {
					a.Finish(context.Background(), task, TaskCompleted)
				} else {
					a.Finish(context.Background(), task, TaskCancelled)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	a.wg.Wait() // launches handed on or orphaned finish on their own goroutines
	a.mu.Lock()
	c := a.comps["c1"]
	got := []int{c.used, c.leased, c.starting, c.closing, c.nwait, len(c.orphans), len(a.tasks)}
	a.mu.Unlock()
	if fmt.Sprint(got) != "[0 0 0 0 0 0 0]" {
		t.Errorf("after the hammer: used, leased, starting, closing, waiting, orphans, tasks = %v; want all 0", got)
	}
	a.Close()

	// Per task: idle -queued-> waiting; idle or waiting -allocated->
	// holding; idle or waiting -cancelled, queue_timeout, launch_failed->
	// idle; holding -reclaimed, leaked-> idle.
	allowed := map[string]map[AuditKind]string{
		"idle":    {AuditQueued: "waiting", AuditAllocated: "holding", AuditCancelled: "idle", AuditLaunchFailed: "idle"},
		"waiting": {AuditAllocated: "holding", AuditCancelled: "idle", AuditQueueTimeout: "idle", AuditLaunchFailed: "idle"},
		"holding": {AuditReclaimed: "idle", AuditLeaked: "idle"},
	}
	state := map[string]string{}
	counts := map[AuditKind]uint64{}
	mu.Lock()
	defer mu.Unlock()
	for i, ev := range events {
		from := state[ev.Task]
		if from == "" {
			from = "idle"
		}
		to, ok := allowed[from][ev.Kind]
		if !ok {
			t.Fatalf("event %d: task %s: %s while %s", i, ev.Task, ev.Kind, from)
		}
		state[ev.Task] = to
		counts[ev.Kind]++
	}
	for task, st := range state {
		if st != "idle" {
			t.Errorf("task %s ends %s", task, st)
		}
	}
	st := a.Stats().Total
	if counts[AuditAllocated] != st.Acquires || counts[AuditQueued] != st.Waits || counts[AuditCancelled] != st.CancelledAcquires ||
		counts[AuditQueueTimeout] != st.QueueTimeouts || counts[AuditReclaimed] != st.Reclaims[TaskCompleted] {
		t.Errorf("audit counts %v disagree with stats %+v", counts, st)
	}
	if counts[AuditQueueTimeout] == 0 || counts[AuditCancelled] == 0 || counts[AuditAllocated] == 0 {
		t.Errorf("the hammer did not reach every path: %v", counts)
	}
}
