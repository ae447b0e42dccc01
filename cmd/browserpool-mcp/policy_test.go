package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/google/go-cmp/cmp"
)

func TestHostFlagsBecomeTheNetworkPolicy(t *testing.T) {
	o, err := parse([]string{"-allow-host", "example.com, *.example.org", "-allow-host", "10.0.0.0/8", "-block-host", "localhost"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := browserpool.NetworkPolicy{Allow: []string{"example.com", "*.example.org", "10.0.0.0/8"}, Block: []string{"localhost"}}
	if diff := cmp.Diff(want, o.cfg.Pool.Network); diff != "" {
		t.Errorf("the network policy (-want +got):\n%s", diff)
	}
	// With a fleet the rules cannot be enforced here: the flags say so in
	// their own words, not the library's Config.Network.
	for _, fleet := range [][]string{{"-browserless", "http://127.0.0.1:3000"}, {"-selenium-grid", "http://127.0.0.1:4444"}} {
		_, err := parse(append([]string{"-block-host", "localhost"}, fleet...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "-block-host") || !strings.Contains(err.Error(), fleet[0]) || strings.Contains(err.Error(), "Config.Network") {
			t.Errorf("-block-host with %s: %v; want an error naming both flags", fleet[0], err)
		}
	}
	// A rule the library refuses is named by its flag.
	err = run(context.Background(), []string{"-root", newRoot(t), "-block-host", "exa mple.com"}, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-block-host") || strings.Contains(err.Error(), "Network.Block") {
		t.Errorf("a bad -block-host: %v", err)
	}
}

func TestABlockedHostIsRefusedWithoutRetry(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	s := newServer(t, Config{Pool: browserpool.Config{Network: browserpool.NetworkPolicy{Block: []string{"127.0.0.1"}}}})
	msg := fails(t, connect(t, s), "browser_navigate", map[string]any{"url": site.URL})
	if !strings.Contains(msg, "network policy") || !strings.Contains(msg, "do not retry") {
		t.Errorf("a navigation to a blocked host:\n%s", msg)
	}
}

func TestUploadsComeOnlyFromTheUploadDir(t *testing.T) {
	requireBrowser(t)
	site := newSite(t)
	dir, elsewhere := t.TempDir(), t.TempDir()
	for path, body := range map[string]string{filepath.Join(dir, "in.txt"): "inside", filepath.Join(elsewhere, "secret.txt"): "secret"} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(elsewhere, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, Config{UploadDir: dir})
	cs := connect(t, s)
	ok(t, cs, "browser_navigate", map[string]any{"url": site.URL + "/tools"})
	input := find(t, `button "File" (@e\d+)`, ok(t, cs, "browser_snapshot", nil))

	// A path relative to the upload dir, and one inside it.
	for _, p := range []string{"in.txt", filepath.Join(dir, "in.txt")} {
		ok(t, cs, "browser_file_upload", map[string]any{"ref": input, "paths": []string{p}})
		if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "async () => await document.getElementById('file').files[0].text()"}); got != `"inside"` {
			t.Errorf("after uploading %s the input's file reads %s", p, got)
		}
	}
	// A file elsewhere, directly or through a link inside the dir.
	for _, p := range []string{filepath.Join(elsewhere, "secret.txt"), "link.txt", "../" + filepath.Base(elsewhere) + "/secret.txt"} {
		if msg := fails(t, cs, "browser_file_upload", map[string]any{"ref": input, "paths": []string{p}}); !strings.Contains(msg, "not inside the server's upload directory") {
			t.Errorf("uploading %s:\n%s", p, msg)
		}
	}
	if got := ok(t, cs, "browser_evaluate", map[string]any{"function": "async () => await document.getElementById('file').files[0].text()"}); got != `"inside"` {
		t.Errorf("after the refused uploads the input's file reads %s", got)
	}
}

func TestOverHTTPUploadsNeedAnUploadDir(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		noUploads bool
	}{
		{nil, false},
		{[]string{"-http", "127.0.0.1:8931"}, true},
		{[]string{"-http", "127.0.0.1:8931", "-upload-dir", "/srv/files"}, false},
	} {
		o, err := parse(tc.args, io.Discard)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
		} else if o.cfg.NoUploads != tc.noUploads {
			t.Errorf("%v: NoUploads %v, want %v", tc.args, o.cfg.NoUploads, tc.noUploads)
		}
	}
	s := newServer(t, Config{NoUploads: true, Pool: browserpool.Config{Launcher: noLauncher{}}})
	cs := connect(t, s)
	if msg := fails(t, cs, "browser_file_upload", map[string]any{"ref": "@e1", "paths": []string{"/etc/passwd"}}); !strings.Contains(msg, "-upload-dir") {
		t.Errorf("an upload with uploads refused:\n%s", msg)
	}
	for _, tl := range listTools(t, cs) {
		if tl.Name == "browser_file_upload" && !strings.Contains(tl.Description, "refuses every file") {
			t.Errorf("browser_file_upload's description does not say it takes no file: %s", tl.Description)
		}
	}
}
