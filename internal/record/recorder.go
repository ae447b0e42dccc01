// Room: the recorder. Recorder.mu guards its counters, its entries and its
// open events file, and is held across the writes of one Add (see Add).

package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/redact"
)

// DefaultDirName is the recording dir inside the output dir when
// Options.DirName is empty.
const DefaultDirName = "recording"

// DefaultMaxFrames is the frame budget when Options.MaxFrames is zero.
const DefaultMaxFrames = 1000

// EventsFile is the name of the events file in the recording dir: one JSON
// object (an Entry) a line.
const EventsFile = "events.jsonl"

// NoteAction is the Action of the entries the Recorder adds itself (the
// frame budget notes).
const NoteAction = "note"

// Options configures New. The zero value records into <output>/recording
// with a budget of DefaultMaxFrames frames.
type Options struct {
	// DirName is the recording dir's path inside the output dir. It must be
	// local (no absolute path, no ".."); a symlink leading out of the
	// output dir is refused, and so are the output dir itself (".") and
	// an existing dir that is not empty (ErrDirInUse). Zero means
	// DefaultDirName.
	DirName string
	// Reserved names the dirs of the output dir that hold the caller's
	// other files (a session's downloads): refused as the recording dir,
	// and so is any dir inside one.
	Reserved []string
	// MaxFrames is the frame budget: frames beyond it are dropped (their
	// events are still written) and a note says how many. Zero means
	// DefaultMaxFrames; negative means no frames at all.
	MaxFrames int
	// FFmpeg is the ffmpeg executable ExportVideo runs. Zero means "ffmpeg"
	// looked up in PATH.
	FFmpeg string
}

// Event is one action to record. The caller fills it from its traced-action
// prologue: Args already redacted (password text masked) as in the trace.
// The Recorder scrubs token-like URL query values from Args, Err and URL
// again.
type Event struct {
	Time     time.Time     // when the action started
	Action   string        // e.g. "navigate", "click", "fill"
	Args     string        // the action's arguments, redacted by the caller
	Duration time.Duration // how long the action took
	Err      string        // the error's text; empty on success
	URL      string        // the page's URL after the action
	Title    string        // the page's title after the action
}

// Entry is one line of events.jsonl. Seq counts from 1 over every line.
type Entry struct {
	Seq          int       `json:"seq"`
	Time         time.Time `json:"time"`
	Action       string    `json:"action"`
	Args         string    `json:"args,omitempty"`
	DurationMS   float64   `json:"duration_ms"`
	Error        string    `json:"error,omitempty"`
	URL          string    `json:"url,omitempty"`
	Title        string    `json:"title,omitempty"`
	Frame        string    `json:"frame,omitempty"`         // the frame's file name in the recording dir
	FrameDropped bool      `json:"frame_dropped,omitempty"` // the frame budget was spent
	Note         string    `json:"note,omitempty"`          // NoteAction entries: what happened
	Dropped      int       `json:"dropped,omitempty"`       // NoteAction entries: frames dropped so far
}

// Stats counts what a Recorder wrote.
type Stats struct {
	Events  int // action events (not notes)
	Frames  int // frames written
	Dropped int // frames dropped over the budget
}

// within reports whether the clean local path name is dir or lies inside
// it.
func within(name, dir string) bool {
	dir = filepath.Clean(dir)
	return name == dir || strings.HasPrefix(name, dir+string(filepath.Separator))
}

// Recorder writes a recording: frames (0001.jpg, ...), events.jsonl and,
// on WriteIndex or Close, the replay page index.html, all inside its
// recording dir. Make it with New. It is safe for concurrent use; the
// caller must call Close.
type Recorder struct {
	dir    string
	opts   Options
	budget int

	// mu is held across the file writes of one Add: the writes of a
	// recorder serialize, so frame numbers, lines and the budget agree and
	// a line never names a frame not yet written. This is file I/O under a
	// lock, on purpose and only here: the lock is the recorder's own (no
	// pool or tab lock is held by a caller of Add), and the writes are one
	// image and one short line to the local disk. WriteIndex and
	// ExportVideo copy what they need under mu and do their I/O after.
	mu      sync.Mutex
	root    *os.Root // guarded by mu; nil once closed
	events  *os.File // guarded by mu; events.jsonl, appended to
	entries []Entry  // guarded by mu; every line written, in order
	stats   Stats    // guarded by mu
	noted   bool     // guarded by mu; the "budget reached" note was written
	frameNo int      // guarded by mu; the number of the last frame file name tried

	// inflight counts WriteIndex and ExportVideo calls using root; Close
	// waits for them before closing it. Add is called under mu while root
	// is set, Wait after root is cleared under mu.
	inflight sync.WaitGroup

	// closing ends when Close begins: an ExportVideo under way stops
	// (its ffmpeg is killed) instead of holding Close up.
	closing    context.Context
	endClosing context.CancelFunc
}

// New creates the recording dir opts.DirName inside outputDir (which must
// exist or be creatable) and starts events.jsonl there. The dir must be
// new or empty (ErrDirInUse): a recording dir holds one recording and
// nothing else, since its frames and index.html would overwrite files of
// the same names.
func New(outputDir string, opts Options) (*Recorder, error) {
	const op = "New"
	name := opts.DirName
	if name == "" {
		name = DefaultDirName
	}
	if !filepath.IsLocal(name) {
		return nil, newError(op, ErrPathEscapes, fmt.Sprintf("%q is not a local path", name), nil)
	}
	if clean := filepath.Clean(name); clean == "." || slices.ContainsFunc(opts.Reserved, func(r string) bool { return within(clean, r) }) {
		return nil, newError(op, ErrDirInUse, fmt.Sprintf("%q is the output dir itself or one it keeps for other files, or inside one: frames and index.html would overwrite them", name), nil)
	}
	if err := os.MkdirAll(outputDir, 0o700); err != nil {
		return nil, newError(op, ErrWrite, "cannot create the output dir", err)
	}
	out, err := os.OpenRoot(outputDir)
	if err != nil {
		return nil, newError(op, ErrWrite, "cannot open the output dir", err)
	}
	defer out.Close()
	// os.Root refuses to follow a symlink out of outputDir, at every step.
	if err := out.MkdirAll(name, 0o700); err != nil {
		return nil, dirError(op, name, err)
	}
	root, err := out.OpenRoot(name)
	if err != nil {
		return nil, dirError(op, name, err)
	}
	if others, err := otherFiles(root); err != nil || len(others) > 0 {
		root.Close()
		if err != nil {
			return nil, dirError(op, name, err)
		}
		return nil, newError(op, ErrDirInUse, fmt.Sprintf("%s already holds files (%s): frames and index.html would overwrite them", name, strings.Join(others, ", ")), nil)
	}
	f, err := root.OpenFile(EventsFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		root.Close()
		if errors.Is(err, fs.ErrExist) {
			e := newError(op, ErrDirInUse, fmt.Sprintf("%s already holds a recording", name), nil)
			e.Hint = "choose another dir name (RecordingOptions.DirName), or move the earlier recording away"
			return nil, e
		}
		return nil, newError(op, ErrWrite, "cannot create "+EventsFile, err)
	}
	budget := opts.MaxFrames
	switch {
	case budget == 0:
		budget = DefaultMaxFrames
	case budget < 0:
		budget = 0
	}
	closing, endClosing := context.WithCancel(context.Background())
	return &Recorder{dir: filepath.Join(outputDir, name), opts: opts, budget: budget, root: root, events: f, closing: closing, endClosing: endClosing}, nil
}

// escapes reports whether err, or an error it wraps, is os.Root's refusal
// of a path leading out.
func escapes(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == rootEscapeText {
			return true
		}
	}
	return false
}

// rootEscapeText is the text of the (unexported) error os.Root returns for a
// path that would leave it.
const rootEscapeText = "path escapes from parent"

// dirError classifies an error making or opening the recording dir: a path
// os.Root refused is ErrPathEscapes.
func dirError(op, name string, err error) *Error {
	if escapes(err) {
		return newError(op, ErrPathEscapes, fmt.Sprintf("%q leads out of the output dir", name), nil)
	}
	e := newError(op, ErrWrite, "cannot create the recording dir "+name, err)
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTDIR) {
		e.Hint = "a file of that name (or on its path) is in the output dir: move it away, or choose another dir name (RecordingOptions.DirName)"
	}
	return e
}

// Dir returns the recording dir's path.
func (r *Recorder) Dir() string { return r.dir }

// Stats returns what the recorder wrote so far.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Entries returns a copy of every line written to events.jsonl so far.
func (r *Recorder) Entries() []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries...)
}

// frameExt says which image frame is: ".jpg", ".png" or "" for neither.
func frameExt(frame []byte) string {
	switch {
	case bytes.HasPrefix(frame, []byte{0xFF, 0xD8, 0xFF}):
		return ".jpg"
	case bytes.HasPrefix(frame, []byte("\x89PNG\r\n\x1a\n")):
		return ".png"
	}
	return ""
}

// Add records one event and its frame (a JPEG or PNG of the page after the
// action; nil for none). Over the frame budget the frame is dropped, the
// entry says frame_dropped, and the first drop adds a note; Close adds one
// with the final count. An invalid frame is dropped with ErrInvalidFrame,
// after the event is written. A failing write returns ErrWrite; the
// recorder stays usable. A frame never overwrites a file the recorder did
// not write: it takes the next free number instead (see
// writeFrameLocked), and the entry names the file it went to.
func (r *Recorder) Add(ev Event, frame []byte) error {
	const op = "Add"
	e := Entry{
		Time:       ev.Time,
		Action:     ev.Action,
		Args:       redact.Text(ev.Args),
		DurationMS: float64(ev.Duration.Microseconds()) / 1000,
		Error:      redact.Text(ev.Err),
		URL:        redact.Scrub(ev.URL),
		Title:      ev.Title,
	}
	ext := ""
	var frameErr error
	if frame != nil {
		if ext = frameExt(frame); ext == "" {
			frameErr = newError(op, ErrInvalidFrame, fmt.Sprintf("%d bytes starting %q", len(frame), frame[:min(len(frame), 4)]), nil)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.root == nil {
		return newError(op, ErrClosed, "", nil)
	}
	if ext != "" {
		if r.stats.Frames >= r.budget {
			e.FrameDropped = true
			r.stats.Dropped++
		} else {
			if name, err := r.writeFrameLocked(ext, frame); err != nil {
				frameErr = err
			} else {
				e.Frame = name
				r.stats.Frames++
			}
		}
	}
	r.stats.Events++
	if err := r.appendLocked(e); err != nil {
		return err
	}
	if e.FrameDropped && !r.noted {
		r.noted = true
		note := Entry{Time: ev.Time, Action: NoteAction, Dropped: r.stats.Dropped,
			Note: fmt.Sprintf("frame budget of %d frames reached: frames of later actions are dropped, their events are still recorded", r.budget)}
		if err := r.appendLocked(note); err != nil {
			return err
		}
	}
	return frameErr
}

// writeFrameLocked writes frame as the next frame file, 0001.jpg and on,
// and returns its name. It creates the file (O_EXCL) and never writes one
// it did not create: a name taken by a file someone else put in the
// recording dir is passed over for the next free number, up to
// maxFrameSkips of them. r.mu must be held.
func (r *Recorder) writeFrameLocked(ext string, frame []byte) (string, error) {
	const op = "Add"
	for range maxFrameSkips + 1 {
		r.frameNo++
		name := fmt.Sprintf("%04d%s", r.frameNo, ext)
		f, err := r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", newError(op, ErrWrite, "cannot write frame "+name, err)
		}
		_, err = f.Write(frame)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			r.root.Remove(name)
			r.frameNo-- // the number is free again for the next frame
			return "", newError(op, ErrWrite, "cannot write frame "+name, err)
		}
		return name, nil
	}
	e := newError(op, ErrWrite, fmt.Sprintf("the next %d frame names up to %04d%s are taken by files the recorder did not write", maxFrameSkips+1, r.frameNo, ext), nil)
	e.Hint = "keep other files out of the recording dir: frames are never written over them"
	return "", e
}

// maxFrameSkips bounds how many frame names taken by others one frame
// passes over.
const maxFrameSkips = 100

// appendLocked numbers e, writes it as one line of events.jsonl and keeps
// it. r.mu must be held.
func (r *Recorder) appendLocked(e Entry) error {
	e.Seq = len(r.entries) + 1
	line, err := json.Marshal(e)
	if err != nil {
		return newError("Add", ErrWrite, "cannot encode the event", err)
	}
	if _, err := r.events.Write(append(line, '\n')); err != nil {
		return newError("Add", ErrWrite, "cannot append to "+EventsFile, err)
	}
	r.entries = append(r.entries, e)
	return nil
}

// snapshot returns the recorder's root and a copy of its entries, or
// ErrClosed. The caller must call r.inflight.Done when it no longer uses
// root.
func (r *Recorder) snapshot(op string) (*os.Root, []Entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.root == nil {
		return nil, nil, newError(op, ErrClosed, "", nil)
	}
	r.inflight.Add(1)
	return r.root, append([]Entry(nil), r.entries...), nil
}

// FramesOff reports that the recording takes no frames at all
// (Options.MaxFrames negative): a caller need not capture any.
func (r *Recorder) FramesOff() bool { return r.opts.MaxFrames < 0 }

// Close ends the recording: it adds a note with the number of frames
// dropped over the budget (if any), writes the replay page and closes the
// files, after waiting for a WriteIndex or ExportVideo under way. The files
// stay. Close is idempotent; later calls return nil.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.root == nil {
		r.mu.Unlock()
		return nil
	}
	var errs []error
	if r.stats.Dropped > 0 {
		last := r.entries[len(r.entries)-1]
		end := last.Time.Add(time.Duration(last.DurationMS * float64(time.Millisecond)))
		note := Entry{Time: end, Action: NoteAction, Dropped: r.stats.Dropped,
			Note: fmt.Sprintf("%d %s dropped over the frame budget of %d frames", r.stats.Dropped, plural(r.stats.Dropped, "frame", "frames"), r.budget)}
		errs = append(errs, r.appendLocked(note))
	}
	root, events, entries := r.root, r.events, append([]Entry(nil), r.entries...)
	r.root, r.events = nil, nil // from here on Add, WriteIndex and ExportVideo fail with ErrClosed
	r.mu.Unlock()
	r.endClosing()

	errs = append(errs, writeIndex("Close", root, entries))
	if err := events.Close(); err != nil {
		errs = append(errs, newError("Close", ErrWrite, "cannot close "+EventsFile, err))
	}
	r.inflight.Wait()
	root.Close()
	return errors.Join(errs...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// otherFiles returns up to three names in root's dir, unless the dir holds
// events.jsonl (an earlier recording, which New's own check names):
// nil for a new or empty dir.
func otherFiles(root *os.Root) ([]string, error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	if slices.Contains(names, EventsFile) {
		return nil, nil
	}
	slices.Sort(names)
	return names[:min(len(names), 3)], nil
}
