// Room: snapshots and refs. refTable.mu guards the ref numbers, the refs
// the latest snapshot showed, the document they belong to and the attached
// out-of-process frames. No CDP call is made with it held: a snapshot
// fetches every frame first, then numbers and prints under the lock.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/redact"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/dom"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"
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
	snapshotNameLimit = 100 // characters of a name or value
	snapshotMaxFrames = 50  // documents (the page and its iframes)
	snapshotMaxDepth  = 8   // nested iframes
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
// disabled, focused, required, readonly, invalid, level=N, modal). Names
// and values are cut to 100 characters; a link shows its URL (path only
// when on the page's origin) with token-like query values redacted.
//
// Refs: the same element keeps its ref across snapshots of the same
// document, and a ref is never reused for another element of the tab. A
// ref can be used until the next snapshot that does not show it, or until
// the page navigates; then actions fail with ErrStaleRef.
type Snapshot struct {
	SessionID string
	TabID     string
	URL       string // the page's URL, token-like query values redacted
	Title     string
	Text      string        // the tree, as described above
	Refs      []SnapshotRef // the refs Text shows, in order
	Lines     int           // nodes shown
	Omitted   int           // meaningful nodes left out by MaxChars
	Frames    int           // documents included: the page and its iframes
}

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
// refs for the interactive elements.
func (t *Tab) Snapshot(ctx context.Context, opts SnapshotOptions) (snap Snapshot, err error) {
	const op = "Tab.Snapshot"
	end, err := t.begin(op)
	if err != nil {
		return Snapshot{}, err
	}
	defer end()
	x := t.ext()
	start := time.Now()
	defer func() {
		x.record("snapshot", fmt.Sprintf("interactive=%v max=%d -> %d lines, %d refs", opts.Interactive, opts.MaxChars, snap.Lines, len(snap.Refs)), start, &err)
	}()
	if err := x.dialogErr(op); err != nil {
		return Snapshot{}, err
	}
	ctx, done := x.guard(ctx)
	defer done()

	inits, _ := x.lifecycleInits()
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID       string `json:"id"`
				LoaderID string `json:"loaderId"`
				URL      string `json:"url"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := rpcc.Invoke(ctx, "Page.getFrameTree", nil, &tree, t.conn); err != nil {
		return Snapshot{}, x.fail(op, ctx, "", err)
	}
	main := tree.FrameTree.Frame
	w := &snapWalker{x: x, ctx: ctx, origin: origin(main.URL)}
	top := x.refs.top
	doc, err := w.fetch(top, "", nil)
	if err != nil {
		return Snapshot{}, x.fail(op, ctx, "", err)
	}
	w.walkChildren(doc, doc.root, 0, "", 0)
	dedupeText(&w.lines)

	limit := opts.MaxChars
	if limit == 0 {
		limit = DefaultSnapshotMaxChars
	}
	snap = Snapshot{SessionID: t.s.id, TabID: t.id, URL: redact.Scrub(main.URL), Frames: w.docs}
	if doc.root != nil {
		snap.Title = axString(doc.root.Name)
	}
	snap.Text, snap.Refs, snap.Lines, snap.Omitted = x.refs.print(main.LoaderID, inits, w.lines, opts.Interactive, limit)
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

// frameSess is a CDP session that documents of the tab live in: the tab's
// own, or an out-of-process iframe's.
type frameSess struct {
	targetID  string
	sessionID string // of an out-of-process iframe's session
	conn      *rpcc.Conn
	client    *cdp.Client
	own       bool // attached by us for an out-of-process iframe
}

// detach ends a session attached for an out-of-process iframe, in the
// browser and locally.
func (x *tabExt) detach(ctx context.Context, f *frameSess) {
	if f.conn.Context().Err() == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		x.t.s.browser.Target.DetachFromTarget(ctx, target.NewDetachFromTargetArgs().SetSessionID(target.SessionID(f.sessionID)))
		cancel()
	}
	f.conn.Close()
}

// frameHop is one out-of-process boundary on the way to a frame: the
// iframe element (owner) in its parent's session.
type frameHop struct {
	parent *frameSess
	owner  dom.BackendNodeID
}

// refTarget is what a ref points at.
type refTarget struct {
	f     *frameSess
	node  dom.BackendNodeID
	chain []frameHop // out-of-process owners, outermost first
	role  string
	name  string
}

// nodeKey names a DOM node across the tab's sessions.
type nodeKey struct {
	target string
	node   dom.BackendNodeID
}

// refTable holds a tab's refs.
type refTable struct {
	top *frameSess // the tab's own session; set once

	mu     sync.Mutex
	next   int                   // guarded by mu; the last ref number issued (never reused)
	loader string                // guarded by mu; main-frame loader id the refs belong to
	byNode map[nodeKey]int       // guarded by mu; stable numbers of this document's elements
	live   map[int]refTarget     // guarded by mu; refs the latest snapshot showed
	inits  map[string]bool       // guarded by mu; loaders with an "init" event known at the latest snapshot
	frames map[string]*frameSess // guarded by mu; attached out-of-process frames by target id
}

func (r *refTable) setup() {
	r.byNode = make(map[nodeKey]int)
	r.live = make(map[int]refTarget)
	r.inits = make(map[string]bool)
	r.frames = make(map[string]*frameSess)
}

func (r *refTable) invalidateLocked() {
	clear(r.live)
	clear(r.byNode)
	r.loader = ""
}

// closeFrames forgets the attached out-of-process frames (the tab is gone,
// and their targets with it).
func (r *refTable) closeFrames() {
	r.mu.Lock()
	frames := r.frames
	r.frames = make(map[string]*frameSess)
	clear(r.live)
	r.mu.Unlock()
	for _, f := range frames {
		f.conn.Close()
	}
}

// lifecycleInits passes the lifecycle events recorded since the last look
// to onLifecycle and returns the loader ids of every "init" event the tab's
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
	loader := r.loader
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
	if r.loader != loader && r.loader != "" {
		r.invalidateLocked()
	}
	r.mu.Unlock()
}

// resolve returns the target of ref, or an ErrStaleRef (or, for a
// malformed ref, ErrInvalidArgument) error.
func (x *tabExt) resolve(ctx context.Context, op, ref string) (refTarget, error) {
	n, ok := parseRef(ref)
	if !ok {
		e := newError(op, ErrInvalidArgument, fmt.Sprintf("%q is not a ref", cut(ref, 40)))
		e.Session, e.Tab = x.t.s.id, x.t.id
		e.Hint = "use a ref such as @e3 from the tab's latest Tab.Snapshot"
		return refTarget{}, e
	}
	x.syncNavigation(ctx)
	r := &x.refs
	r.mu.Lock()
	target, ok := r.live[n]
	issued := n <= r.next
	r.mu.Unlock()
	if ok {
		return target, nil
	}
	detail := fmt.Sprintf("@e%d is not in the latest snapshot: it is from an older one, or the page navigated since", n)
	if !issued {
		detail = fmt.Sprintf("no snapshot of this tab has shown @e%d", n)
	}
	e := newError(op, ErrStaleRef, detail)
	e.Session, e.Tab = x.t.s.id, x.t.id
	return refTarget{}, e
}

// parseRef accepts "@e12" and "e12".
func parseRef(ref string) (int, bool) {
	s := strings.TrimPrefix(strings.TrimSpace(ref), "@")
	if !strings.HasPrefix(s, "e") {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n <= 0 || s[1] == '+' {
		return 0, false
	}
	return n, true
}

// refName returns the ref the latest snapshot gave node, or "".
func (r *refTable) refName(f *frameSess, node dom.BackendNodeID) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, ok := r.byNode[nodeKey{f.targetID, node}]
	if !ok {
		return ""
	}
	if _, live := r.live[n]; !live {
		return ""
	}
	return "@e" + strconv.Itoa(n)
}

// frame returns a session for the out-of-process frame targetID,
// attaching to it once.
func (x *tabExt) frame(ctx context.Context, targetID string) (*frameSess, error) {
	r := &x.refs
	r.mu.Lock()
	f := r.frames[targetID]
	r.mu.Unlock()
	if f != nil && f.conn.Context().Err() == nil {
		return f, nil
	}
	conn, sid, err := x.t.s.mux.Attach(ctx, targetID)
	var re *rpcc.ResponseError
	if errors.As(err, &re) && strings.Contains(re.Message, "No target with given id") {
		// The browser makes a frame's target on demand, when targets
		// are listed: list them, then attach again.
		if _, lerr := x.t.s.browser.Target.GetTargets(ctx, target.NewGetTargetsArgs()); lerr == nil {
			conn, sid, err = x.t.s.mux.Attach(ctx, targetID)
		}
	}
	if err != nil {
		return nil, err
	}
	nf := &frameSess{targetID: targetID, sessionID: sid, conn: conn, client: cdp.NewClient(conn), own: true}
	r.mu.Lock()
	if cur := r.frames[targetID]; cur != nil && cur != f && cur.conn.Context().Err() == nil {
		// Another snapshot attached meanwhile: keep one session.
		r.mu.Unlock()
		x.detach(ctx, nf)
		return cur, nil
	}
	r.frames[targetID] = nf
	for id, g := range r.frames {
		if g.conn.Context().Err() != nil {
			delete(r.frames, id)
		}
	}
	r.mu.Unlock()
	return nf, nil
}

// Accessibility tree, decoded leanly (the protocol's types carry name
// sources we never read).
type axNode struct {
	NodeID   string            `json:"nodeId"`
	Ignored  bool              `json:"ignored"`
	Role     *axValue          `json:"role"`
	Name     *axValue          `json:"name"`
	Value    *axValue          `json:"value"`
	Props    []axProp          `json:"properties"`
	ParentID string            `json:"parentId"`
	ChildIDs []string          `json:"childIds"`
	Backend  dom.BackendNodeID `json:"backendDOMNodeId"`
}

type axValue struct {
	Value json.RawMessage `json:"value"`
}

type axProp struct {
	Name  string  `json:"name"`
	Value axValue `json:"value"`
}

func axString(v *axValue) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	return rawString(v.Value)
}

func rawString(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// axDoc is one document's accessibility tree.
type axDoc struct {
	f     *frameSess
	chain []frameHop
	nodes map[string]*axNode
	root  *axNode
}

// snapLine is one node a snapshot may print.
type snapLine struct {
	depth       int
	role        string
	name        string
	value       string
	extra       string // url=…, options=…
	states      []string
	interactive bool
	key         nodeKey
	target      refTarget
}

// snapWalker turns the trees of a page's documents into lines.
type snapWalker struct {
	x      *tabExt
	ctx    context.Context
	origin string
	lines  []snapLine
	docs   int
}

// fetch reads the accessibility tree of a document: frameID "" is the
// session's main document.
func (w *snapWalker) fetch(f *frameSess, frameID string, chain []frameHop) (*axDoc, error) {
	args := struct {
		FrameID string `json:"frameId,omitempty"`
	}{frameID}
	var reply struct {
		Nodes []*axNode `json:"nodes"`
	}
	if err := rpcc.Invoke(w.ctx, "Accessibility.getFullAXTree", &args, &reply, f.conn); err != nil {
		return nil, err
	}
	w.docs++
	doc := &axDoc{f: f, chain: chain, nodes: make(map[string]*axNode, len(reply.Nodes))}
	for _, n := range reply.Nodes {
		doc.nodes[n.NodeID] = n
		if doc.root == nil && n.ParentID == "" {
			doc.root = n
		}
	}
	return doc, nil
}

// Roles by how a snapshot prints them.
var (
	interactiveRoles = set("button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox",
		"listbox", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "switch", "slider",
		"spinbutton", "treeitem", "DisclosureTriangle", "ColorWell", "Date", "DateTime", "InputTime")
	// Printed only when named; their children are printed either way.
	transparentRoles = set("generic", "none", "presentation", "paragraph", "list", "listitem", "group",
		"Section", "SectionWithoutName", "div", "LayoutTable", "LayoutTableRow", "LayoutTableCell",
		"strong", "emphasis", "mark", "code", "time", "Abbr", "subscript", "superscript", "insertion",
		"deletion", "blockquote", "Pre", "Ruby", "RubyAnnotation", "LabelText", "label", "Legend",
		"ListMarker", "row", "rowgroup", "term", "definition", "DescriptionList", "DescriptionListTerm",
		"DescriptionListDetail", "figure", "Canvas", "Unknown", "document", "article", "RootWebArea",
		"WebArea", "MenuListPopup", "emphasis", "caption", "Details", "Summary")
	// Printed even without a name.
	structuralRoles = set("heading", "banner", "navigation", "main", "contentinfo", "complementary",
		"form", "search", "dialog", "alertdialog", "alert", "table", "Iframe", "separator")
	// Skipped with their subtrees.
	skippedRoles = set("InlineTextBox", "LineBreak", "ListMarker")
	valueRoles   = set("textbox", "searchbox", "combobox", "spinbutton", "slider", "ColorWell", "Date", "DateTime", "InputTime")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// walkChildren walks n's children at depth. ctxName is the name of the
// nearest printed ancestor (text it already says is not repeated).
func (w *snapWalker) walkChildren(doc *axDoc, n *axNode, depth int, ctxName string, frameDepth int) {
	if n == nil {
		return
	}
	for _, id := range n.ChildIDs {
		if c := doc.nodes[id]; c != nil {
			w.walk(doc, c, depth, ctxName, frameDepth)
		}
	}
}

func (w *snapWalker) walk(doc *axDoc, n *axNode, depth int, ctxName string, frameDepth int) {
	role := axString(n.Role)
	if n.Ignored || role == "" {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	if skippedRoles[role] {
		return
	}
	name := squash(axString(n.Name))
	if role == "StaticText" {
		if name != "" && !strings.Contains(ctxName, name) {
			w.lines = append(w.lines, snapLine{depth: depth, role: "text", name: cut(name, snapshotNameLimit)})
		}
		return
	}
	if role == "Iframe" {
		w.iframe(doc, n, depth, name, frameDepth)
		return
	}
	l := snapLine{depth: depth, role: role, name: cut(name, snapshotNameLimit)}
	focusable := false
	for _, p := range n.Props {
		if p.Name == "focusable" && rawString(p.Value.Value) == "true" {
			focusable = true
		}
	}
	l.interactive = interactiveRoles[role] || focusable && role != "RootWebArea"
	if !l.interactive && !structuralRoles[role] && (name == "" || transparentRoles[role]) {
		w.walkChildren(doc, n, depth, ctxName, frameDepth)
		return
	}
	if valueRoles[role] {
		l.value = cut(squash(axString(n.Value)), snapshotNameLimit)
	}
	l.states = states(role, n.Props)
	if role == "link" {
		for _, p := range n.Props {
			if p.Name == "url" {
				l.extra = "url=" + cut(w.linkURL(rawString(p.Value.Value)), snapshotNameLimit)
			}
		}
	}
	if l.interactive && n.Backend != 0 {
		l.key = nodeKey{doc.f.targetID, n.Backend}
		l.target = refTarget{f: doc.f, node: n.Backend, chain: doc.chain, role: role, name: l.name}
	} else {
		l.interactive = false
	}
	if role == "combobox" {
		// A select's options are summarized on its line (use Tab.Select).
		var opts []string
		w.collectOptions(doc, n, &opts)
		if len(opts) > 0 {
			l.extra = optionSummary(opts)
			w.lines = append(w.lines, l)
			return
		}
	}
	w.lines = append(w.lines, l)
	if valueRoles[role] {
		return // a field's content is its value
	}
	w.walkChildren(doc, n, depth+1, name, frameDepth)
}

// iframe prints an iframe and, under it, its document: same-process frames
// through the parent's session, out-of-process ones through their own.
func (w *snapWalker) iframe(doc *axDoc, n *axNode, depth int, name string, frameDepth int) {
	l := snapLine{depth: depth, role: "iframe", name: cut(name, snapshotNameLimit)}
	idx := len(w.lines)
	w.lines = append(w.lines, l)
	if n.Backend == 0 || frameDepth >= snapshotMaxDepth || w.docs >= snapshotMaxFrames {
		w.lines[idx].extra = "(not expanded: frame limit)"
		return
	}
	var desc struct {
		Node struct {
			FrameID string `json:"frameId"`
		} `json:"node"`
	}
	args := struct {
		Backend dom.BackendNodeID `json:"backendNodeId"`
	}{n.Backend}
	if err := rpcc.Invoke(w.ctx, "DOM.describeNode", &args, &desc, doc.f.conn); err != nil || desc.Node.FrameID == "" {
		w.lines[idx].extra = "(not loaded)"
		return
	}
	child, err := w.fetch(doc.f, desc.Node.FrameID, doc.chain)
	if err != nil && w.ctx.Err() == nil {
		// Not in this process: an out-of-process iframe is its own target.
		var f *frameSess
		if f, err = w.x.frame(w.ctx, desc.Node.FrameID); err == nil {
			chain := append(append([]frameHop(nil), doc.chain...), frameHop{parent: doc.f, owner: n.Backend})
			child, err = w.fetch(f, "", chain)
		}
	}
	if err != nil || child.root == nil {
		w.lines[idx].extra = "(not loaded)"
		return
	}
	if name == "" {
		w.lines[idx].name = cut(squash(axString(child.root.Name)), snapshotNameLimit)
	}
	w.walkChildren(child, child.root, depth+1, "", frameDepth+1)
}

func (w *snapWalker) collectOptions(doc *axDoc, n *axNode, out *[]string) {
	for _, id := range n.ChildIDs {
		c := doc.nodes[id]
		if c == nil {
			continue
		}
		if r := axString(c.Role); (r == "option" || r == "MenuListOption") && !c.Ignored {
			*out = append(*out, squash(axString(c.Name)))
			continue
		}
		w.collectOptions(doc, c, out)
	}
}

func optionSummary(opts []string) string {
	const show = 10
	var b strings.Builder
	b.WriteString("options=[")
	for i, o := range opts {
		if i == show {
			fmt.Fprintf(&b, ", +%d more", len(opts)-show)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(cut(o, 40)))
	}
	b.WriteString("]")
	return b.String()
}

// linkURL shortens a link's URL to its path on the page's own origin and
// redacts token-like values.
func (w *snapWalker) linkURL(raw string) string {
	s := redact.Scrub(raw)
	if w.origin != "" && strings.HasPrefix(s, w.origin+"/") {
		return s[len(w.origin):]
	}
	return s
}

// states lists a node's states in a fixed order.
func states(role string, props []axProp) []string {
	get := func(name string) (string, bool) {
		for _, p := range props {
			if p.Name == name {
				return rawString(p.Value.Value), true
			}
		}
		return "", false
	}
	var out []string
	for _, name := range []string{"checked", "pressed"} {
		switch v, _ := get(name); v {
		case "true":
			out = append(out, name)
		case "mixed":
			out = append(out, name+"=mixed")
		}
	}
	if v, _ := get("selected"); v == "true" {
		out = append(out, "selected")
	}
	switch v, _ := get("expanded"); v {
	case "true":
		out = append(out, "expanded")
	case "false":
		out = append(out, "collapsed")
	}
	for _, name := range []string{"disabled", "focused", "required", "readonly", "modal"} {
		if v, _ := get(name); v == "true" {
			out = append(out, name)
		}
	}
	if v, ok := get("invalid"); ok && v != "false" && v != "" {
		out = append(out, "invalid")
	}
	if v, ok := get("level"); ok && role == "heading" {
		out = append(out, "level="+v)
	}
	return out
}

// squash collapses runs of white space and trims.
func squash(s string) string {
	if !strings.ContainsAny(s, "\n\t\r\u00a0  ") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// quote quotes s for a snapshot line: double quotes escaped, nothing else.
func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// dedupeText drops a text line that only repeats the name of the line
// before or after it (a label next to its field).
func dedupeText(lines *[]snapLine) {
	ls := *lines
	out := ls[:0]
	for i, l := range ls {
		if l.role == "text" && (i > 0 && ls[i-1].role != "text" && ls[i-1].name == l.name ||
			i+1 < len(ls) && ls[i+1].role != "text" && ls[i+1].name == l.name) {
			continue
		}
		out = append(out, l)
	}
	*lines = out
}

// format prints one line.
func (l *snapLine) format(ref string, flat bool) string {
	var b strings.Builder
	if !flat {
		for range l.depth {
			b.WriteString("  ")
		}
	}
	b.WriteString("- ")
	b.WriteString(l.role)
	if l.name != "" {
		b.WriteByte(' ')
		b.WriteString(quote(l.name))
	}
	if ref != "" {
		b.WriteByte(' ')
		b.WriteString(ref)
	}
	if l.value != "" {
		b.WriteString(" value=")
		b.WriteString(quote(l.value))
	}
	if l.extra != "" {
		b.WriteByte(' ')
		b.WriteString(l.extra)
	}
	if len(l.states) > 0 {
		b.WriteString(" [")
		b.WriteString(strings.Join(l.states, ", "))
		b.WriteByte(']')
	}
	return b.String()
}

// maxStableRefs bounds the stable ref numbers kept for one document.
const maxStableRefs = 100000

// print numbers the interactive lines (keeping earlier numbers of the same
// elements), prints up to limit characters and makes the printed refs the
// live ones. It returns the text, the refs, and the counts of lines shown
// and left out.
func (r *refTable) print(loader string, inits []string, lines []snapLine, interactiveOnly bool, limit int) (string, []SnapshotRef, int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if loader != r.loader || len(r.byNode) > maxStableRefs {
		clear(r.byNode)
		r.loader = loader
	}
	clear(r.inits)
	for _, l := range inits {
		r.inits[l] = true
	}
	clear(r.live)
	var (
		b       strings.Builder
		refs    []SnapshotRef
		shown   int
		omitted int
		omitInt int
	)
	budget := limit
	if limit > 0 {
		// Room for the truncation line, at its longest.
		budget = limit - len(fmt.Sprintf(truncatedLine, len(lines), len(lines))) - 1
	}
	for i := range lines {
		l := &lines[i]
		if interactiveOnly && !l.interactive {
			continue
		}
		if omitted > 0 {
			omitted++
			if l.interactive {
				omitInt++
			}
			continue
		}
		ref, n, known := "", 0, false
		if l.interactive {
			if n, known = r.byNode[l.key]; !known {
				n = r.next + 1
			}
			ref = "@e" + strconv.Itoa(n)
		}
		s := l.format(ref, interactiveOnly)
		if limit > 0 && b.Len()+len(s)+1 > budget {
			omitted = 1
			if l.interactive {
				omitInt = 1
			}
			continue
		}
		if l.interactive {
			if !known {
				r.next = n
				r.byNode[l.key] = n
			}
			r.live[n] = l.target
			refs = append(refs, SnapshotRef{Ref: ref, Role: l.role, Name: l.name})
		}
		b.WriteString(s)
		b.WriteByte('\n')
		shown++
	}
	if omitted > 0 {
		line := fmt.Sprintf(truncatedLine, omitted, omitInt)
		if limit > 0 && b.Len()+len(line)+1 > limit {
			line = string([]rune(line)[:max(0, min(len([]rune(line)), limit-b.Len()-1))])
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String(), refs, shown, omitted
}

// truncatedLine ends a snapshot cut by MaxChars.
const truncatedLine = "[truncated: %d more nodes (%d interactive) left out, without refs; use Interactive or a larger MaxChars]"

// fail turns an error of an action's CDP call into the package's error:
// a deferred dialog that stopped the call, a node or frame that is gone
// (ErrStaleRef), an element without a box (ErrNotVisible), or whatever
// Session.wrap says.
func (x *tabExt) fail(op string, ctx context.Context, ref string, err error) error {
	t := x.t
	var dc *dialogCause
	if errors.As(context.Cause(ctx), &dc) {
		what := "the action"
		if ref != "" {
			what = "acting on " + ref
		}
		return x.dialogOpenErr(op, dc.d, what)
	}
	var re *rpcc.ResponseError
	if errors.As(err, &re) {
		msg := re.Message + " " + re.Data
		for _, s := range []string{"No node with given id", "Could not find node", "does not belong to the document",
			"Node is detached", "No node found", "Node with given id does not belong", "Cannot find context with specified id",
			"No target with given id", "Session with given id not found"} {
			if strings.Contains(msg, s) && ref != "" {
				e := newError(op, ErrStaleRef, ref+" is gone from the page (removed, or its frame navigated)")
				e.Session, e.Tab, e.Err = t.s.id, t.id, err
				return e
			}
		}
		for _, s := range []string{"Could not compute content quads", "does not have a layout object", "not visible", "Could not compute box model"} {
			if strings.Contains(msg, s) && ref != "" {
				e := newError(op, ErrNotVisible, ref+" has no layout box (hidden with display:none, collapsed, or not rendered)")
				e.Session, e.Tab, e.Err = t.s.id, t.id, err
				return e
			}
		}
	}
	if ref != "" && errors.Is(err, errFrameGone) {
		e := newError(op, ErrStaleRef, ref+" was in a frame that has navigated or closed")
		e.Session, e.Tab = t.s.id, t.id
		return e
	}
	return t.s.wrap(op, t.id, err)
}

// errFrameGone marks a call on an out-of-process frame's session that ended.
var errFrameGone = errors.New("frame session ended")

// frameErr marks err as errFrameGone when f is an out-of-process frame
// whose session has ended.
func frameErr(f *frameSess, err error) error {
	if err != nil && f.own && f.conn.Context().Err() != nil {
		return errors.Join(errFrameGone, err)
	}
	return err
}
