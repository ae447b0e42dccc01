// Room: tests of the redaction. No locks.

package redact

import (
	"strings"
	"testing"
)

func TestScrubURLRedactsTokenLikeValuesAndKeepsTheRest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://a.example/p?q=shoes&page=2", "https://a.example/p?q=shoes&page=2"},
		{"https://a.example/p?access_token=abc&x=1", "https://a.example/p?access_token=REDACTED&x=1"},
		{"https://a.example/cb?code=4%2F0Adeu5B&state=xyz", "https://a.example/cb?code=REDACTED&state=REDACTED"},
		{"https://a.example/?id=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "https://a.example/?id=REDACTED"},
		{"https://a.example/?ref=Abc123Def456Ghi789Jkl0", "https://a.example/?ref=REDACTED"},
		{"https://a.example/?X-Amz-Signature=deadbeef&X-Amz-Credential=me", "https://a.example/?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"},
		{"https://user:pw@a.example/", "https://a.example/"},
		{"https://a.example/#access_token=abc&token_type=bearer", "https://a.example/#access_token=REDACTED&token_type=REDACTED"},
		{"https://a.example/#section-2", "https://a.example/#section-2"},
		// A fragment that is a token, a client-side route's query, and
		// the short names of passwords and PINs.
		{"https://a.example/#eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "https://a.example/#REDACTED"},
		{"https://a.example/#/cb?code=4abc&state=xyz&tab=2", "https://a.example/#/cb?code=REDACTED&state=REDACTED&tab=2"},
		{"https://a.example/login?user=bob&pass=hunter2&pin=1234&pw=x&q=shoes", "https://a.example/login?user=bob&pass=REDACTED&pin=REDACTED&pw=REDACTED&q=shoes"},
		{"https://a.example/?apikey=", "https://a.example/?apikey="},
		{"::not a url?token=x", "::not a url"},
	} {
		if got := Scrub(c.in); got != c.want {
			t.Errorf("scrubURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestURLDropsQueryFragmentAndCredentials(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://a.example/p?q=shoes#top", "https://a.example/p"},
		{"https://user:pw@a.example/x", "https://a.example/x"},
		{"https://a.example/p?", "https://a.example/p"},
		{"::not a url?token=x", "::not a url"},
		{"::not a url#frag", "::not a url"},
		{"about:blank", "about:blank"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLooksLikeTokenWantsLettersAndDigitsOrAJWT(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"Abc123Def456Ghi789Jkl0", true},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0", true},
		{strings.Repeat("a", 30), false},
		{strings.Repeat("1", 30), false},
		{"short1", false},
		{"has spaces in it 1234567890", false},
	} {
		if got := LooksLikeToken(c.in); got != c.want {
			t.Errorf("LooksLikeToken(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestTextRedactsTokenLikeURLQueryValuesOnly(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, no url", "plain text, no url"},
		{`"https://a.test/?q=shoes"`, `"https://a.test/?q=shoes"`},
		{"go to https://a.test/cb?code=xyz&state=s1 now", "go to https://a.test/cb?code=REDACTED&state=REDACTED now"},
		{"https://a.test/?id=eyJhbGciOiJIUzI1NiJ9.payload.sig", "https://a.test/?id=REDACTED"},
		{"https://a.test/?x=abcdefghij0123456789XYZ", "https://a.test/?x=REDACTED"},
		{"https://bob:secret@a.test/p", "https://a.test/p"},
		// A relative URL's query, as a script passes it to fetch.
		{`fetch("/hang?access_token=SECRETTOKEN123&q=a")`, `fetch("/hang?access_token=REDACTED&q=a")`},
		{`fetch('/x?id=eyJhbGciOiJIUzI1NiJ9.payload.sig')`, `fetch('/x?id=REDACTED')`},
		{"a ? b : c", "a ? b : c"},
		{"x === 1 ? y=2 : 3", "x === 1 ? y=2 : 3"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}
