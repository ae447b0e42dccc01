// Room: the sweep's remote leases: ending the leases of fleet launchers
// whose host is gone (LeaseEnder). It runs on the sweep's goroutine, with no
// lock of its own; the manifest file serializes its own updates.

package browserpool

import (
	"context"
	"time"
)

// Bounds of the sweep's lease ends: sweepLeaseWait bounds each call that
// ends an orphaned remote lease (LeaseEnder.EndLease), sweepLeaseBudget all
// of them. Leases left when the budget is spent stay recorded for a later
// pool.
const (
	sweepLeaseWait   = 10 * time.Second
	sweepLeaseBudget = 30 * time.Second
)

// endLeases ends the remote leases of owners that are gone through the
// pool's launcher, when it is a LeaseEnder of their fleet and endpoint, and
// drops the entries of those ended. The others stay in the manifest for a
// later pool, counted as skipped and logged. It never touches a local
// process or dir.
func (sw *sweeper) endLeases() {
	if len(sw.remote) == 0 {
		return
	}
	le, _ := sw.p.launcher.(LeaseEnder)
	var kind, endpoint string
	if le != nil {
		kind, endpoint = le.LeaseFleet()
	}
	budget, cancel := context.WithTimeout(sw.p.ctx, sweepLeaseBudget)
	defer cancel()
	for _, e := range sw.remote {
		keep := func(why string, err error) {
			sw.ev.Skipped++
			sw.p.log.Warn("browserpool: sweep kept the record of a remote lease whose host is gone: "+why, "session", e.Session,
				"fleet", e.Fleet, "endpoint", e.Endpoint, "lease", e.LeaseID, "err", err)
		}
		if le == nil || e.Fleet != kind || !sameFleet(e.Endpoint, endpoint) {
			keep("this pool's launcher is not of its fleet; a pool on that fleet ends it", nil)
			continue
		}
		if budget.Err() != nil {
			keep("no time left to end it; a later pool tries again", budget.Err())
			continue
		}
		ctx, cancel := context.WithTimeout(budget, sweepLeaseWait)
		ended, err := le.EndLease(ctx, leaseOf(e))
		cancel()
		if !ended {
			keep("the launcher could not end it; a later pool tries again", err)
			continue
		}
		if err := sw.p.manifest.Remove(e.Session); err != nil {
			sw.p.log.Warn("browserpool: sweep ended a remote lease but could not drop its record", "session", e.Session, "err", err)
		}
		sw.ev.LeasesEnded++
		sw.p.log.Info("browserpool: sweep ended a remote lease whose host is gone", "session", e.Session,
			"fleet", e.Fleet, "endpoint", e.Endpoint, "lease", e.LeaseID)
	}
}
