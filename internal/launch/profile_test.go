package launch

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAProfileBecomesTheUserDataDirThroughALinkThatRemovingTheSessionDirLeavesAlone(t *testing.T) {
	base := t.TempDir()
	profile := filepath.Join(base, "profiles", "p", "user-data")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, ActivePortFile), []byte("1\n/x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(profile, "Cookies"), []byte("c"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "sessions", "s-1")
	if _, err := prepare(dir, profile); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, UserDataDirName)); err != nil || target != profile {
		t.Fatalf("user-data link = %q, %v; want a link to %s", target, err, profile)
	}
	if _, err := os.Stat(filepath.Join(profile, ActivePortFile)); !os.IsNotExist(err) {
		t.Errorf("a stale %s in the profile survived prepare: %v", ActivePortFile, err)
	}
	if err := removeDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(profile, "Cookies")); err != nil {
		t.Errorf("removing the session dir touched the profile: %v", err)
	}

	// A session dir whose user-data is a real dir is not silently used.
	dir2 := filepath.Join(base, "sessions", "s-2")
	if err := os.MkdirAll(filepath.Join(dir2, UserDataDirName), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := prepare(dir2, profile); err == nil {
		t.Error("prepare with a profile over an existing user-data dir: nil error")
	}
	if _, err := prepare(filepath.Join(base, "sessions", "s-3"), filepath.Join(base, "missing")); err == nil {
		t.Error("prepare with a missing profile: nil error")
	}
}
