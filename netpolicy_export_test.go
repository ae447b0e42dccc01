package browserpool

import (
	"context"
	"net/netip"
)

// SetNetLookup makes the pool's network-policy proxy resolve host names
// with f instead of the system resolver, so tests can give loopback
// addresses several names, or see every name the proxy looks up. Called
// before the first Open, it starts the proxy then, so that it sees the
// first browser's requests from its start.
func SetNetLookup(p *Pool, f func(host string) ([]netip.Addr, error)) {
	if err := p.startNet(); err != nil {
		panic(err)
	}
	lf := lookupFunc(func(_ context.Context, host string) ([]netip.Addr, error) { return f(host) })
	p.net.lookup.Store(&lf)
}
