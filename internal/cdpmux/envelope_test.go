// Room: tests of the envelope scanner against encoding/json. No locks.

package cdpmux

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// refEnvelope reads the envelope with encoding/json: ok is false when it
// rejects the message or the message is not an object.
func refEnvelope(data []byte) (*message, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m == nil {
		return nil, false
	}
	msg := new(message)
	if v, ok := m["id"]; ok && json.Unmarshal(v, &msg.ID) != nil {
		return nil, false
	}
	if v, ok := m["method"]; ok && json.Unmarshal(v, &msg.Method) != nil {
		return nil, false
	}
	if v, ok := m["sessionId"]; ok && json.Unmarshal(v, &msg.SessionID) != nil {
		return nil, false
	}
	if v, ok := m["error"]; ok && json.Unmarshal(v, &msg.Error) != nil {
		return nil, false
	}
	msg.Params, msg.Result = m["params"], m["result"]
	return msg, true
}

func checkEnvelope(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseEnvelope(data)
	if !json.Valid(data) {
		return // only structure outside params/result is checked; no panic is the test
	}
	want, ok := refEnvelope(data)
	if ok != (err == nil) {
		t.Fatalf("parseEnvelope(%q): err %v, encoding/json accepts: %v", data, err, ok)
	}
	if !ok {
		return
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })); diff != "" {
		t.Fatalf("parseEnvelope(%q) (-want +got):\n%s", data, diff)
	}
}

var envelopeSeeds = []string{
	`{"id":1,"result":{}}`,
	`{"id":18446744073709551615,"result":{"a":[1,2,{"b":"}]\""}]}}`,
	`{"id":18446744073709551616,"result":{}}`,
	`{"id":-1}`,
	`{"id":1.5}`,
	`{"id":1e3}`,
	`{"id":null,"method":null}`,
	`{"method":"Page.lifecycleEvent","sessionId":"AB12","params":{"name":"load","loaderId":"x"}}`,
	`{"method":"A\u002eb","params":null}`,
	`{"id":3,"error":{"code":-32000,"message":"No target","data":"x"}}`,
	`{"id":3,"error":"bad"}`,
	`{"id":1,"id":2}`,
	`{"id":-1,"id":2}`,
	`{"\u0069d":7}`,
	`{"ID":7}`,
	` { "id" : 4 , "result" : [ ] } `,
	`{}`,
	`[]`,
	`null`,
	`"x"`,
	`{"id":1,}`,
	`{"id":1 "method":"x"}`,
	`{"method":"é\n"}`,
	`{"method":"\ud800"}`,
	"{\"method\":\"\xff\"}",
	`{"x":{"y":[true,false,null,-0.5e+10,"\\"]},"id":9}`,
}

func TestEnvelopeMatchesEncodingJSON(t *testing.T) {
	for _, s := range envelopeSeeds {
		checkEnvelope(t, []byte(s))
	}
}

func TestEnvelopeOfATwoMegabyteReplyAliasesItsResult(t *testing.T) {
	big := `{"id":42,"result":{"nodes":[` + strings.Repeat(`{"nodeId":"1","role":{"type":"role","value":"generic \"q\" \\ x"}},`, 34000) + `{}]},"sessionId":"S"}`
	data := []byte(big)
	got, err := parseEnvelope(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 42 || got.SessionID != "S" || len(got.Result) < 1<<21-100000 {
		t.Fatalf("got id %d session %q result %d bytes", got.ID, got.SessionID, len(got.Result))
	}
	if &got.Result[0] != &data[strings.Index(big, `{"nodes"`)] {
		t.Error("the result was copied, not handed through")
	}
	checkEnvelope(t, data)
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkEnvelope(t, data) })
}

func BenchmarkEnvelope(b *testing.B) {
	big := []byte(`{"id":42,"result":{"nodes":[` + strings.Repeat(`{"nodeId":"1","role":{"type":"role","value":"generic"}},`, 30000) + `{}]},"sessionId":"S"}`)
	small := []byte(`{"id":42,"result":{"result":{"type":"number","value":2,"description":"2"}},"sessionId":"0123456789ABCDEF0123456789ABCDEF"}`)
	for _, c := range []struct {
		name string
		data []byte
	}{{"small", small}, {"2MB", big}} {
		b.Run("scanner/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := parseEnvelope(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if err := json.Unmarshal(c.data, new(message)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
