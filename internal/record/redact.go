// Room: redaction of what a recording writes: token-like URL query values.
// No locks. A copy of the trace's scrubbing (tab_trace.go in the root
// package) until both move to one shared package.

package record

import (
	"net/url"
	"regexp"
	"strings"
)

// sensitiveKey matches query parameter names whose values are secrets.
var sensitiveKey = regexp.MustCompile(`(?i)(token|secret|passw|pwd|auth|api[-_]?key|^key$|access[-_]?key|private|sig(nature)?$|^sig|session|^sid$|^code$|jwt|cred|otp|nonce|ticket|^state$|saml|bearer)`)

// tokenValue matches values that look like tokens whatever their key: long
// runs of token characters mixing letters and digits, and JWTs.
var tokenValue = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{20,}$`)

func looksLikeToken(v string) bool {
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

// ScrubURL keeps a URL's scheme, host, path and query keys but replaces
// token-like query (and fragment) values with REDACTED and drops
// credentials. A URL that does not parse loses everything after its path.
func ScrubURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i]
		}
		return raw
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = scrubPairs(u.RawQuery)
	}
	if u.Fragment != "" && strings.Contains(u.Fragment, "=") {
		u.Fragment, u.RawFragment = scrubPairs(u.Fragment), ""
	}
	return u.String()
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
		if v != "" && (sensitiveKey.MatchString(dk) || looksLikeToken(dv)) {
			parts[i] = k + "=REDACTED"
		}
	}
	return strings.Join(parts, "&")
}

// urlInText finds absolute URLs inside free text (an action's arguments).
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// ScrubText scrubs every absolute URL inside s with ScrubURL and leaves the
// rest of the text as it is. Arguments reach a Recorder already redacted
// by the caller (password text masked); this is the second line of defence
// for URLs.
func ScrubText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlInText.ReplaceAllStringFunc(s, ScrubURL)
}
