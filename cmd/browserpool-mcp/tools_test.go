package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// noLauncher launches nothing: for tests that need no browser.
type noLauncher struct{}

func (noLauncher) Launch(context.Context, browserpool.LaunchSpec) (browserpool.LaunchedBrowser, error) {
	return nil, &browserpool.Error{Op: "Pool.Open", Class: browserpool.ErrBrowserNotFound, Detail: "test launcher"}
}

func listTools(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func TestToolsListMatchesGolden(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(listTools(t, connect(t, s))); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	golden := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestToolsListMatchesGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tools/list differs from %s (-want +got); if intended, rerun with -update:\n%s", golden, diff)
	}
}

func TestEveryToolIsListedAnnotatedAndDescribed(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	var names []string
	for _, tl := range listTools(t, connect(t, s)) {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Errorf("%s has no description", tl.Name)
		}
		a := tl.Annotations
		if a == nil || a.Title == "" || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s lacks annotations: %+v", tl.Name, a)
		} else if a.ReadOnlyHint && *a.DestructiveHint {
			t.Errorf("%s is marked both read-only and destructive", tl.Name)
		}
		checkDescribed(t, tl.Name, "", tl.InputSchema)
	}
	want := []string{
		"browser_click", "browser_console_messages", "browser_download", "browser_drag", "browser_evaluate", "browser_file_upload", "browser_fill_form",
		"browser_handle_dialog", "browser_hover", "browser_navigate", "browser_navigate_back", "browser_navigate_forward",
		"browser_network_requests", "browser_page_info", "browser_pdf_save", "browser_press_key", "browser_resize",
		"browser_scroll", "browser_select_option", "browser_session_close", "browser_session_list",
		"browser_session_open", "browser_snapshot", "browser_start_recording", "browser_stop_recording", "browser_tabs",
		"browser_take_screenshot", "browser_type", "browser_wait_for",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// checkDescribed reports every property of a schema (as the client sees it)
// that has no description, recursing into objects and array items.
func checkDescribed(t *testing.T, tool, path string, sc any) {
	m, _ := sc.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	for name, p := range props {
		pm, _ := p.(map[string]any)
		if d, _ := pm["description"].(string); strings.TrimSpace(d) == "" {
			t.Errorf("%s: argument %s%s has no description", tool, path, name)
		}
		checkDescribed(t, tool, path+name+".", pm)
		if items, ok := pm["items"]; ok {
			checkDescribed(t, tool, path+name+"[].", items)
		}
	}
}

func TestReadOnlyToolsAreTheOnesThatOnlyLook(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	var readOnly []string
	for _, tl := range listTools(t, connect(t, s)) {
		if tl.Annotations.ReadOnlyHint {
			readOnly = append(readOnly, tl.Name)
		}
	}
	want := []string{"browser_console_messages", "browser_network_requests", "browser_page_info", "browser_session_list", "browser_snapshot", "browser_wait_for"}
	if diff := cmp.Diff(want, readOnly); diff != "" {
		t.Errorf("read-only tools (-want +got):\n%s", diff)
	}
}

func TestBrowserMissingIsAToolErrorSayingHowToInstall(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	msg := fails(t, connect(t, s), "browser_navigate", map[string]any{"url": "http://127.0.0.1:1/"})
	if !strings.Contains(msg, "apt-get install chromium") || !strings.Contains(msg, "-browser") {
		t.Errorf("error without a browser:\n%s", msg)
	}
}

func TestAttachRefusedIsAToolErrorSayingHowToStartChrome(t *testing.T) {
	s := newServer(t, Config{CDPEndpoint: "http://127.0.0.1:1"})
	cs := connect(t, s)
	for tool, args := range map[string]map[string]any{
		"browser_navigate": {"url": "http://127.0.0.1:1/"},
		"browser_tabs":     {"action": "list"},
	} {
		msg := fails(t, cs, tool, args)
		if !strings.Contains(msg, "--remote-debugging-port") {
			t.Errorf("%s against a refused endpoint:\n%s", tool, msg)
		}
	}
	if msg := fails(t, cs, "browser_session_open", map[string]any{"name": "x"}); !strings.Contains(msg, "browser_tabs") {
		t.Errorf("browser_session_open in attach mode:\n%s", msg)
	}
}

func TestExpressionCallsFunctionsAndKeepsExpressions(t *testing.T) {
	for in, want := range map[string]string{
		"() => document.title":       settle("(() => document.title)()"),
		"async () => 1":              settle("(async () => 1)()"),
		"x => 2":                     settle("(x => 2)()"),
		"function () { return 3 }":   settle("(function () { return 3 })()"),
		"document.title":             "document.title",
		"(1 + 2) * 3":                "(1 + 2) * 3",
		"  [1, 2].map(x => x * 2)  ": "[1, 2].map(x => x * 2)",
	} {
		if got := expression(in); got != want {
			t.Errorf("expression(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTraceFileHasRedactedActions(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	var buf lockedBuffer
	s := newServer(t, Config{Trace: &buf})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/?token=s3cr3t-value"})
	ok(t, cs, "browser_snapshot", nil)
	waitFor(t, "the trace has the snapshot", func() bool { return strings.Contains(buf.String(), `"action":"snapshot"`) })
	tr := buf.String()
	if strings.Contains(tr, "s3cr3t-value") {
		t.Errorf("the trace holds the token:\n%s", tr)
	}
	for line := range strings.Lines(tr) {
		var l traceLine
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Client == "" || l.Session == "" || l.Tab == "" {
			t.Errorf("bad trace line (err %v): %s", err, line)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // guarded by mu
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRecordingToolsRecordTwoActionsAndSayWhereTheFilesAre(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	// The frames counted below must not depend on a paint within the
	// default 2 s on a loaded machine.
	s := newServer(t, Config{RecordingFrameTimeout: time.Minute})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL})
	snap := ok(t, cs, "browser_snapshot", nil)
	email := find(t, `textbox "Email" (@e\d+)`, snap)
	goBtn := find(t, `button "Go" (@e\d+)`, snap)

	if got := fails(t, cs, "browser_stop_recording", nil); !strings.Contains(got, "browser_start_recording") {
		t.Errorf("stop without a recording: %s; want it to point to browser_start_recording", got)
	}
	started := ok(t, cs, "browser_start_recording", nil)
	ok(t, cs, "browser_type", map[string]any{"element": "Email", "ref": email, "text": "ann@example.com"})
	ok(t, cs, "browser_snapshot", nil) // read-only: not recorded
	ok(t, cs, "browser_click", map[string]any{"element": "Go", "ref": goBtn})
	stopped := ok(t, cs, "browser_stop_recording", nil)

	dir := find(t, `(?m)^Dir: (.+)$`, stopped)
	if !strings.Contains(started, dir) || !strings.Contains(stopped, "2 events, 2 frames") {
		t.Errorf("start said %q, stop said %q; want the same dir and 2 events, 2 frames", started, stopped)
	}
	if index := find(t, `(?m)^Replay page: (.+)$`, stopped); index != filepath.Join(dir, "index.html") {
		t.Errorf("replay page %s; want index.html in %s", index, dir)
	}
	for _, f := range []string{"index.html", "events.jsonl", "0001.jpg", "0002.jpg"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for line := range strings.Lines(string(raw)) {
		var e struct{ Action string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		actions = append(actions, e.Action)
	}
	if diff := cmp.Diff([]string{"fill", "click"}, actions); diff != "" {
		t.Errorf("recorded actions (-want +got):\n%s", diff)
	}
	// A second recording of the session gets a dir of its own.
	if again := ok(t, cs, "browser_start_recording", nil); strings.Contains(again, dir+".") || !strings.Contains(again, dir+"-2") {
		t.Errorf("second recording: %s; want it in %s-2", again, dir)
	}
}
