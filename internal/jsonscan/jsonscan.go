// Package jsonscan reads JSON objects by scanning their bytes: the span of
// each field's value, found by its structure (strings and brackets) and
// left undecoded. The mux routes messages with it (internal/cdpmux), and
// Tab.Evaluate reads a small reply with it without encoding/json's
// reflection. Pure functions, no locks.
package jsonscan

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Object walks the fields of the object data holds (whitespace around it
// allowed), in order:
//
//	o := jsonscan.Object(data)
//	for o.Next() {
//		use(o.Key(), o.Value())
//	}
//	if !o.Valid() { ... }
//
// A key is given unescaped: an escaped or non-ASCII one goes through
// encoding/json, which must accept it. Keys and values alias data, except
// for such a key. Valid reports whether data is a well-formed object at its
// top level, each value checked as Skip checks it; the walk stops at the
// first fault.
//
// For every object encoding/json accepts, the fields walked equal what
// json.Unmarshal into map[string]json.RawMessage gives for the same keys
// (the last duplicate is the one a map keeps). An Object is a value on the
// caller's stack: walking allocates nothing but an unusual key.
func Object(data []byte) Fields { return Fields{data: data} }

// Fields is a walk of an object's fields (see Object).
type Fields struct {
	data     []byte
	i        int
	state    uint8 // fieldsStart, fieldsIn, fieldsEnd, fieldsBad
	key, val []byte
}

const (
	fieldsStart = iota
	fieldsIn
	fieldsEnd
	fieldsBad
)

// Next moves to the next field; false at the end or at a fault.
func (o *Fields) Next() bool {
	data, i := o.data, o.i
	switch o.state {
	case fieldsStart:
		i = SkipWS(data, 0)
		if i >= len(data) || data[i] != '{' {
			return o.fail()
		}
		i = SkipWS(data, i+1)
		if i < len(data) && data[i] == '}' {
			return o.end(i)
		}
	case fieldsIn:
		if data[i] == '}' {
			return o.end(i)
		}
		i = SkipWS(data, i+1) // after the ','
	default:
		return false
	}
	if i >= len(data) || data[i] != '"' {
		return o.fail()
	}
	kEnd, ok := skipString(data, i)
	if !ok {
		return o.fail()
	}
	key := data[i+1 : kEnd-1]
	if !PlainASCII(key) {
		var k string
		if json.Unmarshal(data[i:kEnd], &k) != nil {
			return o.fail()
		}
		key = []byte(k)
	}
	i = SkipWS(data, kEnd)
	if i >= len(data) || data[i] != ':' {
		return o.fail()
	}
	i = SkipWS(data, i+1)
	vEnd, ok := Skip(data, i)
	if !ok {
		return o.fail()
	}
	o.key, o.val = key, data[i:vEnd]
	i = SkipWS(data, vEnd)
	if i >= len(data) || data[i] != ',' && data[i] != '}' {
		return o.fail()
	}
	o.i, o.state = i, fieldsIn
	return true
}

// end finishes the walk at the closing brace data[i].
func (o *Fields) end(i int) bool {
	if SkipWS(o.data, i+1) != len(o.data) {
		return o.fail()
	}
	o.state, o.key, o.val = fieldsEnd, nil, nil
	return false
}

func (o *Fields) fail() bool {
	o.state, o.key, o.val = fieldsBad, nil, nil
	return false
}

// Key is the current field's key (unescaped).
func (o *Fields) Key() []byte { return o.key }

// Value is the current field's value, undecoded.
func (o *Fields) Value() []byte { return o.val }

// Valid reports, once Next has returned false, whether the walk reached
// the object's end with no fault.
func (o *Fields) Valid() bool { return o.state == fieldsEnd }

// IsNull reports whether v is the literal null.
func IsNull(v []byte) bool { return string(v) == "null" }

// String decodes a JSON string value (with no whitespace around it, as
// Object gives values) as encoding/json does; null and an absent value
// (nil) give "". Plain ASCII without escapes, what Chrome sends for method
// names, session ids and type names, costs one small allocation; escapes
// (Chrome escapes every non-ASCII character as \uXXXX) cost one more. ok is
// false for anything else than a string or null.
func String(v []byte) (string, bool) {
	if v == nil || IsNull(v) {
		return "", true
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	if inner := v[1 : len(v)-1]; PlainASCII(inner) {
		return string(inner), true
	}
	if end, ok := ValidString(v, 0); !ok || end != len(v) {
		return "", false
	}
	return unquote(v[1 : len(v)-1]), true
}

// unquote decodes the inside of a string ValidString accepted, as
// encoding/json does: its escapes, a UTF-16 surrogate pair escaped as two
// \u escapes as one character, and a lone surrogate and each byte of
// invalid UTF-8 as U+FFFD.
func unquote(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for r := 0; r < len(s); {
		switch c := s[r]; {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				rr := hex4(s[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if pair := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); pair != unicode.ReplacementChar {
							b.WriteRune(pair)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar // the next escape is read on its own
				}
				b.WriteRune(rr)
				continue
			default: // '"', '\\', '/'
				b.WriteByte(e)
			}
			r += 2
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b.WriteRune(rr)
			r += size
		}
	}
	return b.String()
}

// PlainASCII reports whether b holds only printable ASCII other than the
// backslash and the double quote: its JSON string form, between quotes, is
// itself.
func PlainASCII(b []byte) bool {
	for _, c := range b {
		if !plain[c] {
			return false
		}
	}
	return true
}

// plain marks the bytes PlainASCII accepts.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '\\' && c != '"'
	}
	return t
}()

// SkipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func SkipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at data[i] ('"').
func skipString(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '"':
			return j + 1, true
		case '\\':
			j++
		}
	}
	return 0, false
}

// Skip returns the index after the value starting at data[i]. A scalar
// must be a well-formed literal or number; a string must be terminated;
// objects and arrays are skipped by their brackets and strings only, so a
// malformed inside is left for whoever decodes the value.
func Skip(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		return skipString(data, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, ok := skipString(data, j)
				if !ok {
					return 0, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i
		for j < len(data) {
			switch d := data[j]; {
			case d >= '0' && d <= '9', d == '-', d == '+', d == '.', d == 'e', d == 'E':
				j++
				continue
			}
			break
		}
		if !ValidNumber(data[i:j]) {
			return 0, false
		}
		return j, true
	}
	return 0, false
}

func skipLiteral(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// ValidNumber reports whether b is a JSON number:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func ValidNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i == len(b)
}

// maxDepth bounds how deeply SkipValid follows nested objects and arrays
// (encoding/json's own bound is 10,000); anything deeper is refused, for
// encoding/json to decide.
const maxDepth = 1000

// SkipValid returns the index after the value starting at data[i] (no
// whitespace before it), like Skip, but checks all of it as encoding/json
// does: it returns ok only for a value json.Valid accepts, nested no
// deeper than 1,000 levels. A string may hold any byte from 0x20 up,
// valid UTF-8 or not, as encoding/json allows; its escapes must be
// well formed.
func SkipValid(data []byte, i int) (int, bool) {
	return skipValid(data, i, 0)
}

func skipValid(data []byte, i, depth int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		return ValidString(data, i)
	case '{', '[':
		if depth >= maxDepth {
			return 0, false
		}
		open, end := data[i], byte('}')
		if open == '[' {
			end = ']'
		}
		i = SkipWS(data, i+1)
		if i < len(data) && data[i] == end {
			return i + 1, true
		}
		for {
			if open == '{' {
				var ok bool
				if i >= len(data) || data[i] != '"' {
					return 0, false
				}
				if i, ok = ValidString(data, i); !ok {
					return 0, false
				}
				if i = SkipWS(data, i); i >= len(data) || data[i] != ':' {
					return 0, false
				}
				i = SkipWS(data, i+1)
			}
			var ok bool
			if i, ok = skipValid(data, i, depth+1); !ok {
				return 0, false
			}
			if i = SkipWS(data, i); i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case ',':
				i = SkipWS(data, i+1)
			case end:
				return i + 1, true
			default:
				return 0, false
			}
		}
	}
	return Skip(data, i) // a literal or a number, checked whole
}

// ValidString returns the index after the string starting at data[i]
// ('"'), checked as encoding/json checks it: no byte below 0x20, and only
// the escapes \" \\ \/ \b \f \n \r \t and \uXXXX.
func ValidString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			if j+1 >= len(data) {
				return 0, false
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(data) {
					return 0, false
				}
				for _, h := range data[j+2 : j+6] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 5
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// hex4 is the value of 4 hex digits (checked by ValidString).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
