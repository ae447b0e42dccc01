package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// browser_type slowly that runs out of time part way says what reached
// the field: the plain timeout's "retry the step" would type the whole
// text again after the part already typed.
func TestATypeThatRanOutOfTimeSaysNotToTypeItAllAgain(t *testing.T) {
	requireBrowser(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<title>slow keys</title><label>Query <input id=q></label>
<script>q.addEventListener('keydown', () => { const end = Date.now() + 40; while (Date.now() < end); })</script>`))
	}))
	defer site.Close()
	s := newServer(t, Config{CallTimeout: 2 * time.Second})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	snap := ok(t, cs, "browser_snapshot", nil)
	box := find(t, `textbox "Query" @(e\d+)`, snap)
	msg := fails(t, cs, "browser_type", map[string]any{"ref": box, "text": strings.Repeat("abcdefghij", 30), "slowly": true})
	for _, want := range []string{"of 300: the first ", "reached the page", "\nNext: read the field before typing again: typing the whole text again adds what was typed a second time"} {
		if !strings.Contains(msg, want) {
			t.Errorf("browser_type that ran out of time says no %q:\n%s", want, msg)
		}
	}
}
