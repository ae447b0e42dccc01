// Room: the CDP sessions of a tab's out-of-process frames (a site's
// iframe in a process of its own): attached once, by snapshots and
// aiming, and detached with the tab's refs (refTable, tab_snapshot.go).
// No locks of its own: refTable.mu guards the frames table.

package browserpool

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

// frameSess is a CDP session that documents of the tab live in: the tab's
// own, or an out-of-process iframe's.
type frameSess struct {
	targetID string
	d        *cdpmux.Direct // calls on the frame's session (the tab's own for the top frame)
	own      bool           // attached by us for an out-of-process iframe
}

// detach ends a session attached for an out-of-process iframe, in the
// browser and locally.
func (x *tabExt) detach(ctx context.Context, f *frameSess) {
	if f.live() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		x.t.s.browserCall(ctx, "Target.detachFromTarget", target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(f.d.ID())), nil)
		cancel()
	}
	f.d.Close()
}

// refKey names f's document nodes in snapshot ref keys
// (axtext.NodeKey.Target): for an out-of-process frame, its session as
// well as its target. A frame that moves to another renderer (cross-site,
// then same-site, then cross-site again) keeps its target id, but the new
// process numbers its nodes afresh: keyed by target alone, an old ref
// would name whatever element now has its node id.
func (f *frameSess) refKey() string {
	if !f.own {
		return f.targetID
	}
	return f.targetID + "/" + f.d.ID()
}

// live reports whether the frame's session has not ended.
func (f *frameSess) live() bool {
	select {
	case <-f.d.Done():
		return false
	default:
		return true
	}
}

// frameHop is one out-of-process boundary on the way to a frame: the
// iframe element (owner) in its parent's session.
type frameHop struct {
	parent *frameSess
	frame  string // the frame of parent's session that holds owner ("" for its main frame)
	owner  dom.BackendNodeID
}

// frame returns a session for the out-of-process frame targetID,
// attaching to it once.
func (x *tabExt) frame(ctx context.Context, targetID string) (*frameSess, error) {
	r := &x.refs
	r.mu.Lock()
	f := r.frames[targetID]
	r.mu.Unlock()
	if f != nil && f.live() {
		return f, nil
	}
	d, err := x.t.s.mux.AttachDirect(ctx, targetID)
	var re *rpcc.ResponseError
	if errors.As(err, &re) && strings.Contains(re.Message, "No target with given id") {
		// The browser makes a frame's target on demand, when targets
		// are listed: list them, then attach again.
		if lerr := x.t.s.browserCall(ctx, "Target.getTargets", target.NewGetTargetsArgs(), nil); lerr == nil {
			d, err = x.t.s.mux.AttachDirect(ctx, targetID)
		}
	}
	if err != nil {
		return nil, err
	}
	nf := &frameSess{targetID: targetID, d: d, own: true}
	r.mu.Lock()
	if cur := r.frames[targetID]; cur != nil && cur != f && cur.live() {
		// Another snapshot attached meanwhile: keep one session.
		r.mu.Unlock()
		x.detach(ctx, nf)
		return cur, nil
	}
	r.frames[targetID] = nf
	for id, g := range r.frames {
		if !g.live() {
			delete(r.frames, id)
		}
	}
	r.mu.Unlock()
	return nf, nil
}
