// Room: a loaded fake page's layout, accessibility tree and pixels. Pure
// functions of the page, called with Browser.mu held; no lock of their own.

package cdptest

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The fake layout: every rendered element is a row of the page, in
// document order, rowH apart; a container spans its children's rows.
const (
	margin = 8
	rowH   = 40
	boxH   = 30
	boxW   = 300
)

type box struct{ x, y, w, h float64 }

// layout returns the box of every rendered element, in page (document)
// coordinates.
func (p *Page) layout() map[*Element]box {
	boxes := make(map[*Element]box)
	row := 0
	var walk func(els []*Element)
	walk = func(els []*Element) {
		for _, e := range els {
			if e.Hidden {
				continue
			}
			first := row
			row++
			walk(e.Children)
			boxes[e] = box{x: margin, y: float64(margin + rowH*first), w: boxW, h: float64(rowH*(row-first-1) + boxH)}
		}
	}
	walk(p.Body)
	return boxes
}

// size is the document's size: at least the viewport.
func (p *Page) size() (float64, float64) {
	rows := 0
	walkElements(p.Body, func(e *Element) bool {
		rows++
		return true
	})
	vw, vh := p.viewport()
	return vw, max(vh, float64(2*margin+rowH*rows))
}

func (p *Page) scrollTo(y float64) {
	_, h := p.size()
	_, vh := p.viewport()
	p.scrollY = math.Round(max(0, min(y, h-vh)))
}

// at returns the innermost rendered element at a point of the document, or
// nil.
func (p *Page) at(x, y float64) *Element {
	var hit *Element
	boxes := p.layout()
	walkElements(p.Body, func(e *Element) bool {
		if b, ok := boxes[e]; ok && x >= b.x && x < b.x+b.w && y >= b.y && y < b.y+b.h {
			hit = e
		}
		return true
	})
	return hit
}

// has reports whether el is in the page.
func (p *Page) has(el *Element) bool {
	found := false
	walkElements(p.Body, func(e *Element) bool {
		found = e == el
		return !found
	})
	return found
}

// idOf returns el's backend node id, numbering it the first time.
func (p *Page) idOf(el *Element) int {
	if el.backend == 0 {
		*p.nextID++
		el.backend = *p.nextID
	}
	return el.backend
}

// byBackend returns the element of the page with this backend id, or nil.
func (p *Page) byBackend(id int) *Element {
	var found *Element
	if id == 0 {
		return nil
	}
	walkElements(p.Body, func(e *Element) bool {
		if e.backend == id {
			found = e
		}
		return found == nil
	})
	return found
}

// axNode is one node of Accessibility.getFullAXTree's reply.
type axNode struct {
	NodeID   string   `json:"nodeId"`
	Ignored  bool     `json:"ignored"`
	Role     axValue  `json:"role"`
	Name     *axValue `json:"name,omitempty"`
	Value    *axValue `json:"value,omitempty"`
	Props    []axProp `json:"properties,omitempty"`
	ParentID string   `json:"parentId,omitempty"`
	ChildIDs []string `json:"childIds"`
	Backend  int      `json:"backendDOMNodeId,omitempty"`
	FrameID  string   `json:"frameId,omitempty"`
}

type axValue struct {
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type axProp struct {
	Name  string  `json:"name"`
	Value axValue `json:"value"`
}

// axTree is the page's accessibility tree, as Chrome reports it: the root
// web area named by the title, then every rendered element with its role,
// name, value and states, and the text inside it.
func (p *Page) axTree(frameID string) []*axNode {
	var nodes []*axNode
	add := func(n *axNode, parent *axNode) *axNode {
		n.NodeID = strconv.Itoa(len(nodes) + 1)
		n.ChildIDs = []string{}
		if parent != nil {
			n.ParentID = parent.NodeID
			parent.ChildIDs = append(parent.ChildIDs, n.NodeID)
		}
		nodes = append(nodes, n)
		return n
	}
	str := func(s string) *axValue { return &axValue{Type: "computedString", Value: s} }
	prop := func(name, typ string, v any) axProp { return axProp{Name: name, Value: axValue{Type: typ, Value: v}} }
	root := add(&axNode{Role: axValue{Type: "internalRole", Value: "RootWebArea"}, Name: str(p.docTitle()), Backend: docNodeID, FrameID: frameID,
		Props: []axProp{prop("focusable", "booleanOrUndefined", true), prop("focused", "booleanOrUndefined", p.focus == nil), prop("url", "string", p.URL)}}, nil)
	text := func(s string, parent *axNode) {
		if s != "" {
			add(&axNode{Role: axValue{Type: "internalRole", Value: "StaticText"}, Name: str(s)}, parent)
		}
	}
	var walk func(els []*Element, parent *axNode)
	walk = func(els []*Element, parent *axNode) {
		for _, e := range els {
			if e.Hidden {
				continue
			}
			n := &axNode{Role: axValue{Type: "role", Value: e.Role}, Backend: p.idOf(e)}
			if e.Name != "" || e.Role != "generic" {
				n.Name = str(e.Name)
			}
			var props []axProp
			interactive := e.kind() != "" || e.Role == "link"
			if interactive {
				props = append(props, prop("focusable", "booleanOrUndefined", true))
			}
			if p.focus == e {
				props = append(props, prop("focused", "booleanOrUndefined", true))
			}
			switch {
			case e.Role == "textbox" || e.Role == "searchbox" || e.Role == "combobox":
				v := e.Value
				if e.Secret {
					v = strings.Repeat("•", len([]rune(v)))
				}
				n.Value = &axValue{Type: "string", Value: v}
			case e.kind() == "file":
				// Chromium's text beside the button: the chosen file.
				n.Value = &axValue{Type: "string", Value: fileStatus(e.Files)}
			}
			if e.kind() == "select" && !e.Multiple {
				props = append(props, prop("expanded", "booleanOrUndefined", false))
			}
			if e.kind() == "checkbox" || e.kind() == "radio" {
				props = append(props, prop("checked", "tristate", strconv.FormatBool(e.Checked)))
			}
			if e.Disabled {
				props = append(props, prop("disabled", "boolean", true))
			}
			if e.Required {
				props = append(props, prop("required", "boolean", true))
			}
			if e.ReadOnly {
				props = append(props, prop("readonly", "boolean", true))
			}
			if e.Role == "heading" {
				props = append(props, prop("level", "integer", max(e.Level, 1)))
			}
			if e.Role == "link" {
				props = append(props, prop("url", "string", resolveURL(p.URL, e.Href)))
			}
			n.Props = props
			add(n, parent)
			switch {
			case e.kind() == "select" && e.Multiple:
				// A list box shows its options, each one to click, the
				// chosen ones selected.
				chosen := strings.Split(e.Value, ",")
				for _, o := range e.Options {
					add(&axNode{Role: axValue{Type: "role", Value: "option"}, Name: str(o),
						Props: []axProp{prop("selected", "booleanOrUndefined", slices.Contains(chosen, o))}}, n)
				}
			case e.kind() == "select":
				popup := add(&axNode{Role: axValue{Type: "role", Value: "MenuListPopup"}, Name: str("")}, n)
				for _, o := range e.Options {
					sel := o == e.Value
					add(&axNode{Role: axValue{Type: "role", Value: "option"}, Name: str(o),
						Props: []axProp{prop("selected", "booleanOrUndefined", sel)}}, popup)
				}
			case n.Value != nil:
			case e.kind() == "checkbox" || e.kind() == "radio" || e.kind() == "file":
			default:
				text(e.Name, n)
			}
			walk(e.Children, n)
		}
	}
	walk(p.Body, root)
	return nodes
}

// screenshotOf draws a clip of a page at clipW×clipH CSS pixels, scaled, as
// a PNG or JPEG: a white page with a grey box per rendered element. The
// PNG is two-colour (1 bit a pixel) so that it stays small and cheap even
// under the race detector.
func screenshotOf(boxes []box, format string, quality int, clipX, clipY, clipW, clipH, scale float64) ([]byte, error) {
	w, h := max(int(clipW*scale+0.5), 1), max(int(clipH*scale+0.5), 1)
	const grey = 1 // index 0 is white
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Gray{0xff}, color.Gray{0xdd}})
	for _, bx := range boxes {
		r := image.Rect(int((bx.x-clipX)*scale), int((bx.y-clipY)*scale), int((bx.x+bx.w-clipX)*scale), int((bx.y+boxH-clipY)*scale)).Intersect(img.Bounds())
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := img.Pix[y*img.Stride+r.Min.X : y*img.Stride+r.Max.X]
			for i := range row {
				row[i] = grey
			}
		}
	}
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		if quality <= 0 {
			quality = 80
		}
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	return buf.Bytes(), err
}

// getFullAXTree answers Accessibility.getFullAXTree from the page.
func (b *Browser) getFullAXTree(s *session, params json.RawMessage) outcome {
	var p struct {
		FrameID string `json:"frameId"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if p.FrameID != "" && p.FrameID != s.target.id {
		return outcome{err: &Error{Code: -32000, Message: "Frame with the given frameId is not found."}}
	}
	return outcome{result: map[string]any{"nodes": s.target.page.axTree(s.target.id)}}
}

// captureScreenshot answers Page.captureScreenshot; the image is encoded
// after the lock is released.
func (b *Browser) captureScreenshot(s *session, params json.RawMessage) outcome {
	var p struct {
		Format  string `json:"format"`
		Quality int    `json:"quality"`
		Clip    *struct {
			X, Y, Width, Height, Scale float64
		} `json:"clip"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	switch p.Format {
	case "", "png", "jpeg":
	default:
		return outcome{err: &Error{Code: -32000, Message: "cdptest: Page.captureScreenshot supports png and jpeg, not " + p.Format}}
	}
	pg := s.target.page
	vw, vh := pg.viewport()
	x, y, w, h, scale := 0.0, pg.scrollY, vw, vh, 1.0
	if c := p.Clip; c != nil {
		x, y, w, h, scale = c.X, c.Y, c.Width, c.Height, c.Scale
		if scale <= 0 {
			scale = 1
		}
	}
	// Chromium captures in device pixels: the clip's scale times the
	// device scale factor (Emulation.setDeviceMetricsOverride).
	if dsf := s.target.dsf; dsf > 0 {
		scale *= dsf
	}
	// A copy of the layout, so that the encoding needs no lock.
	var boxes []box
	for _, bx := range pg.layout() {
		boxes = append(boxes, bx)
	}
	return outcome{later: func() (any, *Error) {
		data, err := screenshotOf(boxes, p.Format, p.Quality, x, y, w, h, scale)
		if err != nil {
			return nil, &Error{Code: -32000, Message: "cdptest: encoding the screenshot: " + err.Error()}
		}
		return map[string]any{"data": data}, nil
	}}
}
