package browserpool

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzNavigateURLRules(f *testing.F) {
	for _, s := range []string{"https://example.com/a?b=c", "http://127.0.0.1:8080/", "javascript:alert(1)", "file:///etc/passwd",
		"data:text/html,x", "chrome://settings", "http://", "HTTP://EXAMPLE.COM", "http://user:pw@host/", "about:blank", " http://x", "http://[::1]:80/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := checkNavigateURL("Fuzz", raw)
		if err != nil {
			if err.Class != ErrInvalidURL || !strings.Contains(err.Error(), "hint: ") {
				t.Fatalf("refusal of %q is not a hinted ErrInvalidURL: %v", raw, err)
			}
			if strings.Contains(raw, "?") && strings.Contains(err.Error(), raw) {
				t.Fatalf("refusal of %q quotes the URL with its query", raw)
			}
			return
		}
		u, perr := url.Parse(raw)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			t.Fatalf("accepted %q (scheme %q host %q)", raw, u.Scheme, u.Host)
		}
		if r := redactURL(raw); strings.Contains(r, "?") && u.RawQuery != "" {
			t.Fatalf("redactURL(%q) = %q keeps the query", raw, r)
		}
	})
}

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"s-1", "", "../x", "a/b", strings.Repeat("a", 65), "ok_ID-9", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidateID("id", id) != nil {
			return
		}
		if filepath.Base(id) != id || id == "." || id == ".." || len(id) > 64 || strings.ContainsAny(id, "/\\\x00 .:") {
			t.Fatalf("accepted %q, which is not a safe path part", id)
		}
	})
}
