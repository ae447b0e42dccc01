package record

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestAddWritesOneFrameAndOneScrubbedEventLinePerAction(t *testing.T) {
	r := newRecorder(t, Options{})
	jpg, png := jpegFrame(t, 40, 30, color.White), pngFrame(t, 20, 10, color.Black)
	evs := []struct {
		ev    Event
		frame []byte
	}{
		{Event{Time: t0, Action: "navigate", Args: "https://user:pw@example.com/login?next=%2Fhome&token=abc123",
			Duration: 1500 * time.Microsecond, URL: "https://example.com/login?next=%2Fhome&token=abc123#access_token=xyz",
			Title: "Sign in"}, jpg},
		{Event{Time: t0.Add(time.Second), Action: "fill", Args: `#password "***"`, Duration: 20 * time.Millisecond,
			URL: "https://example.com/login", Title: "Sign in"}, png},
		{Event{Time: t0.Add(2 * time.Second), Action: "click", Args: `"Go"`, Duration: 3 * time.Millisecond,
			Err: "browserpool: Tab.Click: element not found on https://example.com/login?sid=s3cr3t", URL: "https://example.com/login"}, nil},
	}
	for _, e := range evs {
		if err := r.Add(e.ev, e.frame); err != nil {
			t.Fatal(err)
		}
	}
	want := []Entry{
		{Seq: 1, Time: t0, Action: "navigate", Args: "https://example.com/login?next=%2Fhome&token=REDACTED", DurationMS: 1.5,
			URL: "https://example.com/login?next=%2Fhome&token=REDACTED#access_token=REDACTED", Title: "Sign in", Frame: "0001.jpg"},
		{Seq: 2, Time: t0.Add(time.Second), Action: "fill", Args: `#password "***"`, DurationMS: 20,
			URL: "https://example.com/login", Title: "Sign in", Frame: "0002.png"},
		{Seq: 3, Time: t0.Add(2 * time.Second), Action: "click", Args: `"Go"`, DurationMS: 3,
			Error: "browserpool: Tab.Click: element not found on https://example.com/login?sid=REDACTED", URL: "https://example.com/login"},
	}
	if diff := cmp.Diff(want, readEntries(t, r.Dir())); diff != "" {
		t.Errorf("events.jsonl (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, r.Entries()); diff != "" {
		t.Errorf("Entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Stats{Events: 3, Frames: 2}, r.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	for name, b := range map[string][]byte{"0001.jpg": jpg, "0002.png": png} {
		got, err := os.ReadFile(filepath.Join(r.Dir(), name))
		if err != nil || !slices.Equal(got, b) {
			t.Errorf("frame %s: %d bytes, err %v; want the %d bytes given to Add", name, len(got), err, len(b))
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"0001.jpg", "0002.png", EventsFile, IndexFile}, dirNames(t, r.Dir())); diff != "" {
		t.Errorf("recording dir after Close (-want +got):\n%s", diff)
	}
}

func TestFramesOverTheBudgetAreDroppedAndNotesSayHowMany(t *testing.T) {
	r := newRecorder(t, Options{MaxFrames: 2})
	for i := range 5 {
		ev := Event{Time: t0.Add(time.Duration(i) * time.Second), Action: fmt.Sprintf("click%d", i), Duration: time.Millisecond}
		if err := r.Add(ev, jpegFrame(t, 8, 8, color.White)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	want := []Entry{
		{Seq: 1, Time: at(0), Action: "click0", DurationMS: 1, Frame: "0001.jpg"},
		{Seq: 2, Time: at(1), Action: "click1", DurationMS: 1, Frame: "0002.jpg"},
		{Seq: 3, Time: at(2), Action: "click2", DurationMS: 1, FrameDropped: true},
		{Seq: 4, Time: at(2), Action: NoteAction, Dropped: 1,
			Note: "frame budget of 2 frames reached: frames of later actions are dropped, their events are still recorded"},
		{Seq: 5, Time: at(3), Action: "click3", DurationMS: 1, FrameDropped: true},
		{Seq: 6, Time: at(4), Action: "click4", DurationMS: 1, FrameDropped: true},
		{Seq: 7, Time: at(4).Add(time.Millisecond), Action: NoteAction, Dropped: 3,
			Note: "3 frames dropped over the frame budget of 2 frames"},
	}
	if diff := cmp.Diff(want, readEntries(t, r.Dir())); diff != "" {
		t.Errorf("events.jsonl (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Stats{Events: 5, Frames: 2, Dropped: 3}, r.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"0001.jpg", "0002.jpg", EventsFile, IndexFile}, dirNames(t, r.Dir())); diff != "" {
		t.Errorf("recording dir (-want +got):\n%s", diff)
	}
}

func TestANegativeBudgetRecordsEventsWithoutFrames(t *testing.T) {
	r := newRecorder(t, Options{MaxFrames: -1})
	if err := r.Add(Event{Time: t0, Action: "click"}, jpegFrame(t, 8, 8, color.White)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Stats{Events: 1, Dropped: 1}, r.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}

func TestNewRefusesARecordingDirOutsideTheOutputDir(t *testing.T) {
	base := t.TempDir()
	out, outside := filepath.Join(base, "out"), filepath.Join(base, "outside")
	for _, d := range []string{out, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(out, "link")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../outside", "/tmp/rec", "link", "link/recording", "a/../../outside"} {
		r, err := New(out, Options{DirName: name})
		if !errors.Is(err, ErrPathEscapes) {
			if r != nil {
				r.Close()
			}
			t.Errorf("New(DirName %q): %v; want ErrPathEscapes", name, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "browserpool: record.New: path escapes the output directory: ") {
			t.Errorf("New(DirName %q) error text: %q", name, err)
		}
	}
	if got := dirNames(t, outside); len(got) != 0 {
		t.Errorf("the dir outside got %v; want nothing written there", got)
	}
	r, err := New(out, Options{DirName: "nested/rec"})
	if err != nil {
		t.Fatalf("New(DirName nested/rec): %v; want a nested local dir accepted", err)
	}
	defer r.Close()
	if want := filepath.Join(out, "nested", "rec"); r.Dir() != want {
		t.Errorf("Dir() = %q; want %q", r.Dir(), want)
	}
}

func TestNewRefusesADirThatAlreadyHoldsARecording(t *testing.T) {
	out := t.TempDir()
	r, err := New(out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, err = New(out, Options{})
	if !errors.Is(err, ErrDirInUse) || !strings.Contains(err.Error(), "recording already holds a recording") || !strings.Contains(err.Error(), "RecordingOptions.DirName") {
		t.Errorf("second New in the same dir: %v; want ErrDirInUse saying the dir holds a recording, naming the option to change", err)
	}
}

// A recording writes 0001.jpg, index.html and the like: in the output dir
// itself, a dir the caller keeps for other files, or any dir that already
// holds files, it would overwrite them. Each is refused and nothing of the
// caller's is touched.
func TestNewRefusesADirWhoseFilesItWouldOverwrite(t *testing.T) {
	out := t.TempDir()
	mine := map[string]string{"0001.jpg": "my screenshot", "index.html": "my report", "downloads/0001.jpg": "a download", "shots/0002.jpg": "another"}
	for name, body := range mine {
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ dir, want string }{
		{".", `browserpool: record.New: the recording dir is in use: "." is the output dir itself or one it keeps for other files, or inside one: frames and index.html would overwrite them`},
		{"downloads", `browserpool: record.New: the recording dir is in use: "downloads" is the output dir itself or one it keeps for other files, or inside one: frames and index.html would overwrite them`},
		{"downloads/rec", `browserpool: record.New: the recording dir is in use: "downloads/rec" is the output dir itself or one it keeps for other files, or inside one: frames and index.html would overwrite them`},
		{"shots", `browserpool: record.New: the recording dir is in use: shots already holds files (0002.jpg): frames and index.html would overwrite them`},
	} {
		_, err := New(out, Options{DirName: tc.dir, Reserved: []string{"downloads"}})
		if !errors.Is(err, ErrDirInUse) {
			t.Fatalf("DirName %q: %v; want ErrDirInUse", tc.dir, err)
		}
		msg, _, _ := strings.Cut(err.Error(), " (hint: ")
		if diff := cmp.Diff(tc.want, msg); diff != "" {
			t.Errorf("DirName %q (-want +got):\n%s", tc.dir, diff)
		}
	}
	for name, body := range mine {
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != body {
			t.Errorf("%s after the refusals: %q, %v; want %q", name, got, err, body)
		}
	}
	// An empty dir that exists is the caller's to give.
	if err := os.Mkdir(filepath.Join(out, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := New(out, Options{DirName: "empty"})
	if err != nil {
		t.Fatalf("an existing empty dir: %v", err)
	}
	r.Close()
}

func TestNewWhereAFileTakesTheDirsNameSaysSo(t *testing.T) {
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, DefaultDirName), []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(out, Options{})
	if !errors.Is(err, ErrWrite) || !strings.Contains(err.Error(), "a file of that name") {
		t.Errorf("New where a file is named %q: %v; want ErrWrite whose hint says a file takes the name", DefaultDirName, err)
	}
}

func TestAnInvalidFrameIsDroppedButItsEventIsRecorded(t *testing.T) {
	r := newRecorder(t, Options{})
	err := r.Add(Event{Time: t0, Action: "click"}, []byte("GIF89a..."))
	if !errors.Is(err, ErrInvalidFrame) {
		t.Fatalf("Add with a GIF: %v; want ErrInvalidFrame", err)
	}
	want := []Entry{{Seq: 1, Time: t0, Action: "click"}}
	if diff := cmp.Diff(want, readEntries(t, r.Dir())); diff != "" {
		t.Errorf("events.jsonl (-want +got):\n%s", diff)
	}
}

func TestAClosedRecorderRefusesMoreAndCloseIsIdempotent(t *testing.T) {
	r := newRecorder(t, Options{})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v; want nil", err)
	}
	if err := r.Add(Event{Action: "click"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v; want ErrClosed", err)
	}
	if err := r.WriteIndex(); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteIndex after Close: %v; want ErrClosed", err)
	}
	if _, err := r.ExportVideo(t.Context(), ""); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "export the video before the recording stops") {
		t.Errorf("ExportVideo after Close: %v; want ErrClosed saying to export before the recording stops", err)
	}
}

func TestConcurrentAddsAgreeOnFramesLinesAndBudget(t *testing.T) {
	const workers, each, budget = 8, 25, 60
	r := newRecorder(t, Options{MaxFrames: budget})
	frame := jpegFrame(t, 4, 4, color.White)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := r.Add(Event{Time: t0, Action: fmt.Sprintf("w%d-%d", w, i)}, frame); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if err := r.WriteIndex(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	got := readEntries(t, r.Dir())
	if diff := cmp.Diff(r.Entries(), got); diff != "" {
		t.Errorf("events.jsonl differs from Entries (-Entries +file):\n%s", diff)
	}
	frames, dropped, actions := map[string]bool{}, 0, map[string]bool{}
	for i, e := range got {
		if e.Seq != i+1 {
			t.Errorf("line %d has seq %d", i+1, e.Seq)
		}
		if e.Action == NoteAction {
			continue
		}
		actions[e.Action] = true
		if e.FrameDropped {
			dropped++
		}
		if e.Frame != "" {
			if frames[e.Frame] {
				t.Errorf("frame %s named twice", e.Frame)
			}
			frames[e.Frame] = true
			if _, err := os.Stat(filepath.Join(r.Dir(), e.Frame)); err != nil {
				t.Errorf("line %d names a frame that is not there: %v", i+1, err)
			}
		}
	}
	if len(actions) != workers*each || len(frames) != budget || dropped != workers*each-budget {
		t.Errorf("%d distinct actions, %d frames, %d dropped; want %d, %d, %d", len(actions), len(frames), dropped, workers*each, budget, workers*each-budget)
	}
	if diff := cmp.Diff(Stats{Events: workers * each, Frames: budget, Dropped: workers*each - budget}, r.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
}
