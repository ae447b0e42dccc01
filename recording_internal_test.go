package browserpool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool/internal/record"
)

func TestAVideoExportCutShortByItsContextHasTheContextsClass(t *testing.T) {
	s := &Session{id: "s-1"}
	for _, cause := range []error{context.DeadlineExceeded, context.Canceled} {
		re := &record.Error{Op: "ExportVideo", Class: record.ErrVideo, Detail: "ffmpeg was stopped before it finished: the video was not written", Err: cause, Hint: "retry with a longer deadline"}
		err := s.recordErr("Recording.ExportVideo", re)
		if !errors.Is(err, cause) || errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "retry with a longer deadline") {
			t.Errorf("an export stopped by %v reads %q; want that class (not invalid config) and the hint to retry with a longer deadline", cause, err)
		}
	}
	// ffmpeg failing on its own is the machine's setup.
	if err := s.recordErr("Recording.ExportVideo", &record.Error{Op: "ExportVideo", Class: record.ErrVideo, Err: errors.New("exit status 1")}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ffmpeg's own failure: %v; want ErrInvalidConfig", err)
	}
}
