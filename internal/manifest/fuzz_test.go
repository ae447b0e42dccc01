// Room: the manifest parser's fuzz target. No locks.

package manifest_test

import (
	"path/filepath"
	"testing"

	"github.com/browserpool/browserpool/internal/manifest"
)

func FuzzParse(f *testing.F) {
	good, _ := manifest.Marshal([]manifest.Entry{{Session: "s-1", Dir: "/tmp/x", PID: 10}})
	for _, s := range [][]byte{good, []byte(`{"version":1,"entries":[]}`), []byte(`{"version":2}`), []byte(`{"entries":[{"session":"../x"}]}`), []byte(`{`), nil} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := manifest.Parse(data)
		if err != nil {
			return
		}
		for _, e := range es {
			if !manifest.ValidID(e.Session) || filepath.Base(e.Session) != e.Session || !filepath.IsAbs(e.Dir) || e.PID < 0 || e.PGID < 0 || e.OwnerPID < 0 {
				t.Fatalf("accepted a malformed entry %+v", e)
			}
		}
		again, err := manifest.Marshal(es)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := manifest.Parse(again); err != nil {
			t.Fatalf("what Parse accepted does not parse again once marshalled: %v", err)
		}
	})
}
