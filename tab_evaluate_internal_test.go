// Room: tests of the Evaluate request encoding and of its reply's decoding. No locks.

package browserpool

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var jsStringSeeds = []string{
	"", "1+1", `document.querySelector("a[href='x']").textContent`,
	"a\\b\"c\n\r\t\x00\x01\x1f\x7f<>&", "é ✓ 😀", "\u2028\u2029", "\xff\xfe", "line1\nline2",
}

func checkJSString(t *testing.T, s string) {
	t.Helper()
	got := appendJSString([]byte("x"), s)
	if got[0] != 'x' {
		t.Fatalf("appendJSString(%q) did not append", s)
	}
	var back string
	if err := json.Unmarshal(got[1:], &back); err != nil {
		t.Fatalf("appendJSString(%q) = %s: not a JSON string: %v", s, got[1:], err)
	}
	want := s
	if !utf8.ValidString(s) {
		b, _ := json.Marshal(s) // invalid UTF-8 becomes U+FFFD, as encoding/json does
		json.Unmarshal(b, &want)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Fatalf("appendJSString(%q) decodes to another string (-want +got):\n%s", s, diff)
	}
}

func TestAnEvaluatedExpressionIsSentAsAJSONStringThatDecodesToIt(t *testing.T) {
	for _, s := range jsStringSeeds {
		checkJSString(t, s)
	}
	var params struct {
		Expression    string `json:"expression"`
		ReturnByValue bool   `json:"returnByValue"`
		AwaitPromise  bool   `json:"awaitPromise"`
		ObjectGroup   string `json:"objectGroup"`
	}
	expr := `"quoted" <b> & 'single'`
	if err := json.Unmarshal(appendEvaluateParams(nil, expr), &params); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(expr, params.Expression); diff != "" || !params.ReturnByValue || !params.AwaitPromise || params.ObjectGroup != evaluateGroup {
		t.Errorf("params %+v (-want +got expression):\n%s", params, diff)
	}
}

func FuzzAppendJSString(f *testing.F) {
	for _, s := range jsStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSString(t, s) })
}

// evaluateReplySeeds are replies as Chromium sends them, and some it does
// not, which the scan must read as json.Unmarshal does or leave to it.
var evaluateReplySeeds = []string{
	`{"result":{"type":"number","value":2,"description":"2"}}`,
	`{"result":{"type":"string","value":"a \"q\" é"}}`,
	`{"result":{"type":"object","subtype":"null","value":null}}`,
	`{"result":{"type":"object","subtype":"array","className":"Array","description":"Array(2)","value":[1,{"a":"}"}]}}`,
	`{"result":{"type":"undefined"}}`,
	`{"result":{"type":"number","unserializableValue":"-0","description":"-0"}}`,
	`{"result":{"type":"bigint","unserializableValue":"12n","description":"12n"}}`,
	`{"result":{"type":"object","subtype":"error","className":"ReferenceError","description":"ReferenceError: x is not defined\n    at <anonymous>:1:1","objectId":"1"},"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":0,"columnNumber":0}}`,
	`{"result":{"type":"number","value":1},"exceptionDetails":null}`,
	`{"result":{"Type":"string","value":"x"}}`, `{"Result":{"type":"number","value":1}}`, `{"result":{"ſubtype":"null","type":"object"}}`,
	`{"result":{"type":"number","type":null,"value":1,"value":2,"subtype":"x","subtype":null}}`,
	`{"result":{"type":"str\u0069ng","value":"x"}}`, `{"result":null}`, `{}`, `{"result":{"type":1}}`, `{"result":{"value":}}`,
	`{"result":{"type":"number","value":1}`, `{"result":{"type":"number","value":1}} x`,
	`{"result":{"type":"number"},"result":{"value":1}}`, `{"result":{"type":"number","value":1},"result":null}`,
}

func checkEvaluateReply(t *testing.T, raw []byte) {
	t.Helper()
	got, ok := scanEvaluateReply(raw)
	if !ok {
		return // json.Unmarshal reads it
	}
	var want evaluateReply
	if err := json.Unmarshal(raw, &want); err != nil {
		if json.Valid(raw) {
			t.Fatalf("scanEvaluateReply(%q) read a reply json.Unmarshal rejects: %v", raw, err)
		}
		return // not JSON: the scan only checks what it reads, and the value's decode reports the rest
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("scanEvaluateReply(%q) (-json.Unmarshal +scan):\n%s", raw, diff)
	}
}

func TestTheEvaluateReplyScanReadsWhatJSONUnmarshalReadsOrLeavesItToIt(t *testing.T) {
	for _, s := range evaluateReplySeeds {
		checkEvaluateReply(t, []byte(s))
	}
	for s, want := range map[string]bool{
		evaluateReplySeeds[0]:  true, // what a call that returns a value gets
		evaluateReplySeeds[2]:  true,
		evaluateReplySeeds[7]:  false, // an exception: its details are json.Unmarshal's
		evaluateReplySeeds[9]:  false, // "Type" is the type field to encoding/json
		evaluateReplySeeds[11]: false,
	} {
		if _, ok := scanEvaluateReply([]byte(s)); ok != want {
			t.Errorf("scanEvaluateReply(%s) ok = %v, want %v", s, ok, want)
		}
	}
}

func FuzzScanEvaluateReply(f *testing.F) {
	for _, s := range evaluateReplySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkEvaluateReply(t, raw) })
}

var scalarSeeds = []string{
	`0`, `-0`, `2`, `-17`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `1.5`, `1e3`, `-0.0`, `1e400`, `01`,
	`"plain"`, `""`, `"a\"b"`, `"é"`, `"\u00e9"`, "\"\xff\"", `"<&>"`, `true`, `false`, `null`, `[1]`, `{}`, ``, `tru`, `"unterminated`, `"ab`, `"a"b"`, `""""`,
}

// checkScalar decodes raw into each target decodeScalar reads, and
// compares with json.Unmarshal: what the fast path decodes, json.Unmarshal
// decodes the same, with no error.
func checkScalar(t *testing.T, raw []byte) {
	t.Helper()
	targets := []func() any{
		func() any { return new(int) }, func() any { return new(int64) }, func() any { return new(float64) },
		func() any { return new(string) }, func() any { return new(bool) },
	}
	for _, mk := range targets {
		got, want := mk(), mk()
		if !decodeScalar(raw, got) {
			if diff := cmp.Diff(mk(), got); diff != "" {
				t.Fatalf("decodeScalar(%q, %T) declined but changed the target:\n%s", raw, got, diff)
			}
			continue
		}
		if err := json.Unmarshal(raw, want); err != nil {
			t.Fatalf("decodeScalar(%q, %T) decoded what json.Unmarshal rejects: %v", raw, got, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("decodeScalar(%q, %T) (-json.Unmarshal +fast):\n%s", raw, got, diff)
		}
	}
	var nilInt *int
	if decodeScalar(raw, nilInt) {
		t.Fatalf("decodeScalar(%q) decoded into a nil *int", raw)
	}
}

func TestTheCommonestValuesDecodeAsJSONUnmarshalDecodesThem(t *testing.T) {
	for _, s := range scalarSeeds {
		checkScalar(t, []byte(s))
	}
	var n int
	var s string
	var b bool
	var f float64
	for _, c := range []struct {
		raw string
		out any
	}{{`42`, &n}, {`"x"`, &s}, {`true`, &b}, {`-0`, &f}, {`0.25`, &f}} {
		if !decodeScalar(json.RawMessage(c.raw), c.out) {
			t.Errorf("decodeScalar(%s, %T) declined a value it is for", c.raw, c.out)
		}
	}
	if n != 42 || s != "x" || !b || f != 0.25 {
		t.Errorf("decoded %d, %q, %v, %v; want 42, \"x\", true, 0.25", n, s, b, f)
	}
}

func FuzzDecodeScalar(f *testing.F) {
	for _, s := range scalarSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkScalar(t, raw) })
}
