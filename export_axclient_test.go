package browserpool

import (
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
)

// GeneratedAccessibility returns t's Accessibility domain as mafredri/cdp
// generates it, on the tab's rpcc.Conn: what Tab.Client().Accessibility
// would be without axClient.
func GeneratedAccessibility(t *Tab) cdp.Accessibility { return accessibility.NewClient(t.rpc()) }

// IdleSince is s.idleSince: when s was last used, raw CDP calls included,
// as idle reclaim reads it, and whether a call is in flight.
func IdleSince(s *Session) (time.Time, bool) { return s.idleSince() }
