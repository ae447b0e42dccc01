// Room: the allocator's types and API: configuration, tasks, leases,
// binding. Allocator.mu guards the task table, every computer's slots,
// queue and counters, the leak table, the identity claims and the
// allocator's state (the fields say which); it is never held across a
// launch, a close, file I/O or a hook. Audit events are queued under it (so
// their order is the order of the transitions) and run later on the event
// queue's goroutine. The queue and hand-off live in allocator_queue.go and
// allocator_acquire.go, terminal states, leaks and stats in
// allocator_reclaim.go, identity keying in allocator_identity.go. The
// allocator reaches its computers' sessions only through the seam
// (pool_seam.go).

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Allocator defaults.
const (
	// DefaultComputerCap is the number of concurrent sessions a computer
	// serves when Computer.Cap is zero.
	DefaultComputerCap = 4
	// DefaultQueueBudget is how long an acquire waits in a computer's queue
	// for a free slot before it fails with ErrQueueTimeout.
	DefaultQueueBudget = 30 * time.Second
	// DefaultLeakRetry is how often the allocator tries again to close the
	// sessions it could not close.
	DefaultLeakRetry = time.Minute
)

// Allocator errors. Each is the Class of an *Error whose Task field names
// the task and whose detail names the computers involved.
var (
	// ErrNotBound: the task is not bound to a computer (never bound, or
	// already finished). Returned by Allocator.Acquire and Allocator.Finish.
	ErrNotBound = errors.New("task is not bound to a computer")
	// ErrWrongComputer: the task is bound to another computer than the one
	// named. Returned by Allocator.Bind and Allocator.Acquire; the detail
	// names both computers.
	ErrWrongComputer = errors.New("task is bound to another computer")
	// ErrUnknownComputer: no computer has the given name. Returned by
	// Allocator.Bind and Allocator.Acquire.
	ErrUnknownComputer = errors.New("no such computer")
	// ErrRejected: the computer has every slot in use and the acquire asked
	// for PolicyReject. Returned by Allocator.Acquire at once.
	ErrRejected = errors.New("computer is at its session cap")
	// ErrQueueFull: the computer has every slot in use and its queue holds
	// AllocatorConfig.MaxQueue waiters. Returned by Allocator.Acquire at once.
	ErrQueueFull = errors.New("session queue is full")
	// ErrQueueTimeout: no slot freed up within the queue budget. Returned by
	// Allocator.Acquire; the detail says how long it waited and how many
	// tasks were ahead.
	ErrQueueTimeout = errors.New("timed out waiting for a browser session")
	// ErrTaskBusy: the task already holds a session of another kind (its
	// own, or another task's shared one) or has an acquire in progress.
	// Returned by Allocator.Acquire.
	ErrTaskBusy = errors.New("task already has a session or an acquire in progress")
	// ErrNotShared: AcquireOptions.ShareWith names a task that holds no live
	// session of its own. Returned by Allocator.Acquire.
	ErrNotShared = errors.New("no session to share")
	// ErrTaskFinished: Allocator.Finish ended the task while its acquire
	// was waiting. Returned by that Allocator.Acquire.
	ErrTaskFinished = errors.New("task finished while acquiring a session")
	// ErrLeaked: the task's session could not be closed; it is counted in
	// AllocatorStats as leaked and retried. Returned by Allocator.Finish.
	ErrLeaked = errors.New("session could not be closed")
)

func allocError(op, task string, class error, detail string) *Error {
	e := newError(op, class, detail)
	e.Task = task
	return e
}

// Policy says what Allocator.Acquire does when the computer has every slot
// in use.
type Policy int

const (
	// PolicyQueue waits in the computer's FIFO queue, up to the budget
	// (AcquireOptions.Budget, else AllocatorConfig.Budget). It is the zero
	// value.
	PolicyQueue Policy = iota
	// PolicyReject fails at once with ErrRejected.
	PolicyReject
)

// String returns "queue" or "reject".
func (p Policy) String() string {
	switch p {
	case PolicyQueue:
		return "queue"
	case PolicyReject:
		return "reject"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// TaskState is a terminal state of a task, given to Allocator.Finish. The
// text is stable.
type TaskState string

// Terminal task states.
const (
	TaskCompleted TaskState = "completed"
	TaskFailed    TaskState = "failed"
	TaskCancelled TaskState = "cancelled"
)

// AuditKind names an allocator transition. The text is stable.
type AuditKind string

// Audit kinds. Every acquire that queues ends in exactly one of allocated,
// launch_failed, queue_timeout or cancelled; every session the allocator
// hands out ends in exactly one of reclaimed or leaked (and a leaked one
// later in at most one leak_recovered).
const (
	AuditAllocated     AuditKind = "allocated"      // a task got a session (its own, or a shared one)
	AuditQueued        AuditKind = "queued"         // a task joined a computer's queue; Ahead says behind how many
	AuditRejected      AuditKind = "rejected"       // PolicyReject at the cap, or a full queue; Err says which
	AuditQueueTimeout  AuditKind = "queue_timeout"  // the budget ran out in the queue
	AuditCancelled     AuditKind = "cancelled"      // the acquire left: its context ended, Finish, or Close
	AuditLaunchFailed  AuditKind = "launch_failed"  // the computer could not start the task's browser
	AuditReclaimed     AuditKind = "reclaimed"      // the task's session was closed (Finish, or Close)
	AuditLeaked        AuditKind = "leaked"         // the task's session could not be closed
	AuditLeakRecovered AuditKind = "leak_recovered" // a later retry closed a leaked session
	AuditReleased      AuditKind = "released"       // a task using another task's session finished; the session lives on
)

// AuditEvent records one allocator transition, attributable to its task and
// computer. It is a plain value.
type AuditEvent struct {
	Time     time.Time     // when it happened
	Kind     AuditKind     // which transition
	Task     string        // the task; empty only for a leak of a session launched for a waiter who left
	Computer string        // the computer whose cap and queue it concerns
	Session  string        // the session, when one is involved
	Owner    string        // for a shared session: the task that owns it
	Wait     time.Duration // time spent in the queue (allocated, queue_timeout, cancelled, launch_failed)
	Ahead    int           // queued: tasks ahead in the queue; queue_timeout: tasks still ahead
	State    TaskState     // reclaimed, leaked, released: the task's terminal state (empty at Close)
	Reason   CloseReason   // reclaimed, leaked: task_end, or shutdown at Close
	Err      error         // rejected, queue_timeout, cancelled, launch_failed, leaked: the error
}

// Computer is one computer an Allocator hands out sessions on: a Pool and a
// cap of concurrent sessions. A computer is local or leases from a remote
// fleet, whatever its Pool's Launcher does.
type Computer struct {
	// Name identifies the computer to tasks ([A-Za-z0-9_-]{1,64}). Required.
	Name string
	// Pool opens and closes the computer's sessions. Required; one Pool
	// serves one computer. The allocator does not close it.
	Pool *Pool
	// Cap is the number of sessions the computer serves at once. Zero means
	// DefaultComputerCap (4); negative is invalid.
	Cap int
}

// AllocatorConfig configures an Allocator. Only Computers is required.
type AllocatorConfig struct {
	// Computers are the computers tasks are bound to. At least one.
	Computers []Computer
	// Budget is how long an acquire waits in the queue for a free slot.
	// Zero means DefaultQueueBudget (30 s); negative means no budget (the
	// caller's context alone bounds the wait). AcquireOptions.Budget
	// overrides it per call.
	Budget time.Duration
	// MaxQueue bounds each computer's queue: an acquire that would make it
	// longer fails at once with ErrQueueFull. Zero means unbounded;
	// negative is invalid.
	MaxQueue int
	// LeakRetry is how often sessions that could not be closed are tried
	// again. Zero means DefaultLeakRetry (1 minute); negative means never
	// (they stay counted as leaked).
	LeakRetry time.Duration
	// Audit, if set, receives every transition (see AuditKind). Events run
	// one at a time on a goroutine of the allocator, in transition order,
	// never under its lock; a slow audit delays only later events and a
	// panicking one is recovered and logged. Close waits for queued events.
	Audit func(AuditEvent)
	// Logger receives the allocator's log lines. Nil means silent.
	Logger *slog.Logger
}

// AcquireOptions says how Allocator.Acquire gets the task's session. The
// zero value queues on the task's bound computer for the configured budget
// and gives the task its own session.
type AcquireOptions struct {
	// Policy is what to do when the computer has every slot in use: wait in
	// line (PolicyQueue, the zero value) or fail at once (PolicyReject).
	Policy Policy
	// Computer, when set, must be the computer the task is bound to (else
	// ErrWrongComputer naming both). A task not bound yet is bound to it.
	Computer string
	// ShareWith names another task whose session this task uses instead of
	// getting its own: the explicit share strategy. That task must hold a
	// live session of its own on this task's computer (a task not bound yet
	// is bound to that computer). Sharing takes no slot and never queues.
	// The session stays its owner's: it closes when the owner finishes,
	// and the sharer's Finish leaves it open. Without ShareWith a task never
	// gets another task's session.
	ShareWith string
	// Budget overrides AllocatorConfig.Budget for this call. Zero means the
	// configured budget; negative means no budget.
	Budget time.Duration
}

// Lease is a task's hold on a session, from Allocator.Acquire to
// Allocator.Finish. It is safe for concurrent use.
type Lease struct {
	// Written under Allocator.mu before the lease is handed out, fixed
	// after (but owner): its methods need no lock.
	task, computer string
	s              *Session
	waited         time.Duration
	// owner is the task whose session it is; it changes, once, when an
	// AcquireFor owner finishes and hands the session to this holder.
	owner atomic.Pointer[string]
}

// newLease returns a lease of s for task, owned by owner.
func newLease(task, computer, owner string, s *Session, waited time.Duration) *Lease {
	l := &Lease{task: task, computer: computer, s: s, waited: waited}
	l.owner.Store(&owner)
	return l
}

// Session returns the leased session. It stays the task's until Finish
// (or, for a shared lease, until its owner finishes).
func (l *Lease) Session() *Session { return l.s }

// Task returns the task holding the lease.
func (l *Lease) Task() string { return l.task }

// Computer returns the computer the session runs on.
func (l *Lease) Computer() string { return l.computer }

// Owner returns the task whose session it is: Task, unless the lease came
// from AcquireOptions.ShareWith or shares another task's browser
// (AcquireFor). An AcquireFor owner that finishes hands its session to a
// task still holding it, whose lease then has itself as owner.
func (l *Lease) Owner() string { return *l.owner.Load() }

// Shared reports whether the session belongs to another task.
func (l *Lease) Shared() bool { return l.Owner() != l.task }

// Waited returns how long the acquire waited in the queue (zero if it did
// not queue).
func (l *Lease) Waited() time.Duration { return l.waited }

// Allocator hands out browser sessions to tasks. Each task is bound to one
// computer and gets its own session there; each computer serves at most its
// Cap sessions at once. At the cap an acquire waits in a FIFO queue (the
// default, bounded by a budget) or is rejected, as the caller asks. When a
// task reaches a terminal state, Finish reclaims its session through the
// pool's one close path (reason task_end); a session that cannot be closed
// is counted as leaked, reported in Stats and retried.
//
// Create it with NewAllocator. It is safe for concurrent use. The creator
// must call Close, which closes the sessions tasks still hold; it never
// closes the computers' pools.
type Allocator struct {
	// The fields above mu are fixed by NewAllocator (the maps and slices
	// are never written after it); wg, sweepKick and cancel are safe for
	// concurrent use.
	cfg    AllocatorConfig      // effective values
	log    *slog.Logger         // never nil; never written to under mu
	events *eventQueue          // nil without AllocatorConfig.Audit
	comps  map[string]*computer // by name
	order  []*computer          // as configured

	ctx    context.Context    // the allocator's lifetime; launches run on it
	cancel context.CancelFunc // ends ctx, in Close
	wg     sync.WaitGroup     // launches, closes, the budget sweeper and the leak retry loop

	// How sessions are opened, closed and closed again after a leak: the
	// computer's pool through the seam (pool_seam.go), or stubs in the
	// benchmark of the queue itself. Fixed after NewAllocator.
	openFn  func(context.Context, *computer) (*Session, error)
	closeFn func(*Session, CloseReason) error
	retryFn func(*Session) error

	sweepKick chan struct{} // buffered 1: a deadline earlier than sweepAt arrived

	mu        sync.Mutex
	tasks     map[string]*taskRec      // guarded by mu; bound tasks
	browsers  map[string]*browserClaim // guarded by mu; by browser key (AcquireFor)
	leaks     map[*Session]*leak       // guarded by mu; sessions whose close failed
	retrying  bool                     // guarded by mu; the leak retry loop is running
	sweeping  bool                     // guarded by mu; the budget sweeper is running
	sweepAt   time.Time                // guarded by mu; when the sweeper wakes next
	closed    bool                     // guarded by mu
	closeDone chan struct{}            // guarded by mu; made by the first Close, closed when it returns
}

// taskRec is one bound task. name and c are fixed; the other fields are
// guarded by Allocator.mu.
type taskRec struct {
	name  string
	c     *computer
	lease *Lease  // guarded by Allocator.mu; the session the task holds, or nil
	w     *waiter // guarded by Allocator.mu; the acquire in progress, or nil

	// The first acquire's waiter comes with the record (one allocation
	// less on the common bind, acquire, finish path); later ones are new.
	first     waiter // guarded by Allocator.mu
	firstUsed bool   // guarded by Allocator.mu
}

// NewAllocator returns an allocator over cfg.Computers. It validates cfg
// (errors name the field) and starts no goroutine.
func NewAllocator(cfg AllocatorConfig) (*Allocator, error) {
	bad := func(field, why string) error {
		return &Error{Op: "NewAllocator", Class: ErrInvalidConfig, Detail: field + ": " + why, Hint: "fix the AllocatorConfig field named above"}
	}
	if len(cfg.Computers) == 0 {
		return nil, bad("Computers", "at least one computer is required")
	}
	if cfg.MaxQueue < 0 {
		return nil, bad("MaxQueue", fmt.Sprintf("must not be negative (got %d); zero means unbounded", cfg.MaxQueue))
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultQueueBudget
	}
	if cfg.LeakRetry == 0 {
		cfg.LeakRetry = DefaultLeakRetry
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	comps := make(map[string]*computer, len(cfg.Computers))
	pools := make(map[*Pool]string, len(cfg.Computers))
	order := make([]*computer, 0, len(cfg.Computers))
	cfg.Computers = slices.Clone(cfg.Computers)
	for i := range cfg.Computers {
		c := &cfg.Computers[i]
		field := fmt.Sprintf("Computers[%d]", i)
		switch {
		case !isValidID(c.Name):
			return nil, bad(field+".Name", fmt.Sprintf("%q is not 1 to 64 letters, digits, '-' or '_'", c.Name))
		case comps[c.Name] != nil:
			return nil, bad(field+".Name", fmt.Sprintf("%q names two computers", c.Name))
		case c.Pool == nil:
			return nil, bad(field+".Pool", "is required")
		case pools[c.Pool] != "":
			return nil, bad(field+".Pool", fmt.Sprintf("already serves computer %q; give each computer its own Pool", pools[c.Pool]))
		case c.Cap < 0:
			return nil, bad(field+".Cap", fmt.Sprintf("must not be negative (got %d); zero means %d", c.Cap, DefaultComputerCap))
		}
		if c.Cap == 0 {
			c.Cap = DefaultComputerCap
		}
		pools[c.Pool] = c.Name
		cc := &computer{name: c.Name, pool: c.Pool, cap: c.Cap, sorted: true}
		cc.st.Reclaims = make(map[TaskState]uint64)
		comps[c.Name] = cc
		order = append(order, cc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Allocator{
		cfg:       cfg,
		log:       cfg.Logger,
		comps:     comps,
		order:     order,
		ctx:       ctx,
		cancel:    cancel,
		tasks:     make(map[string]*taskRec),
		leaks:     make(map[*Session]*leak),
		sweepKick: make(chan struct{}, 1),
		openFn:    func(ctx context.Context, c *computer) (*Session, error) { return c.pool.Open(ctx) },
		closeFn:   func(s *Session, reason CloseReason) error { return s.closeWith(context.Background(), reason) },
		retryFn:   (*Session).retryCleanup,
	}
	if cfg.Audit != nil {
		a.events = newEventQueue(cfg.Logger)
	}
	return a, nil
}

func checkTaskID(op, kind, id string) error {
	if isValidID(id) {
		return nil
	}
	err := ValidateID(kind, id)
	var e *Error
	if errors.As(err, &e) {
		e.Op = op
	}
	return err
}

// Config returns the allocator's effective configuration (defaults filled
// in).
func (a *Allocator) Config() AllocatorConfig {
	cfg := a.cfg
	cfg.Computers = slices.Clone(a.cfg.Computers)
	return cfg
}

func (a *Allocator) closedErr(op, task string) error {
	e := newError(op, ErrPoolClosed, "the allocator is closed")
	e.Task, e.Hint = task, "create a new Allocator; a closed one cannot be reused"
	return e
}

// computerNames lists the computers for error details (a.order never
// changes, so it needs no lock).
func (a *Allocator) computerNames() string {
	names := make([]string, len(a.order))
	for i, c := range a.order {
		names[i] = c.name
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// Bind binds task to the named computer: every session the task acquires
// runs there. Binding a task again to the same computer does nothing;
// binding it to another fails with ErrWrongComputer until the task is
// finished. A task bound here or by Acquire stays known until Finish, which
// forgets it and its binding; so every task must end with Finish.
func (a *Allocator) Bind(task, computer string) error {
	const op = "Allocator.Bind"
	if err := checkTaskID(op, "task", task); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return a.closedErr(op, task)
	}
	_, err := a.bindLocked(op, task, computer)
	return err
}

// bindLocked returns task's record, binding it to computer when it is not
// bound yet. An empty computer on an unbound task is ErrNotBound.
func (a *Allocator) bindLocked(op, task, computer string) (*taskRec, error) {
	t := a.tasks[task]
	if t != nil {
		if computer != "" && computer != t.c.name {
			return nil, a.wrongComputer(op, task, t.c.name, computer)
		}
		return t, nil
	}
	if computer == "" {
		return nil, allocError(op, task, ErrNotBound, fmt.Sprintf("task %s is bound to no computer; computers: %s", task, a.computerNames()))
	}
	c := a.comps[computer]
	if c == nil {
		e := allocError(op, task, ErrUnknownComputer, fmt.Sprintf("no computer is named %q; computers: %s", computer, a.computerNames()))
		return nil, e
	}
	t = &taskRec{name: task, c: c}
	a.tasks[task] = t
	return t, nil
}

func (a *Allocator) wrongComputer(op, task, bound, asked string) *Error {
	e := allocError(op, task, ErrWrongComputer, fmt.Sprintf("task %s is bound to computer %q, not %q", task, bound, asked))
	e.Hint = fmt.Sprintf("acquire on computer %q (leave AcquireOptions.Computer empty to use the binding), or Finish the task and start a new task on %q", bound, asked)
	return e
}
