// Package axdecode decodes the reply of the Accessibility domain's calls
// that return nodes ({"nodes":[...]}: getFullAXTree, getPartialAXTree,
// getChildAXNodes, getAXNodeAndAncestors, queryAXTree) into mafredri/cdp's
// accessibility types in one pass over its bytes. encoding/json checks the
// whole reply first and then decodes it by reflection; on a page's tree of
// a few megabytes that is the larger part of the call's time in the
// client (BenchmarkNodes).
//
// It decodes what Chromium sends. For anything else (a null, a repeated
// key, a key that differs from a field's name only in case, an escaped
// key, a number that is not a plain integer where an integer goes, a
// value of the wrong kind, values nested more than 64 deep, a malformed
// reply) Nodes reports false and the
// caller decodes the reply with json.Unmarshal. So whenever Nodes
// succeeds, its result is what json.Unmarshal gives for the same bytes
// (FuzzNodes checks it).
//
// Strings and raw values are copied out of the reply, as encoding/json
// copies them; the reply is not kept. Small values (an AXValue, a string
// or a bool behind a pointer, a raw value) are taken from blocks of a few
// dozen, so a part of the result kept alive keeps its block alive, a few
// kilobytes at most. No locks, no goroutines.
package axdecode

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool/internal/jsonscan"
)

// maxDepth bounds how deeply values nest in value sources (an AXValue's
// sources hold AXValues); deeper replies go to encoding/json.
const maxDepth = 64

// Nodes decodes data, a {"nodes":[...]} reply, and reports whether it
// could: false means "decode it with json.Unmarshal instead", never that
// data is wrong. An empty list gives an empty, non-nil slice, as
// encoding/json gives; an absent one gives nil.
func Nodes(data []byte) ([]accessibility.AXNode, bool) {
	return decode(&decoder{data: data})
}

// LeanNodes is Nodes for a reader of the fields internal/axtext's Node
// has: a node's id, ignored flag, role, name and value (of each, only the
// raw value), properties (their names and raw values), parent, children
// and DOM node. The rest (name sources, related nodes, value types, the
// Chrome role, the description, ignored reasons, the frame) is checked as
// valid JSON and skipped, as encoding/json skips keys a type lacks; those
// fields are left zero.
func LeanNodes(data []byte) ([]accessibility.AXNode, bool) {
	return decode(&decoder{data: data, lean: true})
}

func decode(d *decoder) ([]accessibility.AXNode, bool) {
	data := d.data
	var nodes []accessibility.AXNode
	var seen uint32
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "nodes":
			return d.once(&seen, 1) && d.nodeList(&nodes)
		}
		return d.unknown(key, replyKeys)
	})
	if !ok || jsonscan.SkipWS(data, d.i) != len(data) {
		return nil, false
	}
	return nodes, true
}

// The fields' JSON names of each type the decoder reads: a key that is not
// one of them but equals one of them ignoring case is left to
// encoding/json (which would decode it into that field).
var (
	replyKeys   = []string{"nodes"}
	nodeKeys    = []string{"nodeId", "ignored", "ignoredReasons", "role", "chromeRole", "name", "description", "value", "properties", "parentId", "childIds", "backendDOMNodeId", "frameId"}
	valueKeys   = []string{"type", "value", "relatedNodes", "sources"}
	propKeys    = []string{"name", "value"}
	relatedKeys = []string{"backendDOMNodeId", "idref", "text"}
	sourceKeys  = []string{"type", "value", "attribute", "attributeValue", "superseded", "nativeSource", "nativeSourceValue", "invalid", "invalidReason"}
)

// decoder reads data from i on. Its methods report false at anything
// they leave to encoding/json, with i then meaningless.
type decoder struct {
	data  []byte
	i     int
	depth int  // AXValues being decoded, one inside another
	lean  bool // LeanNodes: skip what axtext does not read

	// Blocks the result's small values are taken from (see blockLen), so
	// that a tree of thousands of nodes costs thousands of allocations
	// fewer: each value has its own element, and a block is never
	// appended to once it is full.
	values []accessibility.AXValue
	ids    []accessibility.AXNodeID
	nums   []dom.BackendNodeID
	strs   []string
	bools  []bool
	raws   []byte // raw values, rawBlock bytes a block

	// The lists being read, for list.
	propStack    []accessibility.AXProperty
	relatedStack []accessibility.AXRelatedNode
	idStack      []accessibility.AXNodeID
	sourceStacks [maxDepth][]accessibility.AXValueSource // by depth - 1 (value keeps depth under maxDepth)
}

// blockLen is how many values of a kind one allocation holds, and
// rawBlock how many bytes of raw values: a part of the result that is
// kept keeps its block alive, so blocks stay small.
const (
	blockLen = 32
	rawBlock = 2048
)

// take returns the next element of the block *b, starting a new block when
// it is full.
func take[T any](b *[]T) *T {
	if len(*b) == cap(*b) {
		*b = make([]T, 0, blockLen)
	}
	*b = (*b)[:len(*b)+1]
	return &(*b)[len(*b)-1]
}

// object reads an object, calling field for each key (which aliases data)
// with i at its value; field reads the value.
func (d *decoder) object(field func(key []byte) bool) bool {
	if !d.expect('{') {
		return false
	}
	if d.peek() == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.key()
		if !ok || !field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// key reads a key and its colon, leaving i at the value. An escaped or
// non-ASCII key is refused: encoding/json matches keys to fields by a
// folding that such a key could meet.
func (d *decoder) key() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	n := bytes.IndexByte(d.data[start:], '"')
	if n < 0 || !jsonscan.PlainASCII(d.data[start:start+n]) {
		return nil, false
	}
	end := start + n
	d.i = end + 1
	if !d.expect(':') {
		return nil, false
	}
	d.i = jsonscan.SkipWS(d.data, d.i)
	return d.data[start:end], true
}

// unknown skips the value of a key the type has no field for, once it is
// sure encoding/json would skip it too.
func (d *decoder) unknown(key []byte, fields []string) bool {
	for _, f := range fields {
		if strings.EqualFold(string(key), f) {
			return false
		}
	}
	return d.skip()
}

// skip checks the value at i as valid JSON and moves past it.
func (d *decoder) skip() bool {
	end, ok := jsonscan.SkipValid(d.data, d.i)
	d.i = end
	return ok
}

// once marks the field bit in seen, and is false if it was marked: a
// repeated key is left to encoding/json (which merges or replaces).
func (d *decoder) once(seen *uint32, bit uint32) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// expect consumes c, after any whitespace.
func (d *decoder) expect(c byte) bool {
	if d.peek() != c {
		return false
	}
	d.i++
	return true
}

// peek returns the next byte after any whitespace (moving i to it), or 0
// at the end.
func (d *decoder) peek() byte {
	d.i = jsonscan.SkipWS(d.data, d.i)
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// array reads an array, calling elem with i at each element.
func (d *decoder) array(elem func() bool) bool {
	if !d.expect('[') {
		return false
	}
	if d.peek() == ']' {
		d.i++
		return true
	}
	for {
		d.i = jsonscan.SkipWS(d.data, d.i)
		if !elem() {
			return false
		}
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string. Plain ASCII is copied out; anything else (escapes,
// other bytes) is decoded by encoding/json, so it reads the same.
// Chromium's enumerations (value types, property names) come back as the
// constants themselves, with no allocation.
func (d *decoder) str() (string, bool) {
	if d.i >= len(d.data) || d.data[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	if n := bytes.IndexByte(d.data[start:], '"'); n >= 0 && jsonscan.PlainASCII(d.data[start:start+n]) {
		d.i = start + n + 1
		raw := d.data[start : start+n]
		if s, ok := intern(raw); ok {
			return s, true
		}
		return string(raw), true
	}
	end, ok := jsonscan.ValidString(d.data, d.i)
	if !ok {
		return "", false
	}
	s, ok := jsonscan.String(d.data[d.i:end])
	d.i = end
	return s, ok
}

// known holds, sorted, the strings Chromium repeats in every node: value
// types, property names, ignored reasons, value source types, native
// sources and the attributes a name is looked for in. An array of
// constants: nothing to build when a program starts.
var known = [...]string{
	"actions", "activeModalDialog", "activedescendant", "alt", "aria-describedby", "aria-description",
	"aria-label", "aria-labelledby", "aria-placeholder", "ariaHiddenElement", "ariaHiddenSubtree",
	"atomic", "attribute", "autocomplete", "boolean", "booleanOrUndefined", "busy", "checked",
	"computedString", "contents", "controls", "describedby", "description", "details", "disabled",
	"domRelation", "editable", "emptyAlt", "emptyText", "errormessage", "expanded", "figcaption",
	"flowto", "focusable", "focused", "hasPopup", "hidden", "hiddenRoot", "idref", "idrefList",
	"implicit", "inertElement", "inertSubtree", "integer", "internalRole", "invalid", "keyshortcuts",
	"label", "labelContainer", "labelfor", "labelledby", "labelwrapped", "legend", "level", "live",
	"modal", "multiline", "multiselectable", "node", "nodeList", "notRendered", "notVisible",
	"number", "orientation", "other", "owns", "placeholder", "presentationalRole", "pressed",
	"probablyPresentational", "readonly", "relatedElement", "relevant", "required", "role",
	"roledescription", "root", "rubyannotation", "selected", "settable", "string", "style",
	"tablecaption", "title", "token", "tokenList", "tristate", "uninteresting", "url",
	"valueUndefined", "valuemax", "valuemin", "valuetext",
}

// intern returns the constant in known that equals b, if there is one.
func intern(b []byte) (string, bool) {
	lo, hi := 0, len(known)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch k := known[m]; {
		case k == string(b):
			return k, true
		case k < string(b):
			lo = m + 1
		default:
			hi = m
		}
	}
	return "", false
}

// boolean reads true or false.
func (d *decoder) boolean() (bool, bool) {
	rest := d.data[d.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		d.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// integer reads a number written as an integer that fits an int, as
// encoding/json reads one into an int; a number with a fraction or an
// exponent stops at the '.' or 'e', which the caller refuses.
func (d *decoder) integer() (int, bool) {
	start := d.i
	end := start
	for end < len(d.data) {
		c := d.data[end]
		if c != '-' && (c < '0' || c > '9') {
			break
		}
		end++
	}
	num := d.data[start:end] // a fraction or exponent after it fails the caller's delimiter check
	if !jsonscan.ValidNumber(num) {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 0)
	if err != nil {
		return 0, false
	}
	d.i = end
	return int(n), true
}

// raw copies out one whole value (never null: encoding/json hands a
// json.RawMessage the literal, which this decoder leaves to it).
func (d *decoder) raw() (json.RawMessage, bool) {
	if d.i < len(d.data) && d.data[d.i] == 'n' {
		return nil, false
	}
	end, ok := jsonscan.SkipValid(d.data, d.i)
	if !ok {
		return nil, false
	}
	raw := d.data[d.i:end]
	d.i = end
	if len(raw) > rawBlock/8 {
		return append(json.RawMessage(nil), raw...), true
	}
	if cap(d.raws)-len(d.raws) < len(raw) {
		d.raws = make([]byte, 0, rawBlock)
	}
	n := len(d.raws)
	d.raws = append(d.raws, raw...)
	return d.raws[n:len(d.raws):len(d.raws)], true
}

// nodeList reads the nodes into a slice made for all of them at once: a
// tree's nodes run to megabytes, and growing the slice as they come would
// allocate several times that. Each node starts with its "nodeId" key,
// which a string cannot hold unescaped, so counting the key bounds the
// count from above (a node with its keys in another order, or spaces,
// only makes the slice grow).
func (d *decoder) nodeList(nodes *[]accessibility.AXNode) bool {
	list := make([]accessibility.AXNode, 0, bytes.Count(d.data[d.i:], []byte(`"nodeId":`)))
	ok := d.array(func() bool {
		list = append(list, accessibility.AXNode{})
		return d.node(&list[len(list)-1])
	})
	*nodes = list
	return ok
}

func (d *decoder) node(n *accessibility.AXNode) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "nodeId":
			s, ok := d.str()
			n.NodeID = accessibility.AXNodeID(s)
			return d.once(&seen, 1<<0) && ok
		case "ignored":
			b, ok := d.boolean()
			n.Ignored = b
			return d.once(&seen, 1<<1) && ok
		case "ignoredReasons":
			if d.lean {
				return d.skip()
			}
			return d.once(&seen, 1<<2) && d.props(&n.IgnoredReasons)
		case "role":
			return d.once(&seen, 1<<3) && d.valuePtr(&n.Role)
		case "chromeRole":
			if d.lean {
				return d.skip()
			}
			return d.once(&seen, 1<<4) && d.valuePtr(&n.ChromeRole)
		case "name":
			return d.once(&seen, 1<<5) && d.valuePtr(&n.Name)
		case "description":
			if d.lean {
				return d.skip()
			}
			return d.once(&seen, 1<<6) && d.valuePtr(&n.Description)
		case "value":
			return d.once(&seen, 1<<7) && d.valuePtr(&n.Value)
		case "properties":
			return d.once(&seen, 1<<8) && d.props(&n.Properties)
		case "parentId":
			s, ok := d.str()
			n.ParentID = take(&d.ids)
			*n.ParentID = accessibility.AXNodeID(s)
			return d.once(&seen, 1<<9) && ok
		case "childIds":
			ids, ok := list(d, &d.idStack, func(id *accessibility.AXNodeID) bool {
				s, ok := d.str()
				*id = accessibility.AXNodeID(s)
				return ok
			})
			n.ChildIDs = ids
			return d.once(&seen, 1<<10) && ok
		case "backendDOMNodeId":
			v, ok := d.integer()
			n.BackendDOMNodeID = take(&d.nums)
			*n.BackendDOMNodeID = dom.BackendNodeID(v)
			return d.once(&seen, 1<<11) && ok
		case "frameId":
			if d.lean {
				return d.skip()
			}
			s, ok := d.str()
			id := page.FrameID(s)
			n.FrameID = &id
			return d.once(&seen, 1<<12) && ok
		}
		return d.unknown(key, nodeKeys)
	})
}

// props reads a list of properties (a node's properties, or its ignored
// reasons).
func (d *decoder) props(ps *[]accessibility.AXProperty) bool {
	var ok bool
	*ps, ok = list(d, &d.propStack, func(p *accessibility.AXProperty) bool {
		var seen uint32
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "name":
				s, ok := d.str()
				p.Name = accessibility.AXPropertyName(s)
				return d.once(&seen, 1<<0) && ok
			case "value":
				return d.once(&seen, 1<<1) && d.value(&p.Value)
			}
			return d.unknown(key, propKeys)
		})
	})
	return ok
}

// list reads an array of T, each element decoded in place by elem, into
// an exactly sized slice (empty, not nil, for []): the elements gather in
// *stack, which the decoder keeps for the next list of T, so that a list
// costs one allocation. elem must not read a list of T itself (the stack
// would move under it): sources, which nest, do not use it.
func list[T any](d *decoder, stack *[]T, elem func(*T) bool) ([]T, bool) {
	start := len(*stack)
	ok := d.array(func() bool {
		var zero T
		*stack = append(*stack, zero)
		return elem(&(*stack)[len(*stack)-1])
	})
	out := make([]T, len(*stack)-start)
	copy(out, (*stack)[start:])
	clear((*stack)[start:]) // the stack keeps no part of the result alive
	*stack = (*stack)[:start]
	return out, ok
}

// valuePtr reads an AXValue into a new one.
func (d *decoder) valuePtr(v **accessibility.AXValue) bool {
	*v = take(&d.values)
	return d.value(*v)
}

func (d *decoder) value(v *accessibility.AXValue) bool {
	if d.depth >= maxDepth {
		return false
	}
	d.depth++
	var seen uint32
	ok := d.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			if d.lean {
				return d.skip()
			}
			s, ok := d.str()
			v.Type = accessibility.AXValueType(s)
			return d.once(&seen, 1<<0) && ok
		case "value":
			r, ok := d.raw()
			v.Value = r
			return d.once(&seen, 1<<1) && ok
		case "relatedNodes":
			if d.lean {
				return d.skip()
			}
			return d.once(&seen, 1<<2) && d.related(&v.RelatedNodes)
		case "sources":
			if d.lean {
				return d.skip()
			}
			return d.once(&seen, 1<<3) && d.sources(&v.Sources)
		}
		return d.unknown(key, valueKeys)
	})
	d.depth--
	return ok
}

func (d *decoder) related(rs *[]accessibility.AXRelatedNode) bool {
	var ok bool
	*rs, ok = list(d, &d.relatedStack, func(r *accessibility.AXRelatedNode) bool {
		var seen uint32
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "backendDOMNodeId":
				v, ok := d.integer()
				r.BackendDOMNodeID = dom.BackendNodeID(v)
				return d.once(&seen, 1<<0) && ok
			case "idref":
				return d.once(&seen, 1<<1) && d.strPtr(&r.IDRef)
			case "text":
				return d.once(&seen, 1<<2) && d.strPtr(&r.Text)
			}
			return d.unknown(key, relatedKeys)
		})
	})
	return ok
}

// sources reads the sources of the AXValue at depth d.depth: each depth
// has a stack of its own for list, since a source's values have sources.
func (d *decoder) sources(ss *[]accessibility.AXValueSource) bool {
	var ok bool
	*ss, ok = list(d, &d.sourceStacks[d.depth-1], func(s *accessibility.AXValueSource) bool {
		var seen uint32
		return d.object(func(key []byte) bool {
			switch string(key) {
			case "type":
				t, ok := d.str()
				s.Type = accessibility.AXValueSourceType(t)
				return d.once(&seen, 1<<0) && ok
			case "value":
				return d.once(&seen, 1<<1) && d.valuePtr(&s.Value)
			case "attribute":
				return d.once(&seen, 1<<2) && d.strPtr(&s.Attribute)
			case "attributeValue":
				return d.once(&seen, 1<<3) && d.valuePtr(&s.AttributeValue)
			case "superseded":
				return d.once(&seen, 1<<4) && d.boolPtr(&s.Superseded)
			case "nativeSource":
				t, ok := d.str()
				s.NativeSource = accessibility.AXValueNativeSourceType(t)
				return d.once(&seen, 1<<5) && ok
			case "nativeSourceValue":
				return d.once(&seen, 1<<6) && d.valuePtr(&s.NativeSourceValue)
			case "invalid":
				return d.once(&seen, 1<<7) && d.boolPtr(&s.Invalid)
			case "invalidReason":
				return d.once(&seen, 1<<8) && d.strPtr(&s.InvalidReason)
			}
			return d.unknown(key, sourceKeys)
		})
	})
	return ok
}

func (d *decoder) strPtr(p **string) bool {
	s, ok := d.str()
	*p = take(&d.strs)
	**p = s
	return ok
}

func (d *decoder) boolPtr(p **bool) bool {
	b, ok := d.boolean()
	*p = take(&d.bools)
	**p = b
	return ok
}
