// Room: the test harness of record: TestMain and its leak gate, frame
// makers, the browser and ffmpeg requirements. No locks.

package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool/internal/leakcheck"
)

// requireEnv set to "1" makes a missing browser or ffmpeg fail the tests
// instead of skipping them (make test sets it).
const requireEnv = "BROWSERPOOL_REQUIRE_BROWSER"

// testRoot holds the browsers' session dirs; TestMain fails the run if a
// process, an entry under it or a goroutine outlives the tests.
var testRoot string

func TestMain(m *testing.M) {
	leakcheck.Main(m, leakcheck.MainOptions{Root: &testRoot, Prefix: "browserpool-record-test-"})
}

// need skips the test (fails it under BROWSERPOOL_REQUIRE_BROWSER=1) when
// err says a capability is missing.
func need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("%s=1 and no %s: %v", requireEnv, what, err)
	}
	t.Skipf("skipping: needs %s (set %s=1 to fail instead): %v", what, requireEnv, err)
}

// solid returns an image of size w x h in one colour.
func solid(w, h int, c color.Color) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	return img
}

// jpegFrame returns a JPEG of size w x h in one colour.
func jpegFrame(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, solid(w, h, c), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngFrame returns a PNG of size w x h in one colour.
func pngFrame(t testing.TB, w, h int, c color.Color) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, solid(w, h, c)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readEntries parses the events.jsonl of the recording dir dir.
func readEntries(t testing.TB, dir string) []Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d of %s: %v: %s", len(out)+1, EventsFile, err, sc.Bytes())
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// newRecorder makes a recorder in a fresh output dir and closes it when the
// test ends.
func newRecorder(t testing.TB, opts Options) *Recorder {
	t.Helper()
	r, err := New(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// dirNames lists the names in dir.
func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

// readLines returns the lines of the file at path.
func readLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
