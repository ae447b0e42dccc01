// Package redact keeps secrets out of what the library shows: URLs in
// errors, trace entries and snapshots lose their query strings, credentials
// or token-like values. It holds no state and starts no goroutine.
//
// Room: redaction. No locks; the patterns are read-only.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// URL drops the query string, the fragment and any credentials, which may
// carry tokens. A URL that does not parse loses everything from its first
// '?' or '#'.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i]
		}
		return raw
	}
	u.RawQuery, u.Fragment, u.RawFragment, u.User = "", "", "", nil
	u.ForceQuery = false
	return u.String()
}

// Scrub keeps a URL's scheme, host, path and query keys for diagnosis but
// replaces token-like query (and fragment) values with REDACTED and drops
// credentials. A fragment is scrubbed as a query (#a=b&c=d), or as a
// client-side route's (#/callback?code=...), and a fragment that is itself
// a token (#eyJ...) is REDACTED whole. A URL that does not parse is
// shortened as URL does.
func Scrub(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return URL(raw)
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = scrubPairs(u.RawQuery)
	}
	if f := u.Fragment; f != "" {
		route, pairs, routed := strings.Cut(f, "?")
		switch {
		case routed:
			f = route + "?" + scrubPairs(pairs)
		case strings.Contains(f, "="):
			f = scrubPairs(f)
		case LooksLikeToken(f):
			f = "REDACTED"
		}
		u.Fragment, u.RawFragment = f, ""
	}
	return u.String()
}

// sensitiveKey matches query parameter names whose values are secrets.
var sensitiveKey = regexp.MustCompile(`(?i)(token|secret|pass|^pw$|pwd|^pin$|auth|api[-_]?key|^key$|access[-_]?key|private|sig(nature)?$|^sig|session|^sid$|^code$|jwt|cred|otp|nonce|ticket|^state$|saml|bearer)`)

// tokenValue matches values that look like tokens whatever their key: long
// runs of token characters mixing letters and digits, and JWTs.
var tokenValue = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{20,}$`)

// LooksLikeToken reports whether v looks like a token whatever its name:
// a JWT, or a long run of token characters mixing letters and digits.
func LooksLikeToken(v string) bool {
	if strings.HasPrefix(v, "eyJ") && len(v) > 20 {
		return true
	}
	if !tokenValue.MatchString(v) {
		return false
	}
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, func(r rune) bool {
		return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'
	}) >= 0
}

// scrubPairs redacts the values of an a=b&c=d list.
func scrubPairs(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		if v != "" && (sensitiveKey.MatchString(dk) || LooksLikeToken(dv)) {
			parts[i] = k + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

// urlInText finds absolute URLs inside free text (an action's arguments, an
// error's text).
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// queryInText finds a query string inside free text: a relative URL's
// ("/path?access_token=...") as a script passes it to fetch.
var queryInText = regexp.MustCompile(`\?[^\s"'<>?#` + "`" + `]*=[^\s"'<>#` + "`" + `]*`)

// Text scrubs every absolute URL inside s with Scrub, and the query string
// of a relative one, and leaves the rest of the text as it is: for an
// action's arguments (an evaluated script may name URLs) and, as a second
// line of defence, text already redacted by its writer (a recording's
// arguments and errors).
func Text(s string) string {
	if strings.Contains(s, "://") {
		s = urlInText.ReplaceAllStringFunc(s, Scrub)
	}
	if strings.Contains(s, "?") && strings.Contains(s, "=") {
		s = queryInText.ReplaceAllStringFunc(s, func(q string) string { return "?" + scrubPairs(q[1:]) })
	}
	return s
}
