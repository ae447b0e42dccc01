package main

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// The tracker's ErrNoRoom speaks of workflows and EvictGrace; a client
// reads of clients, -max-sessions and when to call again. The error is
// the tracker's own (a fake browser), so a change of its wording fails
// here rather than passing through unread.
func TestARefusalToCloseAnotherClientsBrowserReadsInAClientsTerms(t *testing.T) {
	pool, err := browserpool.NewPool(browserpool.Config{Launcher: cdptest.NewLauncher(t), Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	tr, err := browserpool.NewTracker(browserpool.TrackerConfig{Pool: pool, Global: 1, EvictGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := tr.Open(ctx, "client-a", DefaultSessionName); err != nil {
		t.Fatal(err)
	}
	_, err = tr.Open(ctx, "client-b", DefaultSessionName)
	if !errors.Is(err, browserpool.ErrNoRoom) {
		t.Fatalf("client B's open at the limit: %v, want ErrNoRoom", err)
	}
	times := regexp.MustCompile(`used (less than a second|[0-9hms.]+) ago|again in [0-9hms.]+ or later`)
	got := times.ReplaceAllStringFunc(describeFor("browser_session_open", err), func(m string) string {
		if m[0] == 'u' {
			return "used T ago"
		}
		return "again in T or later"
	})
	want := "Error: browserpool: browser_session_open name=default client=client-b: no browser session may be closed to make room yet: " +
		"the server runs at most 1 browser over all clients (-max-sessions 1), and a browser for you would close another client's, last used T ago; a browser used within 1h0m0s is not closed to make room\n" +
		"Next: call the tool again in T or later (a browser idle for 1h0m0s is closed to make room for yours), or ask the user to start the server with a larger -max-sessions"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the refusal (-want +got):\n%s", diff)
	}
}
