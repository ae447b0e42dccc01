package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A close that names no session, from a client with none, used to open
// the default session (a browser launched) only to close it, and report
// success.
func TestClosingWithoutASessionOpensNoBrowser(t *testing.T) {
	requireBrowser(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	msg := fails(t, cs, "browser_session_close", map[string]any{"session": ""})
	want := "Error: you have no browser session to close\nNext: nothing to do; a page tool such as browser_navigate opens one when you need it"
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("browser_session_close with session \"\" (-want +got):\n%s", diff)
	}
	if n := len(s.pool.Sessions()); n != 0 {
		t.Errorf("%d browser sessions after the closes; want none launched", n)
	}
}
