package browserpool

import (
	"context"
	"net"
	"net/netip"
)

// CheckCDPWithHosts is Pool.CheckCDP with host names resolved from hosts
// only (a name missing from it is not found), so tests can reach a fake
// DevTools server under a name such as host.docker.internal. It exists only
// in tests.
func (p *Pool) CheckCDPWithHosts(ctx context.Context, endpoint string, hosts map[string]string) (CDPInfo, error) {
	pr := cdpProbe{lookup: func(_ context.Context, _, host string) ([]netip.Addr, error) {
		ip, ok := hosts[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}, conns: p.cdp.conns}
	return pr.check(ctx, "Pool.CheckCDP", endpoint)
}
