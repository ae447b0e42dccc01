// Room: tests of the manifest file. No locks.

package manifest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserpool/browserpool/internal/leakcheck"
	"github.com/browserpool/browserpool/internal/manifest"
)

var testRoot string

func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "browserpool-manifest-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testRoot = root
	code := m.Run()
	if err := leakcheck.Check(context.Background(), root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.RemoveAll(root)
	os.Exit(code)
}

func newRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(testRoot, "root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func open(t *testing.T, root string) *manifest.File {
	t.Helper()
	m, err := manifest.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func entries(t *testing.T, m *manifest.File) []manifest.Entry {
	t.Helper()
	es, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	return es
}

var ignoreCreated = cmpopts.IgnoreFields(manifest.Entry{}, "Created")

func TestAnEntryGoesFromReservedToSpawnedToReadyToRemoved(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	dir := filepath.Join(root, "sessions", "s-1")
	if err := m.Reserve("s-1", dir); err != nil {
		t.Fatal(err)
	}
	owner := m.Owner()
	want := owner
	want.Session, want.State, want.Dir = "s-1", manifest.Reserved, dir
	if diff := cmp.Diff([]manifest.Entry{want}, entries(t, m), ignoreCreated); diff != "" {
		t.Errorf("after Reserve (-want +got):\n%s", diff)
	}
	created := entries(t, m)[0].Created
	if err := m.Add(manifest.Entry{Session: "s-1", PID: 42, PGID: 42, StartTime: 7, BootID: "b"}); err != nil {
		t.Fatal(err)
	}
	want.State, want.PID, want.PGID, want.StartTime, want.BootID = manifest.Spawned, 42, 42, 7, "b"
	if diff := cmp.Diff([]manifest.Entry{want}, entries(t, m), ignoreCreated); diff != "" {
		t.Errorf("after Add (-want +got):\n%s", diff)
	}
	if err := m.Update(manifest.Entry{Session: "s-1", Port: 9222}); err != nil {
		t.Fatal(err)
	}
	want.State, want.Port = manifest.Ready, 9222
	got := entries(t, m)
	if diff := cmp.Diff([]manifest.Entry{want}, got, ignoreCreated); diff != "" {
		t.Errorf("after Update (-want +got):\n%s", diff)
	}
	if !got[0].Created.Equal(created) {
		t.Errorf("Created changed from %v to %v: it must stay the reservation's", created, got[0].Created)
	}
	if err := m.Remove("s-1"); err != nil {
		t.Fatal(err)
	}
	if got := entries(t, m); len(got) != 0 {
		t.Errorf("after Remove: %+v, want none", got)
	}
}

func TestRemoveDirDropsTheEntryNamingThatDir(t *testing.T) {
	m := open(t, newRoot(t))
	for _, id := range []string{"a", "b"} {
		if err := m.Reserve(id, "/r/sessions/"+id); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.RemoveDir("/r/sessions/a"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries(t, m) {
		ids = append(ids, e.Session)
	}
	if diff := cmp.Diff([]string{"b"}, ids); diff != "" {
		t.Errorf("sessions left (-want +got):\n%s", diff)
	}
}

func TestTheFileIsPrivateAndNoTempFileIsLeft(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	if err := m.Reserve("s-1", "/x/sessions/s-1"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(root, manifest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if diff := cmp.Diff([]string{manifest.FileName, manifest.LockName}, names); diff != "" {
		t.Errorf("files in the root (-want +got):\n%s", diff)
	}
}

func TestOpenRemovesTheTempFilesOfAWriterThatWasKilled(t *testing.T) {
	root := filepath.Join(newRoot(t), "pool[1]*") // pattern characters in the path are its own
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	open(t, root)
	// A process killed between its temp file's creation and its rename
	// leaves the temp file behind.
	stale := filepath.Join(root, ".manifest-1450009078.tmp")
	if err := os.WriteFile(stale, []byte(`{"entries":[`), 0o600); err != nil {
		t.Fatal(err)
	}
	open(t, root)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed writer's temp file after the next Open: %v; want it removed", err)
	}
}

func TestAGarbageFileIsKeptAsideAndReplaced(t *testing.T) {
	root := newRoot(t)
	torn := []byte(`{"version":1,"entries":[{"sess`)
	if err := os.WriteFile(filepath.Join(root, manifest.FileName), torn, 0o600); err != nil {
		t.Fatal(err)
	}
	m := open(t, root)
	if err := m.TakeCorrupt(); err == nil {
		t.Error("TakeCorrupt = nil after opening a torn file")
	}
	if err := m.TakeCorrupt(); err != nil {
		t.Errorf("a second TakeCorrupt = %v, want nil (it clears)", err)
	}
	aside, _ := filepath.Glob(filepath.Join(root, manifest.CorruptPrefix+"*"))
	if len(aside) != 1 {
		t.Fatalf("kept-aside files %v, want one", aside)
	}
	kept, err := os.ReadFile(aside[0])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(torn), string(kept)); diff != "" {
		t.Errorf("kept-aside file (-want +got):\n%s", diff)
	}
	if got := entries(t, m); len(got) != 0 {
		t.Errorf("entries of the replaced file: %+v, want none", got)
	}
}

func TestFilesOfSeveralProcessesSharingARootLoseNoUpdate(t *testing.T) {
	root := newRoot(t)
	// Two Files stand for two processes: only the flock serializes them.
	ms := []*manifest.File{open(t, root), open(t, root)}
	var wg sync.WaitGroup
	var want []string
	for i, m := range ms {
		for j := range 20 {
			id := fmt.Sprintf("s-%d-%d", i, j)
			want = append(want, id)
			wg.Go(func() {
				if err := m.Reserve(id, "/r/sessions/"+id); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	var got []string
	for _, e := range entries(t, ms[0]) {
		got = append(got, e.Session)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sessions recorded (-want +got):\n%s", diff)
	}
}

func TestParseRejectsWhatIsNotAManifest(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"torn JSON", `{"version":1,"entries":[`, "not valid JSON"},
		{"another version", `{"version":2,"entries":[]}`, "version 2"},
		{"no version", `{"entries":[]}`, "no valid version"},
		{"version zero", `{"version":0,"entries":[]}`, "no valid version"},
		{"entries that are not a list", `{"version":1,"entries":{"s-1":{}}}`, "not a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%s) = %v, want an error containing %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestMarshalThenParseGivesTheEntriesBack(t *testing.T) {
	want := []manifest.Entry{{Session: "s-1", State: manifest.Ready, PID: 10, PGID: 10, StartTime: 99, BootID: "b", Dir: "/r/sessions/s-1", Port: 9222, OwnerPID: 3, OwnerStart: 4}}
	data, err := manifest.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	empty, _ := manifest.Marshal(nil)
	if diff := cmp.Diff(`{"version":1,"entries":[]}`, strings.Join(strings.Fields(string(empty)), "")); diff != "" {
		t.Errorf("Marshal(nil) (-want +got):\n%s", diff)
	}
}

func TestValidIDAcceptsOnlyOneSafePathElement(t *testing.T) {
	for id, want := range map[string]bool{
		"s-1": true, "ok_ID-9": true, strings.Repeat("a", 64): true,
		"": false, ".": false, "..": false, "a/b": false, "a b": false, "a.b": false,
		strings.Repeat("a", 65): false, "\x00": false, "é": false,
	} {
		if got := manifest.ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
