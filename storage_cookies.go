// Room: a session's cookies (Cookies, SetCookies, ClearCookies) and the
// rules a cookie must meet before it goes to the browser, which refuses
// most bad ones with nothing but "Invalid cookie fields". No lock of its
// own: each call is one CDP call on the browser's connection.

package browserpool

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/mafredri/cdp/protocol/network"
	"github.com/mafredri/cdp/protocol/storage"
)

// cookieProblem says why the browser would refuse c, or keep something
// else, as the rest of a sentence naming it ("" when it would keep c):
// the rules Chromium 156 applies to Storage.setCookies, which refuses
// with nothing but "Invalid cookie fields".
func cookieProblem(c Cookie) string {
	named := "(" + echo(c.Name) + ")"
	if c.Name == "" {
		named = "(no name)" // document.cookie = "x" makes one; the browser keeps it
	}
	lower, lowerValue := strings.ToLower(c.Name), strings.ToLower(c.Value)
	prefixed := func(s string) bool {
		return strings.HasPrefix(s, "__secure-") || strings.HasPrefix(s, "__host-") || strings.HasPrefix(s, "__http-")
	}
	switch {
	case strings.ContainsFunc(c.Name, badCookieRune) || strings.ContainsRune(c.Name, '='):
		return fmt.Sprintf("has name %q, with a character a cookie name cannot hold", echo(c.Name))
	case strings.TrimSpace(c.Name) != c.Name:
		return fmt.Sprintf("has name %q, with a leading or trailing space, which the browser refuses: trim it", echo(c.Name))
	case c.Name == "" && c.Value == "":
		return "has neither a name nor a value: the browser keeps no such cookie"
	case c.Name == "" && strings.ContainsRune(c.Value, '='):
		return "has no name and a value with '=', which the browser refuses: the part before '=' is the cookie's name"
	case c.Name == "" && prefixed(lowerValue):
		return "has no name and a value starting with __Secure-, __Host- or __Http-, which the browser refuses: give the cookie that name instead"
	case c.Domain == "":
		return named + " has no domain"
	case c.SameSite != "" && c.SameSite != "Strict" && c.SameSite != "Lax" && c.SameSite != "None":
		return fmt.Sprintf("%s has sameSite %q", named, c.SameSite)
	case c.SameSite == "None" && !c.Secure:
		// Chromium drops such a cookie without an error.
		return named + " has sameSite None without secure: the browser would drop it"
	case !ipv6Domain(c.Domain) && (strings.ContainsAny(c.Domain, "/:@ []") || strings.Contains(c.Domain, "..")):
		// A scheme, port or path: the browser stores something else.
		return fmt.Sprintf("%s has domain %q, not a host name (no scheme, port or path; an IPv6 address in brackets)", named, echo(c.Domain))
	case strings.ContainsFunc(c.Value, badCookieRune):
		return named + " has a value with a character a cookie value cannot hold (';' or a control character)"
	case strings.TrimSpace(c.Value) != c.Value:
		return named + " has a value with a leading or trailing space, which the browser refuses: trim it"
	case len(c.Name)+len(c.Value) > maxCookieBytes:
		return fmt.Sprintf("%s is %d bytes, name and value together: the browser keeps at most %d", named, len(c.Name)+len(c.Value), maxCookieBytes)
	case c.Path != "" && !strings.HasPrefix(c.Path, "/"):
		return fmt.Sprintf("%s has path %q: a cookie's path starts with /", named, echo(c.Path))
	case strings.ContainsRune(c.Path, ';'):
		return fmt.Sprintf("%s has path %q, with ';', which the browser refuses", named, echo(c.Path))
	case len(c.Path) > maxCookieAttr:
		return fmt.Sprintf("%s has a path of %d bytes: the browser keeps at most %d", named, len(c.Path), maxCookieAttr)
	// The name's prefixes bind the cookie's attributes (RFC 6265bis, and
	// __Http- since), whatever their case; the browser refuses it otherwise.
	case prefixed(lower) && !c.Secure:
		return fmt.Sprintf("%s has the %s prefix, which needs secure true", named, c.Name[:strings.IndexByte(c.Name[2:], '-')+3])
	case strings.HasPrefix(lower, "__host-") && (c.Path != "" && c.Path != "/" || strings.HasPrefix(c.Domain, ".")):
		return named + " has the __Host- prefix, which needs path / and a domain without a leading dot (the host's own cookie)"
	case strings.HasPrefix(lower, "__http-") && !c.HTTPOnly:
		return fmt.Sprintf("%s has the %s prefix, which needs httpOnly true", named, c.Name[:len("__http-")])
	case strings.HasPrefix(lower, "__host-http-") && !c.HTTPOnly:
		return fmt.Sprintf("%s has the %s prefix, which needs httpOnly true", named, c.Name[:len("__host-http-")])
	case c.PartitionCrossSite && c.PartitionKey == "":
		return named + " has partitionCrossSite without a partitionKey: the browser would set an ordinary cookie; give the partitionKey (its top-level site) or drop partitionCrossSite"
	case c.PartitionKey != "" && !c.Secure:
		return named + " is partitioned (it has a partitionKey) without secure true, which the browser refuses"
	case c.PartitionKey != "" && !isSite(c.PartitionKey):
		return fmt.Sprintf("%s has partitionKey %q, not a site: scheme://host, such as https://example.com, without port, path or query", named, echo(c.PartitionKey))
	}
	return ""
}

// ipv6Domain reports whether d is an IPv6 address in brackets, with or
// without a leading dot, as the browser keeps a cookie of http://[::1].
func ipv6Domain(d string) bool {
	d = strings.TrimPrefix(d, ".")
	if len(d) < 2 || d[0] != '[' || d[len(d)-1] != ']' {
		return false
	}
	a, err := netip.ParseAddr(d[1 : len(d)-1])
	return err == nil && a.Is6() && a.Zone() == ""
}

// isSite reports whether k is a site (scheme://host) as a partition key.
func isSite(k string) bool {
	u, err := url.Parse(k)
	return err == nil && u.Scheme != "" && u.Host != "" && u.User == nil && u.Port() == "" &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && !u.ForceQuery && u.Fragment == ""
}

// The browser's bounds of a cookie: its name and value together, and an
// attribute (its path).
const (
	maxCookieBytes = 4096
	maxCookieAttr  = 1024
)

// badCookieRune reports a character no cookie name or value may hold.
func badCookieRune(r rune) bool { return r == ';' || r < ' ' || r == 0x7f }

// Cookies returns every cookie of the session's browser.
func (s *Session) Cookies(ctx context.Context) ([]Cookie, error) {
	const op = "Session.Cookies"
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	var r storage.GetCookiesReply
	if err := s.browserCall(ctx, "Storage.getCookies", storage.NewGetCookiesArgs(), &r); err != nil {
		return nil, s.wrap(op, "", err)
	}
	out := make([]Cookie, 0, len(r.Cookies))
	for _, c := range r.Cookies {
		exp := c.Expires
		if c.Session {
			exp = -1
		}
		ck := Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Expires: exp, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)}
		if k := c.PartitionKey; k != nil {
			ck.PartitionKey, ck.PartitionCrossSite = k.TopLevelSite, k.HasCrossSiteAncestor
		}
		out = append(out, ck)
	}
	return out, nil
}

// SetCookies sets cookies in the session's browser, replacing cookies of
// the same name, domain and path. Each needs a name and a domain; a
// missing path means "/". An unusable cookie is an ErrInvalidStorageState
// error and none is set.
func (s *Session) SetCookies(ctx context.Context, cookies ...Cookie) error {
	const op = "Session.SetCookies"
	if err := (StorageState{Cookies: cookies}).check(op); err != nil {
		err.Session = s.id
		return err
	}
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	return s.setCookies(ctx, op, cookies)
}

func (s *Session) setCookies(ctx context.Context, op string, cookies []Cookie) error {
	if len(cookies) == 0 {
		return nil
	}
	params := make([]network.CookieParam, 0, len(cookies))
	for _, c := range cookies {
		path := c.Path
		if path == "" {
			path = "/"
		}
		p := network.CookieParam{Name: c.Name, Value: c.Value, Domain: &c.Domain, Path: &path,
			Secure: &c.Secure, HTTPOnly: &c.HTTPOnly, SameSite: network.CookieSameSite(c.SameSite)}
		if c.Expires > 0 {
			p.Expires = network.TimeSinceEpoch(c.Expires)
		}
		if c.PartitionKey != "" {
			p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: c.PartitionKey, HasCrossSiteAncestor: c.PartitionCrossSite}
		}
		params = append(params, p)
	}
	if err := s.browserCall(ctx, "Storage.setCookies", storage.NewSetCookiesArgs(params), nil); err != nil {
		e := s.wrap(op, "", err)
		if be, ok := e.(*Error); ok && be.Class == ErrProtocol {
			be.Hint = "the browser refused a cookie: check its domain (no scheme, no port), path and sameSite (\"None\" needs secure)"
		}
		return e
	}
	return nil
}

// ClearCookies deletes every cookie of the session's browser.
func (s *Session) ClearCookies(ctx context.Context) error {
	const op = "Session.ClearCookies"
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	return s.wrap(op, "", s.browserCall(ctx, "Storage.clearCookies", storage.NewClearCookiesArgs(), nil))
}
