// Room: tests of the sweep's command-line and path rules. No locks.

package browserpool

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/manifest"
)

func TestTheManifestAndValidateIDAgreeOnSessionIDs(t *testing.T) {
	for _, id := range []string{"s-1", "", ".", "..", "a/b", "a b", "a.b", "x:y", strings.Repeat("a", 64), strings.Repeat("a", 65), "\x00", "é", "ok_ID-9"} {
		if got, want := manifest.ValidID(id), isValidID(id); got != want {
			t.Errorf("manifest.ValidID(%q) = %v, ValidateID accepts it: %v", id, got, want)
		}
	}
}

func TestSessionNamedFindsTheSessionDirACommandLineRunsOn(t *testing.T) {
	const prefix = "/r/sessions/"
	for _, tc := range []struct{ cmd, want string }{
		{"/usr/lib/chromium/chromium --user-data-dir=/r/sessions/s-1/user-data --headless", "s-1"},
		{"/usr/lib/chromium/chrome_crashpad_handler --database=/r/sessions/s-2/xdg-config/chromium/Crash Reports", "s-2"},
		{"tail -f /r/sessions/s-3/chrome_debug.log", "s-3"},
		{"cat /r/sessions/s-4", "s-4"},
		{"chromium --user-data-dir=/other/r/sessions/s-5/user-data", ""}, // another root ending in ours
		{"ls /r/sessions/", ""},
		{"ls /r/sessions/../output", ""},
		{"ls /r/sessions/a.b /r/sessions/s-6", "s-6"},
		{"sleep 60", ""},
	} {
		if got := sessionNamed(tc.cmd, prefix); got != tc.want {
			t.Errorf("sessionNamed(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
		if got, want := namesPath(tc.cmd, prefix), strings.Contains(tc.cmd, " "+prefix) || strings.Contains(tc.cmd, "="+prefix); got != want {
			t.Errorf("namesPath(%q) = %v, want %v", tc.cmd, got, want)
		}
	}
}

func TestHasArgMatchesWholeArgumentsOnly(t *testing.T) {
	cmd := "chromium --user-data-dir=/r/sessions/s-1/user-data --type=renderer --user-data-dir=/r/sessions/s-10/user-data2"
	got := []bool{
		hasArg(cmd, "--user-data-dir=/r/sessions/s-1/user-data"),
		hasArg(cmd, "--type=renderer"),
		hasArg(cmd, "--user-data-dir=/r/sessions/s-10/user-data"),
		hasArg(cmd, "--user-data-dir=/r/sessions/s-10/user-data2"),
	}
	if diff := cmp.Diff([]bool{true, true, false, true}, got); diff != "" {
		t.Errorf("hasArg (-want +got):\n%s", diff)
	}
}

func TestRemoveDirRefusesAnythingButASessionDir(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{root, root + "/output", root + "/sessions", root + "/sessions/a.b", root + "/sessions/s-1/..", "relative/sessions/s-1", root + "/other/s-1"} {
		if err := removeDir(dir); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("removeDir(%q) = %v, want a refusal", dir, err)
		}
	}
}
