// Room: a tab's page lifecycle events (Page.lifecycleEvent), which
// navigations and waits read. lifecycleWatch.mu guards the events and
// their waiters; the commit counter is an atomic.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

// lifecycleWatch records the tab's Page.lifecycleEvent events. The mux
// hands it each event on its reader (Mux.Tap; see Tab.onEvent), so no
// goroutine of ours reads them; waiters sleep on changed.
type lifecycleWatch struct {
	done   <-chan struct{}                 // the tab's connection context
	ready  func(ctx context.Context) error // Tab.pageEvents: waiters wait for it first
	listen func() (stop func())            // cdpmux.Direct.Listen: waiters have the mux read while they wait
	main   string                          // the main frame's id (the tab's target id)

	// commits counts the main frame's new documents (its init and commit
	// events; written under mu, read without it).
	commits atomic.Uint64
	// requests counts the navigations the main frame asked for in its own
	// tab (Page.frameRequestedNavigation: a link followed, a form
	// submitted, a script's location change); ends counts the ways such a
	// request ends without a new document (Page.frameStoppedLoading: a
	// download or an answer without content; Page.navigatedWithinDocument;
	// a dismissed dialog: a beforeunload's Cancel). Written under mu, read
	// without it (tab_follow.go).
	requests, ends atomic.Uint64

	mu      sync.Mutex
	reqEnds uint64          // guarded by mu; ends when the newest request came
	reqDocs uint64          // guarded by mu; commits when the newest request came
	reqURL  string          // guarded by mu; the URL the newest request asked for
	seen    map[string]bool // guarded by mu; "loaderID/name" received
	loader  string          // guarded by mu; the main frame's newest document, by its events
	// committed is the main frame's newest documents, each with requests
	// as it committed: a request counted after it is that document's own
	// (waitOwn). A ring: the oldest is overwritten.
	committed [8]docCommit      // guarded by mu
	nextDoc   int               // guarded by mu; committed's next slot
	pending   []*lifecycleEvent // guarded by mu; not yet taken by the agent actions (bounded)
	changed   chan struct{}     // guarded by mu; closed and replaced on every event
	// onRequest, when set, runs (on the mux's reader, under mu: it must
	// not block) at the next navigation request counted in requests, and
	// is then cleared (tab_follow.go: a click's read of the old document).
	onRequest func() // guarded by mu
}

// docCommit is one main-frame document as it committed: its loader id,
// the navigation requests counted before it and the commits counted with
// it.
type docCommit struct {
	loader            string
	requests, commits uint64
}

// committedDoc returns loader's document as it last committed, and false
// if it has not committed (or is long gone). w.mu must be held.
func (w *lifecycleWatch) committedDoc(loader string) (docCommit, bool) {
	n := len(w.committed)
	for i := range n {
		d := w.committed[(w.nextDoc-1-i+2*n)%n]
		if d.loader == loader && loader != "" {
			return d, true
		}
	}
	return docCommit{}, false
}

// lifecyclePending bounds the events kept for the agent actions between
// two of their looks; older ones are dropped (only the newest main-frame
// navigation matters to them).
const lifecyclePending = 64

func newLifecycleWatch(d *cdpmux.Direct, ready func(context.Context) error, main string) *lifecycleWatch {
	return &lifecycleWatch{done: d.Done(), ready: ready, listen: d.Listen, main: main, seen: make(map[string]bool), changed: make(chan struct{})}
}

// mainDoc returns how many new documents the main frame has had and the
// newest one's loader id, as its events said.
func (w *lifecycleWatch) mainDoc() (uint64, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.commits.Load(), w.loader
}

// lifecycleEvent is the part of a Page.lifecycleEvent the tab reads
// (page.LifecycleEventReply's timestamp would cost a decoder of its own).
type lifecycleEvent struct {
	FrameID  string `json:"frameId"`
	LoaderID string `json:"loaderId"`
	Name     string `json:"name"`
}

// note records one event (on the mux's reader).
func (w *lifecycleWatch) note(params json.RawMessage) {
	ev := new(lifecycleEvent)
	if json.Unmarshal(params, ev) != nil {
		return
	}
	w.mu.Lock()
	if len(w.seen) > 256 {
		// Forget older documents' events, never the newest main-frame
		// document's: a Navigate may be about to look for its load.
		for k := range w.seen {
			if w.loader == "" || !strings.HasPrefix(k, w.loader+"/") {
				delete(w.seen, k)
			}
		}
	}
	w.seen[string(ev.LoaderID)+"/"+ev.Name] = true
	if ev.FrameID == w.main && (ev.Name == "init" || ev.Name == "commit") && ev.LoaderID != "" && ev.LoaderID != w.loader {
		w.loader = ev.LoaderID
		w.commits.Add(1)
		w.committed[w.nextDoc] = docCommit{ev.LoaderID, w.requests.Load(), w.commits.Load()}
		w.nextDoc = (w.nextDoc + 1) % len(w.committed)
	}
	if len(w.pending) >= lifecyclePending {
		w.pending = slices.Delete(w.pending, 0, 1)
	}
	w.pending = append(w.pending, ev)
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

// take returns the events recorded since the last take.
func (w *lifecycleWatch) take() []*lifecycleEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	evs := w.pending
	w.pending = nil
	return evs
}

// peek returns the events not yet taken, without taking them.
func (w *lifecycleWatch) peek() []*lifecycleEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending
}

// loaders returns the loader ids of every event name seen.
func (w *lifecycleWatch) loaders(name string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for k := range w.seen {
		if l, ok := strings.CutSuffix(k, "/"+name); ok {
			out = append(out, l)
		}
	}
	return out
}

// has reports whether key ("loaderID/name") was seen, and the channel that
// closes at the next event.
func (w *lifecycleWatch) has(key string) (bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen[key], w.changed
}

// errPendingPassed is nextOr's answer when its timer fired first.
var errPendingPassed = errors.New("pending passed")

// next waits for the next event, ctx's end or the connection's end.
func (w *lifecycleWatch) next(ctx context.Context, changed <-chan struct{}) error {
	return w.nextOr(ctx, changed, nil)
}

// nextOr is next that also returns errPendingPassed when timer fires
// first (a nil timer never does).
func (w *lifecycleWatch) nextOr(ctx context.Context, changed <-chan struct{}, timer <-chan time.Time) error {
	if w.ready != nil {
		if err := w.ready(ctx); err != nil {
			return err
		}
	}
	stop := w.listen()
	defer stop()
	select {
	case <-changed:
		return nil
	case <-timer:
		return errPendingPassed
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
		return &cdpmux.EndError{Reason: cdpmux.ErrDetached}
	}
}

// waitOwn returns when the lifecycle event name has fired for the document
// of a navigation the caller started (loaderID), or for the document a
// navigation of the page's own led to from there (a script's location
// change before the load: a Page.frameRequestedNavigation counted after
// the document committed), and names that document (final). It also
// returns when ctx ends or the tab's connection closes. Another navigation
// that was not the page's (another call's Navigate) can replace the
// document: it then returns the newer document's loader id (newer),
// without error, once the main frame has committed a document after it.
//
// What came after a document is counted from its commit, not from when
// waitOwn looks: the mux's reader may have read the commit, the script's
// request (an inline location.replace) and the next commit before the
// caller's goroutine runs again. since and reqs, the counters when the
// caller's navigation was answered, stand in until its commit is seen.
func (w *lifecycleWatch) waitOwn(ctx context.Context, loaderID, name string, since, reqs uint64) (final, newer string, err error) {
	var pending <-chan time.Time // a request of the page's after its load: how long to wait for it
	for {
		w.mu.Lock()
		if d, ok := w.committedDoc(loaderID); ok {
			since, reqs = d.commits, d.requests
		}
		ok, changed := w.seen[loaderID+"/"+name], w.changed
		n, cur, r := w.commits.Load(), w.loader, w.requests.Load()
		ended := w.ends.Load() > w.reqEnds // the newest request ended without a document
		w.mu.Unlock()
		switch {
		case n > since && cur != loaderID:
			if r == reqs {
				return "", cur, nil
			}
			loaderID, since, reqs, pending = cur, n, r, nil // the page went on by itself: follow it
			continue
		case ok && (r == reqs || ended):
			return loaderID, "", nil
		case ok && pending == nil:
			// The page asked for a navigation as it loaded (a script's
			// location change on DOMContentLoaded): wait for it a while.
			t := time.NewTimer(followWait)
			defer t.Stop()
			pending = t.C
		}
		if err := w.nextOr(ctx, changed, pending); err != nil {
			if err == errPendingPassed {
				return loaderID, "", nil // it never came: the page stays
			}
			return "", "", err
		}
	}
}
