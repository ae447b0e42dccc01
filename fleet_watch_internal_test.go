package browserpool

import (
	"context"
	"testing"
	"time"
)

// A lease check in progress when the lease is stopped is cancelled: Stop
// used to wait for it, up to the check's own bound (the check interval,
// at least 5 s), on a fleet slow to answer.
func TestStoppingALeaseWatchCancelsTheCheckInProgress(t *testing.T) {
	started := make(chan struct{})
	w := &leaseWatch{interval: time.Hour, fail: func(error) { t.Error("the watch failed the lease") },
		check: func(ctx context.Context) (string, error) {
			close(started)
			<-ctx.Done() // a fleet that does not answer
			return "", ctx.Err()
		}}
	ticked := make(chan struct{})
	go func() { defer close(ticked); w.tick() }()
	<-started
	stopped := make(chan struct{})
	go func() { defer close(stopped); w.stop() }()
	select {
	case <-stopped:
	case <-time.After(time.Minute): // the check's own bound is an hour
		t.Fatal("stop is still waiting for the check in progress")
	}
	<-ticked
}
