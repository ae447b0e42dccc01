// Room: recording. Session.rec (an atomic pointer) says whether a session
// records; Recording.mu guards nothing but the stop; the files are the
// recorder's (internal/record, whose Recorder.mu serializes its writes).
// Frames are taken after the action, with no lock held.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool/internal/record"
)

// ErrFFmpegNotFound: Recording.ExportVideo found no ffmpeg executable. The
// frames, events.jsonl and the replay page are not affected.
var ErrFFmpegNotFound = errors.New("ffmpeg not found")

// RecordingDirName is the recording dir inside the session's output dir
// when RecordingOptions.DirName is empty.
const RecordingDirName = record.DefaultDirName

// DefaultRecordingQuality is the JPEG quality of frames when
// RecordingOptions.Quality is zero.
const DefaultRecordingQuality = 60

// DefaultFrameTimeout bounds taking one frame: a page that cannot paint (a dialog
// opening meanwhile) costs the event its frame, never the action its
// answer.
const DefaultFrameTimeout = 2 * time.Second

// RecordingOptions configures a recording (Session.StartRecording, and
// Config.Recording for every session of a pool). The zero value records
// into <session output dir>/recording with at most 1000 frames.
type RecordingOptions struct {
	// DirName is the recording dir inside the session's output dir, a
	// local path (no absolute path, no "..", no symlink leading out). Zero
	// means RecordingDirName. The session's output dir itself, its
	// downloads dir and an existing dir that is not empty (one that holds
	// an earlier recording, or other files its frames would overwrite)
	// are refused with ErrInvalidArgument.
	DirName string
	// MaxFrames is the frame budget: later actions still get their event
	// line, marked frame_dropped, and a note says how many frames were
	// dropped. Zero means 1000; negative means events only, no frames.
	MaxFrames int
	// Quality is the JPEG quality of the frames, 1 to 100. Zero means
	// DefaultRecordingQuality.
	Quality int
	// FFmpeg is the ffmpeg executable ExportVideo runs. Zero means "ffmpeg"
	// looked up in PATH (Debian package ffmpeg).
	FFmpeg string
	// FrameTimeout bounds taking one frame after an action; a frame not
	// taken in time is left out (the event is kept). Zero means
	// DefaultFrameTimeout. Raise it on a loaded machine, where a fresh
	// tab's first paint can take seconds; negative is invalid.
	FrameTimeout time.Duration
}

// Recording is a session's recording: after every state-changing action of
// any of its tabs (navigate, click, click-at, hover, fill, type, press,
// select, upload, scroll, an answered dialog, a download) a JPEG frame of the
// page as it stands after the action, and one line in events.jsonl: time,
// action, the arguments exactly as the tab's trace shows them (password
// text "***", token-like URL query values REDACTED), duration, error, the
// page's URL (token-like query values scrubbed) and title, and the frame's
// file name. Read-only actions (snapshot, evaluate, page info, waits,
// screenshots) change nothing to look at and are not recorded, neither as
// frames nor as events: the tab's Trace has them.
//
// Frames are captured after the action (Page.captureScreenshot, JPEG,
// optimized for speed), on the action's path, before it returns: the frame
// is exactly the state the action left, and the next action cannot run
// before it is taken. BenchmarkRecordingClick measured it against the
// screencast (frames pushed by the browser, taking the first one after the
// action), interleaved in one run on a simple page's click (2 shared cores
// under heavy load): 158 ms a click off, 165 ms with the capture (+4 %),
// 142 ms with the screencast (-10 %, within the noise), but 22 % of the
// screencast's clicks got no frame after the action within 100 ms (their
// repaint came before the click returned, or none came), so which frame
// shows the action's state is a guess, and the screencast encodes and acks
// a frame at every repaint while the page animates. Both meet the goal of
// at most +25 %; the capture is the exact one. A failed action is recorded
// too, with its error and the page as the failure left
// it. A frame that cannot be taken (a dialog is open, the tab closed) is
// left out; the event is still written.
//
// Stop ends it (the session's close stops it too) and writes index.html,
// the replay page: one self-contained file, stepped with the arrow keys.
// Recording is safe for concurrent use.
type Recording struct {
	s            *Session
	rec          *record.Recorder
	quality      int
	frameTimeout time.Duration

	stopOnce sync.Once
	stopErr  error // set once by stopOnce
}

// RecordingStats counts what a recording wrote.
type RecordingStats struct {
	Events  int // action events written to events.jsonl
	Frames  int // frames written
	Dropped int // frames dropped over RecordingOptions.MaxFrames
}

// RecordingVideo is an MP4 written by Recording.ExportVideo.
type RecordingVideo struct {
	Path     string        // absolute path inside the recording dir
	Frames   int           // video frames
	Duration time.Duration // its length
}

// StartRecording starts recording the session's tabs (see Recording). A
// session records at most one recording at a time: starting a second is
// an ErrInvalidArgument error. A dir name leading out of the output dir is
// ErrPathEscapes; a recording dir that cannot be written is
// ErrInvalidConfig.
func (s *Session) StartRecording(ctx context.Context, opts RecordingOptions) (*Recording, error) {
	const op = "Session.StartRecording"
	if err := ctx.Err(); err != nil {
		return nil, s.wrap(op, "", err)
	}
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	if opts.FrameTimeout < 0 {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("RecordingOptions.FrameTimeout %v is negative", opts.FrameTimeout))
		e.Session = s.id
		e.Hint = "give a positive FrameTimeout, or zero for the default of 2 s"
		return nil, e
	}
	if opts.Quality < 0 || opts.Quality > 100 {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("RecordingOptions.Quality %d is not between 1 and 100", opts.Quality))
		e.Session = s.id
		return nil, e
	}
	if s.rec.Load() != nil {
		e := newError(op, ErrInvalidArgument, "the session is already recording")
		e.Session = s.id
		e.Hint = "use Session.Recording to get the running recording, or Stop it before starting another"
		return nil, e
	}
	rec, err := record.New(s.output, record.Options{DirName: opts.DirName, MaxFrames: opts.MaxFrames, FFmpeg: opts.FFmpeg, Reserved: []string{downloadsDirName}})
	if err != nil {
		return nil, s.recordErr(op, err)
	}
	r := &Recording{s: s, rec: rec, quality: opts.Quality, frameTimeout: opts.FrameTimeout}
	if r.quality == 0 {
		r.quality = DefaultRecordingQuality
	}
	if r.frameTimeout == 0 {
		r.frameTimeout = DefaultFrameTimeout
	}
	if !s.rec.CompareAndSwap(nil, r) {
		rec.Close()
		e := newError(op, ErrInvalidArgument, "the session is already recording")
		e.Session = s.id
		return nil, e
	}
	return r, nil
}

// Recording returns the session's running recording, or nil.
func (s *Session) Recording() *Recording { return s.rec.Load() }

// stopRecording stops the session's recording, if any (its close path).
func (s *Session) stopRecording() {
	if r := s.rec.Load(); r != nil {
		if err := r.Stop(); err != nil {
			s.p.log.Warn("browserpool: recording did not stop cleanly", "session", s.id, "err", err)
		}
	}
}

// Dir returns the recording dir's absolute path: the frames, events.jsonl
// and, once stopped, index.html.
func (r *Recording) Dir() string { return r.rec.Dir() }

// Stats returns what the recording wrote so far.
func (r *Recording) Stats() RecordingStats {
	st := r.rec.Stats()
	return RecordingStats{Events: st.Events, Frames: st.Frames, Dropped: st.Dropped}
}

// WriteIndex writes the replay page (index.html) for what was recorded so
// far; Stop writes it too.
func (r *Recording) WriteIndex() error {
	if err := r.rec.WriteIndex(); err != nil {
		return r.s.recordErr("Recording.WriteIndex", err)
	}
	return nil
}

// Stop ends the recording: later actions are not recorded, the replay page
// is written and the files are closed; they stay in Dir. Stop is
// idempotent: later calls return the first call's result. Export a video
// before Stop.
func (r *Recording) Stop() error {
	r.stopOnce.Do(func() {
		r.s.rec.CompareAndSwap(r, nil)
		if err := r.rec.Close(); err != nil {
			r.stopErr = r.s.recordErr("Recording.Stop", err)
		}
	})
	return r.stopErr
}

// ExportVideo renders the frames recorded so far into an MP4 named name
// (a file name in the recording dir; zero means "recording.mp4") with
// ffmpeg: each frame held for its action's real time (clamped between
// 0.2 s and 3 s), the action written as a caption below it. No ffmpeg is
// ErrFFmpegNotFound (install the Debian package ffmpeg); no frame yet is
// ErrInvalidArgument; a stopped recording is ErrInvalidArgument, and so is
// a name that does not end in .mp4, is a path, or names one of the
// recording's own files or a directory. Closing the session (or Stop)
// while the export runs stops it (ErrInvalidArgument): a close is not held
// up by ffmpeg. A ctx that ends first stops ffmpeg too, and the error has
// ctx's class (context.DeadlineExceeded or context.Canceled).
func (r *Recording) ExportVideo(ctx context.Context, name string) (RecordingVideo, error) {
	v, err := r.rec.ExportVideo(ctx, name)
	if err != nil {
		return RecordingVideo{}, r.s.recordErr("Recording.ExportVideo", err)
	}
	return RecordingVideo{Path: v.Path, Frames: v.Frames, Duration: v.Duration}, nil
}

// recordErr maps an internal/record error to the package's *Error.
func (s *Session) recordErr(op string, err error) error {
	var re *record.Error
	if !errors.As(err, &re) {
		e := newError(op, ErrInvalidConfig, "")
		e.Session, e.Err = s.id, err
		return e
	}
	class := ErrInvalidConfig // record.ErrWrite, record.ErrVideo: the machine's setup
	switch re.Class {
	case record.ErrPathEscapes:
		class = ErrPathEscapes
	case record.ErrFFmpegNotFound:
		class = ErrFFmpegNotFound
	case record.ErrClosed, record.ErrNoFrames, record.ErrInvalidFrame, record.ErrInvalidName, record.ErrDirInUse:
		class = ErrInvalidArgument
	case record.ErrVideo:
		// ffmpeg stopped by the caller's context: the deadline's class,
		// as every call's, not the machine's setup.
		for _, c := range []error{context.DeadlineExceeded, context.Canceled} {
			if errors.Is(re.Err, c) {
				class = c
			}
		}
	}
	detail := re.Detail
	if re.Class.Error() != class.Error() { // the recording's own words, when the class's differ
		detail = re.Class.Error()
		if re.Detail != "" {
			detail += ": " + re.Detail
		}
	}
	e := newError(op, class, detail)
	e.Session, e.Err, e.Hint = s.id, re.Err, re.Hint
	if class == ErrFFmpegNotFound {
		e.Hint = hints[ErrFFmpegNotFound]
	}
	return e
}

// recordsFrame says which trace actions change the page: those a
// recording shows. "dialog" entries are the dialogs the page's policy
// answered (or that closed); "answer-dialog" is Tab.AnswerDialog.
var recordsFrame = map[string]bool{
	"navigate": true, "click": true, "click-at": true, "hover": true, "fill": true,
	"type": true, "press": true, "select": true, "upload": true, "scroll": true,
	"answer-dialog": true, "dialog": true, "download": true, "drag": true,
	"back": true, "forward": true, "reload": true, "set-viewport": true,
}

// recordHook is the recording's one entry from the tab: the trace calls it
// with every entry it records. Off, it costs an atomic load.
func (t *Tab) recordHook(e TraceEntry) {
	if t == nil || t.s == nil {
		return
	}
	r := t.s.rec.Load()
	if r == nil || !recordsFrame[e.Action] {
		return
	}
	r.add(t, e)
}

// add takes the frame and the page's URL and title, both at once, and
// writes the event. A frame that cannot be taken is left out.
func (r *Recording) add(t *Tab, e TraceEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), r.frameTimeout)
	defer cancel()
	var frame []byte
	var url, title string
	var wg sync.WaitGroup
	if _, open := t.x.dialog.current(); !open && !r.rec.FramesOff() {
		wg.Go(func() {
			t.toFront(ctx) // a page hidden behind a window it opened draws no frame
			shot, err := invoke[page.CaptureScreenshotReply](ctx, t.direct, "Page.captureScreenshot", page.NewCaptureScreenshotArgs().
				SetFormat("jpeg").SetQuality(r.quality).SetOptimizeForSpeed(true))
			if err == nil {
				frame = shot.Data
			}
		})
	}
	if info, err := invoke[target.GetTargetInfoReply](ctx, t.direct, "Target.getTargetInfo", target.NewGetTargetInfoArgs().SetTargetID(target.ID(t.id))); err == nil {
		url, title = info.TargetInfo.URL, info.TargetInfo.Title
	}
	wg.Wait()
	ev := record.Event{Time: e.Time, Action: e.Action, Args: e.Args, Duration: e.Duration, Err: e.Err, URL: url, Title: title}
	if err := r.rec.Add(ev, frame); err != nil && !errors.Is(err, record.ErrClosed) {
		t.deps.log.Warn("browserpool: recording an action failed", "session", t.s.id, "tab", t.id, "action", e.Action, "err", err)
	}
}

// startConfiguredRecording starts Config.Recording for a new session, if
// set. A failure is logged: the session works without its recording.
func (p *Pool) startConfiguredRecording(ctx context.Context, s *Session) {
	if p.cfg.Recording == nil {
		return
	}
	if _, err := s.StartRecording(ctx, *p.cfg.Recording); err != nil {
		p.log.Warn("browserpool: cannot start the session's recording (Config.Recording)", "session", s.id, "err", err)
	}
}
