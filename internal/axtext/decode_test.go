package axtext

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// checkDecodeNodes compares DecodeNodes with json.Unmarshal into Nodes.
func checkDecodeNodes(t *testing.T, data []byte) {
	t.Helper()
	got, err := DecodeNodes(data)
	var want struct {
		Nodes []*Node `json:"nodes"`
	}
	wantErr := json.Unmarshal(data, &want)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("DecodeNodes(%.200q): error %v; encoding/json's %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(want.Nodes, got); diff != "" {
		t.Fatalf("DecodeNodes(%.200q) (-encoding/json +DecodeNodes):\n%s", data, diff)
	}
}

// axReplies are the replies internal/axdecode tests with, from a real
// Chromium, and a few of other shapes.
func axReplies(t testing.TB) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "axdecode", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no replies in ../axdecode/testdata (%v)", err)
	}
	var replies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		replies = append(replies, b)
	}
	for _, s := range []string{
		`{"nodes":[]}`, `{}`, `{"nodes":null}`, `{"nodes":[{"nodeId":"1","properties":[],"childIds":[]}]}`,
		`{"nodes":[{"nodeId":"1","Role":{"value":"x"}}]}`, `{"nodes":[{"nodeId":"1","role":{"type":"role"}}]}`,
		`{"nodes":[{"nodeId":"1","parentId":"0","backendDOMNodeId":7,"name":{"value":"n","sources":[]}}]}`, `{"nodes":[`,
	} {
		replies = append(replies, []byte(s))
	}
	return replies
}

func TestDecodeNodesGivesWhatEncodingJSONGives(t *testing.T) {
	for _, data := range axReplies(t) {
		checkDecodeNodes(t, data)
	}
}

func FuzzDecodeNodes(f *testing.F) {
	for _, data := range axReplies(f) {
		if len(data) < 10_000 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeNodes(t, data) })
}
