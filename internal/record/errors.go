// Room: the errors of recording. No locks.

package record

import (
	"errors"
	"strings"
)

// Error classes, for errors.Is. Every error the package returns is an *Error
// whose Class is one of these.
var (
	// ErrPathEscapes: the recording dir or a file name would leave the
	// output dir (an absolute path, "..", or a symlink leading out).
	// Returned by New and Recorder.ExportVideo.
	ErrPathEscapes = errors.New("path escapes the output directory")
	// ErrWrite: a file of the recording could not be written (disk full,
	// permissions). Returned by New, Add, WriteIndex, ExportVideo and
	// Close.
	ErrWrite = errors.New("cannot write the recording")
	// ErrInvalidFrame: a frame is neither a JPEG nor a PNG. Add still
	// records the event, without the frame.
	ErrInvalidFrame = errors.New("frame is not a JPEG or PNG image")
	// ErrClosed: the Recorder was closed. Returned by Add, WriteIndex and
	// ExportVideo after Close.
	ErrClosed = errors.New("recorder is closed")
	// ErrNoFrames: ExportVideo has no frame to render.
	ErrNoFrames = errors.New("the recording has no frames")
	// ErrFFmpegNotFound: ExportVideo found no ffmpeg executable (a
	// capability error). The hint names the Debian package to install.
	ErrFFmpegNotFound = errors.New("ffmpeg not found")
	// ErrVideo: ffmpeg ran but failed; the detail quotes its output.
	ErrVideo = errors.New("video export failed")
	// ErrInvalidName: ExportVideo's name does not end in .mp4, or names a
	// file of the recording itself (a frame, a hidden file).
	ErrInvalidName = errors.New("not a name for the video")
	// ErrDirInUse: the recording dir is the output dir itself, a dir the
	// caller reserved (Options.Reserved), or an existing dir that is not
	// empty: frames and index.html would overwrite the files there.
	// Returned by New.
	ErrDirInUse = errors.New("the recording dir is in use")
)

// errRecordingClosed is the cause that ends an export when Close runs.
var errRecordingClosed = errors.New("the recording was closed")

// Error is the error type of every failing operation of the package. Fields
// that do not apply are empty. Its text reads well verbatim:
//
//	browserpool: record.<Op>: <class>: <detail>: <cause> (hint: <what to do next>)
type Error struct {
	Op     string // e.g. "New", "Add", "ExportVideo"
	Class  error  // one of the Err* sentinels
	Detail string // facts: what exactly happened
	Err    error  // underlying cause, if any
	Hint   string // what to do next
}

// Error formats the error as shown in the type's doc.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("browserpool: record.")
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Class != nil {
		b.WriteString(e.Class.Error())
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the class and the cause, so errors.Is works on both.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Class != nil {
		errs = append(errs, e.Class)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// hints is the default hint of every class, in one table.
var hints = map[error]string{
	ErrPathEscapes:    "choose a recording dir name inside the output dir, without '..' and not a symlink leading out",
	ErrWrite:          "check that the output dir is writable and not full",
	ErrInvalidFrame:   "pass the bytes of a JPEG or PNG screenshot, or nil for an event without a frame",
	ErrClosed:         "start a new recording; a closed one keeps its files but takes no more events",
	ErrNoFrames:       "record at least one action with a frame before exporting a video",
	ErrFFmpegNotFound: "install the Debian package ffmpeg (apt-get install ffmpeg), or set Options.FFmpeg to its path",
	ErrVideo:          "read ffmpeg's output quoted above; the frames and events.jsonl are intact and the replay page works without a video",
	ErrInvalidName:    "give a file name ending in .mp4, such as recording.mp4, that is not one of the recording's own files",
	ErrDirInUse:       "choose a dir name of its own for the recording (RecordingOptions.DirName): one that does not exist yet or is empty",
}

func newError(op string, class error, detail string, cause error) *Error {
	return &Error{Op: op, Class: class, Detail: detail, Err: cause, Hint: hints[class]}
}
