// Room: tests of the scanner against encoding/json. No locks.

package jsonscan_test

import (
	"encoding/json"
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

func TestStringDecodesAsEncodingJSONDoes(t *testing.T) {
	for _, s := range []string{`"plain"`, `""`, `"a\"b"`, `"é"`, `"\u00e9"`, `"\ud800"`, "\"\xff\"", `null`, `1`, `"`, `"a\"`, `x`, `"ab`, `"a"b"`, `""""`} {
		got, ok := jsonscan.String([]byte(s))
		var want string
		err := json.Unmarshal([]byte(s), &want)
		if ok != (err == nil) || got != want {
			t.Errorf("String(%s) = %q, %v; encoding/json gives %q, %v", s, got, ok, want, err)
		}
	}
	if got, ok := jsonscan.String(nil); got != "" || !ok {
		t.Errorf(`String(nil) = %q, %v; want "", true (an absent value)`, got, ok)
	}
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
