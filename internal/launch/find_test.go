// Room: tests of Find. No locks.

package launch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nowhere is a finder on a machine with no browser at all.
var nowhere = finder{
	names:    searchNames,
	paths:    searchPaths,
	lookPath: func(name string) (string, error) { return "", exec.ErrNotFound },
	check:    func(string) error { return errors.New("does not exist") },
}

func TestFindWithNoBrowserSaysWhatItSearchedAndHowToInstallOne(t *testing.T) {
	_, err := nowhere.find("")
	const want = "launch: no Chromium-family browser found: looked for chromium, chromium-browser, google-chrome, google-chrome-stable, microsoft-edge, brave-browser on PATH and at /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome, /usr/bin/google-chrome-stable, /usr/bin/microsoft-edge, /usr/bin/brave-browser, /usr/lib/chromium/chromium, /opt/google/chrome/chrome, /opt/microsoft/msedge/msedge, /opt/brave.com/brave/brave, /snap/bin/chromium; install one (Debian/Ubuntu: apt-get install chromium), or give the executable's path explicitly"
	if err == nil {
		t.Fatal("find = nil error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
	var nf *NotFoundError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &nf) {
		t.Errorf("err = %#v, want a *NotFoundError of class ErrNotFound", err)
	}
}

func TestFindExplicitPathMustBeAnExecutableFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	exe := filepath.Join(dir, "browser")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const missing = "/nonexistent/browserpool/chrome"
	for _, tc := range []struct{ in, want string }{
		{missing, `launch: browser executable "/nonexistent/browserpool/chrome" does not exist; fix the path, or leave it empty to search PATH and the usual install locations, or install one (Debian/Ubuntu: apt-get install chromium)`},
		{plain, `launch: browser executable "` + plain + `" is not executable (mode -rw-r--r--); fix the path, or leave it empty to search PATH and the usual install locations, or install one (Debian/Ubuntu: apt-get install chromium)`},
		{dir, `launch: browser executable "` + dir + `" is a directory; fix the path, or leave it empty to search PATH and the usual install locations, or install one (Debian/Ubuntu: apt-get install chromium)`},
		{"no-such-browser-anywhere", `launch: browser executable "no-such-browser-anywhere" is not on PATH; fix the path, or leave it empty to search PATH and the usual install locations, or install one (Debian/Ubuntu: apt-get install chromium)`},
	} {
		got, err := Find(tc.in)
		if err == nil || !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q) = %q, %v; want an ErrNotFound", tc.in, got, err)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("Find(%q) error text (-want +got):\n%s", tc.in, diff)
		}
	}
	if got, err := Find(exe); err != nil || got != exe {
		t.Errorf("Find(%q) = %q, %v; want it back", exe, got, err)
	}
}

func TestFindPrefersPATHThenInstallPaths(t *testing.T) {
	f := nowhere
	f.lookPath = func(name string) (string, error) {
		if name == "google-chrome" {
			return "/somewhere/google-chrome", nil
		}
		return "", exec.ErrNotFound
	}
	if got, err := f.find(""); err != nil || got != "/somewhere/google-chrome" {
		t.Errorf("find with google-chrome on PATH = %q, %v", got, err)
	}
	f = nowhere
	f.check = func(p string) error {
		if p == "/opt/google/chrome/chrome" {
			return nil
		}
		return errors.New("does not exist")
	}
	if got, err := f.find(""); err != nil || got != "/opt/google/chrome/chrome" {
		t.Errorf("find with only /opt/google/chrome/chrome = %q, %v", got, err)
	}
}
