package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPlanVideoHoldsEachFrameUntilTheNextFrameClampedAndRounded(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	entries := []Entry{
		{Time: at(0), Action: "navigate", Args: "https://a.test/", DurationMS: 120, Frame: "0001.jpg"},
		{Time: at(1000), Action: "fill", Args: `#q "x"`, DurationMS: 8, Frame: "0002.jpg"},
		{Time: at(1050), Action: "click", DurationMS: 1500, Error: "boom", Frame: "0003.jpg"},
		{Time: at(1100), Action: NoteAction, Note: "a note is no step"},
		{Time: at(2000), Action: "hover"}, // no frame: the previous frame stays up
		{Time: at(9000), Action: "press", Args: "Enter", DurationMS: 2, Frame: "0004.jpg"},
		{Time: at(9440), Action: "scroll", DurationMS: 2, Frame: "0005.jpg"},
	}
	want := []segment{
		{frame: "0001.jpg", caption: "1/6  navigate https://a.test/  (120 ms)", ticks: 10},
		{frame: "0002.jpg", caption: `2/6  fill #q "x"  (8 ms)`, ticks: 2},           // 50 ms, raised to MinFrameHold
		{frame: "0003.jpg", caption: "3/6  click  (1.50 s)", err: "boom", ticks: 30}, // 7.95 s, cut to MaxFrameHold
		{frame: "0004.jpg", caption: "5/6  press Enter  (2 ms)", ticks: 4},           // 440 ms, rounded to 400
		{frame: "0005.jpg", caption: "6/6  scroll  (2 ms)", ticks: int(LastFrameHold * VideoFPS / time.Second)},
	}
	if diff := cmp.Diff(want, planVideo(entries), cmp.AllowUnexported(segment{})); diff != "" {
		t.Errorf("planVideo (-want +got):\n%s", diff)
	}
}

func TestConcatListQuotesCaptionsLiterally(t *testing.T) {
	segs := []segment{{frame: "0001.jpg", caption: "1/1  fill 'it''s' %{pts} \\n\nnext", err: "x", ticks: 3}}
	want := `ffconcat version 1.0
file '0001.jpg'
duration 0.3
file_packet_meta caption '1/1  fill '\''it'\'''\''s'\'' %{pts} \n next'
file_packet_meta error 'ERROR: x'
file '0001.jpg'
`
	if diff := cmp.Diff(want, string(concatList(segs, 100))); diff != "" {
		t.Errorf("concatList (-want +got):\n%s", diff)
	}
	if got := captionText(strings.Repeat("é", 50), 10); got != strings.Repeat("é", 9)+"…" {
		t.Errorf("captionText cut to 10 = %q", got)
	}
}

func TestExportVideoWithoutFFmpegIsATypedErrorNamingTheDebianPackage(t *testing.T) {
	r := newRecorder(t, Options{FFmpeg: filepath.Join(t.TempDir(), "no-ffmpeg-here")})
	if err := r.Add(Event{Time: t0, Action: "click"}, jpegFrame(t, 8, 8, color.White)); err != nil {
		t.Fatal(err)
	}
	_, err := r.ExportVideo(t.Context(), "")
	if !errors.Is(err, ErrFFmpegNotFound) {
		t.Fatalf("ExportVideo: %v; want ErrFFmpegNotFound", err)
	}
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "install the Debian package ffmpeg (apt-get install ffmpeg)") ||
		!strings.HasPrefix(err.Error(), "browserpool: record.ExportVideo: ffmpeg not found: ") {
		t.Errorf("error text %q; want a browserpool: record.ExportVideo *Error naming the Debian package ffmpeg", err)
	}
}

// ffmpeg returns the ffmpeg and ffprobe executables, or skips the test.
func ffmpeg(t testing.TB) (string, string) {
	t.Helper()
	ff, err := exec.LookPath("ffmpeg")
	need(t, "ffmpeg (Debian package ffmpeg)", err)
	probe, err := exec.LookPath("ffprobe")
	need(t, "ffprobe (Debian package ffmpeg)", err)
	return ff, probe
}

func TestExportVideoRefusesANameOutsideTheRecordingAndNeedsFrames(t *testing.T) {
	ffmpeg(t)
	r := newRecorder(t, Options{})
	if _, err := r.ExportVideo(t.Context(), ""); !errors.Is(err, ErrNoFrames) {
		t.Errorf("ExportVideo without frames: %v; want ErrNoFrames", err)
	}
	for _, name := range []string{"../out.mp4", "/tmp/out.mp4", "sub/../../out.mp4"} {
		if _, err := r.ExportVideo(t.Context(), name); !errors.Is(err, ErrPathEscapes) || strings.Contains(err.Error(), "recording dir name") {
			t.Errorf("ExportVideo(%q): %v; want ErrPathEscapes, with a hint about the file name", name, err)
		}
	}
	if _, err := r.ExportVideo(t.Context(), "sub/out.mp4"); !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), "a path, not a file name") {
		t.Errorf("ExportVideo(%q): %v; want ErrInvalidName: a path inside the dir is no escape, but not a file name either", "sub/out.mp4", err)
	}
	// The recording's own files, and names that are not a video's.
	videoFlow(t, r)
	for _, name := range []string{EventsFile, IndexFile, "0001.jpg", "0003.png", ".", ".hidden.mp4", "video.avi"} {
		if _, err := r.ExportVideo(t.Context(), name); !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), ".mp4") {
			t.Errorf("ExportVideo(%q): %v; want ErrInvalidName asking for a .mp4 name", name, err)
		}
	}
	if got := len(readLines(t, filepath.Join(r.Dir(), EventsFile))); got != 6 {
		t.Errorf("events.jsonl holds %d lines after the refused exports, want the 6 events", got)
	}
}

// videoFlow records the six-action flow the video and replay tests share:
// frames of different sizes and formats, one failing action, holds from
// 0.2 s (raised from 50 ms) to 3 s (cut from 5 s).
func videoFlow(t testing.TB, r *Recorder) {
	t.Helper()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	gray, blue, green := color.Gray{Y: 128}, color.RGBA{B: 255, A: 255}, color.RGBA{G: 200, A: 255}
	steps := []struct {
		ev    Event
		frame []byte
	}{
		{Event{Time: at(0), Action: "navigate", Args: "https://shop.test/?token=abc", Duration: 300 * time.Millisecond, URL: "https://shop.test/?token=abc", Title: "Shop"}, jpegFrame(t, 320, 240, gray)},
		{Event{Time: at(1000), Action: "fill", Args: `#password "***"`, Duration: 10 * time.Millisecond, URL: "https://shop.test/", Title: "Shop"}, jpegFrame(t, 640, 360, blue)},
		{Event{Time: at(1050), Action: "click", Args: `"Buy"`, Duration: 40 * time.Millisecond, URL: "https://shop.test/cart", Title: "Cart </script><b>x</b>"}, pngFrame(t, 200, 500, green)},
		{Event{Time: at(6050), Action: "click", Args: `"Pay"`, Duration: 2 * time.Second, Err: "browserpool: Tab.Click: no element matches \"Pay\"", URL: "https://shop.test/cart", Title: "Cart"}, jpegFrame(t, 640, 360, gray)},
		{Event{Time: at(7550), Action: "press", Args: "Escape", Duration: 5 * time.Millisecond, URL: "https://shop.test/cart", Title: "Cart"}, jpegFrame(t, 320, 240, blue)},
		{Event{Time: at(8050), Action: "navigate", Args: "https://shop.test/done", Duration: 200 * time.Millisecond, URL: "https://shop.test/done", Title: "Done"}, jpegFrame(t, 480, 270, green)},
	}
	for _, s := range steps {
		if err := r.Add(s.ev, s.frame); err != nil {
			t.Fatal(err)
		}
	}
}

// flowTicks are the video frames of each step of videoFlow.
var flowTicks = []int{10, 2, 30, 15, 5, 20}

func TestExportVideoHoldsFramesForTheirRealTimeWithCaptions(t *testing.T) {
	_, probe := ffmpeg(t)
	r := newRecorder(t, Options{})
	videoFlow(t, r)
	v, err := r.ExportVideo(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	wantFrames := 0
	for _, n := range flowTicks {
		wantFrames += n
	}
	wantDur := time.Duration(wantFrames) * time.Second / VideoFPS // 8.2 s
	want := Video{Path: filepath.Join(r.Dir(), DefaultVideoName), Images: 6, Frames: wantFrames, Duration: wantDur, Width: 640, Height: 500 + 64}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("ExportVideo (-want +got):\n%s", diff)
	}
	out, err := exec.Command(probe, "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration", "-of", "json", v.Path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var got struct {
		Streams []struct {
			Codec  string `json:"codec_name"`
			Width  int    `json:"width"`
			Height int    `json:"height"`
			Frames string `json:"nb_read_frames"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	s := got.Streams[0]
	if s.Codec != "h264" || s.Width != v.Width || s.Height != v.Height || s.Frames != strconv.Itoa(wantFrames) {
		t.Errorf("ffprobe: codec %s, %dx%d, %s frames; want h264, %dx%d, %d frames", s.Codec, s.Width, s.Height, s.Frames, v.Width, v.Height, wantFrames)
	}
	secs, err := strconv.ParseFloat(got.Format.Duration, 64)
	if err != nil || math.Abs(secs-wantDur.Seconds()) > 0.1*wantDur.Seconds() {
		t.Errorf("ffprobe duration %q; want %v within 10%%", got.Format.Duration, wantDur)
	}
	t.Logf("video: %d frames, %s s (want %v), %dx%d", wantFrames, got.Format.Duration, wantDur, s.Width, s.Height)

	// The error step (the 4th) shows a red error line; the others none.
	start := 0
	for i, n := range flowTicks {
		mid := float64(start+n/2) / VideoFPS
		start += n
		img := videoFrameAt(t, v.Path, mid)
		if red := redPixels(img, 500); (i == 3) != (red > 500) {
			t.Errorf("step %d at %.1f s: %d red pixels; want the error line only on step 4", i+1, mid, red)
		}
	}
	if names := dirNames(t, r.Dir()); strings.Contains(strings.Join(names, " "), ".video-") {
		t.Errorf("temporary files left in the recording dir: %v", names)
	}
}

func TestExportVideoStopsWithItsContextAndLeavesNoFile(t *testing.T) {
	ffmpeg(t)
	r := newRecorder(t, Options{})
	videoFlow(t, r)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.ExportVideo(ctx, ""); !errors.Is(err, ErrVideo) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "retry with a longer deadline") {
		t.Errorf("ExportVideo with a cancelled context: %v; want ErrVideo wrapping context.Canceled, whose hint asks for a longer deadline", err)
	}
	for _, n := range dirNames(t, r.Dir()) {
		if strings.HasSuffix(n, ".mp4") || strings.HasPrefix(n, ".video-") {
			t.Errorf("file %s left after a cancelled export", n)
		}
	}
}

func TestExportVideoOntoADirectoryIsRefusedBeforeFFmpegRuns(t *testing.T) {
	r := newRecorder(t, Options{FFmpeg: "/nonexistent/ffmpeg"}) // the name is judged first
	videoFlow(t, r)
	if err := os.Mkdir(filepath.Join(r.Dir(), "clip.mp4"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ExportVideo(t.Context(), "clip.mp4"); !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), `"clip.mp4" exists in the recording dir and is not a file`) {
		t.Errorf("ExportVideo onto a directory: %v; want ErrInvalidName saying the name is taken by a directory", err)
	}
}

// videoFrameAt decodes the video frame at sec seconds.
func videoFrameAt(t testing.TB, path string, sec float64) image.Image {
	t.Helper()
	ff, _ := ffmpeg(t)
	var out, errb bytes.Buffer
	cmd := exec.Command(ff, "-hide_banner", "-loglevel", "error", "-nostdin", "-ss", strconv.FormatFloat(sec, 'f', 2, 64), "-i", path,
		"-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "-")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("ffmpeg frame at %.2f: %v: %s", sec, err, errb.String())
	}
	img, err := png.Decode(&out)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// redPixels counts clearly red pixels (the error line's box) below the
// frames, from row top down.
func redPixels(img image.Image, top int) int {
	n := 0
	b := img.Bounds()
	for y := top; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 150 && g>>8 < 90 && bl>>8 < 90 {
				n++
			}
		}
	}
	return n
}

func TestExportVideoKillsFFmpegWhenItsContextEnds(t *testing.T) {
	// A stand-in for ffmpeg that says it started (its pid, in its working
	// dir: the recording dir) and then runs until it is killed, with a
	// child in its process group.
	fake := fakeFFmpeg(t, "#!/bin/sh\nsleep 600 &\necho $$ > started.tmp && mv started.tmp started\nwhile :; do sleep 0.05; done\n")
	r := newRecorder(t, Options{FFmpeg: fake})
	videoFlow(t, r)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := r.ExportVideo(ctx, "")
		done <- err
	}()
	var pid int
	eventually(t, "the fake ffmpeg started in the recording dir", func() bool {
		b, err := os.ReadFile(filepath.Join(r.Dir(), "started"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	cancel()
	err := <-done
	if !errors.Is(err, ErrVideo) || !errors.Is(err, context.Canceled) {
		t.Errorf("ExportVideo cancelled while ffmpeg runs: %v; want ErrVideo wrapping context.Canceled", err)
	}
	eventually(t, "the fake ffmpeg's process group is gone", func() bool {
		return syscall.Kill(-pid, 0) == syscall.ESRCH
	})
	for _, n := range dirNames(t, r.Dir()) {
		if strings.HasSuffix(n, ".mp4") || strings.HasPrefix(n, ".video-") {
			t.Errorf("file %s left after a cancelled export", n)
		}
	}
}

func TestCloseStopsAnExportUnderWayInsteadOfWaitingForIt(t *testing.T) {
	fake := fakeFFmpeg(t, "#!/bin/sh\necho $$ > started.tmp && mv started.tmp started\nwhile :; do sleep 0.05; done\n")
	r, err := New(filepath.Join(testRoot, "close-export-"+strconv.FormatInt(time.Now().UnixNano(), 10)), Options{FFmpeg: fake})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(r.Dir()))
	videoFlow(t, r)
	done := make(chan error, 1)
	go func() {
		_, err := r.ExportVideo(context.Background(), "")
		done <- err
	}()
	eventually(t, "the fake ffmpeg started", func() bool {
		_, err := os.Stat(filepath.Join(r.Dir(), "started"))
		return err == nil
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("ExportVideo stopped by Close: %v; want ErrClosed", err)
	}
}

func TestAnFFmpegThatWritesNothingIsAVideoErrorNotAWriteError(t *testing.T) {
	fake := fakeFFmpeg(t, "#!/bin/sh\nexit 0\n")
	r := newRecorder(t, Options{FFmpeg: fake})
	videoFlow(t, r)
	_, err := r.ExportVideo(t.Context(), "")
	if !errors.Is(err, ErrVideo) || !strings.Contains(err.Error(), "wrote no video") {
		t.Errorf("ExportVideo with an ffmpeg that wrote nothing: %v; want ErrVideo saying so", err)
	}
}

// fakeFFmpeg writes script as an executable called ffmpeg in a dir of its
// own under testRoot, removed at cleanup, and returns its path.
func fakeFFmpeg(t *testing.T, script string) string {
	t.Helper()
	dir := filepath.Join(testRoot, "fake-ffmpeg-"+strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	fake := filepath.Join(dir, "ffmpeg")
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return fake
}
