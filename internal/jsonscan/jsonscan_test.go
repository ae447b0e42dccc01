// Room: tests of the scanner against encoding/json. No locks.

package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/jsonscan"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

// walk returns the fields Object walks, the last duplicate kept, as a map
// keeps them, and whether the walk found the object well formed.
func walk(data []byte) (map[string]string, bool) {
	got := map[string]string{}
	o := jsonscan.Object(data)
	for o.Next() {
		got[string(o.Key())] = string(o.Value())
	}
	return got, o.Valid()
}

// checkObject compares the walk with what encoding/json reads: every
// object encoding/json accepts is walked to the same fields.
func checkObject(t *testing.T, data []byte) {
	t.Helper()
	got, ok := walk(data)
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil || m == nil {
		if json.Valid(data) && ok {
			t.Fatalf("Object(%q) walked a valid JSON value that is not an object", data)
		}
		return
	}
	if !ok {
		t.Fatalf("Object(%q) found a fault in an object encoding/json accepts", data)
	}
	want := map[string]string{}
	for k, v := range m {
		want[k] = string(v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Object(%q) (-encoding/json +walk):\n%s", data, diff)
	}
}

var objectSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a" : [1, {"b":"}]\""}] , "c":null}`,
	`{"result":{"type":"number","value":2,"description":"2"}}`,
	`{"\u0061":true,"é":false,"k\"q":"x"}`, `{"a":-0.5e+3,"b":0,"c":-0}`,
	`{"a":01}`, `{"a":1,}`, `{"a"}`, `{"a":1}x`, `[1]`, `"s"`, ``, `{`, `{"a":"\"}`, `{"a":tru}`,
	`{"a":{"b":[}`, `{"a":1 "b":2}`, `{"a":.5}`, `{"a":1e}`, `{"\x":1}`,
}

func TestObjectWalksTheFieldsEncodingJSONReads(t *testing.T) {
	for _, s := range objectSeeds {
		checkObject(t, []byte(s))
	}
	got, ok := walk([]byte(`{"a": 1 , "b":{"c":[2]}, "a":"x"}`))
	want := map[string]string{"a": `"x"`, "b": `{"c":[2]}`}
	if diff := cmp.Diff(want, got); diff != "" || !ok {
		t.Errorf("walk (-want +got):\n%s (valid %v)", diff, ok)
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range objectSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkObject(t, data) })
}

// checkString compares String with json.Unmarshal into a string, for a
// value with no whitespace around it (as Object gives values).
func checkString(t *testing.T, s string) {
	t.Helper()
	if strings.Trim(s, " \t\r\n") != s {
		return
	}
	got, ok := jsonscan.String([]byte(s))
	var want string
	err := json.Unmarshal([]byte(s), &want)
	if ok != (err == nil) || got != want {
		t.Errorf("String(%q) = %q, %v; encoding/json gives %q, %v", s, got, ok, want, err)
	}
}

var stringSeeds = []string{
	`"plain"`, `""`, `"a\"b"`, `"é"`, `"\u00e9"`, `"\ud800"`, "\"\xff\"", `null`, `1`, `"`, `"a\"`, `x`, `"ab`, `"a"b"`, `""""`,
	`"\ud83d\ude00 pair"`, `"\ud83d\u0041 not a pair"`, `"\ude00\ud83d low first"`, `"\ud83d\ud83d\ude00"`, `"\ud83d"`,
	`"\ud83d\"`, `"\b\f\n\r\t\/\\\""`, `"\'"`, `"\x41"`, `"\u12"`, `"\u12G4"`, "\"tab\there\"", "\"caf\xc3\xa9 \xc3\"",
	"\"\xed\xa0\x80 encoded surrogate\"", `"\u0000\u001f\u007f\u0080\uffff"`, `"\u2028\u2029"`,
}

func TestStringDecodesAsEncodingJSONDoes(t *testing.T) {
	for _, s := range stringSeeds {
		checkString(t, s)
	}
	if got, ok := jsonscan.String(nil); got != "" || !ok {
		t.Errorf(`String(nil) = %q, %v; want "", true (an absent value)`, got, ok)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkString(t, s) })
}

func TestValidNumberFollowsTheJSONGrammar(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "12": true, "1.5": true, "-1.5e-3": true, "1E+9": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "1e": false, "+1": false, "1e+": false, "0x1": false, "NaN": false,
	} {
		if got := jsonscan.ValidNumber([]byte(s)); got != want || got != json.Valid([]byte(s)) {
			t.Errorf("ValidNumber(%q) = %v, want %v (json.Valid %v)", s, got, want, json.Valid([]byte(s)))
		}
	}
}

// checkSkipValid compares SkipValid with json.Valid: a value it accepts
// is valid JSON, and a valid value (with no whitespace before it) is
// accepted whole.
func checkSkipValid(t *testing.T, data []byte) {
	t.Helper()
	end, ok := jsonscan.SkipValid(data, 0)
	if ok && !json.Valid(data[:end]) {
		t.Fatalf("SkipValid(%.200q) accepted %.200q, which json.Valid refuses", data, data[:end])
	}
	trimmed := bytes.TrimRight(data, " \t\r\n")
	if len(data) > 0 && jsonscan.SkipWS(data, 0) == 0 && json.Valid(data) && depth(data) <= 1000 && (!ok || end != len(trimmed)) {
		t.Fatalf("SkipValid(%.200q) = %d, %v; json.Valid accepts it, want %d, true", data, end, ok, len(trimmed))
	}
}

// depth is how deeply valid JSON's objects and arrays nest.
func depth(data []byte) int {
	d, most, in := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

var skipValidSeeds = []string{
	`1`, `-0.5e+3`, `"a\"b\\c\/\b\f\n\r\t\u00e9"`, `"` + "\xff\xfe" + `"`, `true`, `false`, `null`,
	`{}`, `[]`, `{"a":[1,{"b":null}],"c":"d"}`, ` [ 1 , 2 ] `, `[1,2]x`, `{"a":1}`,
	`"a` + "\n" + `"`, `"\x"`, `"\u12"`, `"\u12g4"`, `[1,]`, `{"a"}`, `{"a":}`, `{1:2}`, `[01]`, `{"a":1,}`,
	`[` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `]`, strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
	`{"a":tru}`, `[nul]`, `"unterminated`, `{"a":1 "b":2}`, `[1 2]`,
}

func TestSkipValidAcceptsWhatJSONValidAccepts(t *testing.T) {
	for _, s := range skipValidSeeds {
		checkSkipValid(t, []byte(s))
	}
	// Deeper than its bound, it refuses what encoding/json accepts (and
	// leaves it to it).
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	if _, ok := jsonscan.SkipValid([]byte(deep), 0); ok {
		t.Errorf("SkipValid accepted 1,001 nested arrays; its bound is 1,000")
	}
}

func FuzzSkipValid(f *testing.F) {
	for _, s := range skipValidSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSkipValid(t, data)
	})
}
