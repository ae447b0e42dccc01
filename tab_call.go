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
// frame w, passing args (JSON values, or nodeArg for nodes of the same
// frame), and decodes its value (awaited if a promise) into out. It runs
// in the package's isolated world of the frame unless w.main is set
// (resolveIn). The objects it makes are released before it returns.
func (x *tabExt) callOn(ctx context.Context, op string, w where, node dom.BackendNodeID, fn string, args []any, out any) error {
	res, err := x.callOnValue(ctx, op, w, node, fn, args)
	if err != nil {
		return err
	}
	if out != nil && len(res.Value) > 0 {
		return json.Unmarshal(res.Value, out)
	}
	return nil
}

// callOnValue is callOn returning the value as the browser sent it (by
// value), with its type and, for NaN, Infinity, -0 or a BigInt, the
// unserializable form JSON cannot carry.
func (x *tabExt) callOnValue(ctx context.Context, op string, w where, node dom.BackendNodeID, fn string, args []any) (remoteValue, error) {
	group := x.newGroup()
	defer releaseGroup(ctx, w.f, group)
	nodes := []dom.BackendNodeID{node}
	for _, a := range args {
		if n, ok := a.(nodeArg); ok {
			nodes = append(nodes, dom.BackendNodeID(n))
		}
	}
	objs, err := x.resolveIn(ctx, w, group, nodes...)
	if err != nil {
		return remoteValue{}, err
	}
	cargs := make([]any, len(args))
	k := 1
	for i, a := range args {
		cargs[i] = a
		if _, ok := a.(nodeArg); ok {
			cargs[i] = objectArg(objs[k])
			k++
		}
	}
	return x.callFn(ctx, op, w.f, objs[0], fn, cargs, true)
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

// objectArg marks a call argument as the JavaScript object with this id.
type objectArg string

// remoteValue is the part of a Runtime.RemoteObject we read.
type remoteValue struct {
	Type                string          `json:"type"`
	Subtype             string          `json:"subtype"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"` // NaN, Infinity, -Infinity, -0 or a BigInt such as 12n, which have no JSON form
	ObjectID            string          `json:"objectId"`
}

// callFn calls the JavaScript function fn with this bound to the object
// this of frame f, passing args (JSON values, or objectArg for objects of
// f), and returns its result, awaited if a promise: by value if byValue,
// else as an object of this's group (a primitive has its value either way).
// An exception is an ErrJavaScript error whose hint speaks of the
// package's own script (ownScriptHint): the caller of a function of its
// own (Tab.EvaluateOn) gives it back its own hint.
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
		return remoteValue{}, x.t.ownJSError(op, reply.Exception)
	}
	return reply.Result, nil
}
