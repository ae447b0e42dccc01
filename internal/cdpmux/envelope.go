// Room: reading a message's envelope. No locks: pure functions of one
// message's bytes.

package cdpmux

import (
	"encoding/json"
	"errors"

	"github.com/mafredri/cdp/rpcc"
)

// message is one CDP message in either direction. Params and Result alias
// the bytes the transport returned (a fresh slice per message): they are
// handed to the session's codec without a copy.
type message struct {
	ID        uint64              `json:"id,omitempty"`
	SessionID string              `json:"sessionId,omitempty"`
	Method    string              `json:"method,omitempty"`
	Params    json.RawMessage     `json:"params,omitempty"`
	Result    json.RawMessage     `json:"result,omitempty"`
	Error     *rpcc.ResponseError `json:"error,omitempty"`
}

var errMalformed = errors.New("cdpmux: malformed message")

// parseEnvelope reads the routing fields of one message (id, method,
// sessionId, error) and the spans of params and result, which it skips
// without decoding: a 2 MB reply is scanned once here for its structure
// (strings and brackets only) and decoded once by the codec, not validated
// and copied by encoding/json first.
//
// For every message encoding/json accepts as an object, the fields equal
// what json.Unmarshal into map[string]json.RawMessage gives for the same
// keys (exact key match; the last duplicate wins). The top level must be
// a well-formed object; params and result are only checked for balanced
// brackets and terminated strings, so a payload that is not valid JSON
// inside reaches the codec, whose decode reports it to the caller.
func parseEnvelope(data []byte) (*message, error) {
	var f fields
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, errMalformed
	}
	i = skipWS(data, i+1)
	if i < len(data) && data[i] == '}' {
		if skipWS(data, i+1) != len(data) {
			return nil, errMalformed
		}
		return f.decode()
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, errMalformed
		}
		kEnd, ok := skipString(data, i)
		if !ok {
			return nil, errMalformed
		}
		key := data[i+1 : kEnd-1]
		if !plainASCII(key) {
			// An escaped or non-ASCII key is matched unescaped, as
			// encoding/json does; it must be valid.
			var k string
			if json.Unmarshal(data[i:kEnd], &k) != nil {
				return nil, errMalformed
			}
			key = []byte(k)
		}
		i = skipWS(data, kEnd)
		if i >= len(data) || data[i] != ':' {
			return nil, errMalformed
		}
		i = skipWS(data, i+1)
		vEnd, ok := skipValue(data, i)
		if !ok {
			return nil, errMalformed
		}
		f.set(string(key), data[i:vEnd])
		i = skipWS(data, vEnd)
		if i >= len(data) {
			return nil, errMalformed
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			if skipWS(data, i+1) != len(data) {
				return nil, errMalformed
			}
			return f.decode()
		default:
			return nil, errMalformed
		}
	}
}

// fields holds the spans of the top-level fields we read; the last
// duplicate wins, as in encoding/json.
type fields struct {
	id, method, sessionID, params, result, err []byte
}

// set records one field's span. string(key) in a switch does not allocate.
func (f *fields) set(key string, val []byte) {
	switch key {
	case "id":
		f.id = val
	case "method":
		f.method = val
	case "sessionId":
		f.sessionID = val
	case "params":
		f.params = val
	case "result":
		f.result = val
	case "error":
		f.err = val
	}
}

// decode turns the spans into a message.
func (f *fields) decode() (*message, error) {
	msg := &message{Params: f.params, Result: f.result}
	var err error
	if f.id != nil && !isNull(f.id) {
		var ok bool
		if msg.ID, ok = parseUint(f.id); !ok {
			return nil, errMalformed
		}
	}
	if msg.Method, err = decodeString(f.method); err != nil {
		return nil, err
	}
	if msg.SessionID, err = decodeString(f.sessionID); err != nil {
		return nil, err
	}
	if f.err != nil && !isNull(f.err) {
		msg.Error = new(rpcc.ResponseError)
		if json.Unmarshal(f.err, msg.Error) != nil {
			return nil, errMalformed
		}
	}
	return msg, nil
}

func isNull(v []byte) bool { return string(v) == "null" }

// decodeString decodes a JSON string value (null gives ""). Plain ASCII
// without escapes, what Chrome sends for method names and session ids,
// costs one small allocation; anything else goes through encoding/json.
func decodeString(v []byte) (string, error) {
	if v == nil || isNull(v) {
		return "", nil
	}
	if len(v) < 2 || v[0] != '"' {
		return "", errMalformed
	}
	if inner := v[1 : len(v)-1]; plainASCII(inner) {
		return string(inner), nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", errMalformed
	}
	return s, nil
}

// plainASCII reports whether b holds only printable ASCII other than the
// backslash: its JSON string form is itself.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// parseUint parses a JSON number that is an unsigned integer fitting
// uint64, as encoding/json does into a uint64 field.
func parseUint(v []byte) (uint64, bool) {
	if len(v) == 0 || len(v) > 20 || (v[0] == '0' && len(v) > 1) {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func skipWS(data []byte, i int) int {
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

// skipValue returns the index after the value starting at data[i]. A
// scalar must be a well-formed literal or number start; objects and arrays
// are skipped by their brackets and strings only.
func skipValue(data []byte, i int) (int, bool) {
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
		if !validNumber(data[i:j]) {
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

// validNumber reports whether b is a JSON number:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func validNumber(b []byte) bool {
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
