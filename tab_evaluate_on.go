// Room: element-scoped evaluation (Tab.EvaluateOn). No lock: it resolves
// the ref through refTable (which locks itself) and calls the page.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// EvaluateOn runs the JavaScript function fn on the element a ref names
// (from the latest Tab.Snapshot): the element is both fn's this and its
// first argument, and args (each encoded as JSON) follow it, so
//
//	tab.EvaluateOn(ctx, "@e3", "(el, attr) => el.getAttribute(attr)", &v, "href")
//
// and "function () { return this.value }" both work. A returned promise
// is awaited, and the value is decoded (JSON, by value: a DOM node comes
// back as {}) into out unless out is nil, as Tab.Evaluate decodes it: a
// value that does not fit out (NaN or Infinity into a *float64, a BigInt,
// undefined into a *struct) is an ErrDecode error naming both types;
// undefined and null leave a pointer, interface, map or slice target nil,
// and -0 is -0. An unknown or old ref is an
// ErrStaleRef error (ErrInvalidArgument if it is not a ref at all), an
// argument that cannot be encoded as JSON is ErrInvalidArgument, and a
// thrown exception is an ErrJavaScript error. fn runs in the page's own
// JavaScript world, as Evaluate's expressions do: it sees the page's
// globals (and whatever the page replaced).
func (t *Tab) EvaluateOn(ctx context.Context, ref, fn string, out any, args ...any) error {
	const op = "Tab.EvaluateOn"
	if strings.TrimSpace(fn) == "" {
		e := newError(op, ErrInvalidArgument, "empty function")
		e.Session, e.Tab = t.s.id, t.id
		e.Hint = "pass a function such as el => el.textContent"
		return e
	}
	cargs := make([]any, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("argument %d (%T) cannot be encoded as JSON", i+1, a))
			e.Session, e.Tab, e.Err = t.s.id, t.id, err
			e.Hint = "pass arguments that encoding/json can encode: numbers, strings, bools, slices, maps, structs"
			return e
		}
		cargs[i] = json.RawMessage(b)
	}
	// fn starts on the wrapper's second line: exceptions' lines are
	// given back in fn's own numbering.
	wrapped := "function (...args) { const f = (\n" + fn + "\n); if (typeof f !== 'function') throw new TypeError('EvaluateOn takes a function such as el => el.textContent; this is a ' + typeof f); return f.call(this, this, ...args) }"
	return t.onRef(ctx, op, "evaluate-on", ref, fn, func(ctx context.Context, x *tabExt, tg refTarget, _ *string) error {
		w := tg.in()
		w.main = true // the caller's function expects the page's globals
		res, err := x.callOnValue(ctx, op, w, tg.node, wrapped, cargs)
		if err != nil {
			var js *JSError
			if errors.As(err, &js) {
				js.rebase(1, fn) // fn starts on the wrapper's second line
			}
			if e, ok := err.(*Error); ok {
				if errors.Is(e, ErrJavaScript) {
					e.Hint = hints[ErrJavaScript] // the caller's function threw, not the package's
				}
				return e
			}
			if e := t.unreturnable(op, err); e != nil {
				return e
			}
			return x.fail(op, ctx, ref, frameErr(tg.f, err))
		}
		var subtype *string
		if res.Subtype != "" {
			subtype = &res.Subtype
		}
		if e := decodeJS(op, res.Value, res.UnserializableValue, jsTypeOf(res.Type, subtype), out); e != nil {
			e.Session, e.Tab = t.s.id, t.id
			return e
		}
		return nil
	})
}
