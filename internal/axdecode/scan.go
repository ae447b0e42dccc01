// Room: the decoder's JSON primitives: objects and their keys, arrays,
// strings (interned when they are one of the few Chromium repeats),
// booleans, integers and raw values, each reading data from i on and
// reporting false at anything it leaves to encoding/json; and the blocks
// small values are taken from. No locks, no goroutines.

package axdecode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/browserpool/browserpool/internal/jsonscan"
)

// take returns the next element of the block *b, starting a new block when
// it is full.
func take[T any](b *[]T) *T {
	if len(*b) == cap(*b) {
		*b = make([]T, 0, blockLen)
	}
	*b = (*b)[:len(*b)+1]
	return &(*b)[len(*b)-1]
}

// object reads an object, calling field for each key (which aliases data)
// with i at its value; field reads the value.
func (d *decoder) object(field func(key []byte) bool) bool {
	if !d.expect('{') {
		return false
	}
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.key()
		if !ok || !field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// key reads a key and its colon, leaving i at the value. An escaped or
// non-ASCII key is refused: encoding/json matches keys to fields by a
// folding that such a key could meet.
func (d *decoder) key() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	n := bytes.IndexByte(d.data[start:], '"')
	if n < 0 || !jsonscan.PlainASCII(d.data[start:start+n]) {
		return nil, false
	}
	end := start + n
	d.i = end + 1
	if !d.expect(':') {
		return nil, false
	}
	d.i = jsonscan.SkipWS(d.data, d.i)
	return d.data[start:end], true
}

// unknown skips the value of a key the type has no field for, once it is
// sure encoding/json would skip it too.
func (d *decoder) unknown(key []byte, fields []string) bool {
	for _, f := range fields {
		if strings.EqualFold(string(key), f) {
			return false
		}
	}
	return d.skip()
}

// skip checks the value at i as valid JSON and moves past it.
func (d *decoder) skip() bool {
	end, ok := jsonscan.SkipValid(d.data, d.i)
	d.i = end
	return ok
}

// once marks the field bit in seen, and is false if it was marked: a
// repeated key is left to encoding/json (which merges or replaces).
func (d *decoder) once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// expect consumes c, after any whitespace.
func (d *decoder) expect(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// peek returns the next byte after any whitespace (moving i to it), or 0
// at the end.
func (d *decoder) peek() byte {
	d.i = jsonscan.SkipWS(d.data, d.i)
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// array reads an array, calling elem with i at each element.
func (d *decoder) array(elem func() bool) bool {
	if !d.expect('[') {
		return false
	}
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		d.i = jsonscan.SkipWS(d.data, d.i)
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string. Plain ASCII is copied out; anything else (escapes,
// other bytes) is decoded by encoding/json, so it reads the same.
// Chromium's enumerations (value types, property names) come back as the
// constants themselves, with no allocation.
func (d *decoder) str() (string, bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	if n := bytes.IndexByte(d.data[start:], '"'); n >= 0 && jsonscan.PlainASCII(d.data[start:start+n]) {
		d.i = start + n + 1
		raw := d.data[start : start+n]
		if s, ok := intern(raw); ok {
			return s, true
		}
		return string(raw), true
	}
	end, ok := jsonscan.ValidString(d.data, d.i)
	if !ok {
		return "", false
	}
	s, ok := jsonscan.String(d.data[d.i:end])
	d.i = end
	return s, ok
}

// known holds, sorted, the strings Chromium repeats in every node: value
// types, property names, ignored reasons, value source types, native
// sources and the attributes a name is looked for in. An array of
// constants: nothing to build when a program starts.
var known = [...]string{
	"actions", "activeModalDialog", "activedescendant", "alt", "aria-describedby", "aria-description",
	"aria-label", "aria-labelledby", "aria-placeholder", "ariaHiddenElement", "ariaHiddenSubtree",
	"atomic", "attribute", "autocomplete", "boolean", "booleanOrUndefined", "busy", "checked",
	"computedString", "contents", "controls", "describedby", "description", "details", "disabled",
	"domRelation", "editable", "emptyAlt", "emptyText", "errormessage", "expanded", "figcaption",
	"flowto", "focusable", "focused", "hasPopup", "hidden", "hiddenRoot", "idref", "idrefList",
	"implicit", "inertElement", "inertSubtree", "integer", "internalRole", "invalid", "keyshortcuts",
	"label", "labelContainer", "labelfor", "labelledby", "labelwrapped", "legend", "level", "live",
	"modal", "multiline", "multiselectable", "node", "nodeList", "notRendered", "notVisible",
	"number", "orientation", "other", "owns", "placeholder", "presentationalRole", "pressed",
	"probablyPresentational", "readonly", "relatedElement", "relevant", "required", "role",
	"roledescription", "root", "rubyannotation", "selected", "settable", "string", "style",
	"tablecaption", "title", "token", "tokenList", "tristate", "uninteresting", "url",
	"valueUndefined", "valuemax", "valuemin", "valuetext",
}

// intern returns the constant in known that equals b, if there is one.
func intern(b []byte) (string, bool) {
	lo, hi := 0, len(known)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch k := known[m]; {
		case k == string(b):
			return k, true
		case k < string(b):
			lo = m + 1
		default:
			hi = m
		}
	}
	return "", false
}

// boolean reads true or false.
func (d *decoder) boolean() (bool, bool) {
	rest := d.data[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// integer reads a number written as an integer that fits an int, as
// encoding/json reads one into an int; a number with a fraction or an
// exponent stops at the '.' or 'e', which the caller refuses.
func (d *decoder) integer() (int, bool) {
	start := d.i
	end := start
	for end < len(d.data) {
		c := d.data[end]
		if c != '-' && (c < '0' || c > '9') {
			break
		}
		end++
	}
	num := d.data[start:end] // a fraction or exponent after it fails the caller's delimiter check
	if !jsonscan.ValidNumber(num) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 0)
	if err != nil {
		return 0, false
	}
	d.i = end
	return int(n), true
}

// raw copies out one whole value (never null: encoding/json hands a
// json.RawMessage the literal, which this decoder leaves to it).
func (d *decoder) raw() (json.RawMessage, bool) {
	if d.i < len(d.data) && d.data[d.i] == 'n' {
		return nil, false
	}
	end, ok := jsonscan.SkipValid(d.data, d.i)
	if !ok {
		return nil, false
	}
	raw := d.data[d.i:end]
	d.i = end
	if len(raw) > rawBlock/8 {
		return append(json.RawMessage(nil), raw...), true
	}
	if cap(d.raws)-len(d.raws) < len(raw) {
		d.raws = make([]byte, 0, rawBlock)
	}
	n := len(d.raws)
	d.raws = append(d.raws, raw...)
	return d.raws[n:len(d.raws):len(d.raws)], true
}
