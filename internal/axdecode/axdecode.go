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
