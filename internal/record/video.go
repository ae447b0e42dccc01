// Room: the video export. No locks: it works on a copy of the entries and
// on files no other call writes.

package record

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // frames are JPEG or PNG
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// The video's timing. Each frame is held for the real time from its action
// to the next action with a frame, clamped to [MinFrameHold, MaxFrameHold];
// the last frame is held LastFrameHold. Holds are rounded to whole video
// frames at VideoFPS, so a video has exactly Video.Frames frames.
const (
	VideoFPS      = 10
	MinFrameHold  = 200 * time.Millisecond
	MaxFrameHold  = 3 * time.Second
	LastFrameHold = 2 * time.Second
)

// DefaultVideoName is the video's file name when ExportVideo is given none.
const DefaultVideoName = "recording.mp4"

// The video is as large as the largest frame, scaled down to fit this box.
const maxVideoWidth, maxVideoHeight = 1920, 1080

// fontFiles are the fonts the captions try, in order: fonts-dejavu-core
// (which Debian's ffmpeg pulls in through fontconfig), then
// fonts-liberation. Without either, drawtext asks fontconfig for "Sans".
var fontFiles = []string{
	"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
	"/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
}

// Video describes an exported video.
type Video struct {
	Path     string        // the MP4 file
	Images   int           // recorded frames shown
	Frames   int           // video frames (VideoFPS a second, constant rate)
	Duration time.Duration // Frames / VideoFPS
	Width    int
	Height   int
}

// segment is one recorded frame in the video: held ticks video frames.
type segment struct {
	frame   string
	caption string
	err     string
	ticks   int
}

// planVideo turns the entries into segments: one per entry with a frame.
func planVideo(entries []Entry) []segment {
	var steps []Entry
	for _, e := range entries {
		if e.Action != NoteAction {
			steps = append(steps, e)
		}
	}
	var segs []segment
	var starts []time.Time
	for i, e := range steps {
		if e.Frame == "" {
			continue
		}
		c := fmt.Sprintf("%d/%d  %s", i+1, len(steps), e.Action)
		if e.Args != "" {
			c += " " + e.Args
		}
		c += "  (" + formatMS(e.DurationMS) + ")"
		segs = append(segs, segment{frame: e.Frame, caption: c, err: e.Error})
		starts = append(starts, e.Time)
	}
	for i := range segs {
		hold := LastFrameHold
		if i+1 < len(segs) {
			hold = min(max(starts[i+1].Sub(starts[i]), MinFrameHold), MaxFrameHold)
		}
		segs[i].ticks = max(int((hold*VideoFPS+time.Second/2)/time.Second), 1)
	}
	return segs
}

func formatMS(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
}

// ExportVideo renders the frames into an MP4 (H.264, VideoFPS frames a
// second, constant rate) with ffmpeg: each frame held for its real duration
// (see MinFrameHold), and in a band below it the step, action, arguments
// and duration as a caption, with an error in a red line above. Frames of
// different sizes are scaled down and padded to the size of the largest
// (at most 1920x1080). name is the video's file name inside
// the recording dir (zero means DefaultVideoName); an existing file of that
// name is replaced, atomically. ctx bounds the ffmpeg run, which is killed
// when ctx ends.
//
// A missing ffmpeg is ErrFFmpegNotFound (install the Debian package
// ffmpeg), a recording without frames ErrNoFrames, a failing ffmpeg
// ErrVideo quoting its output.
func (r *Recorder) ExportVideo(ctx context.Context, name string) (Video, error) {
	const op = "ExportVideo"
	if name == "" {
		name = DefaultVideoName
	}
	if !filepath.IsLocal(name) {
		e := newError(op, ErrPathEscapes, fmt.Sprintf("%q leads out of the recording dir", name), nil)
		e.Hint = "give a file name such as recording.mp4: the video is written inside the recording dir"
		return Video{}, e
	}
	if strings.ContainsRune(name, '/') {
		e := newError(op, ErrInvalidName, fmt.Sprintf("%q is a path, not a file name", name), nil)
		e.Hint = "give a file name such as recording.mp4: the video is written inside the recording dir, and a copy can go elsewhere once it is written"
		return Video{}, e
	}
	if !strings.HasSuffix(strings.ToLower(name), ".mp4") || strings.HasPrefix(name, ".") || isFrameName(name) {
		e := newError(op, ErrInvalidName, fmt.Sprintf("%q", name), nil)
		return Video{}, e
	}
	root, entries, err := r.snapshot(op)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Class == ErrClosed {
			e.Hint = "export the video before the recording stops (Recording.Stop, or its session's close); its frames, events.jsonl and index.html stay in its dir"
		}
		return Video{}, err
	}
	defer r.inflight.Done()
	if fi, err := root.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		e := newError(op, ErrInvalidName, fmt.Sprintf("%q exists in the recording dir and is not a file (%s)", name, fi.Mode().Type()), nil)
		e.Hint = "choose another name for the video"
		return Video{}, e
	}
	// Close stops an export under way: closing a session is bounded.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unhook := context.AfterFunc(r.closing, func() { stop(errRecordingClosed) })
	defer unhook()
	exe := r.opts.FFmpeg
	if exe == "" {
		exe = "ffmpeg"
	}
	path, err := exec.LookPath(exe)
	if err == nil {
		// ffmpeg runs in the recording dir: a relative path must not
		// resolve there.
		path, err = filepath.Abs(path)
	}
	if err != nil {
		return Video{}, newError(op, ErrFFmpegNotFound, fmt.Sprintf("no executable %q", exe), err)
	}
	segs := planVideo(entries)
	if len(segs) == 0 {
		return Video{}, newError(op, ErrNoFrames, "", nil)
	}
	w, h, err := videoSize(root, segs)
	if err != nil {
		return Video{}, newError(op, ErrVideo, "cannot read a frame", err)
	}
	v := Video{Path: filepath.Join(r.dir, name), Images: len(segs), Width: w, Height: h + captionBand(h)}
	for _, s := range segs {
		v.Frames += s.ticks
	}
	v.Duration = time.Duration(v.Frames) * time.Second / VideoFPS

	tag := tempTag()
	list, out := ".video-"+tag+".ffconcat", ".video-"+tag+".mp4"
	if err := root.WriteFile(list, concatList(segs, maxCaption(w, h)), 0o600); err != nil {
		return Video{}, newError(op, ErrWrite, "cannot write the ffmpeg input list", err)
	}
	defer root.Remove(list)
	if err := run(ctx, path, root, ffmpegArgs(list, out, w, h, v.Frames)); err != nil {
		root.Remove(out)
		if ctx.Err() != nil {
			if context.Cause(ctx) == errRecordingClosed {
				return Video{}, newError(op, ErrClosed, "the recording was stopped (its session closed) while ffmpeg ran; the video was not written", nil)
			}
			e := newError(op, ErrVideo, "ffmpeg was stopped before it finished: the video was not written", ctx.Err())
			e.Hint = "retry with a longer deadline: the export encodes every frame of the recording"
			return Video{}, e
		}
		return Video{}, newError(op, ErrVideo, "", err)
	}
	if _, err := root.Stat(out); err != nil {
		return Video{}, newError(op, ErrVideo, "ffmpeg exited without an error but wrote no video", err)
	}
	root.Chmod(out, 0o600) // ffmpeg created it by the umask; the recording's files are private
	if err := root.Rename(out, name); err != nil {
		root.Remove(out)
		return Video{}, newError(op, ErrWrite, "cannot write "+name, err)
	}
	return v, nil
}

// isFrameName reports whether name is a frame's file name (0001.jpg).
func isFrameName(name string) bool {
	base, ext, _ := strings.Cut(name, ".")
	if ext != "jpg" && ext != "png" || base == "" {
		return false
	}
	return strings.Trim(base, "0123456789") == ""
}

// videoSize is the largest frame's size (each side separately), scaled
// down to fit maxVideoWidth x maxVideoHeight, even (H.264 needs it).
func videoSize(root *os.Root, segs []segment) (int, int, error) {
	w, h := 0, 0
	for _, s := range segs {
		f, err := root.Open(s.frame)
		if err != nil {
			return 0, 0, err
		}
		c, _, err := image.DecodeConfig(f)
		f.Close()
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", s.frame, err)
		}
		w, h = max(w, c.Width), max(h, c.Height)
	}
	if w > maxVideoWidth || h > maxVideoHeight {
		scale := min(float64(maxVideoWidth)/float64(w), float64(maxVideoHeight)/float64(h))
		w, h = int(float64(w)*scale), int(float64(h)*scale)
	}
	return max(w+w%2, 2), max(h+h%2, 2), nil
}

// captionBand is the height of the band below the frames that holds the
// captions (two lines), so a caption never hides a part of the page.
func captionBand(h int) int {
	b := fontSize(h) * 4
	return b + b%2
}

// maxCaption is how many characters of caption fit the width.
func maxCaption(w, h int) int {
	return max(w*10/(fontSize(h)*6), 20)
}

func fontSize(h int) int { return max(h/30, 12) }

// concatList is the ffconcat input: each frame, its hold, and its caption
// and error as packet metadata that drawtext prints (%{metadata:...}
// prints the value as it is, never expanding it again).
func concatList(segs []segment, maxChars int) []byte {
	var b bytes.Buffer
	b.WriteString("ffconcat version 1.0\n")
	for _, s := range segs {
		fmt.Fprintf(&b, "file %s\nduration %s\n", quote(s.frame), strconv.FormatFloat(float64(s.ticks)/VideoFPS, 'f', -1, 64))
		fmt.Fprintf(&b, "file_packet_meta caption %s\n", quote(captionText(s.caption, maxChars)))
		if s.err != "" {
			fmt.Fprintf(&b, "file_packet_meta error %s\n", quote(captionText("ERROR: "+s.err, maxChars)))
		}
	}
	// The concat demuxer gives the last file no duration of its own: list
	// it once more; -frames:v cuts the video at the end of its real hold.
	// (-t does not: ffmpeg 5.1 drops that extra image before it fills the
	// last hold, and the video ends 0.3 s after the last image starts.)
	fmt.Fprintf(&b, "file %s\n", quote(segs[len(segs)-1].frame))
	return b.Bytes()
}

// quote quotes s for ffconcat: inside single quotes everything is literal
// but the quote itself, which closes the quotes, is escaped with a
// backslash, and opens them again.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// captionText makes s one line of at most n characters.
func captionText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func ffmpegArgs(list, out string, w, h, frames int) []string {
	fs := fontSize(h)
	font := ""
	for _, f := range fontFiles {
		if _, err := os.Stat(f); err == nil {
			font = "fontfile=" + f + ":"
			break
		}
	}
	draw := func(key, box string, y string) string {
		return fmt.Sprintf("drawtext=%stext='%%{metadata\\:%s}':fontsize=%d:fontcolor=white:box=1:boxcolor=%s:boxborderw=%d:x=%d:y=%s",
			font, key, fs, box, fs/4, fs/2, y)
	}
	vf := strings.Join([]string{
		fmt.Sprintf("scale=%d:%d:force_original_aspect_ratio=decrease", w, h),
		fmt.Sprintf("pad=%d:%d:(ow-iw)/2:(%d-ih)/2:color=white", w, h+captionBand(h), h),
		draw("caption", "black", fmt.Sprintf("%d", h+fs*2+fs/4)),
		draw("error", "0xC62828", fmt.Sprintf("%d", h+fs/2)),
		"format=yuv420p",
	}, ",")
	return []string{
		"-hide_banner", "-nostdin", "-loglevel", "error", "-y",
		"-f", "concat", "-i", list,
		"-vf", vf,
		"-fps_mode", "cfr", "-r", strconv.Itoa(VideoFPS),
		"-frames:v", strconv.Itoa(frames),
		"-c:v", "libx264", "-preset", "veryfast", "-tune", "stillimage",
		"-movflags", "+faststart", "-f", "mp4", out,
	}
}

// run runs ffmpeg in root's directory. The working directory is the
// directory root holds open (/proc/self/fd/N, resolved by the child before
// it execs), so a symlink swapped in for the recording dir's path cannot
// redirect ffmpeg's relative file names.
func run(ctx context.Context, exe string, root *os.Root, args []string) error {
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = "/proc/self/fd/" + strconv.Itoa(int(d.Fd()))
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if s := strings.TrimSpace(out.String()); s != "" {
			return fmt.Errorf("%w; ffmpeg said: %s", err, s)
		}
		return err
	}
	return nil
}

// tail keeps the last 2 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = append([]byte("…"), t.b[len(t.b)-2048:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// tempTag is a random tag for temporary file names.
func tempTag() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
