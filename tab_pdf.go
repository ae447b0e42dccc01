// Room: PDF artifacts (Tab.PDF). No lock: the file goes through the
// session's artifact code (tab_artifacts.go), which creates it with
// O_EXCL inside the output dir.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/rpcc"
)

// Paper is a paper size for Tab.PDF.
type Paper string

// Paper sizes. The zero value means PaperLetter, Chromium's default.
const (
	PaperLetter  Paper = "Letter"  // 8.5 x 11 in
	PaperLegal   Paper = "Legal"   // 8.5 x 14 in
	PaperTabloid Paper = "Tabloid" // 11 x 17 in
	PaperA3      Paper = "A3"      // 297 x 420 mm
	PaperA4      Paper = "A4"      // 210 x 297 mm
	PaperA5      Paper = "A5"      // 148 x 210 mm
)

// paperInches holds each paper's width and height in inches (portrait).
var paperInches = map[Paper][2]float64{
	PaperLetter:  {8.5, 11},
	PaperLegal:   {8.5, 14},
	PaperTabloid: {11, 17},
	PaperA3:      {11.69, 16.54},
	PaperA4:      {8.27, 11.69},
	PaperA5:      {5.83, 8.27},
}

// PDFOptions configures Tab.PDF. The zero value prints the whole page on
// Letter paper, portrait, without background graphics, with a generated
// file name.
type PDFOptions struct {
	// Name is the file name inside the session's output dir, named as
	// ScreenshotOptions.Name is but ending in .pdf (another extension, or
	// none, is an error). Zero means a generated, collision-free name
	// ending in .pdf. An existing file of that name is an error.
	Name string
	// Paper is the paper size. Zero means PaperLetter.
	Paper Paper
	// Landscape turns the paper sideways.
	Landscape bool
	// Background prints background colours and images (off by default, as
	// in a browser's print dialog).
	Background bool
	// Scale scales the page's rendering, from 0.1 to 2. Zero means 1.
	Scale float64
	// PageRanges limits the pages printed, e.g. "1-3, 5" (an open end, "3-",
	// runs to the last page). Zero means all.
	PageRanges string
}

// PDF is a file written by Tab.PDF.
type PDF struct {
	SessionID string // the tab's session
	TabID     string // the tab's CDP target id
	Path      string // absolute path inside the session's output dir
	Bytes     int    // the file's size
}

// PDF prints the tab's page to a PDF file in the session's output dir,
// with the same naming and confinement as Tab.Screenshot, checked before
// the browser does any work: a name leaving the dir is an ErrPathEscapes
// error; a name too long, with a control character, not ending in .pdf,
// taking or inside one of the session's own dirs (its downloads dir, its
// recording's dir), under a file or already taken is ErrInvalidArgument,
// and so are an unknown paper size, a scale outside 0.1 to 2 and page
// ranges Chromium would refuse. Chromium
// prints PDFs only when headless: a headed browser (an attached one)
// answers with an ErrProtocol error.
func (t *Tab) PDF(ctx context.Context, opts PDFOptions) (res PDF, err error) {
	const op = "Tab.PDF"
	paper := opts.Paper
	if paper == "" {
		paper = PaperLetter
	}
	scale := opts.Scale
	if scale == 0 {
		scale = 1
	}
	args := fmt.Sprintf("name=%q paper=%s landscape=%v background=%v", opts.Name, paper, opts.Landscape, opts.Background)
	check := func() error {
		bad := func(detail, hint string) error {
			e := newError(op, ErrInvalidArgument, detail)
			e.Session, e.Tab, e.Hint = t.s.id, t.id, hint
			return e
		}
		if _, ok := paperInches[paper]; !ok {
			names := make([]string, 0, len(paperInches))
			for p := range paperInches {
				names = append(names, string(p))
			}
			slices.Sort(names)
			return bad(fmt.Sprintf("unknown paper size %q", opts.Paper), "use one of "+strings.Join(names, ", ")+" (or leave it empty for Letter)")
		}
		if math.IsNaN(scale) || scale < 0.1 || scale > 2 {
			return bad(fmt.Sprintf("scale %g is outside 0.1 to 2", opts.Scale), "leave Scale zero for 1, or give a value from 0.1 to 2")
		}
		if why := checkPageRanges(opts.PageRanges); why != "" {
			return bad(fmt.Sprintf("page ranges %q: %s", echo(opts.PageRanges), why), `give pages and ranges separated by commas, e.g. "1-3, 5" (pages count from 1, a range's start at most its end)`)
		}
		if opts.Name != "" {
			_, err := t.s.checkName(op, t.id, opts.Name, pdfKind, false)
			return err
		}
		return nil
	}
	err = t.act(ctx, op, "pdf", args, check, func(ctx context.Context, x *tabExt, _ *string) error {
		size := paperInches[paper]
		w, h := size[0], size[1]
		if opts.Landscape {
			w, h = h, w
		}
		pargs := page.NewPrintToPDFArgs().SetPaperWidth(w).SetPaperHeight(h).
			SetPrintBackground(opts.Background).SetScale(scale)
		if opts.PageRanges != "" {
			pargs.SetPageRanges(opts.PageRanges)
		}
		reply, err := invoke[page.PrintToPDFReply](ctx, t.direct, "Page.printToPDF", pargs)
		var re *rpcc.ResponseError
		if errors.As(err, &re) && strings.Contains(re.Message, "Page range exceeds page count") {
			e := newError(op, ErrInvalidArgument, fmt.Sprintf("page ranges %q name a page past the document's last", echo(opts.PageRanges)))
			e.Session, e.Tab, e.Err = t.s.id, t.id, err
			e.Hint = "print without PageRanges to see how many pages the document has, then give ranges within them"
			return e
		}
		if err != nil {
			return x.fail(op, ctx, "", err)
		}
		path, err := t.s.writeArtifact(op, t.id, opts.Name, pdfKind, ".pdf", false, reply.Data)
		if err != nil {
			return err
		}
		res = PDF{SessionID: t.s.id, TabID: t.id, Path: path, Bytes: len(reply.Data)}
		return nil
	})
	return res, err
}

// checkPageRanges says what is wrong with a PDFOptions.PageRanges, or "":
// comma-separated pages ("5") and ranges ("1-3", "3-", "-2"), counted from
// 1, a range's start at most its end, as Chromium accepts them.
func checkPageRanges(r string) string {
	if strings.TrimSpace(r) == "" {
		return ""
	}
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		return n, err == nil && n >= 1
	}
	for _, part := range strings.Split(r, ",") {
		from, to, isRange := strings.Cut(part, "-")
		if !isRange {
			if _, ok := num(part); !ok {
				return fmt.Sprintf("%q is not a page number from 1", strings.TrimSpace(part))
			}
			continue
		}
		a, b := 1, 0
		var ok bool
		if strings.TrimSpace(from) != "" {
			if a, ok = num(from); !ok {
				return fmt.Sprintf("%q does not start with a page number from 1", strings.TrimSpace(part))
			}
		}
		if strings.TrimSpace(to) != "" {
			if b, ok = num(to); !ok {
				return fmt.Sprintf("%q does not end with a page number from 1", strings.TrimSpace(part))
			}
			if a > b {
				return fmt.Sprintf("%q starts after it ends", strings.TrimSpace(part))
			}
		}
	}
	return ""
}
