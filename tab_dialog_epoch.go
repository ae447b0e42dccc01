// Room: a dialog's epoch: the context the actions whose caller's context
// can never end share, ended while a deferred dialog is open
// (tab_dialog.go replaces and ends it under dialogState.mu). No lock of
// its own.

package browserpool

import "context"

// dialogEpoch is the context shared by the actions whose caller's context
// can never end (context.Background, say): canceled, with a *dialogCause,
// while a deferred dialog is open, and replaced by a new one once it
// closes. Such an action then costs no context and no registration of its
// own, and one that starts while the dialog is open is stopped at once.
type dialogEpoch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newDialogEpoch() *dialogEpoch {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &dialogEpoch{ctx, cancel}
}

// epochCtx is an action's context when the caller's can never end and
// carries values: those values, and the epoch's end (Done, Err and, through
// its Value, context.Cause).
type epochCtx struct {
	context.Context // the caller's, whose Done is nil
	epoch           context.Context
}

func (c *epochCtx) Done() <-chan struct{} { return c.epoch.Done() }
func (c *epochCtx) Err() error            { return c.epoch.Err() }
func (c *epochCtx) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.epoch.Value(key)
}
