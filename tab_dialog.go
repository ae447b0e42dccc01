// Room: JavaScript dialogs (alert, confirm, prompt, beforeunload).
// dialogState.mu guards the handler, the deferred dialog, the history and
// the calls to cancel when a dialog is deferred. One watcher goroutine per
// tab answers dialogs; it runs the caller's handler and makes its CDP calls
// with no lock held.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/redact"
)

// ErrDialogOpen: a JavaScript dialog is open and waits for an answer (its
// handler deferred it), so the page cannot act. The detail quotes it.
// Returned by the tab's actions while it is open, and by an action during
// which it opened. Answer it with Tab.AnswerDialog.
var ErrDialogOpen = errors.New("a JavaScript dialog is open")

// DialogBy says who answered a dialog. The text is stable.
type DialogBy string

// Who answers dialogs.
const (
	DialogByHandler       DialogBy = "handler"   // the tab's handler answered it
	DialogDismissed       DialogBy = "dismissed" // no handler: dismissed at once
	DialogByCaller        DialogBy = "caller"    // Tab.AnswerDialog, after the handler deferred it
	DialogTimedOut        DialogBy = "timeout"   // deferred and not answered in time: dismissed
	DialogClosedByPage    DialogBy = "page"      // closed by a navigation before anyone answered
	DialogDismissedUnseen DialogBy = "unseen"    // open before the tab was watched: dismissed blindly
	// DialogByUser: an attached browser's dialog that opened while no
	// action of the pool ran on its tab and no handler was set was left
	// to the browser's user, and closed there (by the user, or by its
	// page) before anyone here answered it.
	DialogByUser DialogBy = "user"
)

// userDialogWait is how long an attached browser's own dialog is left open
// for its user (onDialog): for as long as the user takes.
const userDialogWait = time.Duration(math.MaxInt64)

// Dialog is a JavaScript dialog a page opened.
type Dialog struct {
	Type          string    // "alert", "confirm", "prompt", "beforeunload", or "unknown"
	Message       string    // the dialog's text, cut to TraceArgLimit characters
	DefaultPrompt string    // a prompt's default text
	URL           string    // the opening frame's URL, token-like values redacted
	Opened        time.Time // when it opened (when it was seen)
	// Set once the dialog is closed.
	Closed   time.Time
	Accepted bool     // OK (true) or Cancel (false)
	By       DialogBy // who answered
}

// DialogReply is a dialog handler's answer.
type DialogReply struct {
	Accept     bool   // OK (true) or Cancel (false)
	PromptText string // a prompt's answer; empty keeps the default
	// Defer, when positive, leaves the dialog open for up to this long so
	// that the caller (or an LLM) can read it in Tab.PageInfo and answer
	// it with Tab.AnswerDialog. Meanwhile the tab's actions fail fast with
	// ErrDialogOpen instead of hanging; after Defer the dialog is
	// dismissed. Accept and PromptText are then ignored.
	Defer time.Duration
}

// dialogHistoryLimit is how many answered dialogs Tab.Dialogs keeps.
const dialogHistoryLimit = 32

// SetDialogHandler sets the function that answers the tab's JavaScript
// dialogs; nil (the default) dismisses every dialog at once, but in a
// browser the pool attached to (the user's own) a dialog that opens while
// no action runs on the tab is left open for its user (DialogByUser; the
// tab's actions meanwhile fail with ErrDialogOpen). Either way the dialog
// is reported in Tab.Dialogs and the trace. The handler runs on the
// tab's watcher goroutine: it must return promptly and must not call the
// tab's methods (the page is paused until it returns). A panicking handler
// dismisses the dialog.
func (t *Tab) SetDialogHandler(h func(Dialog) DialogReply) {
	x := t.ext()
	x.dialog.mu.Lock()
	x.dialog.handler = h
	x.dialog.mu.Unlock()
}

// Dialogs returns the tab's most recently answered dialogs (at most 32),
// oldest first.
func (t *Tab) Dialogs() []Dialog {
	x := t.ext()
	x.dialog.mu.Lock()
	defer x.dialog.mu.Unlock()
	return append([]Dialog(nil), x.dialog.history...)
}

// AnswerDialog answers the dialog the handler deferred: accept presses OK,
// otherwise Cancel; promptText answers a prompt (empty keeps its default).
// With no dialog open it returns an ErrInvalidArgument error.
func (t *Tab) AnswerDialog(ctx context.Context, accept bool, promptText string) (err error) {
	const op = "Tab.AnswerDialog"
	end, err := t.begin(op)
	if err != nil {
		return err
	}
	defer end()
	x := t.ext()
	defer x.record("answer-dialog", fmt.Sprintf("accept=%v", accept), time.Now(), &err)
	d, ok := x.dialog.take(0)
	if !ok {
		e := newError(op, ErrInvalidArgument, "no dialog is open")
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "dialogs are answered at once unless the handler defers them; Tab.Dialogs lists the answered ones"
		return e
	}
	if err := t.direct.Invoke(ctx, "Page.handleJavaScriptDialog", answerArgs(d, accept, promptText), nil); err != nil {
		if noDialog(err) {
			d.Closed, d.By = time.Now(), DialogClosedByPage
			x.dialog.remember(d)
			e := newError(op, ErrInvalidArgument, "the dialog was already closed by the page")
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "take a new snapshot; the page has moved on"
			return e
		}
		x.dialog.restore(d)
		return t.s.wrap(op, t.id, err)
	}
	d.Closed, d.Accepted, d.By = time.Now(), accept, DialogByCaller
	x.dialog.remember(d)
	return nil
}

func noDialog(err error) bool {
	var re *rpcc.ResponseError
	return errors.As(err, &re) && strings.Contains(re.Message, "No dialog is showing")
}

// dialogState is a tab's dialog bookkeeping.
type dialogState struct {
	mu      sync.Mutex
	handler func(Dialog) DialogReply // guarded by mu
	open    *openDialog              // guarded by mu; a deferred dialog, nil if none
	seq     uint64                   // guarded by mu; numbers deferred dialogs
	history []Dialog                 // guarded by mu; answered dialogs, oldest first
	// answering counts the dialogs being answered (answer, from the
	// JavaScript dialog's opening to its place in history); answered is
	// closed when it drops to zero (nil while zero), for settle.
	answering atomic.Int32          // changed under mu; settle reads it without mu first
	answered  chan struct{}         // guarded by mu
	guards    map[*actionGuard]bool // guarded by mu; actions with a context of their own, to stop when a dialog is deferred
	// epoch is what the other actions share (see guard): read without mu
	// on the actions' path, replaced and ended only under it.
	epoch atomic.Pointer[dialogEpoch]
	// epochActs counts the actions in flight on the epoch (they are not
	// in guards), so an attached browser's dialog is known to be an
	// action's (onDialog); epochDone ends one, made once by setup.
	epochActs atomic.Int32
	epochDone func()
}

type openDialog struct {
	d      Dialog
	seq    uint64
	closed page.JavascriptDialogClosedClient // tells the watcher if the page closes it; may be nil
}

// actionGuard lets the watcher stop an action whose CDP call would wait
// for a deferred dialog.
type actionGuard struct{ cancel context.CancelCauseFunc }

// dialogCause is the cancel cause of an action stopped by a deferred dialog.
type dialogCause struct{ d Dialog }

func (c *dialogCause) Error() string { return "a " + c.d.Type + " dialog opened" }

func (s *dialogState) setup() {
	s.guards = make(map[*actionGuard]bool)
	s.epoch.Store(newDialogEpoch())
	s.epochDone = func() { s.epochActs.Add(-1) }
}

// current returns the deferred dialog, if one is open.
func (s *dialogState) current() (Dialog, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil {
		return Dialog{}, false
	}
	return s.open.d, true
}

// take removes and returns the open dialog; seq, when not zero, must match.
func (s *dialogState) take(seq uint64) (Dialog, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open == nil || seq != 0 && s.open.seq != seq {
		return Dialog{}, false
	}
	d, closed := s.open.d, s.open.closed
	s.open = nil
	if s.epoch.Load().ctx.Err() != nil {
		s.epoch.Store(newDialogEpoch())
	}
	if closed != nil {
		closed.Close()
	}
	return d, true
}

// restore puts back a dialog take removed, when answering it failed, and
// stops the actions begun meanwhile, as defer_ does.
func (s *dialogState) restore(d Dialog) {
	s.mu.Lock()
	if s.open != nil {
		s.mu.Unlock()
		return
	}
	s.openLocked(d, nil)
}

func (s *dialogState) remember(d Dialog) {
	s.mu.Lock()
	if len(s.history) == dialogHistoryLimit {
		copy(s.history, s.history[1:])
		s.history = s.history[:dialogHistoryLimit-1]
	}
	s.history = append(s.history, d)
	s.mu.Unlock()
}

// guard returns a context for an action's CDP calls that the watcher
// cancels (cause *dialogCause) if a dialog is deferred meanwhile, or that
// has ended if one is open already, and the func that ends it. When ctx
// can never end, the context is the tab's dialog epoch (with ctx's values,
// if any): nothing of the action's own to make, register or end.
func (x *tabExt) guard(ctx context.Context) (context.Context, func()) {
	s := &x.dialog
	if ctx.Done() == nil {
		s.epochActs.Add(1)
		epoch := s.epoch.Load().ctx
		if ctx == context.Background() || ctx == context.TODO() {
			return epoch, s.epochDone
		}
		return &epochCtx{Context: ctx, epoch: epoch}, s.epochDone
	}
	return x.register(ctx, true)
}

// guardNavigation is guard for a navigation: it stops it only for a dialog
// deferred after it began. One open already does not stop it: the
// navigation closes it (DialogClosedByPage), the way out of a dialog
// nobody will answer.
func (x *tabExt) guardNavigation(ctx context.Context) (context.Context, func()) {
	return x.register(ctx, false)
}

// register makes guard's context for a ctx that can end, ended at once
// if stopIfOpen and a dialog is open already.
func (x *tabExt) register(ctx context.Context, stopIfOpen bool) (context.Context, func()) {
	s := &x.dialog
	ctx, cancel := context.WithCancelCause(ctx)
	g := &actionGuard{cancel: cancel}
	s.mu.Lock()
	s.guards[g] = true
	var open error
	if stopIfOpen && s.open != nil {
		open = &dialogCause{d: s.open.d}
	}
	s.mu.Unlock()
	if open != nil {
		cancel(open)
	}
	return ctx, func() {
		s.mu.Lock()
		delete(s.guards, g)
		s.mu.Unlock()
		cancel(nil)
	}
}

// dialogErr returns an ErrDialogOpen error if a deferred dialog is open.
func (x *tabExt) dialogErr(op string) error {
	d, ok := x.dialog.current()
	if !ok {
		return nil
	}
	return x.dialogOpenErr(op, d, "")
}

func (x *tabExt) dialogOpenErr(op string, d Dialog, during string) error {
	detail := fmt.Sprintf("%s %q", d.Type, d.Message)
	if during != "" {
		article := "a "
		if d.Type == "alert" {
			article = "an "
		}
		detail = during + " opened " + article + detail
	}
	e := newError(op, ErrDialogOpen, detail)
	e.Session, e.Tab = x.t.s.id, x.t.id
	if !x.t.s.ours && during == "" {
		e.Hint = "the browser is the user's: the dialog may be theirs, left open for them. Wait for them to answer it, or answer it with Tab.AnswerDialog if the task is yours to decide; Tab.PageInfo shows it"
	}
	return e
}

// dialogOpened hands a dialog that just opened to the watch goroutine,
// starting it at the tab's first dialog. It runs on the mux's reader
// goroutine and never blocks: a page that opens more than 16 dialogs
// faster than they can be answered loses the excess, which the browser
// then reports as still open to the next call.
func (x *tabExt) dialogOpened(params json.RawMessage) {
	ev := new(page.JavascriptDialogOpeningReply)
	if json.Unmarshal(params, ev) != nil {
		return
	}
	if x.watching.CompareAndSwap(false, true) {
		go x.watch()
	}
	select {
	case x.dialogs <- ev:
	default:
	}
}

// ended runs when the tab's session has ended (on the mux's reader, or on
// whoever closed it).
func (x *tabExt) ended() {
	if !x.watching.Load() {
		x.stop()
	}
}

// watch answers the tab's dialogs until its connection ends. It starts at
// the tab's first dialog: a tab that never shows one costs no goroutine of
// ours. While a dialog is deferred it also reads that dialog's
// JavascriptDialogClosed stream, to notice the page closing it (a
// navigation); whoever takes the dialog closes that stream, so a close
// event can only ever apply to its own dialog.
func (x *tabExt) watch() {
	t := x.t
	defer x.stop()
	var (
		timer   *time.Timer
		timerC  <-chan time.Time
		seq     uint64
		closed  page.JavascriptDialogClosedClient
		closedC <-chan struct{}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		x.dialog.take(0)
	}()
	for {
		select {
		case ev := <-x.dialogs:
			d, after := x.onDialog(ev)
			if after <= 0 {
				continue
			}
			cs, err := t.cdpClient().Page.JavascriptDialogClosed(context.Background())
			if err != nil {
				cs = nil
			}
			if seq = x.dialog.defer_(d, cs); cs != nil {
				closed, closedC = cs, cs.Ready()
			}
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(after)
			timerC = timer.C
		case <-timerC:
			timerC = nil
			if d, ok := x.dialog.take(seq); ok {
				x.answer(d, false, "", DialogTimedOut)
			}
		case <-closedC:
			ev, err := closed.Recv()
			if err != nil {
				closedC = nil // taken and closed by whoever answered it
				continue
			}
			if d, ok := x.dialog.take(seq); ok {
				d.Closed, d.Accepted, d.By = time.Now(), ev.Result, DialogClosedByPage
				how := "closed by the page"
				if !t.s.ours {
					d.By, how = DialogByUser, "closed in the browser (by its user or its page)"
				}
				x.dialog.remember(d)
				x.record("dialog", fmt.Sprintf("%s %q: %s", d.Type, d.Message, how), d.Opened, nil)
			}
			closedC = nil
		case <-t.direct.Done():
			return
		}
	}
}

// stop releases the tab's attached frames once its connection has ended.
func (x *tabExt) stop() {
	x.refs.closeFrames()
}

// onDialog answers a dialog that just opened, or returns it with how long
// it may stay open when the handler defers it.
func (x *tabExt) onDialog(ev *page.JavascriptDialogOpeningReply) (Dialog, time.Duration) {
	d := Dialog{Type: string(ev.Type), Message: axtext.Cut(ev.Message, TraceArgLimit), URL: redact.Scrub(ev.URL), Opened: time.Now()}
	if ev.DefaultPrompt != nil {
		d.DefaultPrompt = *ev.DefaultPrompt
	}
	s := &x.dialog
	s.mu.Lock()
	h, acting := s.handler, len(s.guards) > 0 || s.epochActs.Load() > 0
	s.mu.Unlock()
	if h == nil && !acting && !x.t.s.ours {
		// The browser is the user's (attached) and nothing of ours runs
		// on the tab: the dialog is the user's or their page's, not an
		// agent's doing. It is left open for them (the tab's actions
		// fail fast with ErrDialogOpen meanwhile), never answered blindly.
		x.record("dialog", fmt.Sprintf("%s %q: left open for the browser's user (no action was running on the tab)", d.Type, d.Message), d.Opened, nil)
		return d, userDialogWait
	}
	reply, by := DialogReply{}, DialogDismissed
	if h != nil {
		reply, by = x.callHandler(h, d), DialogByHandler
	}
	if reply.Defer <= 0 {
		x.answer(d, reply.Accept, reply.PromptText, by)
		return d, 0
	}
	x.record("dialog", fmt.Sprintf("%s %q: deferred for %v", d.Type, d.Message, reply.Defer), d.Opened, nil)
	return d, reply.Defer
}

// defer_ makes d the open dialog, stops the actions waiting on the page,
// and returns d's number.
func (s *dialogState) defer_(d Dialog, closed page.JavascriptDialogClosedClient) uint64 {
	s.mu.Lock()
	return s.openLocked(d, closed)
}

// openLocked makes d the open dialog, unlocks s.mu and stops the actions in
// flight. It ends the epoch before unlocking, so that take, which replaces
// an ended epoch, cannot come between the dialog's opening and its
// epoch's end (ending a context runs no code of ours), and cancels the
// guards after. It returns d's number.
func (s *dialogState) openLocked(d Dialog, closed page.JavascriptDialogClosedClient) uint64 {
	s.seq++
	seq := s.seq
	s.open = &openDialog{d: d, seq: seq, closed: closed}
	guards := make([]*actionGuard, 0, len(s.guards))
	for g := range s.guards {
		guards = append(guards, g)
	}
	s.epoch.Load().cancel(&dialogCause{d: d})
	s.mu.Unlock()
	for _, g := range guards {
		g.cancel(&dialogCause{d: d})
	}
	return seq
}

func (x *tabExt) callHandler(h func(Dialog) DialogReply, d Dialog) (reply DialogReply) {
	defer func() {
		if r := recover(); r != nil {
			x.t.deps.log.Error("browserpool: a dialog handler panicked; the dialog is dismissed", "session", x.t.s.id, "tab", x.t.id, "panic", fmt.Sprint(r))
			reply = DialogReply{}
		}
	}()
	return h(d)
}

// answerArgs answers dialog d: OK (accept) or Cancel, and a prompt
// accepted with text, or with its default text when text is empty
// (Chromium answers an empty string when it is given none).
func answerArgs(d Dialog, accept bool, text string) *page.HandleJavaScriptDialogArgs {
	args := page.NewHandleJavaScriptDialogArgs(accept)
	if text == "" && d.Type == "prompt" {
		text = d.DefaultPrompt
	}
	if text != "" {
		args.SetPromptText(text)
	}
	return args
}

// answer closes the open dialog d and reports it.
func (x *tabExt) answer(d Dialog, accept bool, text string, by DialogBy) {
	t := x.t
	x.dialog.startAnswer()
	defer x.dialog.endAnswer()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // and the session's end (cdpmux)
	defer cancel()
	// Quiet: the pool answers the page here, nobody uses the browser; a
	// page that opens dialogs on a timer must not keep its session from
	// idle reclaim.
	err := t.direct.Quiet().Invoke(ctx, "Page.handleJavaScriptDialog", answerArgs(d, accept, text), nil)
	d.Closed, d.Accepted, d.By = time.Now(), accept, by
	if err != nil && noDialog(err) {
		d.Accepted, d.By, err = false, DialogClosedByPage, nil
	}
	if err != nil {
		err = t.s.wrap("Tab.dialog", t.id, err)
	}
	x.dialog.remember(d)
	x.record("dialog", fmt.Sprintf("%s %q: %s", d.Type, d.Message, answeredHow(d)), d.Opened, &err)
}

// answeredHow says in the trace how d was closed and by whom.
func answeredHow(d Dialog) string {
	verb := "dismissed"
	if d.Accepted {
		verb = "accepted"
	}
	switch d.By {
	case DialogByHandler:
		return verb + " by the tab's dialog handler"
	case DialogDismissed:
		return "dismissed, as every dialog is without a handler (Tab.SetDialogHandler)"
	case DialogTimedOut:
		return "dismissed: the handler deferred it and nobody answered it in time (Tab.AnswerDialog)"
	case DialogClosedByPage:
		return "closed by the page before it was answered"
	}
	return verb + " (" + string(d.By) + ")"
}

// startAnswer and endAnswer bracket an answer (see answering).
func (s *dialogState) startAnswer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.answering.Add(1) == 1 {
		s.answered = make(chan struct{})
	}
}

func (s *dialogState) endAnswer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.answering.Add(-1) == 0 {
		close(s.answered)
		s.answered = nil
	}
}

// settle waits, within ctx, for the dialogs being answered to be in
// history: an action whose click, key or script opened a dialog (which the
// page's renderer waits on, so its answer has begun by the time the
// action's own calls return) returns with the dialog in Tab.Dialogs. With
// no answer under way it costs an atomic load.
func (s *dialogState) settle(ctx context.Context) {
	if s.answering.Load() == 0 {
		return
	}
	s.mu.Lock()
	ch := s.answered
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
