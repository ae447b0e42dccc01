// Room: the tracker, named sessions per workflow with per-workflow and global
// limits. Tracker.mu guards the tables, each entry's session and its holder
// record; it is never held while a session opens or closes, while /proc is
// read or while a hook runs. The tracker reaches its sessions only through
// the seam (pool_seam.go): closeWith to close with a reason, usage for
// busy/idle, holderSet for holders.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Tracker defaults.
const (
	DefaultPerWorkflowLimit = 1
	DefaultGlobalLimit      = 8
)

// Tracker errors.
var (
	// ErrSessionLimit: the workflow already holds as many sessions as its
	// limit allows. Returned by Tracker.Open.
	ErrSessionLimit = errors.New("session limit reached")
	// ErrAllBusy: the global limit is reached and every session has a call
	// in flight, so none can be evicted. Returned by Tracker.Open.
	ErrAllBusy = errors.New("every browser session is busy")
	// ErrNoRoom: the global limit is reached and every idle session is
	// another workflow's, used within TrackerConfig.EvictGrace, so none may
	// be closed yet. The error says when the first one may be. Returned by
	// Tracker.Open.
	ErrNoRoom = errors.New("no browser session may be closed to make room yet")
)

// TrackerEvent tells a workflow that one of its sessions was closed by the
// tracker (to make room, reason lru) or ended for another reason it should
// know about.
type TrackerEvent struct {
	Time      time.Time   // when it happened
	Workflow  string      // the workflow that owned the session
	Name      string      // the session's name in that workflow
	SessionID string      // the session that ended
	Reason    CloseReason // why: ReasonLRU when the tracker made room
	// For LRU evictions: who needed the room (the workflow and the name
	// of the session it was opening).
	ForWorkflow string // the workflow that needed the room
	ForName     string // the name of the session it was opening
}

// TrackerConfig configures a Tracker. Only Pool is required.
type TrackerConfig struct {
	// Pool opens and closes the sessions.
	Pool *Pool
	// PerWorkflow is how many sessions one workflow may hold. Zero means
	// DefaultPerWorkflowLimit (1); negative is invalid.
	PerWorkflow int
	// Global is how many tracked sessions may exist at once over all
	// workflows; at the limit the least-recently-used idle one is closed.
	// Zero means DefaultGlobalLimit (8); negative is invalid.
	Global int
	// EvictGrace protects the sessions of other workflows at the global
	// limit: another workflow's session is closed to make room only once
	// it has been idle this long (a workflow's own idle sessions are closed
	// regardless). With a small Global and no grace, two workflows taking
	// turns close each other's browser on every turn, each losing its
	// pages mid-task. When every idle session is protected, Open fails
	// with ErrNoRoom, saying when to retry. The choice of the session and
	// its removal from the table are one step under the tracker's lock (its
	// close follows), so concurrent opens never close a protected session.
	// Zero means none (the least-recently-used idle
	// session is closed, whoever's it is); negative is invalid.
	EvictGrace time.Duration
	// Evicted, if set, is told when the tracker closes a workflow's
	// session to make room. It runs on the tracker's event goroutine, never
	// under a lock; a slow or panicking hook never stalls the tracker.
	Evicted func(TrackerEvent)
}

// Tracker hands out named browser sessions owned by workflows (chats), with a
// per-workflow limit and a global limit enforced by closing the
// least-recently-used idle session. It is safe for concurrent use; the
// creator must call Close. A host restart starts with an empty tracker; the
// pool's manifest sweep removes the old browsers.
type Tracker struct {
	pool   *Pool         // fixed
	cfg    TrackerConfig // fixed; effective values
	events *eventQueue   // fixed; runs the Evicted hook

	mu        sync.Mutex
	entries   map[trackKey]*tracked          // guarded by mu
	byWF      map[string]map[string]*tracked // guarded by mu; workflow -> name -> entry
	closed    bool                           // guarded by mu
	closeDone chan struct{}                  // guarded by mu; made by the first Close, closed when it returns

	launches sync.WaitGroup // the opens under way (launch), waited for by Close
	// background holds the closes a caller stopped waiting for
	// (closeEntries), each closed when its sessions are: Close waits for
	// them. Guarded by mu.
	background []chan struct{}

	evicted map[trackKey]TrackerEvent // guarded by mu; the last evictions (at most evictedMemory), for Lookup's error
}

// evictedMemory bounds how many evictions Lookup can explain.
const evictedMemory = 64

type trackKey struct{ workflow, name string }

// tracked is one named session. s is nil while it opens. workflow, name,
// created and opened are fixed; err is written once before opened is closed
// and read only after.
type tracked struct {
	workflow, name string
	created        time.Time
	opened         chan struct{}       // closed when the open finished
	s              *Session            // guarded by Tracker.mu; set before opened is closed
	err            error               // open error; set before opened is closed
	holders        holderSet[struct{}] // guarded by Tracker.mu; identities holding it (OpenFor), by holder key
	taken          bool                // guarded by Tracker.mu; removed to be closed (CloseSession, EndWorkflow, CloseAll)
	ev             TrackerEvent        // its eviction: set under Tracker.mu by the open that claims it (claimLRULocked), read by that open alone
}

// NewTracker returns a tracker over cfg.Pool.
func NewTracker(cfg TrackerConfig) (*Tracker, error) {
	bad := func(field, why string) error {
		return &Error{Op: "NewTracker", Class: ErrInvalidConfig, Detail: field + ": " + why, Hint: hints[ErrInvalidConfig]}
	}
	switch {
	case cfg.Pool == nil:
		return nil, bad("Pool", "is required")
	case cfg.PerWorkflow < 0:
		return nil, bad("PerWorkflow", "must not be negative; zero means 1")
	case cfg.Global < 0:
		return nil, bad("Global", "must not be negative; zero means 8")
	case cfg.EvictGrace < 0:
		return nil, bad("EvictGrace", "must not be negative; zero means none")
	}
	if cfg.PerWorkflow == 0 {
		cfg.PerWorkflow = DefaultPerWorkflowLimit
	}
	if cfg.Global == 0 {
		cfg.Global = DefaultGlobalLimit
	}
	return &Tracker{
		pool:    cfg.Pool,
		cfg:     cfg,
		events:  newEventQueue(cfg.Pool.logger()),
		entries: make(map[trackKey]*tracked),
		byWF:    make(map[string]map[string]*tracked),
	}, nil
}

// Config returns the tracker's effective configuration.
func (tr *Tracker) Config() TrackerConfig { return tr.cfg }

// Open returns the session named name of workflow, opening it if needed.
// Reopening a name the workflow holds is a reuse and always allowed (and
// touches the session). Otherwise the per-workflow limit is checked (an
// ErrSessionLimit error names the session asked for, the limit and the
// workflow's active sessions), then the global limit: at it, the
// least-recently-used session with no call in flight is closed (reason
// lru) to make room; if every session is busy, the error is ErrAllBusy.
func (tr *Tracker) Open(ctx context.Context, workflow, name string) (*Session, error) {
	if err := checkTaskID("Tracker.Open", "session name", name); err != nil {
		return nil, err
	}
	return tr.open(ctx, workflow, name, "")
}

// OpenFor opens or reuses, for workflow, the browser that id acts on: the
// session is named by id.BrowserKey() and id is recorded as one of its
// holders. A parent and a child that shares its browser (Identity.Child)
// therefore count once against the workflow's limit; an isolated child
// (Identity.IsolatedChild) counts as a browser of its own.
func (tr *Tracker) OpenFor(ctx context.Context, workflow string, id Identity) (*Session, error) {
	key := id.BrowserKey()
	if id.ToolSessionID == "" || len(key) > 200 || strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return nil, &Error{Op: "Tracker.OpenFor", Workflow: workflow, Class: ErrInvalidIdentity,
			Detail: fmt.Sprintf("unusable identity %s", id), Hint: "build the identity with NewIdentity, Child, IsolatedChild or GroupKey"}
	}
	return tr.open(ctx, workflow, key, id.HolderKey())
}

// HoldersOf returns the holder keys recorded for the named session.
func (tr *Tracker) HoldersOf(workflow, name string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	e := tr.entries[trackKey{workflow, name}]
	if e == nil {
		return nil
	}
	return e.holders.keys()
}

func (tr *Tracker) open(ctx context.Context, workflow, name, holder string) (*Session, error) {
	const op = "Tracker.Open"
	if err := checkTaskID(op, "workflow", workflow); err != nil {
		return nil, err
	}
	k := trackKey{workflow, name}
	if ctx.Err() != nil {
		// A context that ended before the call happened before it: nothing
		// is reused, evicted or launched (as Allocator.Acquire refuses).
		e := newError(op, ctx.Err(), "the context had ended before the call: no session was opened, reused or evicted")
		e.Name, e.Workflow = name, workflow
		e.Hint = "call again with a context that has not ended"
		return nil, e
	}
	for {
		tr.mu.Lock()
		if tr.closed {
			tr.mu.Unlock()
			return nil, trackerClosed(op)
		}
		if e := tr.entries[k]; e != nil {
			tr.mu.Unlock()
			select {
			case <-e.opened:
			case <-ctx.Done():
				return nil, tr.ctxErr(op, k, ctx)
			}
			s, again, err := tr.claimOpened(op, k, e, holder, false)
			if again {
				continue
			}
			return s, err
		}
		tr.pruneLocked()
		if active := tr.byWF[workflow]; len(active) >= tr.cfg.PerWorkflow {
			names := make([]string, 0, len(active))
			for n := range active {
				names = append(names, n)
			}
			tr.mu.Unlock()
			slices.Sort(names)
			return nil, tr.limitErr(k, names)
		}
		var victim *tracked
		if len(tr.entries) >= tr.cfg.Global {
			var protected time.Time // the last use of the oldest idle session the grace keeps
			victim, protected = tr.claimLRULocked(workflow, k)
			if victim == nil {
				n := len(tr.entries)
				tr.mu.Unlock()
				return nil, tr.noRoomErr(k, n, protected)
			}
			tr.removeLocked(victim)
		}
		e := &tracked{workflow: workflow, name: name, created: time.Now(), opened: make(chan struct{})}
		if holder != "" {
			e.holders.add(holder, struct{}{})
		}
		tr.addLocked(e)
		delete(tr.evicted, k) // reopened: what Lookup says of it is the new one
		tr.mu.Unlock()

		if victim != nil {
			tr.evict(victim, k)
		}
		tr.launches.Add(1)
		go tr.launch(context.WithoutCancel(ctx), e)
		select {
		case <-e.opened:
		case <-ctx.Done():
			return nil, tr.ctxErr(op, k, ctx)
		}
		s, _, err := tr.claimOpened(op, k, e, "", true) // holder is recorded already
		return s, err
	}
}

// claimOpened gives the caller of Open that waited for e to open e's
// session, recording holder (OpenFor), or tells why not: the open's error;
// ErrPoolClosed once the tracker is closed; ErrSessionClosed when
// CloseSession, EndWorkflow or CloseAll took e while the caller waited (a
// session being closed is never handed out). again reports that the
// session ended on its own or was closed to make room for another open
// before the caller got it: the caller opens afresh. The caller whose call
// launched e (launched) is told that instead, so a browser that dies as it
// starts is not launched again and again.
func (tr *Tracker) claimOpened(op string, k trackKey, e *tracked, holder string, launched bool) (s *Session, again bool, err error) {
	if e.err != nil {
		return nil, false, e.err
	}
	tr.mu.Lock()
	switch {
	case tr.closed:
		tr.mu.Unlock()
		return nil, false, trackerClosed(op)
	case e.taken:
		tr.mu.Unlock()
		err := newError(op, ErrSessionClosed, "it was closed while this call waited for it to open (CloseSession, EndWorkflow or CloseAll)")
		err.Name, err.Workflow = k.name, k.workflow
		err.Hint = "open it again if the workflow still needs it"
		return nil, false, err
	case tr.entries[k] != e || e.s.Err() != nil: // Session.mu is a leaf lock
		tr.removeLocked(e)
		tr.mu.Unlock()
		if !launched {
			return nil, true, nil
		}
		how := "was closed to make room for another session (the tracker's Global limit)"
		if serr := e.s.Err(); serr != nil {
			how = closedHow(serr)
		}
		err := newError(op, ErrSessionClosed, "it "+how+" as it opened, before this call could return it")
		err.Name, err.Workflow, err.Session = k.name, k.workflow, e.s.ID()
		err.Hint = "open it again"
		return nil, false, err
	}
	if holder != "" {
		e.holders.add(holder, struct{}{})
	}
	s = e.s
	tr.mu.Unlock()
	s.Touch()
	return s, false, nil
}

// launch opens e's session. It runs on a goroutine of its own, not on the
// caller's, with the caller's values but not its deadline or cancellation:
// a caller who gives up does not abandon a launch another caller of the
// same name waits for, and a retry reuses it (P9). The pool bounds it
// (LaunchTimeout, Close); Tracker.Close waits for it.
func (tr *Tracker) launch(ctx context.Context, e *tracked) {
	defer tr.launches.Done()
	s, err := tr.pool.Open(ctx)
	if err != nil {
		err = retag(err, func(c *Error) { c.Op, c.Name, c.Workflow = "Tracker.Open", e.name, e.workflow })
	}
	tr.mu.Lock()
	e.s, e.err = s, err
	if err != nil {
		// Forgotten in the same step: once its callers see the error, a
		// retry or another name of the workflow no longer meets it.
		tr.removeLocked(e)
	}
	tr.mu.Unlock()
	close(e.opened)
}

func (tr *Tracker) ctxErr(op string, k trackKey, ctx context.Context) error {
	e := newError(op, ctx.Err(), "gave up waiting for the session to open")
	e.Name, e.Workflow = k.name, k.workflow
	e.Hint = "retry; the session keeps opening and the retry reuses it"
	return e
}

func (tr *Tracker) addLocked(e *tracked) {
	tr.entries[trackKey{e.workflow, e.name}] = e
	wf := tr.byWF[e.workflow]
	if wf == nil {
		wf = make(map[string]*tracked)
		tr.byWF[e.workflow] = wf
	}
	wf[e.name] = e
}

func (tr *Tracker) removeLocked(e *tracked) {
	k := trackKey{e.workflow, e.name}
	if tr.entries[k] != e {
		return
	}
	delete(tr.entries, k)
	if wf := tr.byWF[e.workflow]; wf != nil {
		delete(wf, e.name)
		if len(wf) == 0 {
			delete(tr.byWF, e.workflow)
		}
	}
}

func (tr *Tracker) forget(e *tracked) {
	tr.mu.Lock()
	tr.removeLocked(e)
	tr.mu.Unlock()
}

// Lookup returns the open session name of workflow, touching it, or an
// ErrSessionNotFound error listing the workflow's sessions. Once the
// tracker or its pool is closed, it returns ErrPoolClosed.
func (tr *Tracker) Lookup(workflow, name string) (*Session, error) {
	const op = "Tracker.Lookup"
	tr.mu.Lock()
	if tr.closed {
		tr.mu.Unlock()
		return nil, trackerClosed(op)
	}
	select {
	case <-tr.pool.shutting():
		tr.mu.Unlock()
		e := newError(op, ErrPoolClosed, "the tracker's pool was closed (Pool.Close): its sessions were closed with it")
		e.Name, e.Workflow = name, workflow
		e.Hint = "close the Tracker too; create a new Pool and a new Tracker over it to go on"
		return nil, e
	default:
	}
	e := tr.entries[trackKey{workflow, name}]
	var s *Session
	if e != nil {
		s = e.s
	}
	var names []string // the workflow's open sessions, and those opening
	for _, n := range tr.namesLocked(workflow) {
		switch o := tr.byWF[workflow][n].s; {
		case o == nil:
			names = append(names, n+" (opening)")
		case o.Err() == nil:
			names = append(names, n)
		}
	}
	ev, wasEvicted := tr.evicted[trackKey{workflow, name}]
	tr.mu.Unlock()
	if s == nil || s.Err() != nil {
		why := ""
		switch {
		case s != nil:
			why = fmt.Sprintf(" (its browser session %s %s)", s.ID(), closedHow(s.Err()))
		case wasEvicted:
			why = fmt.Sprintf(" (closed %s ago as the least recently used, to make room for workflow %s's %q: the global limit is %d)", time.Since(ev.Time).Round(time.Second), ev.ForWorkflow, ev.ForName, tr.cfg.Global)
		}
		er := newError(op, ErrSessionNotFound, fmt.Sprintf("workflow %s has no open browser session %q%s; its open sessions: [%s]", workflow, echo(name), why, strings.Join(names, ", ")))
		er.Name, er.Workflow = name, workflow
		er.Hint = "open it with Tracker.Open (reopening an existing name reuses it)"
		if wasEvicted {
			er.Hint = "open it again with Tracker.Open (its pages and logins are gone; keep them in a profile or storage state), or raise TrackerConfig.Global to keep more sessions open"
		}
		return nil, er
	}
	s.Touch()
	return s, nil
}

// Touch marks the named session used now. It reports whether it exists.
func (tr *Tracker) Touch(workflow, name string) bool {
	tr.mu.Lock()
	e := tr.entries[trackKey{workflow, name}]
	var s *Session
	if e != nil {
		s = e.s
	}
	tr.mu.Unlock()
	if s == nil {
		return false
	}
	s.Touch()
	return true
}

func (tr *Tracker) namesLocked(workflow string) []string {
	names := make([]string, 0, len(tr.byWF[workflow]))
	for n := range tr.byWF[workflow] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
