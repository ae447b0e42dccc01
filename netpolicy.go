// Room: the network policy's rules: parsing Config.Network and deciding,
// per host, whether a pool's browsers may reach it. A compiled policy is
// immutable; the proxy that enforces it is in netproxy.go.
//
// Why a proxy. The policy is enforced by the browser's own network stack
// (one mechanism for navigations, subresources, redirects, fetch(),
// workers, iframes of any origin and downloads), not by page script.
// Three mechanisms were weighed:
//
//   - the CDP Fetch domain, pausing every request of every target: it must
//     reach every target (OOPIFs, workers, service workers, through
//     Target.setAutoAttach with waitForDebuggerOnStart) or a request slips
//     through, and it costs a CDP round trip per request;
//   - --host-resolver-rules: it never sees IP literals (http://169.254.169.254
//     is not resolved) and cannot check what a name resolves to;
//   - a loopback HTTP proxy owned by the Pool (chosen): every browser is
//     started with --proxy-server=127.0.0.1:<port> and
//     --proxy-bypass-list=<-loopback>, so every request of every target,
//     loopback included, goes through it. The proxy decides per host, after
//     resolving the name itself, and dials the address it checked (no
//     rebinding between check and connect). HTTPS is tunnelled (CONNECT) and
//     never decrypted. Its cost is one goroutine per browser connection
//     (two per tunnel; a plain http connection keeps its connections to
//     sites for its next requests, with no goroutine of their own) and one
//     listener per pool, all closed by Pool.Close.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrBlockedByPolicy: the pool's network policy (Config.Network) refused
// the host. The detail names the host and the rule.
var ErrBlockedByPolicy = errors.New("blocked by the network policy")

// NetworkPolicy says which hosts a pool's browsers may reach. The zero
// value allows every host except link-local and cloud-metadata addresses
// (169.254.0.0/16, fe80::/10, fd00:ec2::/64, fd20:ce::254,
// 100.100.100.200, 168.63.129.16, metadata.google.internal, metadata.goog,
// metadata): the addresses through which a cloud machine hands out its
// credentials.
//
// A rule is a host name ("example.com", exact), a wildcard ("*.example.com":
// every subdomain, not example.com itself), an IP address ("10.0.0.5",
// "::1") or a CIDR prefix ("10.0.0.0/8"). Names are matched against the
// URL's host; IP and CIDR rules against the URL's IP literal or every
// address its name resolves to (a name resolving into a blocked range is
// blocked). Ports and schemes are not part of a rule.
//
// Order: Block wins; then the link-local default applies, lifted only by an
// Allow rule naming the metadata host, or an Allow IP or CIDR rule covering
// every address the host resolves to (an allowed name that resolves into
// 169.254.0.0/16 stays refused); then, if Allow is non-empty, a host
// matching none of its rules is refused.
//
// Loopback (127.0.0.0/8, ::1, localhost) is allowed by default, for local
// development. To block it add "127.0.0.0/8", "::1" and "localhost" to
// Block. The unspecified addresses (0.0.0.0/8, ::), which reach this
// machine too, are judged as 127.0.0.1 and ::1 besides themselves, and an
// IPv4 address written in IPv6 (64:ff9b::/96, ::/96) as that IPv4 address
// besides itself: a rule refusing either refuses them.
//
// The policy applies to browsers the local launcher starts (Launcher nil
// or a *LocalLauncher; a custom Launcher's browsers are not routed through
// it, though its rules are still checked at NewPool, and a fleet launcher,
// *Browserless or *SeleniumGrid, is refused with Allow or Block rules, as
// they could not be enforced there): it is the only way
// they reach the network, so
// navigations, subresources, iframes, redirects, fetch(), workers and
// downloads of every tab are all decided by it. A browser the pool attached
// to (Pool.Attach) is not the pool's to route: Attach refuses a pool with
// Allow or Block rules, and the default's refusals do not apply to it.
// WebRTC sends no UDP (its
// IP handling policy is disable_non_proxied_udp): it connects only over
// TCP through the proxy, to TURN servers the policy allows; set
// Unrestricted for peer-to-peer WebRTC. A refused request fails in
// the browser (plain http gets a 403 page saying why, https a failed
// tunnel); Tab.Navigate to a refused host, or one redirected to it, is an
// ErrBlockedByPolicy error naming the rule.
type NetworkPolicy struct {
	// Allow, when non-empty, lists the only hosts the browsers may reach.
	Allow []string
	// Block lists hosts the browsers may never reach.
	Block []string
	// Unrestricted starts browsers without the policy proxy: they reach
	// every host directly, link-local and metadata addresses included.
	// Allow and Block must then be empty.
	Unrestricted bool
}

// defaultBlocked are the link-local and cloud-metadata ranges and names the
// zero policy refuses.
var (
	defaultBlockedPrefixes = []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("fd00:ec2::/64"),      // AWS: instance metadata (::254), EKS Pod Identity (::23), DNS, time
		netip.MustParsePrefix("fd20:ce::254/128"),   // Google Cloud: metadata over IPv6
		netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud: metadata
		netip.MustParsePrefix("168.63.129.16/32"),   // Azure: the WireServer (certificates, extension settings)
	}
	defaultBlockedNames = []string{"metadata.google.internal", "metadata.goog", "metadata"}
)

// netRule is one parsed rule.
type netRule struct {
	text     string       // as written, for errors and refusals
	field    string       // "Network.Block[2]"
	name     string       // exact host, or the suffix after "*" (".example.com")
	wildcard bool         // name is a suffix
	prefix   netip.Prefix // for IP and CIDR rules
}

func (r netRule) matchName(host string) bool {
	if r.name == "" {
		return false
	}
	if r.wildcard {
		return strings.HasSuffix(host, r.name) && len(host) > len(r.name)
	}
	return host == r.name
}

func (r netRule) matchAddr(a netip.Addr) bool { return r.prefix.IsValid() && r.prefix.Contains(a) }

// netPolicy is a compiled NetworkPolicy.
type netPolicy struct {
	allow, block []netRule
}

func parseNetRule(field, text string) (netRule, error) {
	r := netRule{text: text, field: field}
	s := strings.ToLower(strings.TrimSpace(text))
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return r, fmt.Errorf("%q is not a CIDR prefix (%v)", text, err)
		}
		r.prefix = p.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		a = a.Unmap()
		r.prefix = netip.PrefixFrom(a, a.BitLen())
		return r, nil
	}
	if rest, ok := strings.CutPrefix(s, "*."); ok {
		r.wildcard, s = true, rest
	}
	if !validHostName(s) {
		return r, fmt.Errorf("%q is not a host name, *.domain, IP address or CIDR prefix", text)
	}
	r.name = s
	if r.wildcard {
		r.name = "." + s
	}
	return r, nil
}

// validHostName accepts dot-separated labels of letters, digits, '-' and '_'.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// compile checks the policy; a rule that does not parse is an
// ErrInvalidConfig error naming it. It returns nil for Unrestricted.
func (np NetworkPolicy) compile() (*netPolicy, error) {
	bad := func(detail string) error {
		return &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: detail,
			Hint: "write each rule as a host (example.com), a wildcard (*.example.com), an IP address (10.0.0.5) or a CIDR prefix (10.0.0.0/8), without scheme or port"}
	}
	if np.Unrestricted {
		if len(np.Allow)+len(np.Block) > 0 {
			e := bad("Network: Unrestricted is set together with Allow or Block rules")
			e.(*Error).Hint = "drop Unrestricted to enforce the rules, or drop the rules to let the browsers reach every host"
			return nil, e
		}
		return nil, nil
	}
	c := &netPolicy{}
	for _, l := range []struct {
		name  string
		rules []string
		out   *[]netRule
	}{{"Allow", np.Allow, &c.allow}, {"Block", np.Block, &c.block}} {
		for i, text := range l.rules {
			field := fmt.Sprintf("Network.%s[%d]", l.name, i)
			r, err := parseNetRule(field, text)
			if err != nil {
				return nil, bad(field + ": " + err.Error())
			}
			*l.out = append(*l.out, r)
		}
	}
	return c, nil
}

// netVerdict is the policy's answer for one host.
type netVerdict struct {
	addrs []netip.Addr // what to dial, when allowed
	rule  string       // why refused ("" when allowed)
}

// lookupFunc resolves a host name.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// decide resolves host (unless it is an IP literal) and applies the rules.
// An error means the name did not resolve.
func (c *netPolicy) decide(ctx context.Context, lookup lookupFunc, host string) (netVerdict, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	for _, r := range c.block {
		if r.matchName(host) {
			return netVerdict{rule: fmt.Sprintf("%s %q", r.field, r.text)}, nil
		}
	}
	allowedByName := false
	for _, r := range c.allow {
		allowedByName = allowedByName || r.matchName(host)
	}
	if !allowedByName {
		for _, n := range defaultBlockedNames {
			if host == n {
				return netVerdict{rule: fmt.Sprintf("the default block of cloud-metadata hosts (%s)", n)}, nil
			}
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else {
		got, err := lookup(ctx, host)
		if err != nil {
			return netVerdict{}, err
		}
		for _, a := range got {
			addrs = append(addrs, a.Unmap())
		}
		if len(addrs) == 0 {
			return netVerdict{}, fmt.Errorf("%s has no address", host)
		}
	}
	judged := judgedAddrs(addrs)
	for _, r := range c.block {
		for _, a := range judged {
			if r.matchAddr(a.as) {
				return netVerdict{rule: fmt.Sprintf("%s %q (%s is %s)", r.field, r.text, host, a)}, nil
			}
		}
	}
	allowedByAddr := false
	for _, r := range c.allow {
		allowedByAddr = allowedByAddr || allJudged(judged, r.matchAddr)
	}
	for _, p := range defaultBlockedPrefixes {
		for _, a := range judged {
			if p.Contains(a.as) && !allowedByAddr {
				return netVerdict{rule: fmt.Sprintf("the default block of link-local and cloud-metadata addresses (%s is %s, in %s)", host, a, p)}, nil
			}
		}
	}
	if len(c.allow) > 0 && !allowedByName && !allowedByAddr {
		return netVerdict{rule: "Network.Allow (the host matches none of its rules)"}, nil
	}
	return netVerdict{addrs: addrs}, nil
}

// judgedAddr is an address the rules judge a dialled address as.
type judgedAddr struct {
	dialled, as netip.Addr
}

// String names the dialled address, and what it is judged as when that
// differs ("0.0.0.0, which reaches 127.0.0.1").
func (a judgedAddr) String() string {
	if a.as == a.dialled {
		return a.dialled.String()
	}
	return a.dialled.String() + ", which reaches " + a.as.String()
}

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	v4Compat    = netip.MustParsePrefix("::/96")
	loopback4   = netip.MustParseAddr("127.0.0.1")
	loopback6   = netip.IPv6Loopback()
)

// judgedAddrs returns what the rules judge addrs as: each address itself,
// and what it reaches besides. An unspecified address (0.0.0.0/8, ::)
// reaches this machine, so it is judged as 127.0.0.1 and ::1 too (a Block
// of loopback refuses http://0.0.0.0/); an IPv4 address carried in IPv6
// (NAT64 64:ff9b::/96, the IPv4-compatible ::/96) is judged as that IPv4
// address too.
func judgedAddrs(addrs []netip.Addr) []judgedAddr {
	var out []judgedAddr
	for _, a := range addrs {
		out = append(out, judgedAddr{a, a})
		as := a
		if (nat64.Contains(a) || v4Compat.Contains(a)) && a != loopback6 && !a.IsUnspecified() {
			b := a.As16()
			as = netip.AddrFrom4([4]byte(b[12:]))
			out = append(out, judgedAddr{a, as})
		}
		if thisNetwork.Contains(as) || as.IsUnspecified() {
			out = append(out, judgedAddr{a, loopback4}, judgedAddr{a, loopback6})
		}
	}
	return out
}

// allJudged reports whether f holds for every judged address.
func allJudged(addrs []judgedAddr, f func(netip.Addr) bool) bool {
	for _, a := range addrs {
		if !f(a.as) {
			return false
		}
	}
	return len(addrs) > 0
}

// startNetPolicy starts the policy proxy unless the policy is
// Unrestricted. NewPool calls it for the local launcher only: a custom
// Launcher's browsers (an in-memory fake, a remote fleet) are not routed
// through it.
func (p *Pool) startNetPolicy() error {
	policy, err := p.cfg.Network.compile()
	if err != nil || policy == nil {
		return err
	}
	if p.net, err = startNetProxy(policy, p.log); err != nil {
		return &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: "Network: cannot start the policy proxy on 127.0.0.1", Err: err, Hint: "check that this machine can listen on a loopback port"}
	}
	return nil
}

// proxyFlags are the flags the policy proxy owns on a browser's command line.
var proxyFlags = []string{"proxy-server", "proxy-bypass-list", "proxy-pac-url", "no-proxy-server", "proxy-auto-detect", webRTCPolicyFlag}

// webRTCPolicyFlag keeps WebRTC from sending UDP around the proxy (STUN,
// media and data straight to any address): with disable_non_proxied_udp
// it uses only TCP through the proxy, which judges the TURN server's host
// as any other.
const webRTCPolicyFlag = "webrtc-ip-handling-policy"

// checkProxyFlags rejects a proxy flag in args while the policy is on.
// Chromium takes a switch with one dash as with two, and its names in any
// case: "-no-proxy-server" turns the proxy off as "--no-proxy-server" does.
func checkProxyFlags(field string, args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		for _, f := range proxyFlags {
			if strings.HasPrefix(a, "-") && strings.EqualFold(name, f) {
				return &Error{Op: "NewPool", Class: ErrInvalidConfig, Detail: fmt.Sprintf("%s: %s: the network policy routes the browser through its own proxy", field, a),
					Hint: "drop the flag, or set Config.Network.Unrestricted to manage the browser's proxy yourself (the policy is then off)"}
			}
		}
	}
	return nil
}
