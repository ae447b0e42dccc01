// Room: the elements a page makes clickable without a role that says so,
// read for a snapshot from DOMSnapshot.captureSnapshot: those with a click
// listener (isClickable) and the outermost of those drawn with a pointer
// cursor. No locks: a snapshot's walker is used by one goroutine.

package browserpool

import (
	"encoding/json"

	"github.com/mafredri/cdp/protocol/dom"
)

// domSnapshot is the part of DOMSnapshot.captureSnapshot's reply read here
// (asked for the computed cursor only).
type domSnapshot struct {
	Documents []struct {
		Nodes struct {
			Parent    []int               `json:"parentIndex"`
			Type      []int               `json:"nodeType"`
			Name      []int               `json:"nodeName"`
			Backend   []dom.BackendNodeID `json:"backendNodeId"`
			Clickable struct {
				Index []int `json:"index"`
			} `json:"isClickable"`
		} `json:"nodes"`
		Layout struct {
			Node   []int   `json:"nodeIndex"`
			Styles [][]int `json:"styles"`
		} `json:"layout"`
	} `json:"documents"`
	Strings []string `json:"strings"`
}

// clickables returns the DOM nodes of session f's documents (its page and
// its same-process iframes) that the page makes clickable without a role
// (axtext.Doc.Clickable), read once per session and snapshot. A browser
// that cannot say (an older Chromium, a fake without the call) gives none:
// the snapshot goes on without them.
func (w *snapWalker) clickables(f *frameSess) map[dom.BackendNodeID]bool {
	if set, ok := w.clicks[f]; ok {
		return set
	}
	if w.clicks == nil {
		w.clicks = make(map[*frameSess]map[dom.BackendNodeID]bool)
	}
	args := struct {
		Styles []string `json:"computedStyles"`
	}{[]string{"cursor"}}
	var set map[dom.BackendNodeID]bool
	if raw, err := f.d.InvokeRaw(w.ctx, "DOMSnapshot.captureSnapshot", &args); err == nil {
		var snap domSnapshot
		if json.Unmarshal(raw, &snap) == nil {
			set = snap.clickables()
		}
	}
	w.clicks[f] = set
	return set
}

// clickables reads the reply: in each document, the elements with a click
// listener and the elements drawn with a pointer cursor whose nearest
// drawn ancestor is not (the cursor is inherited: the outermost is the
// one the page made clickable), all of them drawn, the document's root
// and body aside (a page listening for clicks everywhere).
func (s *domSnapshot) clickables() map[dom.BackendNodeID]bool {
	pointer, plain := -1, map[int]bool{}
	for i, str := range s.Strings {
		switch str {
		case "pointer":
			pointer = i
		case "HTML", "BODY":
			plain[i] = true
		}
	}
	set := map[dom.BackendNodeID]bool{}
	for _, d := range s.Documents {
		n := d.Nodes
		if len(n.Parent) != len(n.Backend) || len(n.Type) != len(n.Backend) || len(n.Name) != len(n.Backend) || len(d.Layout.Node) != len(d.Layout.Styles) {
			continue // not the reply's documented shape
		}
		const undrawn = -2
		cursor := make([]int, len(n.Backend))
		for i := range cursor {
			cursor[i] = undrawn
		}
		for li, ni := range d.Layout.Node {
			if ni >= 0 && ni < len(cursor) {
				cursor[ni] = -1
				if st := d.Layout.Styles[li]; len(st) > 0 {
					cursor[ni] = st[0]
				}
			}
		}
		add := func(i int) {
			if i >= 0 && i < len(cursor) && cursor[i] != undrawn && n.Type[i] == 1 && !plain[n.Name[i]] {
				set[n.Backend[i]] = true
			}
		}
		for _, i := range n.Clickable.Index {
			add(i)
		}
		if pointer < 0 {
			continue
		}
		for i, c := range cursor {
			if c != pointer {
				continue
			}
			p := n.Parent[i]
			for p >= 0 && p < len(cursor) && cursor[p] == undrawn {
				p = n.Parent[p]
			}
			if p < 0 || p >= len(cursor) || cursor[p] != pointer {
				add(i)
			}
		}
	}
	return set
}
