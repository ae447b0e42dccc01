// Room: the read role, who may call Transport.ReadMessage. Mux.mu guards the
// role, readErr, the idle timer's state (idleArmed, idleWait, released),
// the listeners and the decision to wake the reader; the read itself, the
// dispatch of what it returns, the read deadline and the timer's Reset are
// never under it.

package cdpmux

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"
)

// ReadDeadliner is a Transport whose blocked ReadMessage a read deadline
// interrupts (with os.ErrDeadlineExceeded) without losing a byte: the
// next ReadMessage goes on with the message the interrupted one had begun.
// PipeTransport over pollable pipes is one. On such a transport a direct
// call (Mux.Call, Direct.Call) that finds nobody reading reads its own
// reply (see Mux.lead); on any other the reader goroutine reads everything.
type ReadDeadliner interface {
	SetReadDeadline(t time.Time) error
}

// ReaderResumeDelay is how long the reader goroutine stays parked after a
// direct caller read its own reply and no call was left pending: long
// enough that a caller making calls one after another finds the role free
// each time (and so reads its reply on its own goroutine, with no hand-off
// and no wake-up of another thread), short enough that an event arriving
// while nobody calls waits at most about this long to be read. Any other
// need to read (an rpcc call, a second call, a caller waiting for events
// (Mux.Listen), Close) resumes it at once. While direct calls keep
// following one another the reader's wait doubles, up to
// readerResumeBackoff times this delay (see Mux.idleFired).
const ReaderResumeDelay = time.Millisecond

// readerResumeBackoff bounds how far the reader's wait grows while direct
// calls follow one another: every check of a wait that ends in the middle
// of such a stream costs the process a goroutine and the wake-up of an
// idle thread (about 0.1 ms of CPU on a 2-core machine, a third of a
// Runtime.evaluate round trip), and at one per ReaderResumeDelay they cost
// a stream of calls about a tenth of its speed.
const readerResumeBackoff = 32

// Holders of the read role (Mux.role).
const (
	roleFree   = iota // nobody reads; the reader resumes when woken
	roleReader        // the reader goroutine (readLoop)
	roleCaller        // a direct caller reading for its own reply (lead)
)

// longAgo is the read deadline that interrupts a read at once.
var longAgo = time.Unix(1, 0)

// wakeReader makes the reader goroutine look at the role.
func (m *Mux) wakeReader() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// interrupt interrupts the read in progress, if any: a leading caller's
// ctx ended. A late interrupt (its caller has finished) costs the next
// reader one spurious os.ErrDeadlineExceeded, which it clears and ignores.
func (m *Mux) interrupt() { _ = m.deadline.SetReadDeadline(longAgo) }

// clearDeadline removes an interrupt's deadline after the read it
// interrupted returned.
func (m *Mux) clearDeadline() { _ = m.deadline.SetReadDeadline(time.Time{}) }

// takeRole waits, after the reader gave the role up, until it is woken
// and finds the role free, and takes it. It returns the error a caller's
// read met, which the reader must end the mux with.
func (m *Mux) takeRole() error {
	for {
		<-m.wake
		m.mu.Lock()
		if m.role == roleFree {
			m.role = roleReader
			m.idleWait = m.resume
			err := m.readErr
			m.mu.Unlock()
			return err
		}
		m.mu.Unlock()
	}
}

// yieldRole gives the reader's role up after it handed a direct caller its
// reply, unless another call is pending: the caller's next call then finds
// the role free. It reports whether it gave it up.
func (m *Mux) yieldRole() bool {
	m.mu.Lock()
	if len(m.pending) > 0 || m.closed || m.listeners > 0 {
		m.mu.Unlock()
		return false
	}
	select { // a wake sent before now is stale
	case <-m.wake:
	default:
	}
	m.role = roleFree
	arm := m.releasedLocked()
	m.mu.Unlock()
	if arm {
		m.idle.Reset(m.resume)
	}
	return true
}

// releasedLocked notes that the role was just given up with nothing to
// read for, and reports whether the caller must arm the idle timer (it
// was not armed). While calls follow one another the timer stays armed
// and idleFired re-arms it once per delay, so a call's release does not
// touch it: resetting it on every call cost more CPU than the hand-off it
// saves (BenchmarkCallerReads; a timer moved earlier also wakes the thread
// blocked in the network poller).
func (m *Mux) releasedLocked() (arm bool) {
	m.released = time.Now()
	if m.idleArmed {
		return false
	}
	m.idleArmed = true
	return true
}

// idleFired runs when the idle timer fires. The timer is armed whenever
// the role is free, so that the reader always resumes within idleWait of
// the role's last release, and while calls follow one another:
//   - with the reader reading, or the role held by a caller for idleWait
//     or more since the last release (one long call: a navigation, a wait,
//     a slow page), it disarms: firing every delay until the browser
//     answers would start a goroutine each time (time.AfterFunc) for
//     nothing, about 250 of them while a tab opens in a window of its own.
//     That caller's release arms it again (releasedLocked), so at most two
//     fires fall in any one call;
//   - with the role held by a caller, or free, less than idleWait after the
//     last release (calls one after another, each shorter than the wait),
//     it doubles idleWait (up to readerResumeBackoff times the delay) and
//     fires again at the new wait's end: the releases of such calls never
//     touch it, and a long stream of them meets a fire every 32 ms rather
//     than every millisecond;
//   - with the role free for idleWait, it wakes the reader and fires once
//     more to find it reading, and only then disarms. The reader resets
//     idleWait when it takes the role (takeRole).
func (m *Mux) idleFired() {
	m.idleFires.Add(1)
	m.mu.Lock()
	since := time.Since(m.released)
	if m.role == roleReader || m.role == roleCaller && since >= m.idleWait {
		m.idleArmed = false
		m.idleWait = m.resume
		m.mu.Unlock()
		return
	}
	next, wake := m.resume, false
	if since < m.idleWait {
		m.idleWait = min(2*m.idleWait, readerResumeBackoff*m.resume)
		next = m.idleWait - since
	} else {
		wake = true
	}
	m.mu.Unlock()
	m.idle.Reset(next)
	if wake {
		m.wakeReader()
	}
}

// Listen tells the mux that its caller waits for events (not for a
// reply): the reader resumes at once if nobody reads, and takes the role
// back after every direct call, as for a pending call, until stop is
// called. Without it, an event that comes after a direct call is read
// within the reader's wait (ReaderResumeDelay, longer while calls follow
// one another).
func (m *Mux) Listen() (stop func()) {
	m.mu.Lock()
	m.listeners++
	wake := m.role == roleFree
	m.mu.Unlock()
	if wake {
		m.wakeReader()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			m.listeners--
			m.mu.Unlock()
		})
	}
}

// release gives up a caller's role: the reader resumes at once if there
// is anything else to read for (a pending call, a listener, the end of the
// mux), else when the reader's wait passes with no direct call taking the
// role (idleFired).
func (m *Mux) release() {
	m.mu.Lock()
	m.role = roleFree
	resume := len(m.pending) > 0 || m.closed || m.readErr != nil || m.listeners > 0
	arm := !resume && m.releasedLocked()
	m.mu.Unlock()
	if resume {
		m.wakeReader()
	} else if arm {
		m.idle.Reset(m.resume)
	}
}

// lead reads for the mux on a direct caller's goroutine, holding the read
// role (taken in write), until ch holds the caller's reply, its session s
// ended or ctx ended. Every message read goes through the same dispatch
// as the reader's: events to their sessions (and taps), replies to their
// callers. ok is false when the transport failed under it: the reader then
// ends the mux with that error (as if it had met it), and the caller waits
// for its end as any other caller does.
func (m *Mux) lead(ctx context.Context, s *session, ch chan *message) (msg *message, err error, ok bool) {
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, m.interruptF)
	}
	ok = true
	for {
		select {
		case msg = <-ch:
		default:
		}
		if msg != nil {
			break
		}
		select {
		case <-s.done:
			err = s.endErr()
		default:
			err = ctx.Err()
		}
		if err != nil {
			break
		}
		data, rerr := m.t.ReadMessage()
		if rerr != nil {
			if errors.Is(rerr, os.ErrDeadlineExceeded) {
				m.clearDeadline() // ctx is checked again before the next read
				continue
			}
			m.mu.Lock()
			m.readErr = rerr
			m.mu.Unlock()
			ok = false
			break
		}
		m.handle(data)
	}
	if stop != nil && !stop() {
		m.clearDeadline()
	}
	m.release()
	return msg, err, ok
}
