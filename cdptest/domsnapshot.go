// Room: DOMSnapshot.captureSnapshot of a loaded fake page: its DOM as
// flat tables, without layout. A pure function of the page, called with
// Browser.mu held, as every built-in is.

package cdptest

import (
	"encoding/json"
	"strconv"
)

// The backend node ids of the parts of a fake page's document that are
// not its elements: the document (the accessibility tree's root web area
// names it) and its html and body elements. A target numbers its
// elements after them.
const (
	docNodeID = iota + 1
	htmlNodeID
	bodyNodeID
	reservedNodeIDs = bodyNodeID
)

// snapNodes is a document's nodes in DOMSnapshot.captureSnapshot's
// reply (NodeTreeSnapshot): one entry per node in each list, in document
// order; strings are indexes into the reply's strings table, -1 for an
// empty one.
type snapNodes struct {
	Parent    []int    `json:"parentIndex"`
	Type      []int    `json:"nodeType"`
	Name      []int    `json:"nodeName"`
	Value     []int    `json:"nodeValue"`
	Backend   []int    `json:"backendNodeId"`
	Attrs     [][]int  `json:"attributes"` // name, value, name, value…
	Clickable rareBool `json:"isClickable"`
	Checked   rareBool `json:"inputChecked"`
}

// rareBool is the indexes of the nodes a flag is true of
// (RareBooleanData).
type rareBool struct {
	Index []int `json:"index"`
}

// captureSnapshot answers DOMSnapshot.captureSnapshot from the page: one
// document, with its document node, html and body and the page's rendered
// elements (those its accessibility tree has, with the same backend node
// ids) under their HTML tags and attributes (see Element.tag). The fake
// has no CSS layout to report: the layout and text boxes are empty, no
// node is clickable by a listener, and no text nodes, head or hidden
// elements are listed. computedStyles is required, as in Chromium, and
// its styles are not reported.
func (b *Browser) captureSnapshot(s *session, params json.RawMessage) outcome {
	var p struct {
		Styles *[]string `json:"computedStyles"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if p.Styles == nil {
		return outcome{err: errInvalidParams}
	}
	pg := s.target.page
	var strs []string
	index := map[string]int{}
	str := func(v string) int {
		if v == "" {
			return -1 // Chromium's index of an empty string
		}
		i, ok := index[v]
		if !ok {
			i = len(strs)
			index[v] = i
			strs = append(strs, v)
		}
		return i
	}
	n := snapNodes{Attrs: [][]int{}, Clickable: rareBool{Index: []int{}}, Checked: rareBool{Index: []int{}}}
	add := func(parent, typ int, name string, backend int, attrs []string) int {
		a := []int{}
		for _, v := range attrs {
			a = append(a, str(v))
		}
		n.Parent = append(n.Parent, parent)
		n.Type = append(n.Type, typ)
		n.Name = append(n.Name, str(name))
		n.Value = append(n.Value, -1)
		n.Backend = append(n.Backend, backend)
		n.Attrs = append(n.Attrs, a)
		return len(n.Backend) - 1
	}
	doc := add(-1, 9, "#document", docNodeID, nil)
	html := add(doc, 1, "HTML", htmlNodeID, nil)
	body := add(html, 1, "BODY", bodyNodeID, nil)
	var walk func(els []*Element, parent int)
	walk = func(els []*Element, parent int) {
		for _, e := range els {
			if e.Hidden {
				continue
			}
			name, attrs := e.tag()
			i := add(parent, 1, name, pg.idOf(e), attrs)
			if (e.kind() == "checkbox" || e.kind() == "radio") && e.Checked {
				n.Checked.Index = append(n.Checked.Index, i)
			}
			walk(e.Children, i)
		}
	}
	walk(pg.Body, body)
	document := map[string]any{
		"documentURL":     str(pg.URL),
		"title":           str(pg.docTitle()),
		"baseURL":         str(pg.URL),
		"contentLanguage": -1,
		"encodingName":    str("UTF-8"),
		"publicId":        -1,
		"systemId":        -1,
		"frameId":         str(s.target.id),
		"nodes":           n,
		"layout": map[string]any{
			"nodeIndex": []int{}, "styles": [][]int{}, "bounds": [][]float64{}, "text": []int{},
			"stackingContexts": rareBool{Index: []int{}},
		},
		"textBoxes":     map[string]any{"layoutIndex": []int{}, "bounds": [][]float64{}, "start": []int{}, "length": []int{}},
		"scrollOffsetX": 0,
		"scrollOffsetY": pg.scrollY,
	}
	if strs == nil {
		strs = []string{}
	}
	return outcome{result: map[string]any{"documents": []any{document}, "strings": strs}}
}

// fileStatus is what Chromium shows, and its accessibility tree gives as
// the value, of a file input with these files chosen (base names).
func fileStatus(files []string) string {
	switch len(files) {
	case 0:
		return "No file chosen"
	case 1:
		return files[0]
	}
	return strconv.Itoa(len(files)) + " files"
}
