package browserpool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSafeFileNameKeepsOnlyAPlainName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"report.csv", "report.csv"},
		{"../../etc/passwd", "passwd"},
		{"/etc/shadow", "shadow"},
		{`..\..\windows\win.ini`, "win.ini"},
		{"..", "download"},
		{".", "download"},
		{"", "download"},
		{".bashrc", "bashrc"},
		{"a\x00b\nc.txt", "abc.txt"},
		{`what?<is>"this"|*.txt`, "what__is__this___.txt"},
		{"trailing. . ", "trailing"},
		{"dir/", "download"},
		{strings.Repeat("x", 300) + ".pdf", strings.Repeat("x", 196) + ".pdf"},
	} {
		if got := safeFileName(c.in); got != c.want {
			t.Errorf("safeFileName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPlaceDownloadNeverOverwritesNorFollowsSymlinksOut(t *testing.T) {
	out := t.TempDir()
	s := &Session{id: "s-test", output: out}
	dir := s.DownloadDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	put := func(guid, body string) {
		if err := os.WriteFile(filepath.Join(dir, guid), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// An existing file, and a symlink planted where the next name would go.
	os.WriteFile(filepath.Join(dir, "r.txt"), []byte("keep me"), 0o600)
	if err := os.Symlink(filepath.Join(outside, "stolen.txt"), filepath.Join(dir, "r (1).txt")); err != nil {
		t.Fatal(err)
	}
	put("guid-1", "one")
	path, n, err := s.placeDownload("op", "guid-1", "../r.txt")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, "r (2).txt") || n != 3 {
		t.Errorf("placed at %s (%d bytes), want r (2).txt", path, n)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "r.txt")); string(b) != "keep me" {
		t.Errorf("the existing file was overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "stolen.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written through the symlink out of the dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "guid-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the browser's GUID file is left behind: %v", err)
	}
	for _, guid := range []string{"../x", "a/b", ""} {
		if _, _, err := s.placeDownload("op", guid, "x.txt"); err == nil {
			t.Errorf("placeDownload(guid %q) succeeded", guid)
		}
	}
}
