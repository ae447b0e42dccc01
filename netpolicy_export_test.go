package browserpool

import (
	"context"
	"net/netip"
)

// SetNetLookup makes the pool's network-policy proxy resolve host names
// with f instead of the system resolver, so tests can give loopback
// addresses several names.
func SetNetLookup(p *Pool, f func(host string) ([]netip.Addr, error)) {
	lf := lookupFunc(func(_ context.Context, host string) ([]netip.Addr, error) { return f(host) })
	p.net.lookup.Store(&lf)
}
