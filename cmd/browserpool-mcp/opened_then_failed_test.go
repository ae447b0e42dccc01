package main

import (
	"net"
	"regexp"
	"strings"
	"testing"
)

// refusedURL returns an http URL on 127.0.0.1 whose port takes no
// connections.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/"
	l.Close()
	return u
}

// A session opened, or a tab opened, whose first page fails to load stays
// open: the error used to say only that the navigation failed, and an
// agent that believed nothing was made opened another.
func TestAnErrorAfterASessionOrTabOpenedSaysItIsOpen(t *testing.T) {
	requireBrowser(t)
	s := newServer(t, Config{})
	cs := connect(t, s)
	bad := refusedURL(t)

	msg := fails(t, cs, "browser_session_open", map[string]any{"name": "work", "url": bad})
	if !regexp.MustCompile(`^Error: session "work" is open \(id s-[0-9a-f]+\), but then: .*ERR_CONNECTION_REFUSED`).MatchString(msg) {
		t.Errorf("browser_session_open with a refused URL:\n%s", msg)
	}
	if got := ok(t, cs, "browser_session_list", nil); !strings.Contains(got, `Session "work"`) {
		t.Errorf("browser_session_list after it:\n%s", got)
	}

	msg = fails(t, cs, "browser_tabs", map[string]any{"action": "new", "url": bad})
	m := regexp.MustCompile(`^Error: opened a new tab ([0-9A-F]+), the active one now, but then: .*ERR_CONNECTION_REFUSED`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("browser_tabs new with a refused URL:\n%s", msg)
	}
	if got := ok(t, cs, "browser_tabs", map[string]any{"action": "list"}); !strings.Contains(got, "* tab "+m[1]) || strings.Count(got, " tab ") != 2 {
		t.Errorf("browser_tabs list after it: want two tabs, %s the active one:\n%s", m[1], got)
	}
}
