package axtext

import (
	"encoding/json"

	"github.com/mafredri/cdp/protocol/accessibility"

	"github.com/browserpool/browserpool/internal/axdecode"
)

// DecodeNodes decodes a reply of Accessibility.getFullAXTree
// ({"nodes":[...]}) into Nodes: by internal/axdecode's one pass
// (LeanNodes, which reads only what a Node has) when it takes the reply
// (a page's tree runs to megabytes), else by encoding/json. Both give the
// same Nodes: axdecode takes only a reply whose every key it reads is one
// of the protocol's, as named, once. The Nodes share the raw values
// axdecode copied out.
func DecodeNodes(data []byte) ([]*Node, error) {
	if ax, ok := axdecode.LeanNodes(data); ok {
		return lean(ax), nil
	}
	var reply struct {
		Nodes []*Node `json:"nodes"`
	}
	if err := json.Unmarshal(data, &reply); err != nil {
		return nil, err
	}
	return reply.Nodes, nil
}

// lean makes Nodes of ax in a few allocations: one array each of the
// Nodes, their Values, their properties and their children's ids, which
// the Nodes' slices share (each capped at its own length). A list that is
// empty, not nil, in ax stays so, and nil ax gives nil.
func lean(ax []accessibility.AXNode) []*Node {
	if ax == nil {
		return nil // no "nodes" key
	}
	var values, props, ids int
	for i := range ax {
		a := &ax[i]
		for _, v := range []*accessibility.AXValue{a.Role, a.Name, a.Value} {
			if v != nil {
				values++
			}
		}
		props += len(a.Properties)
		ids += len(a.ChildIDs)
	}
	nodes := make([]Node, len(ax))
	vs := make([]Value, 0, values)
	ps := make([]Prop, 0, props)
	cs := make([]string, 0, ids)
	out := make([]*Node, len(ax))
	value := func(v *accessibility.AXValue) *Value {
		if v == nil {
			return nil
		}
		vs = append(vs, Value{Value: v.Value})
		return &vs[len(vs)-1]
	}
	for i := range ax {
		a, n := &ax[i], &nodes[i]
		n.NodeID, n.Ignored = string(a.NodeID), a.Ignored
		n.Role, n.Name, n.Value = value(a.Role), value(a.Name), value(a.Value)
		if a.Properties != nil {
			start := len(ps)
			for _, p := range a.Properties {
				ps = append(ps, Prop{Name: string(p.Name), Value: Value{Value: p.Value.Value}})
			}
			n.Props = ps[start:len(ps):len(ps)]
		}
		if a.ParentID != nil {
			n.ParentID = string(*a.ParentID)
		}
		if a.ChildIDs != nil {
			start := len(cs)
			for _, id := range a.ChildIDs {
				cs = append(cs, string(id))
			}
			n.ChildIDs = cs[start:len(cs):len(cs)]
		}
		if a.BackendDOMNodeID != nil {
			n.Backend = *a.BackendDOMNodeID
		}
		out[i] = n
	}
	return out
}
