// Room: tests of the manifest against damaged and foreign files: a newer
// version, a torn file, a malformed entry. No locks.

package manifest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserpool/browserpool/internal/manifest"
)

// writeFile writes data as root's manifest and returns its path.
func writeFile(t *testing.T, root, data string) string {
	t.Helper()
	path := filepath.Join(root, manifest.FileName)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fileIs checks that path still holds exactly want.
func fileIs(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("%s changed (-want +got):\n%s", filepath.Base(path), diff)
	}
}

// keptAside returns the contents of root's kept-aside files, oldest first.
func keptAside(t *testing.T, root string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(root, manifest.CorruptPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(data))
	}
	return out
}

const newer = `{"version":2,"entries":[{"session":"s-new","dir":"/r/sessions/s-new","owner_pid":1,"shape":"v2"}]}`

func TestAFileOfANewerVersionIsNeverRewrittenRenamedOrRead(t *testing.T) {
	root := newRoot(t)
	path := writeFile(t, root, newer)
	_, err := manifest.Open(root)
	var ve *manifest.VersionError
	if !errors.As(err, &ve) {
		t.Fatalf("Open on a version 2 file = %v, want a *VersionError", err)
	}
	for _, words := range []string{"version 2", "newer browserpool", "reads only version 1", path, "untouched"} {
		if !strings.Contains(err.Error(), words) {
			t.Errorf("Open's error %q does not say %q", err, words)
		}
	}
	fileIs(t, path, newer)
	if got := keptAside(t, root); len(got) != 0 {
		t.Errorf("a newer file was kept aside as if unreadable: %q", got)
	}
}

func TestAPoolOpenBeforeANewerWriterNeitherReadsNorWritesItsFile(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	path := writeFile(t, root, newer) // a newer pool took the root over
	if _, err := m.Entries(); !errors.As(err, new(*manifest.VersionError)) {
		t.Errorf("Entries = %v, want a *VersionError", err)
	}
	if err := m.Reserve("s-1", "/r/sessions/s-1"); !errors.As(err, new(*manifest.VersionError)) {
		t.Errorf("Reserve = %v, want a *VersionError", err)
	}
	if err := m.Remove("s-new"); !errors.As(err, new(*manifest.VersionError)) {
		t.Errorf("Remove = %v, want a *VersionError", err)
	}
	fileIs(t, path, newer)
	if got := keptAside(t, root); len(got) != 0 {
		t.Errorf("a newer file was kept aside as if unreadable: %q", got)
	}
}

func TestReadingAnUnreadableFileLeavesItAsItIs(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	torn := `{"version":1,"entries":[{"sess`
	path := writeFile(t, root, torn)
	for name, read := range map[string]func() error{
		"Entries": func() error { _, err := m.Entries(); return err },
		"Read":    func() error { _, err := m.Read(); return err },
	} {
		if err := read(); !errors.Is(err, manifest.ErrUnreadable) {
			t.Errorf("%s on a torn file = %v, want ErrUnreadable", name, err)
		}
	}
	fileIs(t, path, torn)
	if got := keptAside(t, root); len(got) != 0 {
		t.Errorf("a read kept the file aside: %q", got)
	}
	// The next write keeps it aside and starts afresh.
	if err := m.Reserve("s-1", "/r/sessions/s-1"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{torn}, keptAside(t, root)); diff != "" {
		t.Errorf("kept aside after a write (-want +got):\n%s", diff)
	}
	if err := m.TakeCorrupt(); !errors.Is(err, manifest.ErrUnreadable) || !strings.Contains(err.Error(), manifest.CorruptPrefix) {
		t.Errorf("TakeCorrupt = %v, want ErrUnreadable naming the kept-aside file", err)
	}
}

func TestASecondCorruptionNeverOverwritesTheFirstsCopy(t *testing.T) {
	root := newRoot(t)
	first, second := `{"version":1,"entries":[{"session":"first-precious"`, `garbage`
	for _, body := range []string{first, second} {
		writeFile(t, root, body)
		open(t, root)
	}
	if diff := cmp.Diff([]string{first, second}, keptAside(t, root)); diff != "" {
		t.Errorf("kept-aside files, oldest first (-want +got):\n%s", diff)
	}
}

func TestOnlyTheNewestKeptAsideCopiesStay(t *testing.T) {
	root := newRoot(t)
	var want []string
	for i := range manifest.CorruptKeep + 3 {
		body := fmt.Sprintf("torn %d", i)
		writeFile(t, root, body)
		open(t, root)
		want = append(want, body)
	}
	want = want[len(want)-manifest.CorruptKeep:]
	if diff := cmp.Diff(want, keptAside(t, root)); diff != "" {
		t.Errorf("kept-aside files, oldest first (-want +got):\n%s", diff)
	}
}

func TestOneMalformedEntryIsSetApartAndTheOthersKept(t *testing.T) {
	root := newRoot(t)
	good := `{"session":"s-good","state":"ready","dir":"/r/sessions/s-good","owner_pid":7,"owner_start":8,"created":"2026-01-02T03:04:05Z"}`
	bad := `{"session":"s.other","state":"reserved","dir":"rel","owner_pid":9,"owner_start":10}`
	typo := `{"session":"s-typo","dir":"/r/sessions/s-typo","pid":"twelve","owner_pid":11}`
	path := writeFile(t, root, `{"version":1,"entries":[`+good+","+bad+","+typo+`]}`)
	m := open(t, root)
	if err := m.TakeCorrupt(); err != nil {
		t.Errorf("a file with one bad entry was taken for a corrupt one: %v", err)
	}
	c, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"s-good"}, sessions(c.Entries)); diff != "" {
		t.Errorf("entries that verify (-want +got):\n%s", diff)
	}
	type seen struct {
		Index      int
		Session    string
		OwnerPID   int
		OwnerKnown bool
	}
	var got []seen
	for _, x := range c.Malformed {
		got = append(got, seen{x.Index, x.Entry.Session, x.Entry.OwnerPID, x.OwnerKnown})
		if x.Why == "" {
			t.Errorf("malformed entry %d has no reason", x.Index)
		}
	}
	if diff := cmp.Diff([]seen{{1, "s.other", 9, true}, {2, "s-typo", 11, true}}, got); diff != "" {
		t.Errorf("malformed entries (-want +got):\n%s", diff)
	}
	// A write keeps the malformed entries as they were.
	if err := m.Reserve("s-1", "/r/sessions/s-1"); err != nil {
		t.Fatal(err)
	}
	again, err := m.Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Malformed, again.Malformed, cmpopts.IgnoreFields(manifest.Malformed{}, "Index")); diff != "" {
		t.Errorf("malformed entries after a write (-want +got):\n%s", diff)
	}
	// DropMalformed removes only the one named.
	if err := m.DropMalformed([]json.RawMessage{c.Malformed[0].Raw}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), `"s.other"`) || !strings.Contains(string(data), `"s-typo"`) || !strings.Contains(string(data), `"s-good"`) {
		t.Errorf("after dropping s.other the file holds:\n%s", data)
	}
}

func TestParseSetsApartEachEntryThatDoesNotVerify(t *testing.T) {
	for _, tc := range []struct{ name, entry, why string }{
		{"a session id that is a path", `{"session":"../x","dir":"/r/sessions/x"}`, "session id"},
		{"a relative dir", `{"session":"s-1","dir":"sessions/s-1"}`, "not an absolute path"},
		{"a negative pid", `{"session":"s-1","dir":"/r/sessions/s-1","pid":-1}`, "negative"},
		{"a negative group", `{"session":"s-1","dir":"/r/sessions/s-1","pgid":-5}`, "negative"},
		{"a field of the wrong type", `{"session":"s-1","dir":"/r/sessions/s-1","pid":"1"}`, `"pid"`},
		{"not an object", `17`, "not an entry object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := `{"version":1,"entries":[{"session":"s-ok","dir":"/r/sessions/s-ok"},` + tc.entry + `]}`
			c, err := manifest.Decode([]byte(data))
			if err != nil {
				t.Fatalf("Decode = %v, want the good entry kept", err)
			}
			if diff := cmp.Diff([]string{"s-ok"}, sessions(c.Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			if len(c.Malformed) != 1 || c.Malformed[0].Index != 1 || !strings.Contains(c.Malformed[0].Why, tc.why) {
				t.Errorf("malformed = %+v, want entry 1 with a reason containing %q", c.Malformed, tc.why)
			}
		})
	}
}

func sessions(es []manifest.Entry) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.Session)
	}
	return ids
}
