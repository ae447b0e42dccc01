package browserpool_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

func TestPDFSavesThePageInTheOutputDirOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)
	ctx := ctxT(t)
	tab := e.tab(t, "/form.html")
	out := filepath.Join(e.pool.Config().OutputDir, e.sess.ID())

	t.Run("a generated name and a given one both hold a PDF", func(t *testing.T) {
		for _, opts := range []browserpool.PDFOptions{{}, {Name: "sub/page.pdf", Paper: browserpool.PaperA4, Landscape: true, Background: true, Scale: 0.5}} {
			pdf, err := tab.PDF(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(pdf.Path, out+string(filepath.Separator)) || !strings.HasSuffix(pdf.Path, ".pdf") {
				t.Errorf("PDF path %q is not a .pdf inside %s", pdf.Path, out)
			}
			b, err := os.ReadFile(pdf.Path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte("%PDF")) || len(b) != pdf.Bytes {
				t.Errorf("%s: starts %q, %d bytes (reported %d); want a %%PDF file of the reported size", pdf.Path, b[:min(8, len(b))], len(b), pdf.Bytes)
			}
		}
	})

	t.Run("bad options are typed errors and write nothing", func(t *testing.T) {
		for _, c := range []struct {
			name  string
			opts  browserpool.PDFOptions
			class error
		}{
			{"name escaping the dir", browserpool.PDFOptions{Name: "../escape.pdf"}, browserpool.ErrPathEscapes},
			{"absolute name", browserpool.PDFOptions{Name: "/tmp/escape.pdf"}, browserpool.ErrPathEscapes},
			{"existing name", browserpool.PDFOptions{Name: "sub/page.pdf"}, browserpool.ErrInvalidArgument},
			{"unknown paper", browserpool.PDFOptions{Paper: "B7"}, browserpool.ErrInvalidArgument},
			{"scale too large", browserpool.PDFOptions{Scale: 3}, browserpool.ErrInvalidArgument},
			{"a name too long", browserpool.PDFOptions{Name: strings.Repeat("n", 300) + ".pdf"}, browserpool.ErrInvalidArgument},
			{"a PNG's name", browserpool.PDFOptions{Name: "report.png"}, browserpool.ErrInvalidArgument},
			{"a name without an extension", browserpool.PDFOptions{Name: "report"}, browserpool.ErrInvalidArgument},
			{"the session's downloads dir", browserpool.PDFOptions{Name: "downloads"}, browserpool.ErrInvalidArgument},
			{"a name under a file", browserpool.PDFOptions{Name: "sub/page.pdf/x.pdf"}, browserpool.ErrInvalidArgument},
			{"a page past the last", browserpool.PDFOptions{PageRanges: "99"}, browserpool.ErrInvalidArgument},
		} {
			_, err := tab.PDF(ctx, c.opts)
			var be *browserpool.Error
			if !errors.Is(err, c.class) || !errors.As(err, &be) || be.Hint == "" || be.Tab == "" {
				t.Errorf("%s: PDF = %v, want %v naming the tab, with a hint", c.name, err, c.class)
			}
			if be != nil && strings.Contains(be.Hint, "Overwrite") {
				t.Errorf("%s: the hint %q names Overwrite, which PDFOptions has not", c.name, be.Hint)
			}
			if be != nil && strings.Contains(be.Hint, ".png") {
				t.Errorf("%s: the hint %q suggests a PNG's name for a PDF", c.name, be.Hint)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "..", "escape.pdf")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused name left a file outside the output dir: %v", err)
		}
		for _, name := range []string{"report.png", "report", "downloads"} {
			if fi, err := os.Stat(filepath.Join(out, name)); err == nil && !fi.IsDir() {
				t.Errorf("a refused name left a file %s in the output dir", name)
			}
		}
	})
}
