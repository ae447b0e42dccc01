package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestShortURLGivesADataURLsTypeAndLengthAndCutsALongURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("é", 300)
	for _, c := range []struct{ in, want string }{
		{"https://example.com/a?b=c", "https://example.com/a?b=c"},
		{"data:image/png;base64," + strings.Repeat("A", 12323), "data:image/png;base64 (12,345 chars)"},
		{"data:,hello", "data: (11 chars)"},
		{long, string([]rune(long)[:200]) + "…"},
	} {
		if diff := cmp.Diff(c.want, shortURL(c.in)); diff != "" {
			t.Errorf("shortURL(%.40q…) (-want +got):\n%s", c.in, diff)
		}
	}
}

func TestReadableJSONKeepsEveryValueAndItsOrder(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"Gr\u00fc\u00dfe \u2013 \u6771\u4eac"`, `"Grüße – 東京"`},
		{`{"b":1,"a":{"d":[1,2e3,-0.5],"c":"\u003c/script\u003e"},"e":null}`, `{"b":1,"a":{"d":[1,2e3,-0.5],"c":"</script>"},"e":null}`},
		{`[[],{},[{}],"\"\\\n\t"]`, `[[],{},[{}],"\"\\\n\t"]`},
		{`12345678901234567890`, `12345678901234567890`},
		{`false`, `false`},
	} {
		got, err := readableJSON([]byte(c.in))
		if err != nil {
			t.Errorf("readableJSON(%s): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, string(got)); diff != "" {
			t.Errorf("readableJSON(%s) (-want +got):\n%s", c.in, diff)
		}
	}
}

// The library's words for three states say what to do in tools: a read
// held while the tab waits for a server, an answer with no page (204), and
// a page whose load event what it still loads holds.
func TestHeldReadsNoPageAnswersAndHeldLoadsSayWhatToDoInTools(t *testing.T) {
	for _, c := range []struct {
		name string
		err  *browserpool.Error
		next string
	}{
		{"a read held by a pending navigation", &browserpool.Error{Op: "Tab.Snapshot", Class: context.DeadlineExceeded,
			Detail: "the caller's context ended before the browser answered: the tab is waiting for http://x/hang to answer (a navigation its page started), and the browser holds calls into the page until that navigation commits or fails",
			Hint:   "to go on without that page, call Tab.Navigate to another URL (it is not held); to wait for it, call Tab.WaitLoad with a longer deadline: a read of the tab (a snapshot, an evaluate) waits for the same server"},
			"call browser_navigate with another URL to go on"},
		{"an answer with no page", &browserpool.Error{Op: "Tab.Navigate", Class: browserpool.ErrNavigation, Detail: "http://x/204: net::ERR_ABORTED",
			Hint: "the server sent no page to show (an answer such as HTTP 204 No Content or 205 Reset Content does this) and began no download, so the tab stays on its page: take a snapshot to see it; if you expected a page, check the URL"},
			"the server answered with no page to show"},
		{"a load event held by what the page still loads", &browserpool.Error{Op: "Tab.Navigate", Class: browserpool.ErrTimeout, Detail: "http://x/ did not finish loading within 30s",
			Hint: "its document is in the tab and was parsed, but its load event is held by resources still loading (an image, a frame or a script that never finishes): the page is usually usable now, take a snapshot to see it; to wait for the rest, call Tab.WaitLoad, or raise Config.NavigationTimeout"},
			"it is usually usable now, call browser_snapshot"},
	} {
		got := describeFor("browser_snapshot", c.err)
		_, next, _ := strings.Cut(got, "\nNext: ")
		if !strings.Contains(next, c.next) || goName.MatchString(next) {
			t.Errorf("%s: %q; want a Next in tool terms saying %q", c.name, got, c.next)
		}
	}
	if got := toolNames("then Tab.Reload"); got != "then browser_navigate with the same URL" {
		t.Errorf("toolNames(Tab.Reload) = %q; want it said as a tool", got)
	}
}
