package browserpool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"

	"github.com/browserpool/browserpool/internal/axdecode"
	"github.com/browserpool/browserpool/internal/cdpmux"
)

// axClient is the Accessibility domain of a tab's generated client
// (Tab.Client): mafredri/cdp's own, except for the calls that return a
// list of nodes. Their replies run to megabytes on a large page (a full
// tree of 3,000 elements is 2.8 MB), and encoding/json, which the
// generated client decodes them with, checks the whole reply and then
// decodes it by reflection. These calls go through the tab's direct handle
// instead and decode the reply with internal/axdecode in one pass (or
// with encoding/json when axdecode leaves it to it), into the same types.
// They count as use, and fail, as the generated client's calls do (the
// mux's contract for direct calls), with an error of the same text and
// cause. No locks: a value, read-only.
type axClient struct {
	cdp.Accessibility
	d *cdpmux.Direct
}

// GetPartialAXTree is the generated client's, decoded by internal/axdecode.
func (a axClient) GetPartialAXTree(ctx context.Context, args *accessibility.GetPartialAXTreeArgs) (*accessibility.GetPartialAXTreeReply, error) {
	r := new(accessibility.GetPartialAXTreeReply)
	return r, axNodes(ctx, a.d, "GetPartialAXTree", "Accessibility.getPartialAXTree", args, r, &r.Nodes)
}

// GetFullAXTree is the generated client's, decoded by internal/axdecode.
func (a axClient) GetFullAXTree(ctx context.Context, args *accessibility.GetFullAXTreeArgs) (*accessibility.GetFullAXTreeReply, error) {
	r := new(accessibility.GetFullAXTreeReply)
	return r, axNodes(ctx, a.d, "GetFullAXTree", "Accessibility.getFullAXTree", args, r, &r.Nodes)
}

// GetAXNodeAndAncestors is the generated client's, decoded by
// internal/axdecode.
func (a axClient) GetAXNodeAndAncestors(ctx context.Context, args *accessibility.GetAXNodeAndAncestorsArgs) (*accessibility.GetAXNodeAndAncestorsReply, error) {
	r := new(accessibility.GetAXNodeAndAncestorsReply)
	return r, axNodes(ctx, a.d, "GetAXNodeAndAncestors", "Accessibility.getAXNodeAndAncestors", args, r, &r.Nodes)
}

// GetChildAXNodes is the generated client's, decoded by internal/axdecode.
func (a axClient) GetChildAXNodes(ctx context.Context, args *accessibility.GetChildAXNodesArgs) (*accessibility.GetChildAXNodesReply, error) {
	r := new(accessibility.GetChildAXNodesReply)
	return r, axNodes(ctx, a.d, "GetChildAXNodes", "Accessibility.getChildAXNodes", args, r, &r.Nodes)
}

// QueryAXTree is the generated client's, decoded by internal/axdecode.
func (a axClient) QueryAXTree(ctx context.Context, args *accessibility.QueryAXTreeArgs) (*accessibility.QueryAXTreeReply, error) {
	r := new(accessibility.QueryAXTreeReply)
	return r, axNodes(ctx, a.d, "QueryAXTree", "Accessibility.queryAXTree", args, r, &r.Nodes)
}

// axNodes calls method on d with args and decodes its reply into nodes,
// reply's only field; when axdecode leaves the reply to encoding/json,
// into reply. Its errors are the generated client's: op's call error, or
// the decoding error rpcc reports, as an opError.
func axNodes[A, R any](ctx context.Context, d *cdpmux.Direct, op, method string, args *A, reply *R, nodes *[]accessibility.AXNode) error {
	var params any // none for a nil args, as the generated client sends none
	if args != nil {
		params = args
	}
	res, err := d.InvokeRaw(ctx, method, params)
	if err != nil {
		return &opError{domain: "Accessibility", op: op, err: err}
	}
	if n, ok := axdecode.Nodes(res); ok {
		*nodes = n
		return nil
	}
	if err := json.Unmarshal(res, reply); err != nil {
		return &opError{domain: "Accessibility", op: op, err: fmt.Errorf("rpcc: decoding %s: %s", method, err.Error())}
	}
	return nil
}

// opError is the error of a call a generated client's domain makes
// through this package: the text of mafredri/cdp's own (an internal type),
// "cdp.Domain: Op: cause", with the cause behind Unwrap and Cause
// (errors.As, cdp.ErrorCause).
type opError struct {
	domain, op string
	err        error
}

func (e *opError) Error() string { return fmt.Sprintf("cdp.%s: %s: %s", e.domain, e.op, e.err.Error()) }

// Unwrap returns the cause.
func (e *opError) Unwrap() error { return e.err }

// Cause returns the cause (cdp.ErrorCause).
func (e *opError) Cause() error { return e.err }
