// Room: decoding a JavaScript value into the caller's Go value (Tab.Evaluate,
// Tab.EvaluateOn, Tab.WaitCondition). Pure functions; no lock.

package browserpool

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/jsonscan"
)

// ErrDecode: the page's JavaScript value could not be decoded into the Go
// value given to receive it (a string into an int, undefined into a
// struct, ...). The browser raised nothing: the call ran; only the
// decoding failed. Returned by Tab.Evaluate, Tab.EvaluateOn and
// Tab.WaitCondition.
var ErrDecode = errors.New("cannot decode the JavaScript value")

// decodeJS decodes a JavaScript value into out. raw is its JSON form (nil
// for undefined and for values JSON cannot carry, which unserializable
// names: NaN, Infinity, -Infinity, -0 or a BigInt literal such as 12n);
// jsType is the value's JavaScript type ("undefined", "string", ...) or ""
// to read it from raw. undefined and null leave a nil-able target (pointer,
// interface, map, slice) nil; undefined into anything else is an ErrDecode
// error, as is a value that does not fit out's type. out must be a non-nil
// pointer (an ErrInvalidArgument otherwise); nil out decodes nothing.
func decodeJS(op string, raw json.RawMessage, unserializable, jsType string, out any) *Error {
	if out == nil {
		return nil
	}
	if unserializable == "-0" {
		raw = json.RawMessage("-0")
	}
	if decodeScalar(raw, out) {
		return nil
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("out must be a non-nil pointer to receive the value, got %T", out))
		e.Hint = "pass a pointer, e.g. &s for a string s, or nil to ignore the value"
		return e
	}
	if jsType == "" {
		jsType = jsonKind(raw)
	}
	if len(raw) == 0 {
		goType := fmt.Sprintf("%T", out)
		elem := rv.Elem()
		switch {
		case unserializable != "":
			e := newError(op, ErrDecode, fmt.Sprintf("the expression returned the JavaScript %s %s, which has no JSON form and cannot be decoded into %s", jsType, unserializable, goType))
			e.Hint = "convert it in the expression, e.g. String(x), or Number.isFinite(x) ? x : null"
			return e
		case nilable(elem.Kind()):
			elem.SetZero()
			return nil
		}
		e := newError(op, ErrDecode, fmt.Sprintf("the expression returned undefined, which %s cannot hold", goType))
		e.Hint = fmt.Sprintf("make the expression return a value, pass a *%s (or a *any) to accept undefined as nil, or pass nil to ignore the result", goType)
		return e
	}
	if err := json.Unmarshal(raw, out); err != nil {
		goType := fmt.Sprintf("%T", out)
		e := newError(op, ErrDecode, fmt.Sprintf("cannot decode a JavaScript %s into %s", jsType, goType))
		e.Err = err
		e.Hint = fmt.Sprintf("the expression returns a JavaScript %s: pass %s (or *any) to receive it, or convert the value in the expression to fit %s", jsType, goFor(jsType), goType)
		return e
	}
	return nil
}

// decodeScalar decodes the commonest values the way json.Unmarshal does,
// without its reflection: an integer into *int or *int64, a number into
// *float64, a string into *string (jsonscan.String), a boolean into *bool.
// It reports false, having changed nothing, for anything else (a nil
// pointer, null, a malformed string, a number the type cannot hold),
// which decodeJS then decodes, or reports, as before.
func decodeScalar(raw json.RawMessage, out any) bool {
	switch p := out.(type) {
	case *int:
		n, ok := scanInt(raw)
		if ok && p != nil && int64(int(n)) == n {
			*p = int(n)
			return true
		}
	case *int64:
		n, ok := scanInt(raw)
		if ok && p != nil {
			*p = n
			return true
		}
	case *float64:
		if p != nil && jsonscan.ValidNumber(raw) {
			if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
				*p = f
				return true
			}
		}
	case *string:
		if p != nil && len(raw) > 0 && !jsonscan.IsNull(raw) { // null leaves a string as it is
			if s, ok := jsonscan.String(raw); ok {
				*p = s
				return true
			}
		}
	case *bool:
		if p != nil && (string(raw) == "true" || string(raw) == "false") {
			*p = string(raw) == "true"
			return true
		}
	}
	return false
}

// scanInt parses a JSON number written as an integer (no fraction, no
// exponent) that fits an int64, as json.Unmarshal does into an integer.
func scanInt(raw json.RawMessage) (int64, bool) {
	if !jsonscan.ValidNumber(raw) { // ParseInt then refuses a fraction or an exponent
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

func nilable(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		return true
	}
	return false
}

// jsonKind names the JavaScript type of a JSON value.
func jsonKind(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			return "string"
		case '[':
			return "array"
		case '{':
			return "object"
		case 't', 'f':
			return "boolean"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "undefined"
}

// goFor suggests a Go type for a JavaScript type.
func goFor(jsType string) string {
	switch jsType {
	case "string":
		return "*string"
	case "number":
		return "*float64 (or *int for whole numbers)"
	case "boolean":
		return "*bool"
	case "array":
		return "a pointer to a slice, e.g. *[]any"
	case "object":
		return "a pointer to a struct with matching json tags, or *map[string]any"
	}
	return "*any"
}

// jsTypeOf names the JavaScript type of a Runtime.RemoteObject: its type,
// or its subtype for null and arrays.
func jsTypeOf(typ string, subtype *string) string {
	if typ == "object" && subtype != nil && (*subtype == "null" || *subtype == "array") {
		return *subtype
	}
	return typ
}

// unreturnable is the ErrDecode error of a call of t whose value the
// browser could not send back as JSON (a cyclic object, a Symbol, a value
// deeper than it walks), or nil for any other err.
func (t *Tab) unreturnable(op string, err error) *Error {
	var re *rpcc.ResponseError
	if !errors.As(err, &re) {
		return nil
	}
	for _, msg := range []string{"Object reference chain is too long", "Object couldn't be returned by value"} {
		if strings.Contains(re.Message, msg) {
			e := newError(op, ErrDecode, "the value has no JSON form the browser can send (a cyclic object, a Symbol, or nesting too deep): "+re.Message)
			e.Session, e.Tab = t.s.id, t.id
			e.Hint = "return plain data: pick the fields you need (e.g. ({id: x.id, name: x.name})), or convert it in the expression (String(x), JSON.stringify with a replacer)"
			return e
		}
	}
	return nil
}
