package browserpool_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/fleettest"
)

// filesPage is the page the fleet file tests drive: download links (an
// attachment, a link with a download attribute to a binary body with no
// attachment header, a body of several CDP chunks) and a file input that
// echoes each chosen file's name, size and SHA-256 (computed by the page
// from the File it holds).
const filesPage = `<!doctype html><title>Files</title>
<a href="/attachment">Report</a>
<a href="/raw.bin" download="raw.bin">Raw bytes</a>
<a href="/big">Big file</a>
<a href="/broken">Broken file</a>
<a href="/gz-attach">Compressed report</a>
<button onclick="save(false)">Export blob</button>
<button onclick="save(true)">Export revoked blob</button>
<label>Pick files <input type="file" id="pick" multiple></label>
<script>
function save(revoke) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob(['made in the page\n', new Uint8Array([0, 255, 1])], {type: 'application/octet-stream'}));
  a.download = 'export.bin';
  document.body.append(a);
  a.click();
  if (revoke) URL.revokeObjectURL(a.href); // in the click's task: gone before any download event
}
window.__events = [];
const pick = document.getElementById('pick');
pick.addEventListener('input', () => window.__events.push('input'));
pick.addEventListener('change', e => {
  window.__events.push('change');
  window.__files = Promise.all(Array.from(e.target.files).map(async f => {
    const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', await f.arrayBuffer()));
    return {Name: f.name, Size: f.size, Type: f.type, SHA256: Array.from(sum, b => b.toString(16).padStart(2, '0')).join('')};
  }));
});
</script>`

// filesBodies are the bytes the file server sends.
var filesBodies = map[string][]byte{
	"/attachment": []byte("id,value\n1,2\n3,4\n"),
	"/raw.bin":    {0, 1, 2, 0xfe, 0xff, '\n', 0, 'x'},
	"/big":        bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 150_000), // 2.7 MiB: several 512 KiB chunks
	"/gz-attach":  bytes.Repeat([]byte("compressible,row\n"), 200),           // sent gzipped, with the compressed Content-Length
}

// startFilesSite serves filesPage and the download bodies on 127.0.0.1
// (the fleets' browsers run on this machine, so they reach it).
func startFilesSite(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/attachment":
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		case "/raw.bin":
			w.Header().Set("Content-Type", "application/x-custom-bytes")
		case "/big":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="big.dat"`)
		case "/gz-attach":
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(filesBodies[r.URL.Path])
			zw.Close()
			w.Header().Set("Content-Type", "text/csv")
			w.Header().Set("Content-Disposition", `attachment; filename="packed.csv"`)
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
			w.Write(gz.Bytes())
			return
		case "/broken": // cut short: 5 of the 1000 bytes announced (how many the browser got before the cut varies)
			w.Header().Set("Content-Disposition", `attachment; filename="broken.bin"`)
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("short"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(filesPage))
			return
		}
		w.Write(filesBodies[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// uploadedFile is what the page reports of a file it holds.
type uploadedFile struct {
	Name   string
	Size   int
	Type   string
	SHA256 string
}

// moveFilesThroughFleet downloads every link of filesPage and uploads two
// local files on a fresh session of p, checking names and bytes.
func moveFilesThroughFleet(t *testing.T, p *browserpool.Pool, site string) {
	t.Helper()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if s.Info().Fleet == "" {
		t.Fatalf("session %+v is not a fleet lease", s.Info())
	}
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, site); err != nil {
		t.Fatal(err)
	}
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.DownloadDir()
	for _, c := range []struct{ link, path, name string }{
		{"Report", "/attachment", "report.csv"},
		{"Raw bytes", "/raw.bin", "raw.bin"},
		{"Big file", "/big", "big.dat"},
		{"Compressed report", "/gz-attach", "packed.csv"},
	} {
		ref := snap.Find("link", c.link)
		if ref == "" {
			t.Fatalf("no link %q in:\n%s", c.link, snap.Text)
		}
		dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, ref) })
		if err != nil {
			t.Fatalf("download %s: %v", c.link, err)
		}
		want := browserpool.Download{SessionID: s.ID(), TabID: tab.ID(), Path: filepath.Join(dir, c.name), SuggestedName: c.name, URL: site + c.path, Bytes: int64(len(filesBodies[c.path]))}
		if diff := cmp.Diff(want, dl); diff != "" {
			t.Errorf("download %s (-want +got):\n%s", c.link, diff)
		}
		got, err := os.ReadFile(dl.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, filesBodies[c.path]) {
			t.Errorf("download %s: the local file's %d bytes differ from the %d served", c.link, len(got), len(filesBodies[c.path]))
		}
	}
	// A blob the page made: read back from the page.
	exported := []byte("made in the page\n\x00\xff\x01")
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("button", "Export blob")) })
	if err != nil {
		t.Fatalf("blob download: %v", err)
	}
	if got, err := os.ReadFile(dl.Path); err != nil || !bytes.Equal(got, exported) || dl.Bytes != int64(len(exported)) || dl.Path != filepath.Join(dir, "export.bin") {
		t.Errorf("blob download %+v holds %q, %v; want export.bin holding %q", dl, got, err, exported)
	}
	// What cannot travel is a typed error, never a missing file; the tab
	// stays usable (the upload below).
	_, err = tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("button", "Export revoked blob")) })
	if !errors.Is(err, browserpool.ErrFileTransfer) || strings.Contains(err.Error(), "missing") {
		t.Errorf("download of a revoked blob: %v, want ErrFileTransfer", err)
	}
	_, err = tab.WaitDownload(ctx, func(ctx context.Context) error { return tab.Click(ctx, snap.Find("link", "Broken file")) })
	if !errors.Is(err, browserpool.ErrDownloadFailed) || !strings.Contains(err.Error(), "of 1000 bytes") {
		t.Errorf("download cut short: %v, want ErrDownloadFailed saying so", err)
	}
	// Only the placed files remain: no stream file is left behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"big.dat", "export.bin", "packed.csv", "raw.bin", "report.csv"}, names); diff != "" {
		t.Errorf("DownloadDir holds (-want +got):\n%s", diff)
	}

	// Upload: two local files, one of several chunks.
	local := t.TempDir()
	files := map[string][]byte{
		"notes.txt": []byte("hello from this machine\n"),
		"photo.png": bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0, 0xff, 7}, 200_000), // 1.4 MiB
	}
	var paths []string
	var want []uploadedFile
	for _, name := range []string{"notes.txt", "photo.png"} {
		path := filepath.Join(local, name)
		if err := os.WriteFile(path, files[name], 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		sum := sha256.Sum256(files[name])
		typ := map[string]string{"notes.txt": "text/plain", "photo.png": "image/png"}[name]
		want = append(want, uploadedFile{Name: name, Size: len(files[name]), Type: typ, SHA256: hex.EncodeToString(sum[:])})
	}
	pick := snap.Find("button", "Pick files")
	if pick == "" {
		t.Fatalf("no file input in:\n%s", snap.Text)
	}
	if err := tab.Upload(ctx, pick, paths...); err != nil {
		t.Fatal(err)
	}
	var got []uploadedFile
	if err := tab.Evaluate(ctx, "window.__files", &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the page holds (-want +got):\n%s", diff)
	}
	var events []string
	if err := tab.Evaluate(ctx, "window.__events", &events); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"input", "change"}, events); diff != "" {
		t.Errorf("events the input saw (-want +got):\n%s", diff)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestFleetBrowserlessSessionDownloadsIntoTheLocalDirAndUploadsLocalFiles(t *testing.T) {
	requireBrowser(t)
	site := startFilesSite(t)
	srv := fleettest.StartBrowserless(t, fleettest.BrowserlessOptions{Concurrent: 1, Token: "s3cret-t0ken"})
	p := newFleetPool(t, &browserpool.Browserless{URL: srv.URL, Token: srv.Token}, 0)
	moveFilesThroughFleet(t, p, site)
}

func TestFleetGridSessionDownloadsIntoTheLocalDirAndUploadsLocalFiles(t *testing.T) {
	requireBrowser(t)
	site := startFilesSite(t)
	grid := fleettest.StartGrid(t, fleettest.GridOptions{MaxSessions: 1})
	p := newFleetPool(t, &browserpool.SeleniumGrid{URL: grid.URL, Capabilities: grid.Capabilities()}, 0)
	moveFilesThroughFleet(t, p, site)
}

// fakeFilesFleet is a browserless-like server whose every lease is one
// cdptest browser showing page; browsers lists them.
type fakeFilesFleet struct {
	URL string

	mu       sync.Mutex
	browsers []*cdptest.Browser // guarded by mu
}

func startFakeFilesFleet(t *testing.T, page func() *cdptest.Page) *fakeFilesFleet {
	f := &fakeFilesFleet{}
	var wg sync.WaitGroup
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sessions" { // every lease ended is released at once
			w.Write([]byte("[]"))
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		b := cdptest.NewBrowser(nil, cdptest.WithPages(page()), cdptest.WithPage("about:blank"))
		// The fake has no Fetch domain: a remote WaitDownload turns it on and off.
		for _, m := range []string{"Fetch.enable", "Fetch.disable"} {
			b.Handle(m, func(*cdptest.Call) (any, error) { return struct{}{}, nil })
		}
		f.mu.Lock()
		f.browsers = append(f.browsers, b)
		f.mu.Unlock()
		pumpWebSocket(c, b, &wg)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); wg.Wait() })
	f.URL = "ws" + strings.TrimPrefix(srv.URL, "http")
	return f
}

func (f *fakeFilesFleet) browser(t *testing.T) *cdptest.Browser {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.browsers) != 1 {
		t.Fatalf("the fake fleet leased %d browsers, want 1", len(f.browsers))
	}
	return f.browsers[0]
}

// openFakeRemote opens a session on a fake browserless fleet and a tab on
// its page.
func openFakeRemote(t *testing.T) (*fakeFilesFleet, *browserpool.Session, *browserpool.Tab) {
	page := func() *cdptest.Page {
		return cdptest.NewPage("https://files.test/", "Files", cdptest.FileInput("Pick files"), cdptest.Link("Report", "/report.csv"))
	}
	f := startFakeFilesFleet(t, page)
	p := newFleetPool(t, &browserpool.Browserless{URL: f.URL}, 0)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, "https://files.test/")
	if err != nil {
		t.Fatal(err)
	}
	return f, s, tab
}

func TestFakeFleetUploadOverTheRemoteLimitIsErrFileTransferAndSendsNothing(t *testing.T) {
	f, _, tab := openFakeRemote(t)
	ctx := ctxT(t)
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := snap.Find("button", "Pick files")
	if ref == "" {
		t.Fatalf("no file input in:\n%s", snap.Text)
	}
	big := filepath.Join(t.TempDir(), "big.iso")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, browserpool.MaxRemoteUploadBytes+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	err = tab.Upload(ctx, ref, big)
	if !errors.Is(err, browserpool.ErrFileTransfer) {
		t.Fatalf("Upload of %d bytes to a remote browser: %v, want ErrFileTransfer", browserpool.MaxRemoteUploadBytes+1, err)
	}
	if !strings.Contains(err.Error(), "MaxRemoteUploadBytes") {
		t.Errorf("error %q does not name the limit", err)
	}
	for _, c := range f.browser(t).Calls() {
		switch c.Method {
		case "DOM.setFileInputFiles", "Runtime.callFunctionOn", "DOM.describeNode":
			t.Errorf("the refused upload reached the browser: %s", c.Method)
		}
	}
}

func TestFakeFleetDownloadThatCannotBeStreamedIsErrFileTransferNotAMissingFile(t *testing.T) {
	f, s, tab := openFakeRemote(t)
	ctx := ctxT(t)
	b := f.browser(t)
	// The remote browser is told to deny downloads: no local path reaches it.
	var behaviors []string
	for _, c := range b.Calls() {
		if c.Method == "Browser.setDownloadBehavior" {
			var p map[string]any
			if err := json.Unmarshal(c.Params, &p); err != nil {
				t.Fatal(err)
			}
			behaviors = append(behaviors, p["behavior"].(string))
			if _, ok := p["downloadPath"]; ok {
				t.Errorf("a remote browser was given a download path: %v", p)
			}
		}
	}
	if diff := cmp.Diff([]string{"deny"}, behaviors); diff != "" {
		t.Errorf("download behaviours set on the remote browser (-want +got):\n%s", diff)
	}
	// A download no paused document response carried (as from a frame in
	// another process): its bytes are nowhere to be had.
	_, err := tab.WaitDownload(ctx, func(ctx context.Context) error {
		b.Emit("", "Browser.downloadWillBegin", map[string]any{
			"frameId": tab.ID(), "guid": "g-1", "url": "https://files.test/report.csv", "suggestedFilename": "report.csv",
		})
		return nil
	})
	if !errors.Is(err, browserpool.ErrFileTransfer) {
		t.Fatalf("a download nothing carried on a remote browser: %v, want ErrFileTransfer", err)
	}
	if msg := err.Error(); strings.Contains(msg, "missing") || !strings.Contains(msg, "https://files.test/report.csv") {
		t.Errorf("error %q: want it to name the URL and not call the file missing", msg)
	}
	if _, err := os.Lstat(s.DownloadDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed download left %s: %v", s.DownloadDir(), err)
	}
}

func TestFakeFleetDataURLDownloadIsDecodedIntoTheLocalDir(t *testing.T) {
	f, s, tab := openFakeRemote(t)
	ctx := ctxT(t)
	b := f.browser(t)
	dl, err := tab.WaitDownload(ctx, func(ctx context.Context) error {
		b.Emit("", "Browser.downloadWillBegin", map[string]any{
			"frameId": tab.ID(), "guid": "g-2", "url": "data:text/plain;base64,aGVsbG8gZGF0YQ==", "suggestedFilename": "hello.txt",
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := browserpool.Download{SessionID: s.ID(), TabID: tab.ID(), Path: filepath.Join(s.DownloadDir(), "hello.txt"), SuggestedName: "hello.txt", URL: "data:text/plain;base64,aGVsbG8gZGF0YQ==", Bytes: 10}
	if diff := cmp.Diff(want, dl); diff != "" {
		t.Errorf("Download (-want +got):\n%s", diff)
	}
	if got, err := os.ReadFile(dl.Path); err != nil || string(got) != "hello data" {
		t.Errorf("file content %q, %v; want \"hello data\"", got, err)
	}
}

// TestFakeFleetUploadSendsTheFilesBytesInChunksNotTheirPaths: on a remote
// browser Upload never hands the browser a path; the page gets the bytes,
// in chunks, and the files' names and types.
func TestFakeFleetUploadSendsTheFilesBytesInChunksNotTheirPaths(t *testing.T) {
	f, _, tab := openFakeRemote(t)
	ctx := ctxT(t)
	b := f.browser(t)
	type meta struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	var (
		mu     sync.Mutex
		got    = map[int][]byte{}
		chunks int
		metas  []meta
	)
	js := browserpool.RemoteUploadJS
	b.Handle("Runtime.callFunctionOn", func(c *cdptest.Call) (any, error) {
		var p struct {
			Fn   string `json:"functionDeclaration"`
			Args []struct {
				Value json.RawMessage `json:"value"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(c.Params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		switch p.Fn {
		case js.Parts:
			return map[string]any{"result": map[string]any{"type": "object", "objectId": "parts-1"}}, nil
		case js.Push:
			var i int
			var b64 string
			if err := json.Unmarshal(p.Args[1].Value, &i); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(p.Args[2].Value, &b64); err != nil {
				return nil, err
			}
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return nil, err
			}
			got[i] = append(got[i], raw...)
			chunks++
			return map[string]any{"result": map[string]any{"type": "boolean", "value": true}}, nil
		case js.Set:
			if err := json.Unmarshal(p.Args[1].Value, &metas); err != nil {
				return nil, err
			}
			return map[string]any{"result": map[string]any{"type": "number", "value": len(metas)}}, nil
		}
		return nil, cdptest.ErrNotHandled // the library's own page JavaScript (the input's disabled check)
	})
	snap, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	big := bytes.Repeat([]byte{1, 2, 3, 0, 0xff}, 300_000) // 1.5 MB: 3 chunks of 512 KiB
	path := filepath.Join(dir, "data.json")
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tab.Upload(ctx, snap.Find("button", "Pick files"), path); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got[0], big) || chunks != 3 {
		t.Errorf("the page got %d bytes in %d chunks, want the file's %d in 3", len(got[0]), chunks, len(big))
	}
	if diff := cmp.Diff([]meta{{Name: "data.json", Type: "application/json"}}, metas); diff != "" {
		t.Errorf("files set on the input (-want +got):\n%s", diff)
	}
	for _, c := range b.Calls() {
		if c.Method == "DOM.setFileInputFiles" || strings.Contains(string(c.Params), dir) {
			t.Errorf("a local path reached the remote browser: %s %s", c.Method, c.Params)
		}
	}
}
