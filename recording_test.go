package browserpool_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// recEvent is a line of events.jsonl, as the replay page and a person read
// it.
type recEvent struct {
	Seq        int       `json:"seq"`
	Time       time.Time `json:"time"`
	Action     string    `json:"action"`
	Args       string    `json:"args"`
	DurationMS float64   `json:"duration_ms"`
	Error      string    `json:"error"`
	URL        string    `json:"url"`
	Title      string    `json:"title"`
	Frame      string    `json:"frame"`
}

func readEvents(t *testing.T, dir string) []recEvent {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var evs []recEvent
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e recEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("events.jsonl line %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

// replayShown is what the replay page shows of its current step.
type replayShown struct {
	Step, Count, Action, Args, Title, Error string
	Frame                                   string // the frame's file name, "" when hidden
	FrameLoaded                             bool
	CurrentIsError                          bool
}

const readReplay = `(async () => {
  const $ = id => document.getElementById(id).textContent;
  const img = document.getElementById("frame");
  if (!img.hidden && !img.complete) await new Promise(r => { img.onload = img.onerror = r; });
  const cur = document.querySelector("#timeline li.current");
  return {Step: $("step"), Count: $("count"), Action: $("action"), Args: $("args"), Title: $("title"), Error: $("error"),
    Frame: img.hidden ? "" : decodeURIComponent(img.getAttribute("src") || ""), FrameLoaded: !img.hidden && img.naturalWidth > 0,
    CurrentIsError: !!cur && cur.classList.contains("err")};
})()`

func TestRecordingWritesAFrameAndAnEventPerActionAReplayPageAndAVideo(t *testing.T) {
	requireBrowser(t)
	ff, ffErr := exec.LookPath("ffmpeg")
	probe, probeErr := exec.LookPath("ffprobe")
	st := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)

	// A loaded machine can take seconds for a fresh tab's first paint: the
	// frames asserted below must not depend on the default 2 s bound.
	rec, err := s.StartRecording(ctx, browserpool.RecordingOptions{FFmpeg: ff, FrameTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartRecording(ctx, browserpool.RecordingOptions{}); !errors.Is(err, browserpool.ErrInvalidArgument) {
		t.Errorf("a second StartRecording: %v; want ErrInvalidArgument", err)
	}
	if s.Recording() != rec {
		t.Errorf("Session.Recording is not the running recording")
	}
	if want := filepath.Join(s.Info().OutputDir, browserpool.RecordingDirName); rec.Dir() != want {
		t.Errorf("Dir = %s; want %s", rec.Dir(), want)
	}

	const token = "Abc123Def456Ghi789Jkl0"
	const secret = "hunter2-secret"
	if _, err := tab.Navigate(ctx, st.URL+"/form.html?token="+token+"&q=shoes"); err != nil {
		t.Fatal(err)
	}
	sn := snap(t, tab, browserpool.SnapshotOptions{}) // read-only: not recorded
	name, pw := ref(t, sn, "textbox", "Name"), ref(t, sn, "textbox", "Password")
	submit := ref(t, sn, "button", "Create account")
	if err := tab.Fill(ctx, name, "Ann"); err != nil {
		t.Fatal(err)
	}
	if err := tab.Fill(ctx, pw, secret); err != nil {
		t.Fatal(err)
	}
	if err := tab.Click(ctx, submit); err != nil {
		t.Fatal(err)
	}
	clickErr := tab.Click(ctx, "@e999")
	if clickErr == nil {
		t.Fatal("a click on a ref no snapshot gave succeeded")
	}
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if got := eval[bool](t, tab, "document.getElementById('state').textContent.includes('submitted')"); !got {
		t.Errorf("the form was not submitted")
	}

	if got, want := rec.Stats(), (browserpool.RecordingStats{Events: 6, Frames: 6}); got != want {
		t.Errorf("Stats = %+v; want %+v", got, want)
	}
	evs := readEvents(t, rec.Dir())
	type brief struct{ Action, Frame, Title string }
	var gotBrief []brief
	for _, e := range evs {
		gotBrief = append(gotBrief, brief{e.Action, e.Frame, e.Title})
	}
	wantBrief := []brief{
		{"navigate", "0001.jpg", "Sign up"}, {"fill", "0002.jpg", "Sign up"}, {"fill", "0003.jpg", "Sign up"},
		{"click", "0004.jpg", "Sign up"}, {"click", "0005.jpg", "Sign up"}, {"press", "0006.jpg", "Sign up"},
	}
	if diff := cmp.Diff(wantBrief, gotBrief); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	trace := tab.Trace()
	var traced []string
	for _, e := range trace {
		if e.Action != "snapshot" && e.Action != "evaluate" {
			traced = append(traced, e.Args)
		}
	}
	var recorded []string
	for i, e := range evs {
		recorded = append(recorded, e.Args)
		if fi, err := os.Stat(filepath.Join(rec.Dir(), e.Frame)); err != nil || fi.Size() == 0 {
			t.Errorf("frame %s: %v", e.Frame, err)
		}
		if (e.Error != "") != (i == 4) {
			t.Errorf("event %d error %q; want one on the failing click only", i+1, e.Error)
		}
		if e.DurationMS <= 0 || e.Time.IsZero() {
			t.Errorf("event %d: duration %v ms at %v", i+1, e.DurationMS, e.Time)
		}
	}
	if diff := cmp.Diff(traced, recorded); diff != "" {
		t.Errorf("recorded args differ from the trace's (-trace +recorded):\n%s", diff)
	}
	if evs[4].Error != clickErr.Error() {
		t.Errorf("failing click's error %q; want %q", evs[4].Error, clickErr.Error())
	}
	if !strings.HasSuffix(evs[2].Args, " ***") {
		t.Errorf("password fill args %q; want the value masked ***", evs[2].Args)
	}
	wantURL := st.URL + "/form.html?token=REDACTED&q=shoes"
	if evs[0].URL != wantURL || evs[0].Args != wantURL || evs[5].URL != wantURL {
		t.Errorf("URLs %q, %q, %q; want %q", evs[0].Args, evs[0].URL, evs[5].URL, wantURL)
	}
	raw, err := os.ReadFile(filepath.Join(rec.Dir(), "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), token) {
		t.Errorf("events.jsonl holds the password or the token:\n%s", raw)
	}

	// The video, before Stop: one image per event, held for its real time.
	var video browserpool.RecordingVideo
	if ffErr == nil && probeErr == nil {
		video, err = rec.ExportVideo(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
	} else if os.Getenv("BROWSERPOOL_REQUIRE_BROWSER") == "1" {
		t.Errorf("BROWSERPOOL_REQUIRE_BROWSER=1 and no ffmpeg/ffprobe (%v %v): install the Debian package ffmpeg (make test does)", ffErr, probeErr)
	} else {
		t.Logf("no video check: %v %v (install the Debian package ffmpeg)", ffErr, probeErr)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	if s.Recording() != nil {
		t.Errorf("Session.Recording after Stop is not nil")
	}
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if n := len(readEvents(t, rec.Dir())); n != 6 {
		t.Errorf("%d events after an action past Stop; want 6", n)
	}

	if video.Path != "" {
		checkVideo(t, probe, video, evs)
	}

	// The replay page, opened with the library in a second session.
	srv := httptest.NewServer(http.FileServer(http.Dir(rec.Dir())))
	defer srv.Close()
	viewer := mustOpen(t, ctx, p)
	vt, err := viewer.OpenTab(ctx, srv.URL+"/index.html")
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, vt, `document.body && document.body.dataset.ready === "1"`)
	check := func(what string, n int) {
		t.Helper()
		var got replayShown
		if err := vt.Evaluate(ctx, readReplay, &got); err != nil {
			t.Fatal(err)
		}
		e := evs[n-1]
		want := replayShown{Step: strconv.Itoa(n), Count: "6", Action: e.Action, Args: e.Args, Title: e.Title, Error: e.Error,
			Frame: e.Frame, FrameLoaded: true, CurrentIsError: e.Error != ""}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the replay page shows (-want +got):\n%s", what, diff)
		}
	}
	check("opened", 1)
	for n := 2; n <= 6; n++ {
		if err := vt.Press(ctx, "ArrowRight"); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("ArrowRight to step %d", n), n)
	}
	if err := vt.Press(ctx, "ArrowLeft"); err != nil {
		t.Fatal(err)
	}
	check("ArrowLeft back to the error", 5)
}

// checkVideo checks the video with ffprobe: its frame count is the one the
// events' times give (each image held from its action to the next, 0.2 s
// to 3 s, the last 2 s, at 10 frames a second) and its duration within 10 %.
func checkVideo(t *testing.T, probe string, v browserpool.RecordingVideo, evs []recEvent) {
	t.Helper()
	want := 0
	for i := range evs {
		hold := 2 * time.Second
		if i+1 < len(evs) {
			hold = min(max(evs[i+1].Time.Sub(evs[i].Time), 200*time.Millisecond), 3*time.Second)
		}
		want += max(int((hold*10+time.Second/2)/time.Second), 1)
	}
	wantDur := time.Duration(want) * 100 * time.Millisecond
	if v.Frames != want || v.Duration != wantDur {
		t.Errorf("ExportVideo: %d frames, %v; want %d, %v", v.Frames, v.Duration, want, wantDur)
	}
	out, err := exec.Command(probe, "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=nb_read_frames:format=duration", "-of", "json", v.Path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var got struct {
		Streams []struct {
			Frames string `json:"nb_read_frames"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	if got.Streams[0].Frames != strconv.Itoa(want) {
		t.Errorf("ffprobe counts %s frames; want %d", got.Streams[0].Frames, want)
	}
	secs, err := strconv.ParseFloat(got.Format.Duration, 64)
	if err != nil || math.Abs(secs-wantDur.Seconds()) > 0.1*wantDur.Seconds() {
		t.Errorf("ffprobe duration %q; want %v within 10%%", got.Format.Duration, wantDur)
	}
	t.Logf("video %s: %s frames, %s s (want %d, %v)", filepath.Base(v.Path), got.Streams[0].Frames, got.Format.Duration, want, wantDur)
}

func TestRecordingMapsItsErrorsToThePackageClasses(t *testing.T) {
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if _, err := s.StartRecording(ctx, browserpool.RecordingOptions{DirName: "../out"}); !errors.Is(err, browserpool.ErrPathEscapes) {
		t.Errorf("DirName ../out: %v; want ErrPathEscapes", err)
	}
	// The output dir itself and the downloads dir hold the session's other
	// files, which frames and index.html would overwrite.
	for _, dir := range []string{".", "downloads", "./downloads/"} {
		if _, err := s.StartRecording(ctx, browserpool.RecordingOptions{DirName: dir}); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "would overwrite") {
			t.Errorf("DirName %q: %v; want ErrInvalidArgument saying what it would overwrite", dir, err)
		}
	}
	if _, err := s.StartRecording(ctx, browserpool.RecordingOptions{FrameTimeout: -time.Second}); !errors.Is(err, browserpool.ErrInvalidArgument) {
		t.Errorf("FrameTimeout -1s: %v; want ErrInvalidArgument", err)
	}
	rec, err := s.StartRecording(ctx, browserpool.RecordingOptions{FFmpeg: filepath.Join(t.TempDir(), "no-ffmpeg")})
	if err != nil {
		t.Fatal(err)
	}
	tab := mustTab(t, ctx, s)
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	_, err = rec.ExportVideo(ctx, "../escape.mp4")
	if !errors.Is(err, browserpool.ErrPathEscapes) || strings.Count(err.Error(), "path escapes") != 1 {
		t.Errorf("ExportVideo(../escape.mp4): %v; want ErrPathEscapes, said once", err)
	}
	if _, err := rec.ExportVideo(ctx, "sub/clip.mp4"); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "a path, not a file name") {
		t.Errorf("ExportVideo(sub/clip.mp4): %v; want ErrInvalidArgument: a path inside the recording is not a file name", err)
	}
	if _, err := rec.ExportVideo(ctx, "events.jsonl"); !errors.Is(err, browserpool.ErrInvalidArgument) {
		t.Errorf("ExportVideo(events.jsonl): %v; want ErrInvalidArgument (the recording's own file)", err)
	}
	_, err = rec.ExportVideo(ctx, "")
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrFFmpegNotFound) || !errors.As(err, &e) || !strings.Contains(e.Hint, "ffmpeg") {
		t.Errorf("ExportVideo without ffmpeg: %v; want ErrFFmpegNotFound naming the package", err)
	}
	// The session's close stops the recording and writes its replay page.
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(rec.Dir(), "index.html")); err != nil {
		t.Errorf("no replay page after the session closed: %v", err)
	}
	if _, err := rec.ExportVideo(ctx, ""); !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "export the video before the recording stops") {
		t.Errorf("ExportVideo after the session closed: %v; want ErrInvalidArgument saying to export before the recording stops", err)
	}
}

func TestConfigRecordingRecordsEverySessionFromItsStart(t *testing.T) {
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{Recording: &browserpool.RecordingOptions{DirName: "rec", FrameTimeout: time.Minute}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	rec := s.Recording()
	if rec == nil {
		t.Fatal("a session of a pool with Config.Recording does not record")
	}
	tab := mustTab(t, ctx, s)
	if err := tab.Press(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	if got := rec.Stats(); got.Events != 1 || got.Frames != 1 {
		t.Errorf("Stats = %+v; want one event with its frame", got)
	}
	if want := filepath.Join(s.Info().OutputDir, "rec"); rec.Dir() != want {
		t.Errorf("Dir = %s; want %s", rec.Dir(), want)
	}
}

func TestRecordingShowsHistoryReloadViewportAndTheNavigationOfOpenTab(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	st := startSite(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	rec, err := s.StartRecording(ctx, browserpool.RecordingOptions{FrameTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := s.OpenTab(ctx, st.URL+"/form.html")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, st.URL+"/console.html"); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Back(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Forward(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tab.SetViewport(ctx, 800, 600, 1); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range readEvents(t, rec.Dir()) {
		got = append(got, e.Action)
		if e.Frame == "" {
			t.Errorf("event %s has no frame", e.Action)
		}
	}
	want := []string{"navigate", "navigate", "back", "forward", "reload", "set-viewport"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("recorded actions (-want +got):\n%s", diff)
	}
}

func TestARecordingWithoutFramesTakesNoScreenshots(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	rec, err := s.StartRecording(ctx, browserpool.RecordingOptions{MaxFrames: -1})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := tab.Press(ctx, "Tab"); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(browserpool.RecordingStats{Events: 3}, rec.Stats()); diff != "" {
		t.Errorf("Stats of an events-only recording (-want +got):\n%s", diff)
	}
	for _, c := range l.Browsers()[0].Calls() {
		if c.Method == "Page.captureScreenshot" {
			t.Fatal("an events-only recording took a screenshot")
		}
	}
}
