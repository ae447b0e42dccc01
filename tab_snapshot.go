// Room: snapshots and refs. refTable.mu guards the ref numbers, the refs
// the latest snapshot showed, the document they belong to and the attached
// out-of-process frames. No CDP call is made with it held: a snapshot
// fetches every frame first, then numbers and prints under the lock.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/dom"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/redact"
)

// ErrStaleRef: a ref is not one the tab's latest snapshot showed (it is
// from an older snapshot, the page navigated since, or the element is
// gone). Returned by every action that takes a ref.
var ErrStaleRef = errors.New("stale element ref")

// DefaultSnapshotMaxChars bounds a snapshot's text when
// SnapshotOptions.MaxChars is zero (about 8,000 tokens).
const DefaultSnapshotMaxChars = 30000

// Limits of one snapshot.
const (
	snapshotMaxFrames = 50 // documents (the page and its iframes)
	snapshotMaxDepth  = 8  // nested iframes
)

// SnapshotOptions configures Tab.Snapshot. The zero value prints the whole
// tree of meaningful nodes, bounded by DefaultSnapshotMaxChars.
type SnapshotOptions struct {
	// Interactive prints only the elements that have refs (buttons, links,
	// fields, other focusable elements), one per line, without structure.
	Interactive bool
	// MaxChars bounds Text. Zero means DefaultSnapshotMaxChars; negative
	// means no bound. Truncation rule: nodes are printed in document order
	// (each iframe's content right under its iframe) until the next line
	// would pass the bound; the rest is left out, counted in a last line
	// "[truncated: …]", and gets no ref.
	MaxChars int
}

// Snapshot is a compact text view of a page's accessibility tree, for an
// LLM: one line per meaningful node, indented under its parent. The Text of
// a sign-up page with a payment iframe:
//
//	(Text)
//	- heading "Sign up" [level=1]
//	- textbox "Email" @e1 value="ann@example.com" [required]
//	- checkbox "I agree" @e2 [checked]
//	- button "Create account" @e3
//	- iframe "Payment"
//	  - textbox "Card number" @e4
//
// A line is: role, quoted name, ref (interactive elements only), value,
// and states in brackets (checked, selected, expanded/collapsed, pressed,
// disabled, focused, required, readonly, invalid, level=N, modal, and
// editable on a contenteditable element). Roles are ARIA's, Chromium's
// own names mapped (a date field is a textbox, a <summary> a button); a
// field whose value has a form of its own says its type (type=date, time,
// datetime-local, month, week, color), and a file input, a button, says
// type=file and the files it holds (Tab.Upload takes its ref). Names
// and values are cut to 100 characters, a text line to 500 (a paragraph
// reads whole, a page-long text is cut); a link shows its URL (path only
// when on the page's origin) with token-like query values redacted.
//
// Interactive elements are those whose role says so (buttons, links,
// fields, options, …), focusable elements, and elements the page made
// clickable without saying so: with a click handler or drawn with a pointer
// cursor (a clickable <div> card, an "×" <span>), but not a control's
// inner parts, an editor's blocks, a label (its control has the ref), a
// list or table that handles its items' clicks, or an element holding
// controls, unless it is drawn with a pointer cursor around at most three
// of them, no text field among them, with text of its own (a mail's row
// around its checkbox). Such an element prints with the role
// ClickableRole, or, when its role says something (a list item, an
// image), that role and the state "clickable"; without a name of its own,
// its name is its own text, else its title or test id. The label of a
// hidden checkbox, radio or file input gets a ref too, noted as such. So
// does an element the page made draggable (draggable="true": a card, a
// sortable list's item), with the state "draggable", for Drag and DragTo.
// Finding them costs one DOMSnapshot.captureSnapshot per snapshot and
// renderer process: on a large page about a fifth more than reading the
// tree alone (BenchmarkSnapshot1000Items).
//
// Refs: the same element keeps its ref across snapshots of the same
// document, and a ref is never reused for another element of the tab. A
// ref can be used until the next snapshot that does not show it, or until
// the page navigates; then actions fail with ErrStaleRef.
type Snapshot struct {
	SessionID string        // the tab's session
	TabID     string        // the tab's CDP target id
	URL       string        // the page's URL, token-like query values redacted
	Title     string        // the document's title
	Text      string        // the tree, as described above
	Refs      []SnapshotRef // the refs Text shows, in order
	Lines     int           // nodes shown
	Omitted   int           // meaningful nodes left out by MaxChars
	Frames    int           // documents included: the page and its iframes
}

// ClickableRole is the role a snapshot prints for an element the page
// made clickable (a click handler, a pointer cursor) whose own role says
// nothing, such as a <div> or a <span>: Snapshot.Find(ClickableRole,
// "Archive") finds one.
const ClickableRole = axtext.ClickableRole

// SnapshotRef is one element a snapshot gave a ref.
type SnapshotRef struct {
	Ref  string // e.g. "@e3"
	Role string // e.g. "button"
	Name string // its accessible name, cut to 100 characters
}

// Find returns the ref of the first element with this role and exactly
// this name, or "" if the snapshot shows none.
func (s Snapshot) Find(role, name string) string {
	for _, r := range s.Refs {
		if r.Role == role && r.Name == name {
			return r.Ref
		}
	}
	return ""
}

// Snapshot reads the accessibility tree of the page and of all its frames,
// out-of-process iframes included, and returns it as compact text with
// refs for the interactive elements. A page whose document is still being
// parsed (a tab a link just opened, a server that streams its page) is
// read once parsed (DOMContentLoaded), or as it is after two seconds; a
// tab a page just opened (window.open) that is still on its initial
// empty document is read once its first page commits, or after two
// seconds.
//
// A table prints row by row: a row of text as one line (`row
// cells=["Ann", "", "555-1"]`, headers as `row headers=[…]`), a row with
// controls as its cells, an empty one as `cell ""`, so columns hold.
// Text split by inline tags reads as one line; progress bars and meters
// say their value; a select's options say which are disabled and their
// groups. Content hidden from the accessibility tree (aria-hidden) is left
// out, except an element the page drew and made clickable that says what
// it is. A page with nothing accessible (a canvas) gets one bracketed line
// saying so and how to act on it (Tab.Screenshot, Tab.ClickAt). Ref
// numbers are unique across the session's tabs.
func (t *Tab) Snapshot(ctx context.Context, opts SnapshotOptions) (Snapshot, error) {
	const op = "Tab.Snapshot"
	args := func(snap Snapshot) string {
		return fmt.Sprintf("interactive=%v max=%d -> %d lines, %d refs", opts.Interactive, opts.MaxChars, snap.Lines, len(snap.Refs))
	}
	var snap Snapshot
	err := t.act(ctx, op, "snapshot", args(Snapshot{}), nil, func(ctx context.Context, x *tabExt, a *string) error {
		var err error
		if snap, err = x.snapshot(ctx, op, opts); err != nil {
			return err
		}
		*a = args(snap)
		return nil
	})
	if err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// snapshotParseWait bounds how long a snapshot waits for the main
// document it reads to be parsed (its DOMContentLoaded): a page a link
// just opened in a new tab is read whole, not as the parser left it, and
// one whose server streams it slowly is read as it is after this long.
const snapshotParseWait = 2 * time.Second

// awaitParsed waits until the main frame's document loader has been parsed
// (DOMContentLoaded or load seen), until deadline or ctx ends. When the
// tab's events have not said so, the page is asked whether it is still
// parsing (document.readyState "loading": a document whose server still
// sends it, which Chromium's replay of its events leaves out), again every
// parsePoll. A document whose wait once ran out is not waited for again.
func (x *tabExt) awaitParsed(ctx context.Context, loader string, deadline time.Time) {
	w := x.t.lifecycle
	if w == nil || loader == "" {
		return
	}
	if p := x.parseWaited.Load(); p != nil && *p == loader {
		return
	}
	for {
		w.mu.Lock()
		parsed := w.seen[loader+"/DOMContentLoaded"] || w.seen[loader+"/load"]
		changed := w.changed
		w.mu.Unlock()
		if parsed {
			return
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			x.parseWaited.Store(&loader)
			return
		}
		if state, err := x.t.readyState(ctx); err != nil || state != "loading" {
			return
		}
		timer := time.NewTimer(min(wait, parsePoll))
		err := w.nextOr(ctx, changed, timer.C)
		timer.Stop()
		if err != nil && err != errPendingPassed {
			return
		}
	}
}

// parsePoll is how often awaitParsed asks a page still parsing again.
const parsePoll = 100 * time.Millisecond

// snapshotAttempts bounds how many times a snapshot walks the page when
// documents keep committing during its walks (a page that reloads itself
// every few milliseconds gets the last walk).
const snapshotAttempts = 4

// snapshot reads and prints the page's documents (see Tab.Snapshot).
func (x *tabExt) snapshot(ctx context.Context, op string, opts SnapshotOptions) (snap Snapshot, err error) {
	t := x.t
	// The page's events on (a tab just opened sends them without waiting):
	// the events of the document it had until then come first.
	_ = t.pageEvents(ctx)
	parsed := time.Now().Add(snapshotParseWait)
	inits, _ := x.lifecycleInits()
	type mainFrame struct {
		ID       string `json:"id"`
		LoaderID string `json:"loaderId"`
		URL      string `json:"url"`
	}
	readMain := func() (mainFrame, error) {
		var tree struct {
			FrameTree struct {
				Frame mainFrame `json:"frame"`
			} `json:"frameTree"`
		}
		err := t.direct.Invoke(ctx, "Page.getFrameTree", nil, &tree)
		return tree.FrameTree.Frame, err
	}
	main, err := readMain()
	if err != nil {
		return Snapshot{}, x.fail(op, ctx, "", err)
	}
	if x.awaitOpenedPage(ctx, main.URL) {
		// A tab a page just opened has committed its first page: read
		// that, not the empty document it started with.
		if main, err = readMain(); err != nil {
			return Snapshot{}, x.fail(op, ctx, "", err)
		}
	}
	var w *snapWalker
	var doc *axtext.Doc[refTarget]
	// A document that commits during the walk would lend its tree to the
	// one whose URL and loader were read first (refs labelled with a
	// document they are not of): the main frame is read again after the
	// walk, and a walk across a commit is done again.
	for attempt := 1; ; attempt++ {
		x.awaitParsed(ctx, main.LoaderID, parsed)
		w = &snapWalker{x: x, ctx: ctx}
		if doc, err = w.fetch(x.refs.top, "", nil); err != nil {
			return Snapshot{}, x.fail(op, ctx, "", err)
		}
		after, err := readMain()
		if err != nil {
			return Snapshot{}, x.fail(op, ctx, "", err)
		}
		if after.LoaderID == main.LoaderID || attempt == snapshotAttempts {
			break
		}
		main = after
	}
	aw := axtext.Walker[refTarget]{Origin: origin(main.URL)}
	aw.Walk(doc)
	lines := axtext.DedupeText(aw.Lines)
	if main.URL == "about:blank" && len(lines) == 1 && lines[0].Note {
		lines = nil // an empty tab: nothing drawn, nothing to say of it
	}

	limit := opts.MaxChars
	if limit == 0 {
		limit = DefaultSnapshotMaxChars
	}
	snap = Snapshot{SessionID: t.s.id, TabID: t.id, URL: redact.Scrub(main.URL), Frames: w.docs}
	if doc.Root != nil {
		snap.Title = axtext.String(doc.Root.Name)
	}
	snap.Text, snap.Refs, snap.Lines, snap.Omitted = x.refs.print(main.LoaderID, inits, lines, opts.Interactive, limit)
	return snap, nil
}

// origin returns scheme://host of a URL, or "".
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// refTarget is what a ref points at.
type refTarget struct {
	f     *frameSess
	frame string // the frame of f's session that holds node ("" for its main frame)
	node  dom.BackendNodeID
	chain []frameHop // out-of-process owners, outermost first
	role  string
	name  string
}

// in is the frame of the target's node.
func (tg refTarget) in() where { return where{f: tg.f, frame: tg.frame} }

// refTable holds a tab's refs.
type refTable struct {
	top *frameSess // the tab's own session; set once

	mu     sync.Mutex
	nums   axtext.Refs[refTarget] // guarded by mu; ref numbers, the document they belong to, the live refs
	inits  map[string]bool        // guarded by mu; loaders with an "init" event known at the latest snapshot
	frames map[string]*frameSess  // guarded by mu; attached out-of-process frames by target id
}

func (r *refTable) setup() {
	r.inits = make(map[string]bool)
	r.frames = make(map[string]*frameSess)
}

// closeFrames forgets the attached out-of-process frames (the tab is gone,
// and their targets with it).
func (r *refTable) closeFrames() {
	r.mu.Lock()
	frames := r.frames
	r.frames = make(map[string]*frameSess)
	r.nums.DropLive()
	r.mu.Unlock()
	for _, f := range frames {
		f.d.Close()
	}
}

// lifecycleInits takes the lifecycle events recorded since the last look
// (takeLifecycle: the newest main-frame document among them drops refs of
// another) and returns the loader ids of every "init" event the tab's
// lifecycleWatch has recorded. It never waits; ok is always true (events
// reach the watch directly from the mux, whoever waits on them).
func (x *tabExt) lifecycleInits() (inits []string, ok bool) {
	if x.t.lifecycle == nil {
		return nil, true
	}
	x.takeLifecycle()
	return x.t.lifecycle.loaders("init"), true
}

// syncNavigation drops the refs if the main frame has navigated since the
// snapshot that made them. Events it reads itself say so directly; a
// navigation whose events someone else read (Tab.Navigate waits on them)
// shows as an "init" the snapshot did not know, and is then checked
// against the main frame's loader id (one round trip, only then).
func (x *tabExt) syncNavigation(ctx context.Context) {
	inits, ok := x.lifecycleInits()
	r := &x.refs
	r.mu.Lock()
	loader := r.nums.Doc()
	fresh := !ok
	for _, l := range inits {
		if !r.inits[l] {
			fresh = true
		}
	}
	r.mu.Unlock()
	if loader == "" || !fresh {
		return
	}
	cur := x.currentLoader(ctx)
	if cur == "" {
		return
	}
	if cur != loader {
		x.navigated(cur)
		return
	}
	r.mu.Lock()
	for _, l := range inits {
		r.inits[l] = true
	}
	r.mu.Unlock()
}

// navigated drops the refs when the main frame committed document loader,
// unless the refs belong to it.
func (x *tabExt) navigated(loader string) {
	r := &x.refs
	r.mu.Lock()
	if doc := r.nums.Doc(); doc != loader && doc != "" {
		r.nums.Invalidate()
	}
	r.mu.Unlock()
}

// resolve returns the target of ref, or an ErrStaleRef (or, for a
// malformed ref, ErrInvalidArgument) error.
func (x *tabExt) resolve(ctx context.Context, op, ref string) (refTarget, error) {
	n, ok := axtext.ParseRef(ref)
	if !ok {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q is not a ref", axtext.Cut(ref, 40)))
		e.Session, e.Tab = x.t.s.id, x.t.id
		e.Hint = "use a ref such as @e3 from the tab's latest Tab.Snapshot; an element the snapshot gives no ref can be clicked at its point (x, y) with Tab.ClickAt (find it in a screenshot, or with Tab.Evaluate and getBoundingClientRect)"
		return refTarget{}, e
	}
	x.syncNavigation(ctx)
	r := &x.refs
	r.mu.Lock()
	target, ok := r.nums.Lookup(n)
	issued := r.nums.Issued(n)
	r.mu.Unlock()
	if ok {
		return target, nil
	}
	detail := fmt.Sprintf("@e%d is not in the latest snapshot: it is from an older one, or the page navigated since", n)
	if !issued {
		// Ref numbers are unique across a session's tabs: one this tab
		// never showed may be another tab's.
		detail = fmt.Sprintf("no snapshot of this tab has shown @e%d (it may be a ref of another tab: refs name elements of the tab whose snapshot showed them)", n)
	}
	e := newError(op, ErrStaleRef, detail)
	e.Session, e.Tab = x.t.s.id, x.t.id
	return refTarget{}, e
}

// refName returns the ref the latest snapshot gave node, or "".
func (r *refTable) refName(f *frameSess, node dom.BackendNodeID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nums.Name(axtext.NodeKey{Target: f.refKey(), Node: node})
}

// print numbers and prints a snapshot's lines of document loader
// (axtext.Refs.Print) and records the "init" loaders known at it.
func (r *refTable) print(loader string, inits []string, lines []axtext.Line[refTarget], interactiveOnly bool, limit int) (string, []SnapshotRef, int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.inits)
	for _, l := range inits {
		r.inits[l] = true
	}
	text, refs, shown, omitted := r.nums.Print(loader, lines, interactiveOnly, limit)
	var out []SnapshotRef
	for _, ref := range refs {
		out = append(out, SnapshotRef(ref))
	}
	return text, out, shown, omitted
}

// snapWalker fetches the accessibility trees of a page's documents for
// axtext.Walker: the page's, then each iframe's as the walk reaches it,
// same-process frames through the parent's session, out-of-process ones
// through their own.
type snapWalker struct {
	x    *tabExt
	ctx  context.Context
	docs int                     // documents fetched
	dom  map[*frameSess]domFacts // what each session's DOM says, read once
}

// fetch reads the accessibility tree of a document: frameID "" is the
// session's main document.
func (w *snapWalker) fetch(f *frameSess, frameID string, chain []frameHop) (*axtext.Doc[refTarget], error) {
	args := struct {
		FrameID string `json:"frameId,omitempty"`
	}{frameID}
	const method = "Accessibility.getFullAXTree"
	res, err := f.d.InvokeRaw(w.ctx, method, &args)
	if err != nil {
		return nil, err
	}
	nodes, err := axtext.DecodeNodes(res) // in one pass: a large page's tree runs to megabytes
	if err != nil {
		return nil, cdpmux.DecodeError(method, err)
	}
	w.docs++
	doc := axtext.NewDoc[refTarget](f.refKey(), nodes)
	facts := w.domFacts(f)
	doc.Clickable, doc.Inputs, doc.Names, doc.DOMIndex = facts.clickable, facts.inputs, facts.names, facts.index
	doc.Ref = func(n *axtext.Node, role, name string) refTarget {
		return refTarget{f: f, frame: frameID, node: n.Backend, chain: chain, role: role, name: name}
	}
	doc.Frame = func(n *axtext.Node, frameDepth int) (*axtext.Doc[refTarget], string) {
		return w.iframe(f, frameID, chain, n, frameDepth)
	}
	return doc, nil
}

// iframe returns the document of the iframe node n of frame frameID of
// session f, or why it is not shown.
func (w *snapWalker) iframe(f *frameSess, frameID string, chain []frameHop, n *axtext.Node, frameDepth int) (*axtext.Doc[refTarget], string) {
	if n.Backend == 0 || frameDepth >= snapshotMaxDepth || w.docs >= snapshotMaxFrames {
		return nil, "(not expanded: frame limit)"
	}
	var desc struct {
		Node struct {
			FrameID string `json:"frameId"`
		} `json:"node"`
	}
	if err := f.d.Invoke(w.ctx, "DOM.describeNode", nodeArgs(n.Backend), &desc); err != nil || desc.Node.FrameID == "" {
		return nil, "(not loaded)"
	}
	child, err := w.fetch(f, desc.Node.FrameID, chain)
	if err != nil && w.ctx.Err() == nil {
		// Not in this process: an out-of-process iframe is its own target.
		var of *frameSess
		if of, err = w.x.frame(w.ctx, desc.Node.FrameID); err == nil {
			chain := append(append([]frameHop(nil), chain...), frameHop{parent: f, frame: frameID, owner: n.Backend})
			child, err = w.fetch(of, "", chain)
		}
	}
	if err != nil {
		return nil, "(not loaded)"
	}
	return child, ""
}
