// Room: tests of the node-list decoder against encoding/json. No locks.

package axdecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/accessibility"

	"github.com/browserpool/browserpool/internal/axdecode"
	"github.com/browserpool/browserpool/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{})
}

// checkNodes fails t if Nodes decodes data to anything else than
// json.Unmarshal gives, or decodes what json.Unmarshal refuses. It returns
// whether Nodes decoded data.
func checkNodes(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := axdecode.Nodes(data)
	var want accessibility.GetFullAXTreeReply
	err := json.Unmarshal(data, &want)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("Nodes(%.200q) decoded a reply encoding/json refuses (%v)", data, err)
	}
	if diff := cmp.Diff(want.Nodes, got); diff != "" {
		t.Fatalf("Nodes(%.200q) (-encoding/json +Nodes):\n%s", data, diff)
	}
	return true
}

// checkLean fails t if LeanNodes takes what json.Valid refuses, or gives
// anything else than Nodes does with the fields it skips left zero. It
// returns whether LeanNodes decoded data.
func checkLean(t *testing.T, data []byte) bool {
	t.Helper()
	lean, ok := axdecode.LeanNodes(data)
	if !ok {
		return false
	}
	if !json.Valid(data) {
		t.Fatalf("LeanNodes(%.200q) decoded a reply json.Valid refuses", data)
	}
	full, ok := axdecode.Nodes(data)
	if !ok {
		return true // a skipped field Nodes leaves to encoding/json
	}
	for i := range full {
		n := &full[i]
		n.IgnoredReasons, n.ChromeRole, n.Description, n.FrameID = nil, nil, nil, nil
		strip := func(v *accessibility.AXValue) {
			if v != nil {
				v.Type, v.RelatedNodes, v.Sources = "", nil, nil
			}
		}
		strip(n.Role)
		strip(n.Name)
		strip(n.Value)
		for j := range n.Properties {
			strip(&n.Properties[j].Value)
		}
	}
	if diff := cmp.Diff(full, lean); diff != "" {
		t.Fatalf("LeanNodes(%.200q) (-Nodes, skipped fields zeroed +LeanNodes):\n%s", data, diff)
	}
	return true
}

// chromiumReplies are replies of Accessibility.getFullAXTree from a real
// Chromium (testdata): a page of form controls, labels, a dialog, a table
// and non-ASCII text (names with sources, related nodes, values of every
// kind), and a small form.
func chromiumReplies(t testing.TB) map[string][]byte {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no replies in testdata (%v)", err)
	}
	replies := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		replies[filepath.Base(f)] = b
	}
	return replies
}

func TestNodesDecodesChromiumsRepliesAsEncodingJSONDoes(t *testing.T) {
	for name, data := range chromiumReplies(t) {
		if !checkNodes(t, data) {
			t.Errorf("%s: Nodes left a reply from Chromium to encoding/json; the fast path must take it", name)
		}
		if !checkLean(t, data) {
			t.Errorf("%s: LeanNodes left a reply from Chromium to encoding/json; the fast path must take it", name)
		}
	}
}

// node wraps fields in a reply of one node.
func node(fields string) string { return `{"nodes":[{"nodeId":"1",` + fields + `}]}` }

func TestNodesDecodesWhatEncodingJSONDecodesTheSameWay(t *testing.T) {
	for _, data := range []string{
		`{"nodes":[]}`,
		`{}`,
		` { "nodes" : [ { "nodeId" : "1" , "ignored" : true } ] } `,
		"\t{\"nodes\":[{\"nodeId\":\"1\"}]}\n",
		`{"nodes":[],"extra":{"a":[1,2,{"b":null}],"c":"\u00e9"}}`,
		node(`"childIds":[]`),
		node(`"childIds":["2","3"],"parentId":"0","backendDOMNodeId":-0,"frameId":"F"`),
		node(`"backendDOMNodeId":9223372036854775807`),
		node(`"name":{"type":"computedString","value":"caf\u00e9 \"q\" \ud83d\ude00 \\ \/ \n"}`),
		node(`"name":{"type":"computedString","value":"\ud800 lone"}`),
		node(`"role":{"type":"role","value":"button","future":{"x":[true,false,null]}}`),
		node(`"value":{"type":"number","value":-1.5e+3},"description":{"type":"string","value":""}`),
		node(`"value":{"type":"nodeList","value":[{"a":1},"b",[]],"relatedNodes":[]}`),
		node(`"properties":[],"ignoredReasons":[{"name":"uninteresting","value":{"type":"boolean","value":true}}]`),
		node(`"name":{"type":"computedString","sources":[{"type":"attribute","attribute":"aria-label","superseded":true,"invalid":false,"invalidReason":"x","nativeSource":"label","value":{"type":"string","value":"v","sources":[{"type":"contents"}]},"attributeValue":{"type":"idrefList","relatedNodes":[{"backendDOMNodeId":4,"idref":"id","text":"t"}]},"nativeSourceValue":{"type":"nodeList"}}]}`),
		node(`"name":{"type":"computedString","value":"tab` + "\u00e9" + `"}`), // raw UTF-8
		node(`"name":{"type":"computedString","value":"` + "\xff" + `"}`),      // invalid UTF-8
		`{"nodes":[{"nodeId":"a"},{"nodeId":"b","ignored":false}]}`,
	} {
		if !checkNodes(t, []byte(data)) {
			t.Errorf("Nodes(%q) left a plain reply to encoding/json", data)
		}
		checkLean(t, []byte(data))
	}
}

func TestNodesLeavesWhatItDoesNotReadToEncodingJSON(t *testing.T) {
	for _, data := range []string{
		``, `null`, `[]`, `{"nodes":null}`, `{"nodes":[null]}`, `{"nodes":[]}x`, `{"nodes":[],}`,
		`{"nodes":[{}],"nodes":[]}`, `{"Nodes":[]}`, `{"NODES":[]}`, `{"\u006eodes":[]}`,
		node(`"nodeId":"2"`), node(`"NodeId":"2"`), node(`"parentId":null`), node(`"role":null`),
		node(`"childIds":null`), node(`"childIds":[null]`), node(`"ignored":"true"`), node(`"ignored":1`),
		node(`"backendDOMNodeId":1.0`), node(`"backendDOMNodeId":1e2`), node(`"backendDOMNodeId":"1"`),
		node(`"backendDOMNodeId":99999999999999999999`), node(`"backendDOMNodeId":01`),
		node(`"name":{"type":"computedString","value":null}`), node(`"name":{"type":"x","Type":"y"}`),
		node(`"name":{"type":"x","value":[1,]}`), node(`"name":{"type":"x","value":"a` + "\n" + `"}`),
		node(`"name":{"type":"x","value":"\x"}`), node(`"name":{"type":"x","value":"\u12"}`),
		node(`"name":{"type":"x","extra":tru}`), node(`"name":{"type":"x","extra":{"a" 1}}`),
		node(`"name":{"sources":[{"type":"attribute","superseded":null}]}`),
		node(`"properties":[{"name":"busy","value":null}]`), node(`"ignored":true,"ignored":false`),
		node(`"name":{"type":"x","value":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`),
		node(`"name":{"sources":[` + strings.Repeat(`{"value":{"sources":[`, 70) + strings.Repeat(`]}}`, 70) + `]}`),
		`{"nodes":[{"nodeId":"1"}`, `{"nodes":[{"nodeId":"1"]}`, `{"nodes":[{"nodeId":1}]}`,
	} {
		if checkNodes(t, []byte(data)) {
			t.Errorf("Nodes(%.120q) decoded a reply it should leave to encoding/json", data)
		}
	}
}

func FuzzNodes(f *testing.F) {
	for _, data := range chromiumReplies(f) {
		if len(data) < 10_000 { // the small page: a large seed slows the fuzzer to a crawl
			f.Add(data)
		}
	}
	f.Add([]byte(node(`"name":{"type":"computedString","value":"a\u00e9","sources":[{"type":"attribute","attribute":"aria-label","superseded":true}]},"backendDOMNodeId":3`)))
	f.Add([]byte(node(`"properties":[{"name":"level","value":{"type":"integer","value":2}}],"childIds":["2"],"parentId":"0"`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkNodes(t, data)
		checkLean(t, data)
	})
}

// BenchmarkNodes decodes a page's tree of about 3,000 elements (the
// bench-floor AX tree row's page, 2.8 MB): by Nodes, and by json.Unmarshal
// into the generated reply, as the generated client decodes it.
func BenchmarkNodes(b *testing.B) {
	data := bigReply(b)
	b.Run("axdecode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := axdecode.Nodes(data); !ok {
				b.Fatal("Nodes left the reply to encoding/json")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			var r accessibility.GetFullAXTreeReply
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// bigReply is the form page's reply with its nodes repeated 60 times:
// about 2.5 MB, the size of the bench-floor AX tree row's reply.
func bigReply(b *testing.B) []byte {
	data, err := os.ReadFile("testdata/form-page.json")
	if err != nil {
		b.Fatal(err)
	}
	const head, tail = `{"nodes":[`, `]}`
	s := string(data)
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		b.Fatalf("testdata/form-page.json is not a {\"nodes\":[...]} reply")
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(s, head), tail)
	return []byte(head + strings.Repeat(inner+",", 59) + inner + tail)
}

func TestInternKnowsEachOfItsStringsAndNothingElse(t *testing.T) {
	if !slices.IsSorted(axdecode.Known()) {
		t.Fatal("known is not sorted: intern's binary search would miss")
	}
	for _, k := range axdecode.Known() {
		if got, ok := axdecode.Intern([]byte(k)); !ok || got != k {
			t.Errorf("intern(%q) = %q, %v", k, got, ok)
		}
		if got, ok := axdecode.Intern([]byte(k + "x")); ok {
			t.Errorf("intern(%q) = %q, true; it is not known", k+"x", got)
		}
	}
}
