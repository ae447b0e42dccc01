// Room: the fake browser's cookie jar: Storage.getCookies, setCookies and
// clearCookies, answered on any session as Chromium's browser answers
// them for its default context. Browser.mu guards the jar (built-in
// methods run with it held).

package cdptest

import (
	"encoding/json"
	"net/url"
	"slices"
	"time"
)

// jarCookie is a cookie as Storage.getCookies reports it.
type jarCookie struct {
	Name         string           `json:"name"`
	Value        string           `json:"value"`
	Domain       string           `json:"domain"`
	Path         string           `json:"path"`
	Expires      float64          `json:"expires"` // seconds since the epoch; -1 for a session cookie
	Size         int              `json:"size"`
	HTTPOnly     bool             `json:"httpOnly"`
	Secure       bool             `json:"secure"`
	Session      bool             `json:"session"`
	SameSite     string           `json:"sameSite,omitempty"`
	Priority     string           `json:"priority"`
	SourceScheme string           `json:"sourceScheme"`
	SourcePort   int              `json:"sourcePort"`
	PartitionKey *cookiePartition `json:"partitionKey,omitempty"`
}

type cookiePartition struct {
	TopLevelSite         string `json:"topLevelSite"`
	HasCrossSiteAncestor bool   `json:"hasCrossSiteAncestor"`
}

// sameCookie reports whether a and b are one cookie: the same name,
// domain, path and partition.
func sameCookie(a, b jarCookie) bool {
	site := func(c jarCookie) string {
		if c.PartitionKey == nil {
			return ""
		}
		return c.PartitionKey.TopLevelSite
	}
	return a.Name == b.Name && a.Domain == b.Domain && a.Path == b.Path && site(a) == site(b)
}

func (b *Browser) getCookies(*session, json.RawMessage) outcome {
	return outcome{result: struct {
		Cookies []jarCookie `json:"cookies"`
	}{Cookies: append([]jarCookie{}, b.cookies...)}}
}

func (b *Browser) clearCookies(*session, json.RawMessage) outcome {
	b.cookies = nil
	return outcome{}
}

// setCookies sets each cookie, replacing the jar's cookie of the same
// name, domain, path and partition; one already expired removes it. A
// cookie without a domain (and no url to take it from), or with neither
// name nor value, fails the whole call with Chromium's "Invalid cookie
// fields", setting none.
func (b *Browser) setCookies(_ *session, params json.RawMessage) outcome {
	var p struct {
		Cookies []struct {
			Name         string           `json:"name"`
			Value        string           `json:"value"`
			URL          string           `json:"url"`
			Domain       string           `json:"domain"`
			Path         string           `json:"path"`
			Secure       bool             `json:"secure"`
			HTTPOnly     bool             `json:"httpOnly"`
			SameSite     string           `json:"sameSite"`
			Expires      float64          `json:"expires"`
			PartitionKey *cookiePartition `json:"partitionKey"`
		} `json:"cookies"`
	}
	if err := decode(params, &p); err != nil {
		return outcome{err: err}
	}
	invalid := outcome{err: &Error{Code: -32602, Message: "Invalid cookie fields"}}
	jar := slices.Clone(b.cookies)
	now := float64(time.Now().Unix())
	for _, in := range p.Cookies {
		c := jarCookie{Name: in.Name, Value: in.Value, Domain: in.Domain, Path: in.Path, Expires: in.Expires,
			HTTPOnly: in.HTTPOnly, Secure: in.Secure, SameSite: in.SameSite, Priority: "Medium",
			SourceScheme: "NonSecure", SourcePort: 80, PartitionKey: in.PartitionKey}
		if u, err := url.Parse(in.URL); in.URL != "" && err == nil {
			if c.Domain == "" {
				c.Domain = u.Hostname()
			}
			if u.Scheme == "https" {
				c.SourceScheme, c.SourcePort = "Secure", 443
			}
		}
		if c.Name == "" && c.Value == "" || c.Domain == "" {
			return invalid
		}
		if c.Path == "" {
			c.Path = "/"
		}
		if c.Expires <= 0 {
			c.Expires, c.Session = -1, true
		}
		c.Size = len(c.Name) + len(c.Value)
		jar = slices.DeleteFunc(jar, func(o jarCookie) bool { return sameCookie(o, c) })
		if !c.Session && c.Expires < now {
			continue // an expired cookie deletes its namesake
		}
		jar = append(jar, c)
	}
	b.cookies = jar
	return outcome{}
}
