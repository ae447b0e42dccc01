package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// A call naming a tab the session closed said "tab ids never carry over
// between sessions", which fits an id from another session, not this
// one's own closed tab. It now says the tab was closed, and by what: a
// CloseTab, or its page (a window that closed itself).
func TestACallNamingAClosedTabSaysItWasClosedAndByWhat(t *testing.T) {
	ctx, opener, _ := htmlTab(t, `<title>opener</title><button onclick="window.open('/popup')">Open</button>`)
	s := opener.Session()
	other, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CloseTab(ctx, other.ID()); err != nil {
		t.Fatal(err)
	}
	// A window the page opened, which closes itself.
	if err := opener.Click(ctx, ref(t, snap(t, opener, browserpool.SnapshotOptions{}), "button", "Open")); err != nil {
		t.Fatal(err)
	}
	var popupID string
	waitFor(t, "the popup among the session's tabs", func() bool {
		tabs, err := s.Tabs(ctx)
		for _, ti := range tabs {
			if err == nil && ti.TabID != opener.ID() {
				popupID = ti.TabID
			}
		}
		return popupID != ""
	})
	popup, err := s.Tab(ctx, popupID)
	if err != nil {
		t.Fatal(err)
	}
	if err := popup.Evaluate(ctx, `window.close(), true`, nil); err != nil {
		t.Fatal(err)
	}
	// Session.Tab handed back the closed window's Tab, on which every
	// call then failed; it now says the tab is gone.
	waitFor(t, "Session.Tab of the window that closed itself to fail", func() bool {
		_, err := s.Tab(ctx, popupID)
		return err != nil
	})
	for _, c := range []struct {
		name, id, how string
		call          func(id string) error
	}{
		{"Session.Tab of the tab CloseTab closed", other.ID(), "by Session.CloseTab", func(id string) error { _, err := s.Tab(ctx, id); return err }},
		{"CloseTab of it again", other.ID(), "by Session.CloseTab", func(id string) error { return s.CloseTab(ctx, id) }},
		{"Session.Tab of the window that closed itself", popupID, "by its page", func(id string) error { _, err := s.Tab(ctx, id); return err }},
	} {
		err := c.call(c.id)
		var e *browserpool.Error
		if !errors.Is(err, browserpool.ErrTabNotFound) || !errors.As(err, &e) ||
			!strings.Contains(e.Detail, "was closed ("+c.how) || strings.Contains(e.Hint, "between sessions") || !strings.Contains(e.Hint, "Session.OpenTab") {
			t.Errorf("%s: %v; want ErrTabNotFound saying it was closed %s, with a hint to use an open tab or open one", c.name, err, c.how)
		}
	}
	// An id the session never had keeps the words for another session's.
	_, err = s.Tab(ctx, "0123456789ABCDEF0123456789ABCDEF")
	if !errors.Is(err, browserpool.ErrTabNotFound) || !strings.Contains(err.Error(), "never carry over between sessions") {
		t.Errorf("Session.Tab of an id the session never had: %v; want ErrTabNotFound saying ids never carry over between sessions", err)
	}
}
