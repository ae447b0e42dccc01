package browserpool_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func TestRawClientCallsKeepASessionFromIdleReclaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), IdleTimeout: 10 * time.Minute})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		// From here on, only raw CDP calls. A 20-minute raw call first:
		// in flight, it keeps the session.
		l.Browsers()[0].Delay("Runtime.evaluate", 20*time.Minute)
		done := make(chan error, 1)
		go func() {
			_, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1+1"))
			done <- err
		}()
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if err := s.Err(); err != nil {
			t.Fatalf("reclaimed with a raw Tab.Client call in flight: %v", err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		// Then a raw browser call every 5 minutes for 30 minutes: each is
		// a use.
		for range 6 {
			time.Sleep(5 * time.Minute)
			synctest.Wait()
			if err := s.Err(); err != nil {
				t.Fatalf("reclaimed though raw Session.Browser calls came every 5 minutes: %v", err)
			}
			if _, err := s.Browser().Browser.GetVersion(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// No more calls: the idle timeout applies again.
		time.Sleep(12 * time.Minute)
		synctest.Wait()
		if !errors.Is(s.Err(), browserpool.ErrSessionClosed) {
			t.Fatalf("12 minutes after the last raw call: Err() = %v, want closed", s.Err())
		}
	})
}

func TestARawClientCallShowsInTheSessionsInfoAndThePoolsStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := cdptest.NewLauncher(t)
		p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
		ctx := context.Background()
		s := mustOpen(t, ctx, p)
		tab := mustTab(t, ctx, s)
		synctest.Wait()
		type use struct{ InFlight, CallsInFlight, SessionsInUse int }
		useNow := func() use {
			st := p.Stats()
			return use{s.Info().InFlight, st.CallsInFlight, st.SessionsInUse}
		}
		before := s.Info().LastUsed
		l.Browsers()[0].Delay("Runtime.evaluate", time.Minute)
		done := make(chan error, 1)
		go func() {
			_, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1+1"))
			done <- err
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		if diff := cmp.Diff(use{1, 1, 1}, useNow()); diff != "" {
			t.Errorf("with a raw Tab.Client call in flight (-want +got):\n%s", diff)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if diff := cmp.Diff(use{0, 0, 0}, useNow()); diff != "" {
			t.Errorf("after the raw call (-want +got):\n%s", diff)
		}
		if last := s.Info().LastUsed; last.Sub(before) < time.Minute {
			t.Errorf("Info().LastUsed = %v, %v after the last package call; want the raw call's end, a minute later", last, last.Sub(before))
		}
	})
}
