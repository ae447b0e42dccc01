package browserpool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// A link planted as the session's output dir, or as its downloads dir, by
// someone else who may write in Config.OutputDir, is refused: artifacts
// and downloads never go through it out of the output dir.
func TestALinkPlantedAsASessionsOutputOrDownloadsDirIsRefused(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	outside := t.TempDir()
	out := s.Info().OutputDir
	if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, out); err != nil {
		t.Fatal(err)
	}
	_, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "a.png"})
	if !errors.Is(err, browserpool.ErrPathEscapes) || !strings.Contains(err.Error(), "is a link") {
		t.Errorf("Screenshot with the output dir a link: %v, want ErrPathEscapes saying it is a link", err)
	}
	_, err = tab.WaitDownload(ctx, nil)
	if !errors.Is(err, browserpool.ErrPathEscapes) {
		t.Errorf("WaitDownload with the output dir a link: %v, want ErrPathEscapes", err)
	}
	// The output dir real, its downloads dir a link.
	if err := os.Remove(out); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, s.DownloadDir()); err != nil {
		t.Fatal(err)
	}
	_, err = tab.WaitDownload(ctx, nil)
	if !errors.Is(err, browserpool.ErrPathEscapes) || !strings.Contains(err.Error(), "downloads") {
		t.Errorf("WaitDownload with the downloads dir a link: %v, want ErrPathEscapes naming it", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("files landed outside the output dir: %v", ents)
	}
}
