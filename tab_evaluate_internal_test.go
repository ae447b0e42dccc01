// Room: tests of the Evaluate request encoding. No locks.

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
	}
	expr := `"quoted" <b> & 'single'`
	if err := json.Unmarshal(appendEvaluateParams(nil, expr), &params); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(expr, params.Expression); diff != "" || !params.ReturnByValue || !params.AwaitPromise {
		t.Errorf("params %+v (-want +got expression):\n%s", params, diff)
	}
}

func FuzzAppendJSString(f *testing.F) {
	for _, s := range jsStringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSString(t, s) })
}
