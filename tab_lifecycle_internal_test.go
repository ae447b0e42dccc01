package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeWatch is a lifecycle watch fed by hand: waiting tells each time a
// waiter is about to sleep on the next event.
func fakeWatch() (w *lifecycleWatch, waiting chan struct{}) {
	waiting = make(chan struct{}, 16)
	w = &lifecycleWatch{
		done: make(chan struct{}),
		listen: func() func() {
			select {
			case waiting <- struct{}{}:
			default:
			}
			return func() {}
		},
		main:    "F",
		seen:    make(map[string]bool),
		changed: make(chan struct{}),
	}
	return w, waiting
}

// lifecycle hands w the main frame's lifecycle event name for loader.
func lifecycle(w *lifecycleWatch, loader, name string) {
	w.note(json.RawMessage(fmt.Sprintf(`{"frameId":"F","loaderId":%q,"name":%q}`, loader, name)))
}

// requested hands w the main frame's request for a navigation in its tab
// (a script's location change).
func requested(w *lifecycleWatch) {
	w.noteNavigation("Page.frameRequestedNavigation", json.RawMessage(`{"frameId":"F","reason":"scriptInitiated","disposition":"currentTab"}`))
}

type owned struct{ Final, Newer string }

// TestWaitOwnCountsADocumentsRequestsFromItsCommit feeds the watch what
// Chromium sends for a page that sends the tab on by script, as the mux's
// reader may have read it before the caller looks: the page's own
// requests count from its document's commit, never from the look.
func TestWaitOwnCountsADocumentsRequestsFromItsCommit(t *testing.T) {
	for _, c := range []struct {
		name   string
		before func(w *lifecycleWatch) // read before the caller marks the counters
		marked func(w *lifecycleWatch) // after the mark, before waitOwn looks
		later  func(w *lifecycleWatch) // once waitOwn sleeps
		want   owned
	}{{
		name: "the first document's script request read before the mark",
		before: func(w *lifecycleWatch) {
			lifecycle(w, "L1", "init")
			requested(w) // location.replace("/sso") in an inline script
		},
		later: func(w *lifecycleWatch) {
			lifecycle(w, "SSO", "init")
			lifecycle(w, "SSO", "load")
		},
		want: owned{Final: "SSO"},
	}, {
		name:   "the second document's request read before waitOwn follows it",
		before: func(w *lifecycleWatch) { lifecycle(w, "L1", "init") },
		marked: func(w *lifecycleWatch) {
			requested(w)
			lifecycle(w, "SSO", "init")
			requested(w) // its DOMContentLoaded sets location
		},
		later: func(w *lifecycleWatch) {
			lifecycle(w, "HOME", "init")
			lifecycle(w, "HOME", "load")
		},
		want: owned{Final: "HOME"},
	}, {
		name: "the next document committed too before the mark",
		before: func(w *lifecycleWatch) {
			lifecycle(w, "L1", "init")
			requested(w)
			lifecycle(w, "SSO", "init")
		},
		later: func(w *lifecycleWatch) { lifecycle(w, "SSO", "load") },
		want:  owned{Final: "SSO"},
	}, {
		name:   "another Navigate's document, no request of the page's",
		before: func(w *lifecycleWatch) { lifecycle(w, "L1", "init") },
		later:  func(w *lifecycleWatch) { lifecycle(w, "OTHER", "init") },
		want:   owned{Newer: "OTHER"},
	}, {
		name: "a request the old page made before the caller's document committed",
		before: func(w *lifecycleWatch) {
			lifecycle(w, "OLD", "init")
			requested(w)
		},
		marked: func(w *lifecycleWatch) { lifecycle(w, "L1", "init") },
		later:  func(w *lifecycleWatch) { lifecycle(w, "OTHER", "init") },
		want:   owned{Newer: "OTHER"},
	}, {
		name:   "the caller's document loads",
		before: func(w *lifecycleWatch) { lifecycle(w, "L1", "init") },
		later:  func(w *lifecycleWatch) { lifecycle(w, "L1", "load") },
		want:   owned{Final: "L1"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			w, waiting := fakeWatch()
			c.before(w)
			m := w.mark() // as Navigate marks them once Page.navigate answered
			if c.marked != nil {
				c.marked(w)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			type result struct {
				owned
				err error
			}
			got := make(chan result, 1)
			go func() {
				final, newer, err := w.waitOwn(ctx, "L1", "load", m.commits, m.requests)
				got <- result{owned{final, newer}, err}
			}()
			select {
			case <-waiting:
				c.later(w)
			case r := <-got:
				t.Fatalf("waitOwn returned %+v before the later events", r)
			}
			r := <-got
			if r.err != nil {
				t.Fatalf("waitOwn: %v", r.err)
			}
			if diff := cmp.Diff(c.want, r.owned); diff != "" {
				t.Errorf("waitOwn (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefsOutliveAnOlderDocumentsEventsReadWithTheirs: a new tab's first
// document's events, replayed as the page moves on, can be read with the
// next document's after a snapshot of that one made refs; only the newest
// document read counts, so they do not drop those refs. A document that
// commits after the refs' does.
func TestRefsOutliveAnOlderDocumentsEventsReadWithTheirs(t *testing.T) {
	for _, c := range []struct {
		name     string
		late     func(w *lifecycleWatch) // read by the action after the snapshot
		wantRefs string                  // the refs' document after it, "" if dropped
	}{{
		name:     "the first document's replay and the refs' own commit",
		late:     func(w *lifecycleWatch) { lifecycle(w, "BLANK", "commit"); lifecycle(w, "POPUP", "init") },
		wantRefs: "POPUP",
	}, {
		name:     "a document committed after the refs'",
		late:     func(w *lifecycleWatch) { lifecycle(w, "POPUP", "init"); lifecycle(w, "NEXT", "init") },
		wantRefs: "",
	}} {
		t.Run(c.name, func(t *testing.T) {
			w, _ := fakeWatch()
			x := &tabExt{t: &Tab{id: "F", lifecycle: w}}
			x.refs.nums.Print("POPUP", nil, false, 0) // a snapshot of the popup's document
			c.late(w)
			x.takeLifecycle()
			if got := x.refs.nums.Doc(); got != c.wantRefs {
				t.Errorf("the refs' document after the events: %q, want %q", got, c.wantRefs)
			}
		})
	}
}

func TestCommittedDocGivesALoadersNewestCommit(t *testing.T) {
	w, _ := fakeWatch()
	for _, l := range []string{"A", "B", "A", "C"} { // A restored from the back/forward cache
		lifecycle(w, l, "commit")
	}
	w.mu.Lock()
	d, ok := w.committedDoc("A")
	w.mu.Unlock()
	if !ok || d.commits != 3 {
		t.Errorf("committedDoc(A) = %+v, %v; want its second commit, the third of all", d, ok)
	}
	for i := range 10 { // the ring wraps
		lifecycle(w, fmt.Sprint("N", i), "commit")
	}
	w.mu.Lock()
	_, ok = w.committedDoc("A")
	d, okN := w.committedDoc("N9")
	w.mu.Unlock()
	if ok || !okN || d.commits != 14 {
		t.Errorf("after 10 more commits: A found %v, N9 %+v %v; want A gone and N9 the 14th", ok, d, okN)
	}
}
