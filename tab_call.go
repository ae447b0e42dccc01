// Room: JavaScript calls on a frame's DOM nodes (Runtime.callFunctionOn),
// their arguments and object groups. No lock: the group counter is atomic
// (inputState.groups).

package browserpool

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/runtime"
)

// nodeArg marks a call argument as the DOM node with this backend id.
type nodeArg dom.BackendNodeID

// callOn calls the JavaScript function fn with this bound to a DOM node of
// frame f, passing args (JSON values, or nodeArg for nodes of f), and
// decodes its value (awaited if a promise) into out. The objects it makes
// are released before it returns.
func (x *tabExt) callOn(ctx context.Context, op string, f *frameSess, node dom.BackendNodeID, fn string, args []any, out any) error {
	group := x.newGroup()
	defer releaseGroup(ctx, f, group)
	this, err := resolveNode(ctx, f, node, group)
	if err != nil {
		return err
	}
	cargs := make([]any, len(args))
	for i, a := range args {
		cargs[i] = a
		if n, ok := a.(nodeArg); ok {
			id, err := resolveNode(ctx, f, dom.BackendNodeID(n), group)
			if err != nil {
				return err
			}
			cargs[i] = objectArg(id)
		}
	}
	res, err := x.callFn(ctx, op, f, this, fn, cargs, true)
	if err != nil {
		return err
	}
	if out != nil && len(res.Value) > 0 {
		return json.Unmarshal(res.Value, out)
	}
	return nil
}

// newGroup names a new object group for the JavaScript objects of one
// action, released together.
func (x *tabExt) newGroup() string {
	return "browserpool-" + strconv.FormatUint(x.input.groups.Add(1), 10)
}

// releaseGroup releases the objects of group in frame f, within 2 seconds
// even if ctx has ended.
func releaseGroup(ctx context.Context, f *frameSess, group string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	f.d.Invoke(rctx, "Runtime.releaseObjectGroup", struct {
		Group string `json:"objectGroup"`
	}{group}, nil)
}

// resolveNode returns the id of a JavaScript object for a DOM node of
// frame f, in the page's main world, belonging to group.
func resolveNode(ctx context.Context, f *frameSess, node dom.BackendNodeID, group string) (string, error) {
	a := struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
		Group   string            `json:"objectGroup"`
	}{node, group}
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	err := f.d.Invoke(ctx, "DOM.resolveNode", &a, &r)
	return r.Object.ObjectID, err
}

// objectArg marks a call argument as the JavaScript object with this id.
type objectArg string

// remoteValue is the part of a Runtime.RemoteObject we read.
type remoteValue struct {
	Type     string          `json:"type"`
	Value    json.RawMessage `json:"value"`
	ObjectID string          `json:"objectId"`
}

// callFn calls the JavaScript function fn with this bound to the object
// this of frame f, passing args (JSON values, or objectArg for objects of
// f), and returns its result, awaited if a promise: by value if byValue,
// else as an object of this's group (a primitive has its value either way).
// An exception is an ErrJavaScript error.
func (x *tabExt) callFn(ctx context.Context, op string, f *frameSess, this, fn string, args []any, byValue bool) (remoteValue, error) {
	type callArg struct {
		Value    any    `json:"value,omitempty"`
		ObjectID string `json:"objectId,omitempty"`
	}
	cargs := make([]callArg, len(args))
	for i, a := range args {
		if id, ok := a.(objectArg); ok {
			cargs[i].ObjectID = string(id)
			continue
		}
		cargs[i].Value = a
	}
	call := struct {
		Fn       string    `json:"functionDeclaration"`
		ObjectID string    `json:"objectId"`
		Args     []callArg `json:"arguments"`
		ByValue  bool      `json:"returnByValue"`
		Await    bool      `json:"awaitPromise"`
	}{fn, this, cargs, byValue, true}
	var reply struct {
		Result    remoteValue               `json:"result"`
		Exception *runtime.ExceptionDetails `json:"exceptionDetails"`
	}
	if err := f.d.Invoke(ctx, "Runtime.callFunctionOn", &call, &reply); err != nil {
		return remoteValue{}, err
	}
	if reply.Exception != nil {
		return remoteValue{}, x.t.jsError(op, reply.Exception)
	}
	return reply.Result, nil
}
