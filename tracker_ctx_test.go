package browserpool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestATrackerOpenWithAnEndedContextEvictsAndLaunchesNothing(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{IdleTimeout: -1})
	var ev evictions
	tr := newTracker(t, p, browserpool.TrackerConfig{Global: 1, Evicted: ev.hook})
	ctx := ctxT(t)
	other, err := tr.Open(ctx, "w2", "main")
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Open(ended, "w1", "main"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with an ended context: %v, want context.Canceled", err)
	}
	if err := other.Err(); err != nil {
		t.Errorf("the other workflow's session was closed by an Open whose context had ended: %v", err)
	}
	if n := len(l.Browsers()); n != 1 {
		t.Errorf("%d browsers launched, want 1 (the other workflow's)", n)
	}
}

func TestTrackerCloseWaitsForClosesACallerStoppedWaitingFor(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{IdleTimeout: -1})
	tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: p, PerWorkflow: 100, Global: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	var ss []*browserpool.Session
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		s, err := tr.Open(ctx, "w1", n)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.EndWorkflow(ended, "w1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("EndWorkflow with an ended context: %v, want context.Canceled (closing in the background)", err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		select {
		case <-s.Done():
		default:
			t.Errorf("session %s is still open after Tracker.Close returned", s.ID())
		}
	}
}

func TestATrackerOpenWhoseSessionIsClosedWhileItLaunchesSaysSo(t *testing.T) {
	for _, c := range []struct {
		name  string
		close func(*browserpool.Tracker, context.Context) error
		want  error
	}{
		{"EndWorkflow", func(tr *browserpool.Tracker, ctx context.Context) error { return tr.EndWorkflow(ctx, "w1") }, browserpool.ErrSessionClosed},
		{"Tracker.Close", func(tr *browserpool.Tracker, _ context.Context) error { return tr.Close() }, browserpool.ErrPoolClosed},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := cdptest.NewLauncher(t)
			l.SetLaunchDelay(100 * time.Millisecond)
			p := newFakePool(t, l, browserpool.Config{})
			tr := newTracker(t, p, browserpool.TrackerConfig{})
			ctx := ctxT(t)
			type opened struct {
				s   *browserpool.Session
				err error
			}
			ch := make(chan opened, 1)
			go func() { s, err := tr.Open(ctx, "w1", "news"); ch <- opened{s, err} }()
			waitFor(t, "the open to start", func() bool { return p.Stats().SessionsStarting == 1 })
			if err := c.close(tr, ctx); err != nil {
				t.Fatal(err)
			}
			r := <-ch
			if !errors.Is(r.err, c.want) {
				t.Errorf("Open while %s closed its session: error %v (a session returned: %t); want %v", c.name, r.err, r.s != nil, c.want)
			}
		})
	}
}
