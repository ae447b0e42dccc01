// Room: the tab's action trace. traceRing.mu guards the ring and the
// recorder. The recorder runs on the pool's hook goroutine, never under a
// lock.

package browserpool

import (
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/redact"
)

// TraceLimit is how many actions a tab's trace keeps; older ones are
// dropped first.
const TraceLimit = 256

// TraceArgLimit is how many characters of an action's arguments a trace
// entry keeps; longer arguments are cut and end in "…".
const TraceArgLimit = 300

// TraceEntry is one action in a tab's trace, for diagnosis. Its arguments
// are redacted: token-like URL query values read REDACTED and text typed
// into password fields reads "***".
type TraceEntry struct {
	Time     time.Time     // when the action started
	Action   string        // e.g. "click", "fill", "snapshot", "dialog"
	Args     string        // the action's arguments, redacted, at most TraceArgLimit characters
	Duration time.Duration // how long it took
	Err      string        // the error's text; empty on success
}

// Trace returns the tab's most recent actions (at most TraceLimit), oldest
// first.
func (t *Tab) Trace() []TraceEntry {
	x := t.ext()
	x.trace.mu.Lock()
	defer x.trace.mu.Unlock()
	out := make([]TraceEntry, 0, x.trace.n)
	for i := range x.trace.n {
		out = append(out, x.trace.ring[(x.trace.start+i)%TraceLimit])
	}
	return out
}

// SetRecorder sets a function that receives every trace entry of the tab as
// it is recorded; nil removes it. It runs on the pool's hook goroutine, in
// order, like Hooks: a slow recorder delays only later hooks and a
// panicking one is recovered.
func (t *Tab) SetRecorder(f func(TraceEntry)) {
	x := t.ext()
	x.trace.mu.Lock()
	x.trace.recorder = f
	x.trace.mu.Unlock()
}

// traceRing is a tab's bounded ring of trace entries. The ring grows as
// entries come, up to TraceLimit, and only then wraps (start stays 0
// until it is full): a tab nobody acts on costs no 20 KB ring.
type traceRing struct {
	mu       sync.Mutex
	ring     []TraceEntry     // guarded by mu; len(ring) == n until it holds TraceLimit
	start, n int              // guarded by mu; oldest entry and count
	recorder func(TraceEntry) // guarded by mu
}

// record adds an entry for action, begun at start, whose args are
// redacted (the URLs and query strings in them: an evaluated script may
// name a token; callers mask what only they know, a password's value) and
// cut to TraceArgLimit. The redaction reads twice the limit at most: a
// large script costs no more than a small one. errp, if not nil, holds the
// action's error. It returns the entry's duration.
func (x *tabExt) record(action, args string, start time.Time, errp *error) time.Duration {
	args = axtext.Cut(redact.Text(axtext.Cut(args, 2*TraceArgLimit)), TraceArgLimit)
	e := TraceEntry{Time: start, Action: action, Args: args, Duration: time.Since(start)}
	if errp != nil && *errp != nil {
		e.Err = (*errp).Error()
	}
	r := &x.trace
	r.mu.Lock()
	if r.n < TraceLimit {
		r.ring = append(r.ring, e) // start is 0 until the ring is full
		r.n++
	} else {
		r.ring[r.start] = e
		r.start = (r.start + 1) % TraceLimit
	}
	rec := r.recorder
	r.mu.Unlock()
	if rec != nil {
		x.t.deps.events.emit(func() { rec(e) })
	}
	x.t.recordHook(e) // a frame and an event if the session records (recording.go)
	return e.Duration
}
