// Room: tests of how the recorder names its frame files. No locks.

package record

import (
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAFrameNeverOverwritesAFileTheRecorderDidNotWrite(t *testing.T) {
	r := newRecorder(t, Options{})
	frame := jpegFrame(t, 8, 8, color.White)
	if err := r.Add(Event{Time: t0, Action: "navigate"}, frame); err != nil {
		t.Fatal(err)
	}
	// Someone else puts the next frame's name in the recording dir.
	theirs := []byte("someone else's file")
	if err := os.WriteFile(filepath.Join(r.Dir(), "0002.jpg"), theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"click", "fill"} {
		if err := r.Add(Event{Time: t0, Action: action}, frame); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(r.Dir(), "0002.jpg")); !slices.Equal(got, theirs) {
		t.Errorf("0002.jpg, a file the recorder did not write, now holds %d bytes: the frame was written over it", len(got))
	}
	var frames []string
	for _, e := range r.Entries() {
		frames = append(frames, e.Frame)
	}
	if diff := cmp.Diff([]string{"0001.jpg", "0003.jpg", "0004.jpg"}, frames); diff != "" {
		t.Errorf("the entries' frames (-want +got):\n%s", diff)
	}
	for _, name := range []string{"0003.jpg", "0004.jpg"} {
		if got, err := os.ReadFile(filepath.Join(r.Dir(), name)); err != nil || !slices.Equal(got, frame) {
			t.Errorf("frame %s: %d bytes, err %v; want the %d bytes given to Add", name, len(got), err, len(frame))
		}
	}
	if diff := cmp.Diff(Stats{Events: 3, Frames: 3}, r.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}
