// Package devtools reaches a browser's DevTools endpoint: it parses the
// endpoint forms a user gives, resolves the host, asks GET /json/version for
// the browser websocket, and makes the patient websocket handshake that
// Chrome 144+ holds while its user answers "Allow remote debugging?". It
// knows nothing of a Pool: the root package turns its errors into
// *browserpool.Error values with hints.
//
// Room: endpoints and probes. No locks (the handshake table has its own
// room, table.go).
package devtools

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Endpoint is a parsed DevTools endpoint.
type Endpoint struct {
	Host   string // as given, without brackets
	Port   int
	Secure bool   // https or wss
	WSPath string // "/devtools/browser/<id>" when a browser websocket URL was given
}

// HostPort returns host:port as given.
func (ep Endpoint) HostPort() string { return net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)) }

// HTTPBase returns http(s)://host:port.
func (ep Endpoint) HTTPBase() string {
	if ep.Secure {
		return "https://" + ep.HostPort()
	}
	return "http://" + ep.HostPort()
}

// ParseError says why an endpoint has no accepted form.
type ParseError struct{ Why string }

func (e *ParseError) Error() string { return e.Why }

// Parse accepts "9222", ":9222", "host:port", http(s)://host:port (any path
// is ignored) and ws(s)://host:port[/devtools/browser/<id>]. Errors are
// *ParseError values saying why.
func Parse(raw string) (Endpoint, error) {
	s := strings.TrimSpace(raw)
	bad := func(why string) (Endpoint, error) { return Endpoint{}, &ParseError{Why: why} }
	var ep Endpoint
	var portStr string
	switch {
	case s == "":
		return bad("the endpoint is empty")
	case strings.Contains(s, "://"):
		u, err := url.Parse(s)
		if err != nil {
			return bad("the URL is malformed")
		}
		scheme := strings.ToLower(u.Scheme)
		switch scheme {
		case "http", "ws":
		case "https", "wss":
			ep.Secure = true
		default:
			return bad(fmt.Sprintf("scheme %q is not a DevTools scheme", scheme))
		}
		if u.User != nil {
			return bad("credentials in the URL are not allowed")
		}
		ep.Host, portStr = u.Hostname(), u.Port()
		if scheme == "ws" || scheme == "wss" {
			switch p := strings.TrimRight(u.Path, "/"); {
			case strings.HasPrefix(p, "/devtools/browser/") && len(p) > len("/devtools/browser/"):
				ep.WSPath = p
			case p == "":
			default:
				return bad("a websocket endpoint must be the browser's (/devtools/browser/<id>), not a page's")
			}
		}
	default:
		if p, ok := strings.CutPrefix(s, ":"); ok {
			s = p
		}
		if _, err := strconv.Atoi(s); err == nil {
			ep.Host, portStr = "127.0.0.1", s
			break
		}
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return bad("expected a port, host:port or a URL")
		}
		ep.Host, portStr = h, p
	}
	if ep.Host == "" {
		return bad("the endpoint has no host")
	}
	if portStr == "" {
		return bad("the endpoint has no port (DevTools has no default port; Chrome's documentation uses 9222)")
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 1 || port > 65535 {
		return bad(fmt.Sprintf("port %q is not a number from 1 to 65535", portStr))
	}
	ep.Port = port
	return ep, nil
}

// Lookup resolves a host name, as net.Resolver.LookupNetIP does.
type Lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)

// Resolve returns the IP of ep's host, preferring IPv4 (Chrome listens on
// 127.0.0.1 by default). An IP is returned as is; a name goes to lookup (nil
// means the system resolver). A name with no address is a *net.DNSError.
func Resolve(ctx context.Context, lookup Lookup, ep Endpoint) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(ep.Host); err == nil {
		return ip.Unmap(), nil
	}
	if lookup == nil {
		lookup = net.DefaultResolver.LookupNetIP
	}
	ips, err := lookup(ctx, "ip", ep.Host)
	if err == nil && len(ips) == 0 {
		err = &net.DNSError{Err: "no such host", Name: ep.Host, IsNotFound: true}
	}
	if err != nil {
		return netip.Addr{}, err
	}
	best := ips[0]
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			best = ip
			break
		}
	}
	return best.Unmap(), nil
}
