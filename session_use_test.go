package browserpool_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

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
