// Room: reading a message's envelope. No locks: pure functions of one
// message's bytes.

package cdpmux

import (
	"encoding/json"
	"errors"

	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool/internal/jsonscan"
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
	o := jsonscan.Object(data)
	for o.Next() {
		f.set(o.Key(), o.Value())
	}
	if !o.Valid() {
		return nil, errMalformed
	}
	return f.decode()
}

// fields holds the spans of the top-level fields we read; the last
// duplicate wins, as in encoding/json.
type fields struct {
	id, method, sessionID, params, result, err []byte
}

// set records one field's span. string(key) in a switch does not allocate.
func (f *fields) set(key, val []byte) {
	switch string(key) {
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
	var ok bool
	if f.id != nil && !jsonscan.IsNull(f.id) {
		if msg.ID, ok = parseUint(f.id); !ok {
			return nil, errMalformed
		}
	}
	if msg.Method, ok = jsonscan.String(f.method); !ok {
		return nil, errMalformed
	}
	if msg.SessionID, ok = jsonscan.String(f.sessionID); !ok {
		return nil, errMalformed
	}
	if f.err != nil && !jsonscan.IsNull(f.err) {
		msg.Error = new(rpcc.ResponseError)
		if json.Unmarshal(f.err, msg.Error) != nil {
			return nil, errMalformed
		}
	}
	return msg, nil
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
