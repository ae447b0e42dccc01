// Room: tests of the names Tab.Screenshot and Tab.PDF take, on the cdptest
// fake: every check here happens before the browser does any work, which
// the fake's call log proves. No locks.

package browserpool_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// artifactCalls are the fake browser's calls that would write an artifact.
func artifactCalls(l *cdptest.Launcher) []string {
	var got []string
	for _, b := range l.Browsers() {
		for _, c := range b.Calls() {
			if c.Method == "Page.captureScreenshot" || c.Method == "Page.printToPDF" {
				got = append(got, c.Method)
			}
		}
	}
	return got
}

// artifact is one call of Tab.Screenshot or Tab.PDF with a name.
type artifact struct {
	pdf  bool
	name string
}

func (a artifact) write(ctx context.Context, tab *browserpool.Tab) error {
	if a.pdf {
		_, err := tab.PDF(ctx, browserpool.PDFOptions{Name: a.name})
		return err
	}
	_, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: a.name})
	return err
}

func (a artifact) String() string {
	if a.pdf {
		return "PDF " + a.name
	}
	return "Screenshot " + a.name
}

// refusal is what a test wants of a refused name: its class, words of its
// text and words of its hint.
type refusal struct {
	class      error
	says, hint string
}

// checkRefused calls a and reports how its error differs from want.
func checkRefused(t *testing.T, ctx context.Context, tab *browserpool.Tab, a artifact, want refusal) {
	t.Helper()
	err := a.write(ctx, tab)
	var e *browserpool.Error
	if !errors.Is(err, want.class) || !errors.As(err, &e) {
		t.Errorf("%v: error = %v; want %v", a, err, want.class)
		return
	}
	if !strings.Contains(err.Error(), want.says) || !strings.Contains(e.Hint, want.hint) || e.Tab != tab.ID() {
		t.Errorf("%v: error = %v; want it to say %q, with a hint saying %q, naming the tab", a, err, want.says, want.hint)
	}
}

func TestScreenshotsAndPDFsMayNotTakeOrGoIntoTheSessionsOwnDirs(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t), Recording: &browserpool.RecordingOptions{DirName: "configured/rec"}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	out := s.Info().OutputDir
	if err := s.Recording().Stop(); err != nil { // Config.Recording's dir stays the session's
		t.Fatal(err)
	}
	rec, err := s.StartRecording(ctx, browserpool.RecordingOptions{DirName: "rec"})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()

	downloads := refusal{browserpool.ErrInvalidArgument, "the session's downloads dir", "such as shot.png, or leave Name empty"}
	recording := refusal{browserpool.ErrInvalidArgument, "the dir of the session's recording", "outside rec/"}
	configured := refusal{browserpool.ErrInvalidArgument, "(Config.Recording)", "outside configured/rec/"}
	for a, want := range map[artifact]refusal{
		{name: "downloads"}:                          downloads,
		{name: "downloads/x.png"}:                    {browserpool.ErrInvalidArgument, "is inside the session's downloads dir", "outside downloads/"},
		{name: "./downloads/../downloads/x.png"}:     {browserpool.ErrInvalidArgument, "is inside the session's downloads dir", "outside downloads/"},
		{pdf: true, name: "downloads"}:               {browserpool.ErrInvalidArgument, "the session's downloads dir", "such as page.pdf"},
		{pdf: true, name: "downloads/report.pdf"}:    {browserpool.ErrInvalidArgument, "a PDF may not be written there", "such as page.pdf"},
		{name: "rec"}:                                {browserpool.ErrInvalidArgument, "the dir of the session's recording", "such as shot.png"},
		{name: "rec/0002.jpg"}:                       recording,
		{name: "rec/index.html"}:                     recording,
		{pdf: true, name: "rec/report.pdf"}:          recording,
		{name: "configured/rec/x.png"}:               configured,
		{pdf: true, name: "configured/rec/page.pdf"}: configured,
	} {
		checkRefused(t, ctx, tab, a, want)
	}
	if got := artifactCalls(l); len(got) > 0 {
		t.Errorf("refused names reached the browser: %v", got)
	}
	if fi, err := os.Lstat(filepath.Join(out, "downloads")); err == nil && !fi.IsDir() {
		t.Errorf("a file took the downloads dir's name")
	}
	var inRec []string
	if des, err := os.ReadDir(rec.Dir()); err == nil {
		for _, d := range des {
			inRec = append(inRec, d.Name())
		}
	}
	if diff := cmp.Diff([]string{"events.jsonl"}, inRec); diff != "" {
		t.Errorf("the recording dir (-want +got):\n%s", diff)
	}

	// Next to them, names are free.
	for _, name := range []string{"downloads.png", "recs/x.png", "configured/x.png"} {
		shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: name})
		if err != nil || shot.Path != filepath.Join(out, name) {
			t.Errorf("Screenshot %s: %q, %v; want it written in the output dir", name, shot.Path, err)
		}
	}
}

func TestAClipOfInfiniteNumbersIsRefusedBeforeTheBrowserWorks(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	inf := math.Inf(1)
	for _, clip := range []browserpool.Rect{
		{Width: inf, Height: 10}, {Width: 10, Height: inf}, {X: inf, Width: 10, Height: 10}, {Y: inf, Width: 10, Height: 10},
		{X: math.NaN(), Width: 10, Height: 10},
	} {
		_, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{NoFile: true, Clip: &clip})
		var e *browserpool.Error
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !errors.As(err, &e) || !strings.Contains(err.Error(), "Clip") || !strings.Contains(e.Hint, "finite") {
			t.Errorf("Clip %+v: error = %v; want ErrInvalidArgument about the Clip, hinting at finite numbers", clip, err)
		}
	}
	if got := artifactCalls(l); len(got) > 0 {
		t.Errorf("refused clips reached the browser: %v", got)
	}
}

func TestPDFNamesAreCheckedAsScreenshotNamesBeforeChromiumPrints(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{Root: newRoot(t)})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	out := s.Info().OutputDir
	for name, body := range map[string]string{"sub/x.png": "a file", "sub/x.pdf": "a file", "taken.pdf": "a file"} {
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("n", 300)
	for a, want := range map[artifact]refusal{
		{pdf: true, name: long + ".pdf"}:     {browserpool.ErrInvalidArgument, "304 bytes", "such as page.pdf"},
		{name: long + ".png"}:                {browserpool.ErrInvalidArgument, "304 bytes", "such as shot.png"},
		{pdf: true, name: "a\nb.pdf"}:        {browserpool.ErrInvalidArgument, "control character", "such as page.pdf"},
		{pdf: true, name: "report.png"}:      {browserpool.ErrInvalidArgument, "says PNG, and a PDF is a PDF", "name the file .pdf"},
		{pdf: true, name: "report.PNG"}:      {browserpool.ErrInvalidArgument, "says PNG", "name the file .pdf"},
		{pdf: true, name: "report"}:          {browserpool.ErrInvalidArgument, "has no extension", "name the file .pdf"},
		{pdf: true, name: "report."}:         {browserpool.ErrInvalidArgument, "has no extension", "name the file .pdf"},
		{pdf: true, name: "dir/"}:            {browserpool.ErrInvalidArgument, "names a directory", "such as dir/page.pdf"},
		{name: "report.pdf"}:                 {browserpool.ErrInvalidArgument, "says PDF, and a screenshot is a PNG or a JPEG", "name the file .png"},
		{name: "report"}:                     {browserpool.ErrInvalidArgument, "has no extension", "name the file .png"},
		{pdf: true, name: "sub/x.pdf/y.pdf"}: {browserpool.ErrInvalidArgument, "sub/x.pdf in the output dir is a file", "such as page.pdf"},
		{name: "sub/x.png/y.png"}:            {browserpool.ErrInvalidArgument, "sub/x.png in the output dir is a file", "such as shot.png"},
		{pdf: true, name: "taken.pdf"}:       {browserpool.ErrInvalidArgument, "already exists", "remove the file first"},
		{pdf: true, name: "../escape.pdf"}:   {browserpool.ErrPathEscapes, "absolute paths and '..' are not allowed", ""},
	} {
		checkRefused(t, ctx, tab, a, want)
	}
	if got := artifactCalls(l); len(got) > 0 {
		t.Errorf("refused names reached the browser: %v", got)
	}
}
