// Package record is the recording room: every state-changing action of a
// tab as a frame and an event, a replay page a person can open, and a video
// export. It knows nothing of pools or tabs; the tab's traced-action
// prologue feeds it, with the trace's redaction.
//
// Room: recording. Recorder.mu guards a recorder's state and serializes its
// writes (see Recorder); the replay page and the video work on copies.
//
// # What a recording is
//
// A Recorder owns one directory, <output dir>/recording by default, made by
// New through os.Root so that no name (nor a symlink) leads out of the
// output dir. Add writes:
//
//   - 0001.jpg, 0002.png, ...: the frame of each action, the page as it
//     stands after it, at most Options.MaxFrames (DefaultMaxFrames);
//   - events.jsonl: one Entry a line: seq, time, action, arguments (already
//     redacted by the caller, token-like URL query values scrubbed again
//     here with internal/redact), duration_ms, error, url (scrubbed), title, frame. Over the
//     frame budget an entry says frame_dropped, and "note" entries say the
//     budget was reached and, at Close, how many frames were dropped.
//
// WriteIndex (and Close) writes index.html, the replay page: one file, no
// network, the entries embedded, stepped with the arrow keys. ExportVideo
// renders an MP4 through ffmpeg (Debian package ffmpeg), each frame held for
// its real time (clamped to MinFrameHold..MaxFrameHold) with a caption band
// below it; a missing ffmpeg is ErrFFmpegNotFound.
//
// # Wiring it into a tab
//
// The tab's prologue, after each state-changing action (navigate, click,
// hover, fill, type, press, select, upload, scroll, dialog answered,
// download) and with no tab lock held, takes a frame and calls
//
//	rec.Add(record.Event{Time: start, Action: action, Args: redactedArgs,
//		Duration: time.Since(start), Err: errText, URL: url, Title: title}, jpeg)
//
// with the same redacted arguments as its TraceEntry (password text
// already "***"). A failed capture passes a nil frame: the event is still
// recorded. Stop recording with Close (which writes the replay page);
// export a video before Close.
//
// # Frames: capture after the action (measured)
//
// The root package's Recording captures each frame after the action
// (Page.captureScreenshot, JPEG, optimizeForSpeed), on the action's path:
// exactly the state the action left, nothing running between actions. The
// screencast (Page.startScreencast, taking the first frame pushed after
// the action) was measured against it in BenchmarkRecordingClick (root
// package), interleaved in one run: both stay well under +25 % on a click
// (capture +4 %, screencast within the noise), but the screencast gets no
// frame after the action on about one click in five (the repaint came
// before the action returned, or none came) and works at every repaint
// while the page animates; the capture is exactly the state after the
// action. Figures are in Recording's doc.
//
// # Video timing
//
// The video is constant frame rate (VideoFPS). Each hold is rounded to whole
// video frames, the concat demuxer's list repeats the last image (it gives
// the last file no duration otherwise) and -frames:v cuts the video at the end of
// its real hold, so Video.Frames and Video.Duration are exact and ffprobe
// agrees. A variable frame rate export (one video frame per image) loses
// the last image's duration in MP4 and plays less evenly; repeated frames
// cost almost nothing in H.264.
package record
