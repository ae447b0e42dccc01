// Room: the isolated JavaScript world the tab's own page functions run in
// (Page.createIsolatedWorld), one per frame and main-frame document, and
// the resolution of DOM nodes into it. Lock: worlds.mu guards the world
// ids; no call is made with it held.

package browserpool

import (
	"context"
	"errors"
	"sync"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"
)

// worldName names the package's isolated world; DevTools lists it among a
// frame's execution contexts.
const worldName = "browserpool"

// where is a frame of the tab, where a node lives: the session it is
// reached through, and its frame id ("" for that session's main frame).
// main asks for the page's own JavaScript world instead of the package's
// isolated one: for the caller's code (Tab.EvaluateOn), which expects the
// page's globals.
type where struct {
	f     *frameSess
	frame string
	main  bool
}

// frameID is the frame id of w: a session's main frame has its target's id.
func (w where) frameID() string {
	if w.frame != "" {
		return w.frame
	}
	return w.f.targetID
}

// worldKey names an isolated world: a frame, under one main-frame document
// (a page kept in the back-forward cache keeps its worlds alive, so a
// world of the previous document must not be taken for the current one's).
type worldKey struct {
	f     *frameSess
	frame string
	doc   string
}

// noWorld marks a frame whose isolated world cannot hold its nodes (the
// browser refused to make one, or a node of the frame did not resolve in
// it while it did in the main world): its calls use the main world.
const noWorld = -1

// worlds holds a tab's isolated worlds by frame.
type worlds struct {
	mu  sync.Mutex
	ids map[worldKey]int // guarded by mu; execution context ids, or noWorld
}

// key returns the world key of w under the main frame's current document,
// as the ref table knows it.
func (x *tabExt) worldKey(w where) worldKey {
	x.refs.mu.Lock()
	doc := x.refs.nums.Doc()
	x.refs.mu.Unlock()
	return worldKey{f: w.f, frame: w.frameID(), doc: doc}
}

// world returns the execution context id of the package's isolated world
// in frame w, made by this call if fresh, or noWorld.
func (x *tabExt) world(ctx context.Context, k worldKey) (id int, fresh bool, err error) {
	x.worlds.mu.Lock()
	id, ok := x.worlds.ids[k]
	x.worlds.mu.Unlock()
	if ok {
		return id, false, nil
	}
	var reply struct {
		ID int `json:"executionContextId"`
	}
	err = k.f.d.Invoke(ctx, "Page.createIsolatedWorld", struct {
		Frame string `json:"frameId"`
		Name  string `json:"worldName"`
	}{k.frame, worldName}, &reply)
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, err
		}
		reply.ID = noWorld
	}
	x.setWorld(k, reply.ID)
	return reply.ID, true, nil
}

// setWorld records the world of k (noWorld: none), and forgets the worlds
// of main-frame documents other than k's and of sessions that ended.
func (x *tabExt) setWorld(k worldKey, id int) {
	x.worlds.mu.Lock()
	defer x.worlds.mu.Unlock()
	if x.worlds.ids == nil {
		x.worlds.ids = make(map[worldKey]int)
	}
	for o := range x.worlds.ids {
		if o.doc != k.doc || !o.f.live() {
			delete(x.worlds.ids, o)
		}
	}
	x.worlds.ids[k] = id
}

// resolveIn returns the ids of JavaScript objects of group for nodes of
// frame w, all in one world, so that a function called on the first may
// take the others as arguments. The world is the package's isolated world
// of the frame, which the page's scripts cannot reach: a page that
// replaced Array.prototype.some, Event, Promise or
// Element.prototype.matches breaks none of the package's own functions.
// It is the page's main world when w.main is set, or when the isolated
// world cannot hold the nodes (a same-process frame of another origin,
// which the world of the frame's session cannot see into).
//
// A world made for an earlier document of the frame is gone (the frame
// navigated): a node that resolves in the main world but not in a known
// world has its world made again, once. An error is the main world's: the
// node is gone.
func (x *tabExt) resolveIn(ctx context.Context, w where, group string, nodes ...dom.BackendNodeID) ([]string, error) {
	if w.main {
		return resolveAll(ctx, w.f, 0, group, nodes)
	}
	k := x.worldKey(w)
	id, fresh, err := x.world(ctx, k)
	if err != nil {
		return nil, err
	}
	if id != noWorld {
		if objs, err := resolveAll(ctx, w.f, id, group, nodes); err == nil {
			return objs, nil
		}
	}
	objs, err := resolveAll(ctx, w.f, 0, group, nodes)
	if err != nil || id == noWorld {
		return objs, err
	}
	if !fresh {
		x.forgetWorld(k, id)
		id, fresh, err = x.world(ctx, k)
		if err != nil {
			return nil, err
		}
		if id != noWorld {
			if iso, err := resolveAll(ctx, w.f, id, group, nodes); err == nil {
				return iso, nil
			}
		}
	}
	if fresh && id != noWorld {
		x.setWorld(k, noWorld) // made for this document and still no use
	}
	return objs, nil
}

// evaluateOwn evaluates expr, one of the package's own expressions
// (pagejs), by value, in the package's isolated world of the main frame:
// a page that replaced Math.max or document.title's getter breaks none
// of it. It runs in the page's main world when the browser makes no
// isolated world, or the main frame's document is unknown. A world gone
// with its document (the page navigated since it was made) is made again,
// once.
func (x *tabExt) evaluateOwn(ctx context.Context, expr string) (*runtime.EvaluateReply, error) {
	k := x.worldKey(where{f: x.refs.top})
	if k.doc == "" {
		k.doc = x.currentLoader(ctx) // no snapshot has named the document yet
	}
	for again := true; ; again = false {
		args := runtime.NewEvaluateArgs(expr).SetReturnByValue(true)
		id := noWorld
		if k.doc != "" {
			var err error
			if id, _, err = x.world(ctx, k); err != nil {
				return nil, err
			}
			if id != noWorld {
				args.SetContextID(runtime.ExecutionContextID(id))
			}
		}
		reply, err := invoke[runtime.EvaluateReply](ctx, x.t.direct, "Runtime.evaluate", args)
		var re *rpcc.ResponseError
		gone := errors.As(err, &re) && contextGone(re.Message) ||
			err == nil && reply.ExceptionDetails != nil && contextGone(reply.ExceptionDetails.Text)
		if !gone || id == noWorld || !again {
			return reply, err
		}
		x.forgetWorld(k, id)
	}
}

// forgetWorld forgets the world id of k if it is still id.
func (x *tabExt) forgetWorld(k worldKey, id int) {
	x.worlds.mu.Lock()
	if x.worlds.ids[k] == id {
		delete(x.worlds.ids, k)
	}
	x.worlds.mu.Unlock()
}

// errNoObject is DOM.resolveNode's answer for a node an isolated world may
// not touch (in a frame of another origin): an object without an id.
var errNoObject = errors.New("DOM.resolveNode returned no object for the node")

// resolveAll resolves nodes of session f into objects of group, in the
// execution context ctxID (0: the main world of each node's frame).
func resolveAll(ctx context.Context, f *frameSess, ctxID int, group string, nodes []dom.BackendNodeID) ([]string, error) {
	objs := make([]string, len(nodes))
	for i, n := range nodes {
		a := struct {
			Backend dom.BackendNodeID `json:"backendNodeId"`
			Group   string            `json:"objectGroup"`
			Context int               `json:"executionContextId,omitempty"`
		}{n, group, ctxID}
		var r struct {
			Object struct {
				ObjectID string `json:"objectId"`
			} `json:"object"`
		}
		if err := f.d.Invoke(ctx, "DOM.resolveNode", &a, &r); err != nil {
			return nil, err
		}
		if r.Object.ObjectID == "" {
			return nil, errNoObject
		}
		objs[i] = r.Object.ObjectID
	}
	return objs, nil
}
