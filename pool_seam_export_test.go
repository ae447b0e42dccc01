package browserpool

import (
	"context"
	"time"
)

// Test access to the seam (pool_seam.go) for the external tests that drive
// it on cdptest (pool_seam_test.go). Test builds only.

// SeamClose is Session.closeWith.
func SeamClose(ctx context.Context, s *Session, reason CloseReason) error {
	return s.closeWith(ctx, reason)
}

// SeamRetryCleanup is Session.retryCleanup.
func SeamRetryCleanup(s *Session) error { return s.retryCleanup() }

// SeamUse is Session.usage as a plain value for cmp.Diff.
type SeamUse struct {
	InFlight  int
	Busy      bool
	IdleSince time.Time
	Ended     CloseReason
}

// SeamUsage is Session.usage.
func SeamUsage(s *Session) SeamUse {
	u := s.usage()
	return SeamUse{InFlight: u.inFlight, Busy: u.busy(), IdleSince: u.lastUse, Ended: u.ended}
}

// SeamTabCount is Session.tabCount.
func SeamTabCount(ctx context.Context, s *Session) (int, error) { return s.tabCount(ctx) }
