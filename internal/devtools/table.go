// Room: the patient handshakes. Table.mu guards one table's handshakes under
// way, its parked connections and its connections in use; it is never held
// across a dial, a CDP call or a close. There is no process-wide table: each
// owner (a browserpool.Pool, or one plain CheckCDP call) has its own, and
// the one-handshake-per-browser rule below holds within a table.
//
// Chrome 144+ may ask its user "Allow remote debugging?" for every new
// websocket connection, and holds the handshake until the user answers. A
// client that gives up and retries opens a second connection, which raises a
// second prompt: one approval turns into an endless loop. So at most one
// handshake per browser is in flight: it waits for the user with no
// handshake timeout of its own (bounded by the table's patience), every
// check and attach for that browser joins it, and a connection the user
// allowed is kept (parked, for the table's park time) for the attach that
// follows instead of being closed and opened again. A lookup searches its
// own table only: two owners of two tables each make their own connection.

package devtools

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/browser"
)

// ErrPatienceOver ends a handshake nobody answered within the patience.
var ErrPatienceOver = errors.New("websocket handshake: patience ran out")

// ErrClosed ends the handshakes of a table that was closed.
var ErrClosed = errors.New("devtools: the connection table was closed")

// Table runs patient handshakes to browsers and keeps their connections:
// under way, parked for a later claim, and claimed (in use). Every goroutine
// it starts ends by Close. A Table is safe for concurrent use; its owner
// must call Close.
type Table struct {
	patience, park time.Duration
	ctx            context.Context // ends every handshake of the table at Close
	cancel         context.CancelCauseFunc
	wg             sync.WaitGroup // handshakes under way

	mu      sync.Mutex
	pending map[string]*Handshake // guarded by mu; handshakes under way and parked connections, by URL
	inUse   map[string]*Handshake // guarded by mu; claimed connections, by URL
	closed  bool                  // guarded by mu
}

// NewTable returns an open table whose handshakes wait at most patience for
// the browser, and whose unclaimed connections stay open for park.
func NewTable(patience, park time.Duration) *Table {
	ctx, cancel := context.WithCancelCause(context.Background())
	ct := &Table{patience: patience, park: park, ctx: ctx, cancel: cancel,
		pending: map[string]*Handshake{}, inUse: map[string]*Handshake{}}
	return ct
}

// Handshake is one patient handshake: its connection, once made, has had
// Browser.getVersion answered. Conn, Version and Err are set before Done is
// closed and read-only after.
type Handshake struct {
	URL   string
	table *Table
	done  chan struct{}

	Conn    *Conn
	Version *browser.GetVersionReply
	Err     error

	claimed bool        // guarded by table.mu; owned by a session, or expired
	parked  *time.Timer // guarded by table.mu; closes a parked connection
}

// Done is closed when the handshake has succeeded or failed.
func (h *Handshake) Done() <-chan struct{} { return h.done }

func (h *Handshake) alive() bool {
	select {
	case <-h.done:
	default:
		return true // still dialing
	}
	if h.Err != nil {
		return false
	}
	select {
	case <-h.Conn.Done():
		return false
	default:
		return true
	}
}

// ForCheck returns the handshake a connectivity check reports on: a
// connection in use, else one under way or parked, else a new handshake.
func (ct *Table) ForCheck(url string) *Handshake { return ct.find(url, true) }

// ForAttach returns the handshake under way or parked for url, or a new one.
func (ct *Table) ForAttach(url string) *Handshake { return ct.find(url, false) }

func (ct *Table) find(url string, inUse bool) *Handshake {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if h := ct.lookupLocked(url, inUse); h != nil {
		return h
	}
	h := &Handshake{URL: url, table: ct, done: make(chan struct{})}
	if ct.closed {
		h.Err = ErrClosed
		close(h.done)
		return h
	}
	ct.pending[url] = h
	ct.wg.Add(1)
	go ct.run(h)
	return h
}

func (ct *Table) lookupLocked(url string, inUse bool) *Handshake {
	if ct.closed {
		return nil
	}
	if h := ct.inUse[url]; inUse && h != nil && h.alive() {
		return h
	}
	if h := ct.pending[url]; h != nil && h.alive() {
		return h
	}
	return nil
}

// run makes h's connection: a websocket handshake with no timeout of its own
// (the user may be looking at a prompt), bounded by the patience and by
// Close, then Browser.getVersion.
func (ct *Table) run(h *Handshake) {
	defer ct.wg.Done()
	ctx, cancel := context.WithTimeoutCause(ct.ctx, ct.patience, ErrPatienceOver)
	defer cancel()
	c, err := Dial(ctx, h.URL)
	var v *browser.GetVersionReply
	if err == nil {
		if v, err = BrowserVersion(ctx, c); err != nil {
			c.Close()
			c = nil
		}
	}
	if err != nil {
		if dl, _ := ctx.Deadline(); ctx.Err() == nil && !time.Now().Before(dl) {
			// The connection's deadline (the patience) fired a moment
			// before the context's timer.
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
	}
	var drop *Conn
	ct.mu.Lock()
	if err == nil && ct.closed {
		drop, c, v, err = c, nil, nil, ErrClosed
	}
	h.Conn, h.Version, h.Err = c, v, err
	if err != nil {
		if ct.pending[h.URL] == h {
			delete(ct.pending, h.URL)
		}
	} else if !h.claimed {
		h.parked = time.AfterFunc(ct.park, func() { ct.expire(h) })
	}
	ct.mu.Unlock()
	if drop != nil {
		drop.Close()
	}
	close(h.done)
}

// Claim makes h's connection the caller's; false if it failed, died or
// someone else has it. h must be done. The caller closes the connection,
// and calls Release when it does.
func (h *Handshake) Claim() bool {
	ct := h.table
	ct.mu.Lock()
	defer ct.mu.Unlock()
	if ct.closed || h.claimed || !h.alive() {
		return false
	}
	h.claimed = true
	if h.parked != nil {
		h.parked.Stop()
	}
	if ct.pending[h.URL] == h {
		delete(ct.pending, h.URL)
	}
	ct.inUse[h.URL] = h
	return true
}

// Release forgets a claimed connection; its owner closes it.
func (h *Handshake) Release() {
	ct := h.table
	ct.mu.Lock()
	if ct.inUse[h.URL] == h {
		delete(ct.inUse, h.URL)
	}
	ct.mu.Unlock()
}

// expire closes a parked connection nobody claimed.
func (ct *Table) expire(h *Handshake) {
	ct.mu.Lock()
	if h.claimed {
		ct.mu.Unlock()
		return
	}
	h.claimed = true
	if ct.pending[h.URL] == h {
		delete(ct.pending, h.URL)
	}
	ct.mu.Unlock()
	h.Conn.Close()
}

// Close ends the table: handshakes under way fail with ErrClosed, parked
// connections are closed, and Close waits for every goroutine the table
// started. Connections already claimed belong to their owners and stay
// open. It is idempotent.
func (ct *Table) Close() {
	ct.mu.Lock()
	ct.closed = true
	var parked []*Conn
	for url, h := range ct.pending {
		select {
		case <-h.done:
		default:
			continue // run ends it
		}
		if !h.claimed {
			h.claimed = true
			if h.parked != nil {
				h.parked.Stop()
			}
			parked = append(parked, h.Conn)
		}
		delete(ct.pending, url)
	}
	ct.mu.Unlock()
	ct.cancel(ErrClosed)
	ct.wg.Wait()
	for _, c := range parked {
		c.Close()
	}
}
