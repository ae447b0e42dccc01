// Room: tests of the manifest's remote-lease fields. No locks.

package manifest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/manifest"
)

func TestARemoteLeaseIsRecordedWithItsFleetEndpointAndLeaseID(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	dir := filepath.Join(root, "sessions", "s-1")
	if err := m.Reserve("s-1", dir); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(manifest.Entry{Session: "s-1", Fleet: "selenium-grid", Endpoint: "http://127.0.0.1:4444/wd/hub", LeaseID: "abc123"}); err != nil {
		t.Fatal(err)
	}
	// The ready update carries the lease again (and a version the manifest
	// does not keep): the lease fields stay.
	if err := m.Update(manifest.Entry{Session: "s-1", Fleet: "selenium-grid", Endpoint: "http://127.0.0.1:4444/wd/hub", LeaseID: "abc123"}); err != nil {
		t.Fatal(err)
	}
	want := m.Owner()
	want.Session, want.State, want.Dir = "s-1", manifest.Ready, dir
	want.Fleet, want.Endpoint, want.LeaseID = "selenium-grid", "http://127.0.0.1:4444/wd/hub", "abc123"
	got := entries(t, m)
	if diff := cmp.Diff([]manifest.Entry{want}, got, ignoreCreated); diff != "" {
		t.Errorf("recorded lease (-want +got):\n%s", diff)
	}
	if !got[0].Remote() {
		t.Error("Remote() = false for an entry with a fleet")
	}
}

func TestAnUpdateWithoutLeaseFieldsKeepsThoseOfTheSpawn(t *testing.T) {
	m := open(t, newRoot(t))
	if err := m.Add(manifest.Entry{Session: "s-1", Dir: "/r/sessions/s-1", Fleet: "browserless", Endpoint: "ws://h:3000/chromium"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Update(manifest.Entry{Session: "s-1"}); err != nil {
		t.Fatal(err)
	}
	got := entries(t, m)[0]
	if diff := cmp.Diff([]string{"browserless", "ws://h:3000/chromium", ""}, []string{got.Fleet, got.Endpoint, got.LeaseID}); diff != "" {
		t.Errorf("lease fields after an update without them (-want +got):\n%s", diff)
	}
}

func TestCredentialsAndTokensInAnEndpointNeverReachTheFile(t *testing.T) {
	root := newRoot(t)
	m := open(t, root)
	for i, raw := range []string{
		"wss://user:pa55-w0rd@fleet.example:443/chromium?token=t0k3n-s3cret&launch=x#frag",
		"http://user:pa55-w0rd@127.0.0.1:4444/wd/hub?token=t0k3n-s3cret",
		"user:pa55-w0rd@not a url?token=t0k3n-s3cret", // unparsable: cut at '?' and after '@'
	} {
		id := []string{"a", "b", "c"}[i]
		if err := m.Add(manifest.Entry{Session: id, Dir: "/r/sessions/" + id, Fleet: "f", Endpoint: raw, LeaseID: "l"}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(root, manifest.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"pa55-w0rd", "t0k3n-s3cret", "token", "user", "frag", "launch"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the manifest holds %q:\n%s", secret, data)
		}
	}
	var got []string
	for _, e := range entries(t, m) {
		got = append(got, e.Endpoint)
	}
	want := []string{"wss://fleet.example:443/chromium", "http://127.0.0.1:4444/wd/hub", "not a url"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded endpoints (-want +got):\n%s", diff)
	}
}

func TestRedactEndpointIsStableOnWhatItReturns(t *testing.T) {
	for _, raw := range []string{"http://127.0.0.1:4444", "ws://u:p@h:1/a%20b?x=1", "https://h/wd/hub/"} {
		once := manifest.RedactEndpoint(raw)
		if twice := manifest.RedactEndpoint(once); twice != once {
			t.Errorf("RedactEndpoint(%q) = %q, but again %q: the sweep matches endpoints redacted on both sides", raw, once, twice)
		}
	}
}

func TestAFileWithoutLeaseFieldsStillParsesAndOneWithThemRoundTrips(t *testing.T) {
	// A file as written before remote leases were recorded.
	old := `{"version":1,"entries":[{"session":"s-1","state":"ready","pid":10,"pgid":10,"start_time":99,` +
		`"dir":"/r/sessions/s-1","port":9222,"owner_pid":3,"owner_start":4,"created":"2026-01-02T03:04:05Z"}]}`
	got, err := manifest.Parse([]byte(old))
	if err != nil {
		t.Fatalf("Parse of a file without lease fields: %v", err)
	}
	if len(got) != 1 || got[0].Remote() || got[0].PID != 10 {
		t.Errorf("old entry parsed as %+v, want a local entry of pid 10", got)
	}
	// A local entry writes no lease keys: older readers see the same file.
	data, err := manifest.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"fleet"`, `"endpoint"`, `"lease_id"`} {
		if strings.Contains(string(data), key) {
			t.Errorf("a local entry is written with %s:\n%s", key, data)
		}
	}
	remote := []manifest.Entry{{Session: "s-2", State: manifest.Ready, Dir: "/r/sessions/s-2", OwnerPID: 3, OwnerStart: 4,
		Fleet: "selenium-grid", Endpoint: "http://127.0.0.1:4444", LeaseID: "0f1e"}}
	data, err = manifest.Marshal(remote)
	if err != nil {
		t.Fatal(err)
	}
	back, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(remote, back); diff != "" {
		t.Errorf("remote entry round trip (-want +got):\n%s", diff)
	}
}
