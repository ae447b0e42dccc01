// Room: the recording tools (browser_start_recording,
// browser_stop_recording): one library call each on the client's own
// session. No locks of its own.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StartRecordingArgs are browser_start_recording's arguments.
type StartRecordingArgs struct {
	Session   string `json:"session,omitempty" jsonschema:"Your browser session: a name or id from browser_session_list. Empty means your only session (one is opened on first use)."`
	MaxFrames int    `json:"max_frames,omitempty" jsonschema:"At most this many frames (later actions still get their event line). 0 means 1000."`
}

// StopRecordingArgs are browser_stop_recording's arguments.
type StopRecordingArgs struct {
	Session string `json:"session,omitempty" jsonschema:"Your browser session: a name or id from browser_session_list. Empty means your only session."`
	Video   bool   `json:"video,omitempty" jsonschema:"Also render the frames into an MP4 video, recording.mp4 (needs ffmpeg where the server runs)."`
}

// recordingSession is the client's session a recording tool acts on; in
// attach mode there is none to record.
func (s *Server) recordingSession(ctx context.Context, c *toolCall, session string) (*browserpool.Session, string, error) {
	if s.cfg.CDPEndpoint != "" {
		return nil, "", toolErrorf("recording is not available when the server is attached to a browser the user runs (-cdp-endpoint)",
			"take pictures with browser_take_screenshot instead")
	}
	return s.session(ctx, c.client, session)
}

func (s *Server) addRecordingTools() {
	add(s, &mcp.Tool{
		Name: "browser_start_recording",
		Description: "Start recording your browser session for a person to review: after every action that changes the page (navigate, click, hover, type, fill, select, press, upload, scroll, dialog, download) " +
			"a picture of the page and a line in events.jsonl (passwords masked, tokens in URLs redacted). Reading tools (snapshot, evaluate, screenshot, page info, wait) are not recorded. " +
			"Call browser_stop_recording to finish and get the replay page.",
		Annotations: annotations("Start recording", false, false, false, false),
	}, nil, func(ctx context.Context, c *toolCall, in StartRecordingArgs) (*mcp.CallToolResult, error) {
		se, name, err := s.recordingSession(ctx, c, in.Session)
		if err != nil {
			return nil, err
		}
		if in.MaxFrames < 0 {
			return nil, toolErrorf(fmt.Sprintf("max_frames %d is negative", in.MaxFrames), "pass max_frames 0 (1000 frames) or more")
		}
		if r := se.Recording(); r != nil {
			return text("Session %q is already recording into %s; call browser_stop_recording to finish.", name, r.Dir()), nil
		}
		r, err := se.StartRecording(ctx, browserpool.RecordingOptions{MaxFrames: in.MaxFrames, DirName: recordingDir(se), FrameTimeout: s.cfg.RecordingFrameTimeout})
		if err != nil {
			return nil, err
		}
		return text("Recording session %q into %s. Every action that changes the page adds a frame and an event; call browser_stop_recording to finish.", name, r.Dir()), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_stop_recording",
		Description: "Stop recording your browser session and say where the recording is: its dir with the frames, events.jsonl and index.html (a replay page a person opens in a browser and steps through with the arrow keys), and with video true an MP4.",
		Annotations: annotations("Stop recording", false, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in StopRecordingArgs) (*mcp.CallToolResult, error) {
		se, name, err := s.recordingSession(ctx, c, in.Session)
		if err != nil {
			return nil, err
		}
		r := se.Recording()
		if r == nil {
			return nil, toolErrorf(fmt.Sprintf("session %q is not recording", name), "call browser_start_recording first")
		}
		var b strings.Builder
		if in.Video {
			v, err := r.ExportVideo(ctx, "")
			if err != nil {
				fmt.Fprintf(&b, "No video: %s\n", strings.ReplaceAll(describe(err), "\n", " "))
			} else {
				fmt.Fprintf(&b, "Video: %s (%d frames, %.1f s)\n", v.Path, v.Frames, v.Duration.Seconds())
			}
		}
		st := r.Stats()
		if err := r.Stop(); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "Recording of session %q stopped: %d events, %d frames", name, st.Events, st.Frames)
		if st.Dropped > 0 {
			fmt.Fprintf(&b, " (%d frames dropped over the budget)", st.Dropped)
		}
		fmt.Fprintf(&b, ".\nDir: %s\nReplay page: %s\nEvents: %s", r.Dir(), filepath.Join(r.Dir(), "index.html"), filepath.Join(r.Dir(), "events.jsonl"))
		return text("%s", b.String()), nil
	})
}

// recordingDir names a recording dir of its own for each recording of a
// session: recording, recording-2, ... (a dir holds one recording).
func recordingDir(se *browserpool.Session) string {
	out := se.Info().OutputDir
	name := browserpool.RecordingDirName
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(out, name, "events.jsonl")); err != nil {
			return name
		}
		name = fmt.Sprintf("%s-%d", browserpool.RecordingDirName, i)
	}
}
