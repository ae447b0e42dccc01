package browserpool_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/accessibility"
	"github.com/mafredri/cdp/rpcc"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/axdecode"
)

// axRichPage fills the page with what gives accessibility nodes every
// field: labels and descriptions by id (related nodes), name sources,
// values of each type, escaped and non-ASCII text, ignored nodes.
const axRichPage = `document.body.innerHTML = '<h1>Orders</h1><nav aria-label="main"><a href="/a">Home</a> <a href="/b" aria-describedby="hint">Help</a></nav><p id="hint">Opens the “help” page — in a new tab</p>' +
	'<form><label for="q">Search</label><input id="q" placeholder="name or id" value="ab\\"c"><span id="lbl">Quantity</span><input type="number" aria-labelledby="lbl" min="1" max="9" value="3">' +
	'<input type="checkbox" checked aria-label="Gift wrap"><select aria-label="Size"><option>S</option><option selected>M</option></select>' +
	'<textarea title="Notes" required>line1\nline2</textarea><input type="range" min="0" max="100" value="40" aria-valuetext="forty"><button disabled>Pay €10</button></form>' +
	'<img alt="Logo ✓"><table><caption>Items</caption><tr><th>Name</th></tr><tr><td>Tab\tbed</td></tr></table>' +
	'<div role="dialog" aria-modal="true" aria-labelledby="dt"><h2 id="dt">Confirm</h2><div role="alert" aria-live="assertive">Saved</div></div>' +
	'<ul><li aria-hidden="true">hidden</li><li>shown 😀</li></ul>'; 1`

func TestTheTabClientsAccessibilityCallsReturnWhatTheGeneratedClientReturnsOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	var one int
	if err := tab.Evaluate(ctx, axRichPage, &one); err != nil {
		t.Fatal(err)
	}
	ours, generated := tab.Client().Accessibility, browserpool.GeneratedAccessibility(tab)
	if err := ours.Enable(ctx); err != nil { // GetChildAXNodes and GetAXNodeAndAncestors need it
		t.Fatal(err)
	}

	raw, err := browserpool.MuxCall(ctx, tab, "Accessibility.getFullAXTree", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := axdecode.Nodes(raw); !ok {
		t.Fatalf("axdecode.Nodes left Chromium's full tree (%d bytes) to encoding/json: the one-pass decode is not in use", len(raw))
	}

	before, _ := browserpool.IdleSince(s)
	if _, err := ours.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs()); err != nil {
		t.Fatal(err)
	}
	if after, _ := browserpool.IdleSince(s); !after.After(before) {
		t.Errorf("GetFullAXTree through Tab.Client() left the session's last use, as idle reclaim reads it, at %v (was %v): it must count as use", after, before)
	}

	// compare makes call through the generated client, through
	// Tab.Client() and through the generated client again, and compares
	// the second with the first. If the two generated calls differ, the
	// page changed meanwhile, and it tries again (5 times at most).
	compare := func(name string, call func(cdp.Accessibility) (any, error)) any {
		t.Helper()
		for range 5 {
			want, err := call(generated)
			if err != nil {
				t.Errorf("%s through the generated client: %v", name, err)
				return nil
			}
			got, err := call(ours)
			if err != nil {
				t.Errorf("%s through Tab.Client(): %v", name, err)
				return nil
			}
			again, err := call(generated)
			if err != nil {
				t.Errorf("%s through the generated client: %v", name, err)
				return nil
			}
			if !cmp.Equal(want, again) {
				continue
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-generated client +Tab.Client()):\n%s", name, diff)
			}
			return got
		}
		t.Errorf("%s: the page changed between the two generated calls in each of 5 tries", name)
		return nil
	}
	full, _ := compare("GetFullAXTree", func(a cdp.Accessibility) (any, error) {
		return a.GetFullAXTree(ctx, accessibility.NewGetFullAXTreeArgs())
	}).(*accessibility.GetFullAXTreeReply)
	if full == nil {
		t.FailNow()
	}
	compare("GetFullAXTree with nil args", func(a cdp.Accessibility) (any, error) { return a.GetFullAXTree(ctx, nil) })

	var search, root accessibility.AXNode
	for _, n := range full.Nodes {
		switch {
		case n.Name != nil && string(n.Name.Value) == `"Search"` && n.BackendDOMNodeID != nil:
			search = n
		case n.ParentID == nil:
			root = n
		}
	}
	if search.BackendDOMNodeID == nil || root.BackendDOMNodeID == nil {
		t.Fatalf("the tree has no textbox named Search (%v) or no root (%v)", search.NodeID, root.NodeID)
	}
	for _, c := range []struct {
		name string
		call func(cdp.Accessibility) (any, error)
	}{
		{"GetPartialAXTree", func(a cdp.Accessibility) (any, error) {
			return a.GetPartialAXTree(ctx, accessibility.NewGetPartialAXTreeArgs().SetBackendNodeID(*search.BackendDOMNodeID).SetFetchRelatives(true))
		}},
		{"GetChildAXNodes", func(a cdp.Accessibility) (any, error) {
			return a.GetChildAXNodes(ctx, accessibility.NewGetChildAXNodesArgs(root.NodeID))
		}},
		{"GetAXNodeAndAncestors", func(a cdp.Accessibility) (any, error) {
			return a.GetAXNodeAndAncestors(ctx, accessibility.NewGetAXNodeAndAncestorsArgs().SetBackendNodeID(*search.BackendDOMNodeID))
		}},
		{"QueryAXTree", func(a cdp.Accessibility) (any, error) {
			return a.QueryAXTree(ctx, accessibility.NewQueryAXTreeArgs().SetBackendNodeID(*root.BackendDOMNodeID).SetRole("textbox"))
		}},
	} {
		compare(c.name, c.call)
	}

	// A call the browser refuses fails as through the generated client.
	missing := accessibility.NewGetPartialAXTreeArgs().SetBackendNodeID(987654321)
	_, errOurs := ours.GetPartialAXTree(ctx, missing)
	_, errGen := generated.GetPartialAXTree(ctx, missing)
	if errOurs == nil || errGen == nil {
		t.Fatalf("GetPartialAXTree of a node that does not exist: Tab.Client() %v, generated %v; want errors from both", errOurs, errGen)
	}
	if errOurs.Error() != errGen.Error() {
		t.Errorf("the refusal reads %q through Tab.Client(), %q through the generated client", errOurs, errGen)
	}
	var reOurs, reGen *rpcc.ResponseError
	if !errors.As(errOurs, &reOurs) || !errors.As(errGen, &reGen) {
		t.Fatalf("errors.As(*rpcc.ResponseError): Tab.Client() %v, generated %v; want both", reOurs, reGen)
	}
	if diff := cmp.Diff(reGen, reOurs); diff != "" {
		t.Errorf("the refusal's cause (-generated client +Tab.Client()):\n%s", diff)
	}
	if diff := cmp.Diff(cdp.ErrorCause(errGen), cdp.ErrorCause(errOurs)); diff != "" {
		t.Errorf("cdp.ErrorCause of the refusal (-generated client +Tab.Client()):\n%s", diff)
	}

	// Once the tab is closed, its calls fail, as the generated client's do.
	if err := s.CloseTab(ctx, tab.ID()); err != nil {
		t.Fatal(err)
	}
	_, errOurs = ours.GetFullAXTree(ctx, nil)
	_, errGen = generated.GetFullAXTree(ctx, nil)
	if errOurs == nil || errGen == nil {
		t.Errorf("GetFullAXTree on a closed tab: Tab.Client() %v, generated %v; want errors from both", errOurs, errGen)
	}
}
