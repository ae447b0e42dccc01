// Room: the allocator, tasks bound to computers with a cap of concurrent
// sessions per computer and a FIFO queue at the cap. Allocator.mu guards the
// task table, every computer's slots, queue and counters, the leak table and
// the allocator's state. It is never held across a launch, a close, file
// I/O or a hook; audit events are queued under it (so their order is the
// order of the transitions) and run later on the event queue's goroutine.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
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
	Time     time.Time
	Kind     AuditKind
	Task     string // the task; empty only for a leak of a session launched for a waiter who left
	Computer string
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
	task, computer, owner string
	s                     *Session
	waited                time.Duration
}

// Session returns the leased session. It stays the task's until Finish
// (or, for a shared lease, until its owner finishes).
func (l *Lease) Session() *Session { return l.s }

// Task returns the task holding the lease.
func (l *Lease) Task() string { return l.task }

// Computer returns the computer the session runs on.
func (l *Lease) Computer() string { return l.computer }

// Owner returns the task whose session it is: Task, unless the lease came
// from AcquireOptions.ShareWith.
func (l *Lease) Owner() string { return l.owner }

// Shared reports whether the session belongs to another task.
func (l *Lease) Shared() bool { return l.owner != l.task }

// Waited returns how long the acquire waited in the queue (zero if it did
// not queue).
func (l *Lease) Waited() time.Duration { return l.waited }

// ComputerStats is a snapshot of one computer's slots and counters (or of
// their total). Counters never reset. It is a plain value.
type ComputerStats struct {
	Cap        int           // concurrent sessions allowed
	InUse      int           // tasks holding a session of their own
	Starting   int           // slots whose browser is being launched
	Closing    int           // slots whose session is being closed
	Waiting    int           // acquires in the queue now
	OldestWait time.Duration // how long the head of the queue has waited
	Sharing    int           // tasks using another task's session (no slot)
	Leaked     int           // sessions that could not be closed and await a retry

	Acquires          uint64               // acquires that returned a session (own or shared)
	Waits             uint64               // acquires that queued
	WaitTime          time.Duration        // total time spent in the queue, over all waits that ended
	CancelledAcquires uint64               // acquires that left the queue or a launch: context, Finish or Close
	QueueTimeouts     uint64               // acquires whose budget ran out
	Rejections        uint64               // acquires refused at once: PolicyReject or a full queue
	QueueFull         uint64               // of Rejections, those refused by MaxQueue
	LaunchFailures    uint64               // acquires whose browser did not start
	Reclaims          map[TaskState]uint64 // sessions closed at Finish, by terminal state
	ShutdownReclaims  uint64               // sessions closed by Allocator.Close
	Leaks             uint64               // sessions ever counted as leaked
	LeaksRecovered    uint64               // leaked sessions a retry closed later
}

// AllocatorStats is a snapshot of an Allocator: each computer's stats and
// their total (Total.Cap is the sum of the caps, Total.OldestWait the
// longest head-of-queue wait).
type AllocatorStats struct {
	Total     ComputerStats
	Computers map[string]ComputerStats
}

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
	cfg    AllocatorConfig // effective values
	log    *slog.Logger
	events *eventQueue // nil without AllocatorConfig.Audit
	comps  map[string]*computer
	order  []*computer // as configured

	ctx    context.Context // the allocator's lifetime; launches run on it
	cancel context.CancelFunc
	wg     sync.WaitGroup // launches, closes, the budget sweeper and the leak retry loop

	// How sessions are opened, closed and closed again after a leak: the
	// computer's pool, or stubs in the benchmark of the queue itself.
	openFn  func(context.Context, *computer) (*Session, error)
	closeFn func(*Session, CloseReason) error
	retryFn func(*Session) error

	sweepKick chan struct{} // buffered 1: a deadline earlier than sweepAt arrived

	mu       sync.Mutex
	tasks    map[string]*taskRec      // guarded by mu; bound tasks
	browsers map[string]*browserClaim // guarded by mu; by browser key (AcquireFor)
	leaks    map[*Session]*leak       // guarded by mu; sessions whose close failed
	retrying bool                     // guarded by mu; the leak retry loop is running
	sweeping bool                     // guarded by mu; the budget sweeper is running
	sweepAt  time.Time                // guarded by mu; when the sweeper wakes next
	closed   bool                     // guarded by mu
}

// computer is one Computer's live state. name, pool and cap are fixed; every
// other field is guarded by Allocator.mu.
//
// Slots: used counts every slot taken, whatever holds it: a task's own
// lease, a launch (claimed by a waiter or orphaned), a session being closed,
// or a grant whose waiter has not started its launch yet. used never exceeds
// cap. A freed slot goes straight to the head of the queue (no barging).
type computer struct {
	name string
	pool *Pool
	cap  int

	used       int           // guarded by Allocator.mu
	leased     int           // guarded by Allocator.mu; tasks holding their own session
	starting   int           // guarded by Allocator.mu; launches under way
	closing    int           // guarded by Allocator.mu; sessions being closed
	sharing    int           // guarded by Allocator.mu
	leaked     int           // guarded by Allocator.mu
	head, tail *waiter       // guarded by Allocator.mu; the FIFO queue
	nwait      int           // guarded by Allocator.mu; queue length
	sorted     bool          // guarded by Allocator.mu; queued deadlines are in queue order (no deadline last)
	orphans    []*launchRun  // guarded by Allocator.mu; launches whose waiter left, none waiting for them
	st         ComputerStats // guarded by Allocator.mu; counters
}

// taskRec is one bound task. Its fields are guarded by Allocator.mu.
type taskRec struct {
	name  string
	c     *computer
	lease *Lease  // the session the task holds, or nil
	w     *waiter // the acquire in progress, or nil

	// The first acquire's waiter comes with the record (one allocation
	// less on the common bind, acquire, finish path); later ones are new.
	first     waiter
	firstUsed bool
}

// waiter is one acquire in progress, from joining the queue (or taking a
// free slot) until it returns. wake (buffered, capacity 1) is signalled
// under Allocator.mu whenever its state changes: granted a slot, handed a
// launch, done. Every other field but the fixed ones is guarded by
// Allocator.mu.
type waiter struct {
	t        *taskRec
	c        *computer
	enq      time.Time // when it queued (zero if it never queued)
	deadline time.Time // when its budget runs out (zero: no budget)
	ahead    int       // tasks ahead when it queued
	wake     chan struct{}

	prev, next *waiter       // guarded by Allocator.mu; c's queue
	queued     bool          // guarded by Allocator.mu; in c's queue
	granted    bool          // guarded by Allocator.mu; holds a slot
	launch     *launchRun    // guarded by Allocator.mu; the launch its slot carries, if any
	waited     time.Duration // guarded by Allocator.mu; time spent in the queue
	done       bool          // guarded by Allocator.mu; lease or err is the answer
	lease      *Lease        // guarded by Allocator.mu
	err        error         // guarded by Allocator.mu
}

// signalLocked wakes w's Acquire if it is not already due to wake.
func (w *waiter) signalLocked() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// launchRun is one browser launch for a slot. c is fixed; every other field
// is guarded by Allocator.mu.
type launchRun struct {
	c        *computer
	claim    *waiter  // guarded by Allocator.mu; who gets the session; nil once orphaned
	finished bool     // guarded by Allocator.mu; s and err are set
	s        *Session // guarded by Allocator.mu
	err      error    // guarded by Allocator.mu
	lease    Lease    // guarded by Allocator.mu; the lease made of it (one allocation with the launch)
}

// leak is a session whose close failed.
type leak struct {
	c     *computer
	task  string
	state TaskState
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
		closeFn:   closeForTask,
		retryFn:   retryClose,
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

// Acquire returns a lease on the task's own session on the computer the task
// is bound to (binding it to opts.Computer first if it is not bound yet).
//
// A task holds at most one session. Acquiring again while it holds a live
// one returns the same lease; if its session ended meanwhile (a crash, idle
// reclaim), a new one is launched in the task's slot without queueing.
//
// When the computer has a free slot and nobody is queued, the slot is taken
// at once and a browser launched. Otherwise, with PolicyReject the call
// fails at once with ErrRejected; with PolicyQueue it joins the computer's
// FIFO queue (ErrQueueFull if MaxQueue waiters are already there) and waits
// until a slot is handed to it, its budget runs out (ErrQueueTimeout) or ctx
// ends. A queued task never preempts a running one: slots free only through
// Finish, a failed launch or an acquire that leaves.
//
// On failure Acquire returns an *Error and the task holds no slot: a slot
// handed to it as it left goes to the next waiter, and a browser launching
// for it goes to the next waiter or is closed; no browser is launched for a
// waiter that has left. ctx bounds the wait only (a session that arrives
// as ctx ends may still be returned). Launches run on the allocator's own
// context, bounded by the pool's LaunchTimeout.
func (a *Allocator) Acquire(ctx context.Context, task string, opts AcquireOptions) (*Lease, error) {
	const op = "Allocator.Acquire"
	if err := checkTaskID(op, "task", task); err != nil {
		return nil, err
	}
	if opts.Policy != PolicyQueue && opts.Policy != PolicyReject {
		e := allocError(op, task, ErrInvalidArgument, fmt.Sprintf("unknown policy %v", opts.Policy))
		e.Hint = "use PolicyQueue or PolicyReject"
		return nil, e
	}
	if opts.ShareWith != "" {
		if opts.ShareWith == task {
			e := allocError(op, task, ErrInvalidArgument, "a task cannot share its own session")
			e.Hint = "drop ShareWith to use the task's own session"
			return nil, e
		}
		if err := checkTaskID(op, "task to share with", opts.ShareWith); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		// A context that ended before the call happened before it: fail
		// even if a slot is free (the semaphore's rule).
		return nil, a.ctxErr(op, task, ctx, 0, nil)
	}
	budget := opts.Budget
	if budget == 0 {
		budget = a.cfg.Budget
	}

	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, a.closedErr(op, task)
	}
	computer := opts.Computer
	if computer == "" && opts.ShareWith != "" && a.tasks[task] == nil {
		if o := a.tasks[opts.ShareWith]; o != nil {
			computer = o.c.name
		}
	}
	t, err := a.bindLocked(op, task, computer)
	if err != nil {
		a.mu.Unlock()
		return nil, err
	}
	if t.w != nil {
		a.mu.Unlock()
		return nil, allocError(op, task, ErrTaskBusy, fmt.Sprintf("task %s already has an acquire in progress on computer %q", task, t.c.name))
	}
	c := t.c
	relaunch := false
	if l := t.lease; l != nil {
		alive := l.s.Err() == nil // Session.mu is a leaf lock: never held while taking ours
		wantOwner := task
		if opts.ShareWith != "" {
			wantOwner = opts.ShareWith
		}
		switch {
		case alive && l.owner == wantOwner:
			a.mu.Unlock()
			return l, nil
		case alive:
			a.mu.Unlock()
			what := "its own session " + l.s.id
			if l.Shared() {
				what = fmt.Sprintf("session %s shared from task %s", l.s.id, l.owner)
			}
			return nil, allocError(op, task, ErrTaskBusy, fmt.Sprintf("task %s already holds %s", task, what))
		case l.Shared():
			// The owner's session ended under it: the share is over.
			t.lease = nil
			c.sharing--
			a.emitLocked(AuditEvent{Kind: AuditReleased, Task: task, Computer: c.name, Session: l.s.id, Owner: l.owner})
		default:
			// Its session ended on its own (crash, idle reclaim); the slot
			// is still the task's.
			t.lease = nil
			c.leased--
			a.emitLocked(AuditEvent{Kind: AuditReclaimed, Task: task, Computer: c.name, Session: l.s.id, Reason: l.s.closeReason()})
			if opts.ShareWith != "" {
				a.releaseLocked(c)
				break
			}
			relaunch = true
		}
	}
	if opts.ShareWith != "" {
		lease, err := a.shareLocked(op, t, opts.ShareWith)
		a.mu.Unlock()
		return lease, err
	}
	w := &t.first
	if t.firstUsed {
		w = new(waiter)
	}
	t.firstUsed = true
	w.t, w.c = t, c
	switch {
	case relaunch:
		w.granted = true // in the task's own slot
	case len(c.orphans) > 0:
		// A launch whose waiter left and that nobody claimed yet: take it
		// over instead of starting another browser. (Orphans exist only
		// while the queue is empty, so this is no barging.)
		l := c.orphans[0]
		c.orphans = slices.Delete(c.orphans, 0, 1)
		w.granted, w.launch, l.claim = true, l, w
	case c.used < c.cap && c.head == nil:
		c.used++
		w.granted = true
	case opts.Policy == PolicyReject:
		c.st.Rejections++
		e := allocError(op, task, ErrRejected, fmt.Sprintf("computer %q has all %d of its sessions in use and the acquire asked for PolicyReject", c.name, c.cap))
		if c.nwait > 0 {
			e.Detail += fmt.Sprintf("; %d tasks are queued", c.nwait)
		}
		a.emitLocked(AuditEvent{Kind: AuditRejected, Task: task, Computer: c.name, Err: e})
		a.mu.Unlock()
		return nil, e
	case a.cfg.MaxQueue > 0 && c.nwait >= a.cfg.MaxQueue:
		c.st.Rejections++
		c.st.QueueFull++
		e := allocError(op, task, ErrQueueFull, fmt.Sprintf("computer %q has all %d of its sessions in use and %d tasks already waiting (MaxQueue %d)", c.name, c.cap, c.nwait, a.cfg.MaxQueue))
		a.emitLocked(AuditEvent{Kind: AuditRejected, Task: task, Computer: c.name, Err: e})
		a.mu.Unlock()
		return nil, e
	default:
		w.enq = time.Now()
		w.ahead = c.nwait
		if budget > 0 {
			w.deadline = w.enq.Add(budget)
			a.watchDeadlineLocked(w.deadline)
		}
		c.pushLocked(w)
		c.st.Waits++
		a.emitLocked(AuditEvent{Time: w.enq, Kind: AuditQueued, Task: task, Computer: c.name, Ahead: w.ahead})
	}
	w.wake = make(chan struct{}, 1)
	t.w = w
	var inline *launchRun
	queued := w.queued
	if !queued {
		inline = a.startLaunchLocked(ctx, w)
	}
	a.mu.Unlock()
	if inline != nil {
		if lease, err, ok := a.runLaunch(inline, w); ok {
			return lease, err
		}
	}
	return a.await(ctx, op, w)
}

// shareLocked gives t a lease on the session of the task named owner.
func (a *Allocator) shareLocked(op string, t *taskRec, owner string) (*Lease, error) {
	o := a.tasks[owner]
	if o != nil && o.c != t.c {
		e := allocError(op, t.name, ErrWrongComputer, fmt.Sprintf("task %s is bound to computer %q, but task %s's session is on %q", t.name, t.c.name, owner, o.c.name))
		e.Hint = fmt.Sprintf("share only with tasks on computer %q, or drop ShareWith to get a session of the task's own", t.c.name)
		return nil, e
	}
	if o == nil || o.lease == nil || o.lease.Shared() || o.lease.s.Err() != nil {
		return nil, allocError(op, t.name, ErrNotShared, fmt.Sprintf("task %s holds no live session of its own on computer %q", owner, t.c.name))
	}
	l := &Lease{task: t.name, computer: t.c.name, owner: owner, s: o.lease.s}
	t.lease = l
	t.c.sharing++
	t.c.st.Acquires++
	a.emitLocked(AuditEvent{Kind: AuditAllocated, Task: t.name, Computer: t.c.name, Session: l.s.id, Owner: owner})
	return l, nil
}

// startLaunchLocked starts the launch of w's slot unless its slot already
// carries one. It returns the launch when the caller must run it on its own
// goroutine: a caller whose context cannot end can only be taken away by
// Finish or Close, which hand the launch on themselves, so it needs no
// goroutine of ours.
func (a *Allocator) startLaunchLocked(ctx context.Context, w *waiter) *launchRun {
	if w.launch != nil {
		return nil
	}
	l := &launchRun{c: w.c, claim: w}
	w.launch = l
	w.c.starting++
	a.wg.Add(1)
	if ctx.Done() == nil {
		return l
	}
	go a.runLaunch(l, nil)
	return nil
}

// await waits until w is answered (a lease or an error), starting the
// launch of a slot handed to it from the queue. ctx bounds the wait; the
// budget sweeper ends it if its budget runs out in the queue. On failure w
// holds no slot.
func (a *Allocator) await(ctx context.Context, op string, w *waiter) (*Lease, error) {
	for {
		select {
		case <-w.wake:
		case <-ctx.Done():
			return a.leave(ctx, op, w)
		}
		a.mu.Lock()
		if w.done {
			lease, err := w.lease, w.err
			a.mu.Unlock()
			return lease, err
		}
		if !w.granted {
			a.mu.Unlock()
			continue
		}
		if ctx.Err() != nil {
			// Never launch for a waiter that has left.
			a.mu.Unlock()
			return a.leave(ctx, op, w)
		}
		inline := a.startLaunchLocked(ctx, w)
		a.mu.Unlock()
		if inline != nil {
			if lease, err, ok := a.runLaunch(inline, w); ok {
				return lease, err
			}
		}
	}
}

// leave takes w out after its context ended. A slot handed to it meanwhile
// goes to the next waiter (or back to the computer); so does a launch the
// slot carries. An answer that came first wins.
func (a *Allocator) leave(ctx context.Context, op string, w *waiter) (*Lease, error) {
	c, task := w.c, w.t.name
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.done {
		return w.lease, w.err
	}
	waited := a.dropLocked(w)
	c.st.CancelledAcquires++
	err := a.ctxErr(op, task, ctx, waited, c)
	a.emitLocked(AuditEvent{Kind: AuditCancelled, Task: task, Computer: c.name, Wait: waited, Err: err})
	return nil, err
}

// watchDeadlineLocked makes sure the budget sweeper wakes by d.
func (a *Allocator) watchDeadlineLocked(d time.Time) {
	if !a.sweeping {
		a.sweeping, a.sweepAt = true, d
		a.wg.Add(1)
		go a.sweepBudgets()
		return
	}
	if d.Before(a.sweepAt) {
		a.sweepAt = d
		select {
		case a.sweepKick <- struct{}{}:
		default:
		}
	}
}

// sweepBudgets ends the queued acquires whose budget ran out, sleeping
// until the earliest deadline left, and exits when no queued acquire has
// one. One goroutine and one timer serve every waiter: a timer per waiter
// costs more than the rest of an acquire under contention.
func (a *Allocator) sweepBudgets() {
	defer a.wg.Done()
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	for {
		a.mu.Lock()
		now := time.Now()
		var next time.Time
		for _, c := range a.order {
			if d := a.expireLocked(c, now); !d.IsZero() && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		if next.IsZero() || a.closed {
			a.sweeping = false
			a.mu.Unlock()
			return
		}
		a.sweepAt = next
		a.mu.Unlock()
		tm.Reset(next.Sub(now))
		select {
		case <-tm.C:
		case <-a.sweepKick:
			tm.Stop()
		case <-a.ctx.Done():
			tm.Stop()
			a.mu.Lock()
			a.sweeping = false
			a.mu.Unlock()
			return
		}
	}
}

// expireLocked ends c's queued acquires whose deadline is not after now and
// returns the earliest deadline left (zero if none). While c's deadlines
// are in queue order (every acquire with the same budget) it stops at the
// first one not yet due.
func (a *Allocator) expireLocked(c *computer, now time.Time) time.Time {
	var next time.Time
	for w := c.head; w != nil; {
		after := w.next
		switch {
		case w.deadline.IsZero():
			if c.sorted {
				return next // in order, no deadline here means none behind
			}
		case !w.deadline.After(now):
			a.timeoutLocked(w)
		default:
			if next.IsZero() || w.deadline.Before(next) {
				next = w.deadline
			}
			if c.sorted {
				return next
			}
		}
		w = after
	}
	return next
}

// timeoutLocked ends w's acquire with ErrQueueTimeout.
func (a *Allocator) timeoutLocked(w *waiter) {
	c, task := w.c, w.t.name
	still := 0
	for x := w.prev; x != nil; x = x.prev {
		still++
	}
	waited := a.dropLocked(w)
	c.st.QueueTimeouts++
	e := allocError("Allocator.Acquire", task, ErrQueueTimeout, fmt.Sprintf("waited %v for a free slot on computer %q (cap %d, all in use); %d %s ahead when it queued, %d still ahead",
		roundWait(waited), c.name, c.cap, w.ahead, plural(w.ahead, "task was", "tasks were"), still))
	w.err = e
	w.signalLocked()
	a.emitLocked(AuditEvent{Kind: AuditQueueTimeout, Task: task, Computer: c.name, Wait: waited, Ahead: still, Err: e})
}

// dropLocked ends w's acquire without an answer for it: w leaves the queue,
// or the slot it holds (with any launch) is handed on. It returns the time
// w spent in the queue.
func (a *Allocator) dropLocked(w *waiter) time.Duration {
	c := w.c
	w.done = true
	w.t.w = nil
	if w.queued {
		c.removeLocked(w)
		w.waited = time.Since(w.enq)
		c.st.WaitTime += w.waited
	} else if w.granted {
		s := a.passOnLocked(c, w.launch)
		a.startCloseLocked(c, s, "", "", ReasonAbandoned)
	}
	return w.waited
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// roundWait keeps error texts short and stable.
func roundWait(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func (a *Allocator) ctxErr(op, task string, ctx context.Context, waited time.Duration, c *computer) error {
	detail := "the caller's context ended before the acquire began"
	if c != nil {
		detail = fmt.Sprintf("gave up after %v waiting for a session on computer %q; the task holds no slot", roundWait(waited), c.name)
	}
	e := allocError(op, task, ctx.Err(), detail)
	e.Err = context.Cause(ctx)
	if e.Err == ctx.Err() {
		e.Err = nil
	}
	e.Hint = "retry with a longer deadline if the task still needs a browser"
	return e
}

// runLaunch opens one session on the allocator's own context, so a caller
// who leaves does not kill a browser the next waiter can use. The session
// goes to the launch's claimant; if nobody claims it, to the head of the
// queue, or it is closed. When self (the caller running the launch on its
// own goroutine) is the claimant, its answer is returned with ok.
func (a *Allocator) runLaunch(l *launchRun, self *waiter) (lease *Lease, err error, ok bool) {
	defer a.wg.Done()
	s, oerr := a.openFn(a.ctx, l.c)
	a.mu.Lock()
	defer a.mu.Unlock()
	l.s, l.err, l.finished = s, oerr, true
	l.c.starting--
	if w := l.claim; w != nil {
		a.deliverLocked(w, l)
		if w == self {
			return w.lease, w.err, true
		}
		return nil, nil, false
	}
	if i := slices.Index(l.c.orphans, l); i >= 0 {
		l.c.orphans = slices.Delete(l.c.orphans, i, i+1)
	}
	s = a.passOnLocked(l.c, l)
	a.startCloseLocked(l.c, s, "", "", ReasonAbandoned)
	return nil, nil, false
}

// deliverLocked answers w with the finished launch l: a lease on its
// session, or its error (giving the slot back).
func (a *Allocator) deliverLocked(w *waiter, l *launchRun) {
	c, t := w.c, w.t
	w.done = true
	t.w = nil
	if l.err != nil {
		c.st.LaunchFailures++
		a.releaseLocked(c)
		a.emitLocked(AuditEvent{Kind: AuditLaunchFailed, Task: t.name, Computer: c.name, Wait: w.waited, Err: l.err})
		w.err = l.err
		var e *Error
		if errors.As(l.err, &e) {
			cp := *e
			cp.Task = t.name
			w.err = &cp
		}
	} else {
		l.lease = Lease{task: t.name, computer: c.name, owner: t.name, s: l.s, waited: w.waited}
		w.lease = &l.lease
		t.lease = w.lease
		c.leased++
		c.st.Acquires++
		a.emitLocked(AuditEvent{Kind: AuditAllocated, Task: t.name, Computer: c.name, Session: l.s.id, Wait: w.waited})
	}
	w.signalLocked()
}

// releaseLocked frees one slot of c: it goes to the head of the queue if
// any, else back to the computer.
func (a *Allocator) releaseLocked(c *computer) { a.passOnLocked(c, nil) }

// passOnLocked hands a slot, with the launch l it carries (nil for a bare
// slot), to the head of c's queue, x/sync/semaphore style: the slot never
// becomes free in between, so an arrival cannot barge ahead of the queue.
// Without waiters a bare slot (or a failed launch's) is freed, a launch
// under way is orphaned (the next arrival or its own end takes care of it),
// and a launched session is returned for the caller to close (its slot
// frees when the close ends).
func (a *Allocator) passOnLocked(c *computer, l *launchRun) *Session {
	if l != nil && l.finished && l.err != nil {
		l = nil // a failed launch passes on as a bare slot: nobody inherits its error
	}
	if w := c.popLocked(); w != nil {
		w.granted, w.launch = true, l
		w.waited = time.Since(w.enq)
		c.st.WaitTime += w.waited
		if l == nil {
			w.signalLocked() // it starts the launch itself, unless it has left
			return nil
		}
		l.claim = w
		if l.finished {
			a.deliverLocked(w, l)
		} else {
			w.signalLocked()
		}
		return nil
	}
	switch {
	case l == nil:
		c.used--
	case !l.finished:
		l.claim = nil
		c.orphans = append(c.orphans, l)
	default:
		return l.s
	}
	return nil
}

// startCloseLocked closes s (when not nil) on a goroutine of the
// allocator; its slot is freed when the close ends.
func (a *Allocator) startCloseLocked(c *computer, s *Session, task string, state TaskState, reason CloseReason) {
	if s == nil {
		return
	}
	c.closing++
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.reclaim(c, s, task, state, reason)
	}()
}

// reclaim closes s through the pool's close path, frees its slot (handing
// it to the head of the queue) and accounts for the result. It returns the
// leak error, if any. c.closing was counted by the caller.
func (a *Allocator) reclaim(c *computer, s *Session, task string, state TaskState, reason CloseReason) error {
	cerr := a.closeFn(s, reason)
	a.mu.Lock()
	defer a.mu.Unlock()
	c.closing--
	a.releaseLocked(c)
	ev := AuditEvent{Task: task, Computer: c.name, Session: s.id, State: state, Reason: reason}
	if cerr != nil {
		c.leaked++
		c.st.Leaks++
		a.leaks[s] = &leak{c: c, task: task, state: state}
		e := allocError("Allocator.Finish", task, ErrLeaked, fmt.Sprintf("session %s on computer %q", s.id, c.name))
		e.Session, e.Err = s.id, cerr
		if a.cfg.LeakRetry > 0 {
			e.Hint = fmt.Sprintf("nothing to do for this task: the allocator retries the close every %v and reports it in Stats().Leaked; check the computer if the count keeps growing", a.cfg.LeakRetry)
		}
		ev.Kind, ev.Err = AuditLeaked, e
		a.emitLocked(ev)
		a.log.Warn("browserpool: a task's session could not be closed; counted as leaked", "task", task, "computer", c.name, "session", s.id, "err", cerr)
		if !a.retrying && !a.closed && a.cfg.LeakRetry > 0 {
			a.retrying = true
			a.wg.Add(1)
			go a.retryLeaks()
		}
		return e
	}
	if task == "" {
		return nil // a browser launched for a waiter who left: no task to account to
	}
	switch reason {
	case ReasonShutdown:
		c.st.ShutdownReclaims++
	default:
		c.st.Reclaims[state]++
	}
	ev.Kind = AuditReclaimed
	a.emitLocked(ev)
	return nil
}

// retryLeaks tries again, every LeakRetry, to close the leaked sessions,
// until none is left or the allocator closes.
func (a *Allocator) retryLeaks() {
	defer a.wg.Done()
	tick := time.NewTicker(a.cfg.LeakRetry)
	defer tick.Stop()
	for {
		select {
		case <-a.ctx.Done():
			a.mu.Lock()
			a.retrying = false
			a.mu.Unlock()
			return
		case <-tick.C:
		}
		if a.retryLeaksOnce() == 0 {
			return
		}
	}
}

// retryLeaksOnce tries each leaked session once and returns how many are
// left; at zero it marks the retry loop stopped.
func (a *Allocator) retryLeaksOnce() int {
	a.mu.Lock()
	todo := make([]*Session, 0, len(a.leaks))
	for s := range a.leaks {
		todo = append(todo, s)
	}
	a.mu.Unlock()
	slices.SortFunc(todo, func(x, y *Session) int { return strings.Compare(x.id, y.id) })
	for _, s := range todo {
		if err := a.retryFn(s); err != nil {
			a.log.Warn("browserpool: a leaked session still cannot be closed", "session", s.id, "err", err)
			continue
		}
		a.mu.Lock()
		if lk := a.leaks[s]; lk != nil {
			delete(a.leaks, s)
			lk.c.leaked--
			lk.c.st.LeaksRecovered++
			a.emitLocked(AuditEvent{Kind: AuditLeakRecovered, Task: lk.task, Computer: lk.c.name, Session: s.id, State: lk.state})
		}
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.leaks)
	if n == 0 {
		a.retrying = false
	}
	return n
}

// Finish records that task reached a terminal state (TaskCompleted,
// TaskFailed or TaskCancelled) and forgets the task and its binding. Its own
// session is reclaimed through the pool's close path (reason task_end) and
// its slot handed to the head of the queue once the close ends; a session
// it only shared is left to its owner. An acquire of the task still in
// progress ends with ErrTaskFinished, giving back its slot.
//
// Finish returns nil once the session is closed, an ErrLeaked error if it
// could not be closed (it is counted in Stats and retried), ErrNotBound for
// a task the allocator does not know, or ctx's error if ctx ends first (the
// close goes on).
func (a *Allocator) Finish(ctx context.Context, task string, state TaskState) error {
	const op = "Allocator.Finish"
	switch state {
	case TaskCompleted, TaskFailed, TaskCancelled:
	default:
		e := allocError(op, task, ErrInvalidArgument, fmt.Sprintf("%q is not a terminal task state", state))
		e.Hint = "use TaskCompleted, TaskFailed or TaskCancelled"
		return e
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return a.closedErr(op, task)
	}
	t := a.tasks[task]
	if t == nil {
		a.mu.Unlock()
		return allocError(op, task, ErrNotBound, fmt.Sprintf("task %s is not known: never bound, or already finished", task))
	}
	delete(a.tasks, task)
	a.releaseClaimsLocked(task)
	c := t.c
	if t.w != nil {
		kerr := allocError("Allocator.Acquire", task, ErrTaskFinished, fmt.Sprintf("Finish(%s) ended the task while it waited for a session on computer %q", state, c.name))
		a.kickLocked(t.w, kerr)
	}
	l := t.lease
	t.lease = nil
	switch {
	case l == nil:
		a.mu.Unlock()
		return nil
	case l.Shared():
		c.sharing--
		a.emitLocked(AuditEvent{Kind: AuditReleased, Task: task, Computer: c.name, Session: l.s.id, Owner: l.owner, State: state})
		a.mu.Unlock()
		return nil
	}
	c.leased--
	c.closing++
	a.wg.Add(1)
	a.mu.Unlock()

	if ctx.Done() == nil {
		defer a.wg.Done()
		return a.reclaim(c, l.s, task, state, ReasonTaskEnd)
	}
	done := make(chan error, 1)
	go func() {
		defer a.wg.Done()
		done <- a.reclaim(c, l.s, task, state, ReasonTaskEnd)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		e := allocError(op, task, ctx.Err(), fmt.Sprintf("stopped waiting for session %s to close; the close goes on", l.s.id))
		e.Session = l.s.id
		e.Hint = "nothing to do: the session is reclaimed in the background"
		return e
	}
}

// kickLocked ends w's acquire for Finish or Close with err: it leaves the
// queue, or hands on the slot (and launch) it holds.
func (a *Allocator) kickLocked(w *waiter, err error) {
	waited := a.dropLocked(w)
	w.err = err
	w.signalLocked()
	w.c.st.CancelledAcquires++
	a.emitLocked(AuditEvent{Kind: AuditCancelled, Task: w.t.name, Computer: w.c.name, Wait: waited, Err: err})
}

// Stats returns a snapshot of every computer's slots and counters, and
// their total.
func (a *Allocator) Stats() AllocatorStats {
	now := time.Now()
	out := AllocatorStats{Computers: make(map[string]ComputerStats, len(a.order))}
	out.Total.Reclaims = make(map[TaskState]uint64)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.order {
		st := c.st
		st.Reclaims = make(map[TaskState]uint64, len(c.st.Reclaims))
		for k, v := range c.st.Reclaims {
			st.Reclaims[k] = v
			out.Total.Reclaims[k] += v
		}
		st.Cap, st.InUse, st.Starting, st.Closing = c.cap, c.leased, c.starting, c.closing
		st.Waiting, st.Sharing, st.Leaked = c.nwait, c.sharing, c.leaked
		if c.head != nil {
			st.OldestWait = now.Sub(c.head.enq)
		}
		out.Computers[c.name] = st

		tt := &out.Total
		tt.Cap += st.Cap
		tt.InUse += st.InUse
		tt.Starting += st.Starting
		tt.Closing += st.Closing
		tt.Waiting += st.Waiting
		tt.OldestWait = max(tt.OldestWait, st.OldestWait)
		tt.Sharing += st.Sharing
		tt.Leaked += st.Leaked
		tt.Acquires += st.Acquires
		tt.Waits += st.Waits
		tt.WaitTime += st.WaitTime
		tt.CancelledAcquires += st.CancelledAcquires
		tt.QueueTimeouts += st.QueueTimeouts
		tt.Rejections += st.Rejections
		tt.QueueFull += st.QueueFull
		tt.LaunchFailures += st.LaunchFailures
		tt.ShutdownReclaims += st.ShutdownReclaims
		tt.Leaks += st.Leaks
		tt.LeaksRecovered += st.LeaksRecovered
	}
	return out
}

// Close ends every acquire in progress (they return an ErrPoolClosed
// error), closes the sessions tasks still hold (reason shutdown, in
// parallel), waits for launches and closes under way, tries leaked sessions
// once more, runs queued audit events and stops every goroutine the
// allocator started. It does not close the computers' pools. It is
// idempotent; later calls return nil. Leaks stay visible in Stats.
func (a *Allocator) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	names := make([]string, 0, len(a.tasks))
	for name := range a.tasks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := a.tasks[name]
		if t.w != nil {
			a.kickLocked(t.w, a.closedErr("Allocator.Acquire", name))
		}
		switch l := t.lease; {
		case l == nil:
		case l.Shared():
			t.c.sharing--
		default:
			t.c.leased--
			a.startCloseLocked(t.c, l.s, name, "", ReasonShutdown)
		}
	}
	clear(a.tasks)
	a.mu.Unlock()

	a.cancel() // launches under way stop waiting; the pool closes their browsers
	a.wg.Wait()
	a.mu.Lock()
	leaked := len(a.leaks)
	a.mu.Unlock()
	if leaked > 0 && a.cfg.LeakRetry > 0 {
		a.retryLeaksOnce()
	}
	if a.events != nil {
		a.events.close()
	}
	return nil
}

// emitLocked queues ev for the Audit hook. Queueing under a.mu keeps events
// in transition order; the hook itself runs later, without the lock.
func (a *Allocator) emitLocked(ev AuditEvent) {
	if a.events != nil {
		a.queueLocked(&ev)
	}
}

// queueLocked copies ev into the event queue. It is apart from emitLocked
// so that without an Audit hook no event reaches the heap.
func (a *Allocator) queueLocked(p *AuditEvent) {
	ev := *p
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	audit := a.cfg.Audit
	a.events.emit(func() { audit(ev) })
}

// pushLocked appends w to c's queue.
func (c *computer) pushLocked(w *waiter) {
	if t := c.tail; t != nil && !w.deadline.IsZero() && (t.deadline.IsZero() || w.deadline.Before(t.deadline)) {
		c.sorted = false
	}
	w.prev, w.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = w
	} else {
		c.head = w
	}
	c.tail = w
	w.queued = true
	c.nwait++
}

// removeLocked takes w out of c's queue.
func (c *computer) removeLocked(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		c.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		c.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	c.nwait--
	if c.nwait == 0 {
		c.sorted = true
	}
}

// popLocked takes the head of c's queue, or returns nil.
func (c *computer) popLocked() *waiter {
	w := c.head
	if w != nil {
		c.removeLocked(w)
	}
	return w
}

// closeForTask closes s through its pool's one close path; the error says
// what the close left behind (then the session counts as leaked).
func closeForTask(s *Session, reason CloseReason) error { return s.p.closeSession(s, reason, nil) }

// retryClose retries a leaked session's cleanup through its pool.
func retryClose(s *Session) error { return s.p.retryClose(s) }
