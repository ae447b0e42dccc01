package browserpool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type ctxKey struct{}

// guardState is what an action's guarded context shows: whether it ended,
// why, and the caller's value it carries.
type guardState struct {
	Ended  bool
	Dialog string // the deferred dialog's message, from the cause
	Value  any
}

func stateOf(ctx context.Context) guardState {
	g := guardState{Ended: ctx.Err() != nil, Value: ctx.Value(ctxKey{})}
	var dc *dialogCause
	if errors.As(context.Cause(ctx), &dc) {
		g.Dialog = dc.d.Message
	}
	return g
}

func TestAGuardedActionEndsWhenADialogIsDeferredWhateverItsCallersContext(t *testing.T) {
	cancellable, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	callers := []struct {
		name string
		ctx  context.Context
		want any // the value the guarded context carries
	}{
		{"background", context.Background(), nil},
		{"todo", context.TODO(), nil},
		{"a value, never ending", context.WithValue(context.Background(), ctxKey{}, "v"), "v"},
		{"without cancel", context.WithoutCancel(cancellable), "v"},
		{"cancellable", cancellable, "v"},
	}
	for _, c := range callers {
		t.Run(c.name, func(t *testing.T) {
			x := &tabExt{}
			x.dialog.setup()

			before, endBefore := x.guard(c.ctx)
			defer endBefore()
			if diff := cmp.Diff(guardState{Value: c.want}, stateOf(before)); diff != "" {
				t.Fatalf("an action begun with no dialog open (-want +got):\n%s", diff)
			}

			x.dialog.defer_(Dialog{Type: "confirm", Message: "sure?"}, nil)
			ended := guardState{Ended: true, Dialog: "sure?", Value: c.want}
			if diff := cmp.Diff(ended, stateOf(before)); diff != "" {
				t.Errorf("that action once the dialog is deferred (-want +got):\n%s", diff)
			}
			during, endDuring := x.guard(c.ctx)
			defer endDuring()
			if diff := cmp.Diff(ended, stateOf(during)); diff != "" {
				t.Errorf("an action begun while the dialog is open (-want +got):\n%s", diff)
			}
			// Derived contexts (a wait's bound) carry the cause too.
			bounded, cancelBounded := context.WithTimeout(during, time.Minute)
			defer cancelBounded()
			if diff := cmp.Diff(ended, stateOf(bounded)); diff != "" {
				t.Errorf("a bound under it (-want +got):\n%s", diff)
			}

			if _, ok := x.dialog.take(0); !ok {
				t.Fatal("take found no open dialog")
			}
			after, endAfter := x.guard(c.ctx)
			defer endAfter()
			if diff := cmp.Diff(guardState{Value: c.want}, stateOf(after)); diff != "" {
				t.Errorf("an action begun once the dialog closed (-want +got):\n%s", diff)
			}

			x.dialog.restore(Dialog{Type: "confirm", Message: "again?"})
			if diff := cmp.Diff(guardState{Ended: true, Dialog: "again?", Value: c.want}, stateOf(after)); diff != "" {
				t.Errorf("that action once a failed answer put the dialog back (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnActionWhoseCallerCannotCancelRegistersNothing(t *testing.T) {
	x := &tabExt{}
	x.dialog.setup()
	ctx, end := x.guard(context.Background())
	if ctx != x.dialog.epoch.Load().ctx {
		t.Errorf("the guarded context of a Background caller is %T, want the tab's epoch", ctx)
	}
	if n := len(x.dialog.guards); n != 0 {
		t.Errorf("%d guards registered, want 0", n)
	}
	end()
	if ctx.Err() != nil {
		t.Errorf("ending the action ended the shared epoch: %v", ctx.Err())
	}
	_, end = x.guard(t.Context())
	if n := len(x.dialog.guards); n != 1 {
		t.Errorf("%d guards registered for a cancellable caller, want 1", n)
	}
	end()
	if n := len(x.dialog.guards); n != 0 {
		t.Errorf("%d guards left once its action ended, want 0", n)
	}
}
