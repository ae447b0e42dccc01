package axtext

import "testing"

// A quoted value stays on one line: a typed or filled text's line breaks
// and tabs are escaped, as are quotes and backslashes.
func TestQuoteKeepsTheTextOnOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`plain`, `"plain"`},
		{`say "hi" \o/`, `"say \"hi\" \\o/"`},
		{"one\ntwo\r\nthree\tfour", `"one\ntwo\r\nthree\tfour"`},
		{`a\nb`, `"a\\nb"`},
	} {
		if got := Quote(c.in); got != c.want {
			t.Errorf("Quote(%q) = %s; want %s", c.in, got, c.want)
		}
	}
}
