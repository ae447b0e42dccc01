// Room: the identity registry: holders of shared browsers and group
// bindings (the identity values are identity_key.go's).
// Registry.mu guards the browser, holder and group tables; it is never held
// while a browser opens or closes or while a CDP call runs. The registry
// reaches its browsers only through the seam (pool_seam.go): closeWith to
// close with a reason, holderSet for holders.

package browserpool

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// RegistryConfig configures a Registry.
type RegistryConfig struct {
	// Pool opens and closes the browsers. Required.
	Pool *Pool
	// Open opens the browser for a new browser key. Zero means
	// Pool.Open. A Tracker's OpenFor or an Allocator can be plugged in
	// so that shared browsers count once against their limits.
	Open func(ctx context.Context, id Identity) (*Session, error)
}

// Registry maps browser keys to browsers and records their holders. A
// browser closes (reason unpinned) only when no holder is left and no group
// publication pins it; ending one tool session never destroys a browser
// another holder still uses. It is safe for concurrent use; the creator
// must call Close.
type Registry struct {
	pool *Pool                                                    // fixed
	open func(ctx context.Context, id Identity) (*Session, error) // fixed

	mu        sync.Mutex
	browsers  map[string]*sharedBrowser // guarded by mu; by browser key
	groups    map[string]*sharedBrowser // guarded by mu; group key -> the browser it published (and pins), which may have ended since
	lastGroup string                    // guarded by mu
	closed    bool                      // guarded by mu
	closeDone chan struct{}             // guarded by mu; made by the first Close, closed when it returns

	launches sync.WaitGroup // the opens under way (launch), waited for by Close
}

// sharedBrowser is one browser and its holders. key and opened are fixed;
// s and err are written once, under Registry.mu, before opened is closed,
// and read under Registry.mu or, without it, after opened is closed; the
// fields after them are guarded by Registry.mu.
type sharedBrowser struct {
	key    string
	opened chan struct{} // closed when the open finished
	s      *Session      // guarded by Registry.mu until opened is closed; fixed after
	err    error         // guarded by Registry.mu until opened is closed; fixed after

	holders holderSet[*Holder]  // guarded by Registry.mu; by holder key
	pins    int                 // guarded by Registry.mu; group publications
	owners  map[string]tabOwner // guarded by Registry.mu; tab id -> its holder; a closed tab is dropped when a holder's call finds it gone
	seq     uint64              // guarded by Registry.mu; the last tabOwner.seq given
}

// tabOwner is the holder of one tab of a shared browser.
type tabOwner struct {
	holder string // holder key; "" for a page kept for the next holder by group (AttachGroup)
	seq    uint64 // when the holder got it (sharedBrowser.seq): a holder's latest tab has its highest
}

// NewRegistry returns a registry over cfg.Pool.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	if cfg.Pool == nil {
		return nil, &Error{Op: "NewRegistry", Class: ErrInvalidConfig, Detail: "Pool: is required", Hint: hints[ErrInvalidConfig]}
	}
	r := &Registry{pool: cfg.Pool, open: cfg.Open, browsers: map[string]*sharedBrowser{}, groups: map[string]*sharedBrowser{}}
	if r.open == nil {
		r.open = func(ctx context.Context, _ Identity) (*Session, error) { return cfg.Pool.Open(ctx) }
	}
	return r, nil
}

// Holder is one identity's hold on a browser: its own tabs in a browser
// that other holders may share. It is safe for concurrent use. Its hold
// ends with Detach or Registry.EndToolSession; from then on every method
// that acts (OpenTab, Tab, Tabs, HandTab, Publish) returns an
// ErrInvalidIdentity error and does nothing: attach again for a new
// holder.
type Holder struct {
	r  *Registry      // fixed
	b  *sharedBrowser // fixed
	id Identity       // fixed

	detachedBy string // guarded by Registry.mu; "" while it holds the browser, else the call that ended its hold
	hadTab     bool   // guarded by Registry.mu; it has held a tab (to tell "no tab yet" from "its tabs were closed")
}

// Identity returns the holder's identity.
func (h *Holder) Identity() Identity { return h.id }

// Session returns the browser session the holder acts on.
func (h *Holder) Session() *Session { return h.b.s }

// Attach makes id a holder of the browser id.BrowserKey(), opening that
// browser if no live one has the key. Attaching again with the same holder
// key returns the same holder.
func (r *Registry) Attach(ctx context.Context, id Identity) (*Holder, error) {
	const op = "Registry.Attach"
	if id.ToolSessionID == "" {
		return nil, &Error{Op: op, Class: ErrInvalidIdentity, Detail: "empty tool session id", Hint: "build the identity with NewIdentity(toolSessionID)"}
	}
	key := id.BrowserKey()
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, registryClosed(op)
		}
		b := r.browsers[key]
		if b == nil {
			b = &sharedBrowser{key: key, opened: make(chan struct{}), owners: map[string]tabOwner{}}
			h := &Holder{r: r, b: b, id: id}
			b.holders.add(id.HolderKey(), h)
			r.browsers[key] = b
			r.launches.Add(1)
			r.mu.Unlock()
			go r.launch(context.WithoutCancel(ctx), id, b)
			select {
			case <-b.opened:
			case <-ctx.Done():
				r.leave(b, h)
				return nil, r.ctxErr(op, id, ctx)
			}
			if b.err != nil {
				return nil, b.err
			}
			return h, nil
		}
		h, _ := b.holders.get(id.HolderKey())
		added := h == nil
		if added {
			h = &Holder{r: r, b: b, id: id}
			b.holders.add(id.HolderKey(), h)
		}
		r.mu.Unlock()
		select {
		case <-b.opened:
		case <-ctx.Done():
			if added {
				r.leave(b, h)
			}
			return nil, r.ctxErr(op, id, ctx)
		}
		if b.err != nil {
			r.forgetHolder(b, h)
			return nil, b.err
		}
		if b.s.Err() != nil { // the browser ended (idle, crash): start over
			r.mu.Lock()
			if r.browsers[key] == b {
				delete(r.browsers, key)
			}
			r.mu.Unlock()
			continue
		}
		return h, nil
	}
}

// launch opens b's browser. It runs on a goroutine of its own, with the
// first caller's values but not its deadline or cancellation: a caller who
// gives up does not abandon a launch other holders wait for (P9). When the
// launch ends with no holder left (every caller gave up or detached) and
// no group pins it, the browser is closed (reason abandoned). The pool
// bounds it (LaunchTimeout, Close); Registry.Close waits for it.
func (r *Registry) launch(ctx context.Context, id Identity, b *sharedBrowser) {
	defer r.launches.Done()
	s, err := r.open(ctx, id)
	r.mu.Lock() // Lookup and releasableLocked read b.s under it, opened or not
	b.s, b.err = s, err
	abandoned := false
	if err != nil {
		if r.browsers[b.key] == b {
			delete(r.browsers, b.key)
		}
	} else {
		abandoned = r.releasableLocked(b)
	}
	r.mu.Unlock()
	close(b.opened)
	if abandoned {
		s.closeWith(context.Background(), ReasonAbandoned)
	}
}

// leave forgets h, a holder whose Attach gave up while b opened. Had the
// launch just ended (it left b to its holders), and h was the last, b is
// closed here (reason abandoned), as launch would have.
func (r *Registry) leave(b *sharedBrowser, h *Holder) {
	r.forgetHolder(b, h)
	select {
	case <-b.opened:
	default:
		return // launch decides when it ends
	}
	r.mu.Lock()
	last := b.err == nil && r.releasableLocked(b)
	r.mu.Unlock()
	if last {
		b.s.closeWith(context.Background(), ReasonAbandoned)
	}
}

// ctxErr is Attach's error for a caller whose ctx ended while the browser
// opened.
func (r *Registry) ctxErr(op string, id Identity, ctx context.Context) error {
	e := newError(op, ctx.Err(), "gave up waiting for the shared browser to open")
	e.Detail += " for " + id.HolderKey()
	e.Hint = "retry with a longer deadline; the browser keeps opening for its other holders, and is closed if none is left"
	return e
}

func (r *Registry) forgetHolder(b *sharedBrowser, h *Holder) {
	r.mu.Lock()
	if cur, _ := b.holders.get(h.id.HolderKey()); cur == h {
		b.holders.remove(h.id.HolderKey())
	}
	r.mu.Unlock()
}

// Holders returns the holder keys of the browser key, sorted.
func (r *Registry) Holders(browserKey string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.browsers[browserKey]
	if b == nil {
		return nil
	}
	return b.holders.keys()
}

// Detach ends this holder's hold. Its tabs are closed, except in a
// published browser, where they are kept for the next holder that attaches
// by group (AttachGroup). The browser is closed (reason unpinned) if no
// holder is left and no publication pins it. Detaching twice is a no-op.
// Afterwards the holder's methods that act return an ErrInvalidIdentity
// error: attach again for a new holder.
func (h *Holder) Detach(ctx context.Context) error {
	return h.detach(ctx, "Holder.Detach")
}

// detach is Detach, by the call named by.
func (h *Holder) detach(ctx context.Context, by string) error {
	h.r.mu.Lock()
	if cur, _ := h.b.holders.get(h.id.HolderKey()); cur != h {
		h.r.mu.Unlock()
		return nil
	}
	h.b.holders.remove(h.id.HolderKey())
	h.detachedBy = by
	var tabs []string
	for tid, o := range h.b.owners {
		if o.holder != h.id.HolderKey() {
			continue
		}
		if h.b.pins > 0 {
			// A published browser keeps the run's pages for whoever
			// attaches by group next (AttachGroup hands them over).
			h.b.owners[tid] = tabOwner{seq: o.seq}
			continue
		}
		tabs = append(tabs, tid)
		delete(h.b.owners, tid)
	}
	closeIt := h.r.releasableLocked(h.b)
	h.r.mu.Unlock()
	if closeIt {
		return h.b.s.closeWith(ctx, ReasonUnpinned)
	}
	var errs []error
	for _, tid := range tabs {
		if err := h.b.s.CloseTab(ctx, tid); err != nil && !errors.Is(err, ErrTabNotFound) && !errors.Is(err, ErrSessionClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// releasableLocked reports whether b has no holder and no pin left, and if
// so removes it from the table.
func (r *Registry) releasableLocked(b *sharedBrowser) bool {
	if b.holders.len() > 0 || b.pins > 0 || b.s == nil {
		return false
	}
	if r.browsers[b.key] == b {
		delete(r.browsers, b.key)
	}
	return true
}

// EndToolSession detaches every holder of the tool session from every
// browser it holds. Browsers other holders still use stay open.
func (r *Registry) EndToolSession(ctx context.Context, toolSessionID string) error {
	r.mu.Lock()
	var hs []*Holder
	for _, b := range r.browsers {
		for _, h := range b.holders.all() {
			if h.id.ToolSessionID == toolSessionID {
				hs = append(hs, h)
			}
		}
	}
	r.mu.Unlock()
	var errs []error
	for _, h := range hs {
		errs = append(errs, h.detach(ctx, "Registry.EndToolSession"))
	}
	return errors.Join(errs...)
}

// Publish binds groupKey to the browser this holder acts on, so that a
// later caller (a builder inspecting a step) finds it with Lookup and
// attaches as a new holder. A published browser is pinned: it outlives its
// holders until it is replaced by another publication, unpublished or
// reclaimed idle. The group becomes the last active group. On a detached
// holder it returns an ErrInvalidIdentity error and publishes nothing.
func (h *Holder) Publish(ctx context.Context, groupKey string) error {
	r := h.r
	r.mu.Lock()
	if by := h.detachedBy; by != "" {
		r.mu.Unlock()
		return h.detachedErr("Holder.Publish", by, nothingDone)
	}
	var release *sharedBrowser
	// The pin is the browser's, not its key's: a browser that ended was
	// replaced under the same key by one this group never pinned.
	if pb := r.groups[groupKey]; pb != nil && pb != h.b {
		pb.pins--
		if r.browsers[pb.key] == pb && r.releasableLocked(pb) {
			release = pb
		}
	}
	if r.groups[groupKey] != h.b {
		h.b.pins++
	}
	r.groups[groupKey] = h.b
	r.lastGroup = groupKey
	r.mu.Unlock()
	if release != nil {
		return release.s.closeWith(ctx, ReasonUnpinned)
	}
	return nil
}

// Unpublish removes groupKey's binding; its browser closes if that was the
// last thing keeping it.
func (r *Registry) Unpublish(ctx context.Context, groupKey string) error {
	r.mu.Lock()
	b := r.groups[groupKey]
	delete(r.groups, groupKey)
	if r.lastGroup == groupKey {
		r.lastGroup = ""
	}
	var release *sharedBrowser
	if b != nil {
		b.pins--
		if r.browsers[b.key] == b && r.releasableLocked(b) {
			release = b
		}
	}
	r.mu.Unlock()
	if release != nil {
		return release.s.closeWith(ctx, ReasonUnpinned)
	}
	return nil
}

// Lookup returns the browser key published for groupKey. A browser that
// has since ended (reclaimed idle, crashed) is not returned.
func (r *Registry) Lookup(groupKey string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.groups[groupKey]
	if b == nil || r.browsers[b.key] != b || (b.s != nil && b.s.Err() != nil) {
		return "", false // ended: a browser opened since under its key is not the one published
	}
	return b.key, true
}

// LastGroup returns the group published most recently, or "".
func (r *Registry) LastGroup() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastGroup
}

// AttachGroup attaches id as a new holder of the browser published for
// groupKey, keeping id's tool session id, and hands it the tabs the
// publishing holders left when they detached.
func (r *Registry) AttachGroup(ctx context.Context, groupKey string, id Identity) (*Holder, error) {
	key, ok := r.Lookup(groupKey)
	if !ok {
		e := newError("Registry.AttachGroup", ErrSessionNotFound, fmt.Sprintf("no live browser is published for group %s", groupKey))
		e.Hint = "run the group's step first (it publishes its browser), or open a browser of your own"
		return nil, e
	}
	id.BrowserSessionID = key
	h, err := r.Attach(ctx, id)
	if err != nil {
		return nil, err
	}
	// Hand over the pages the publishing holders left behind, in the
	// order they got them, after the holder's own.
	r.mu.Lock()
	var left []string
	for tid, o := range h.b.owners {
		if o.holder == "" {
			left = append(left, tid)
		}
	}
	slices.SortFunc(left, func(a, b string) int { return cmp.Compare(h.b.owners[a].seq, h.b.owners[b].seq) })
	for _, tid := range left {
		h.b.seq++
		h.b.owners[tid] = tabOwner{holder: id.HolderKey(), seq: h.b.seq}
		h.hadTab = true
	}
	r.mu.Unlock()
	return h, nil
}

// Close forgets every binding and closes every browser the registry opened
// (reason explicit). Idempotent: a later or concurrent call waits until
// the first has finished, then returns nil.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		done := r.closeDone
		r.mu.Unlock()
		<-done
		return nil
	}
	r.closed = true
	r.closeDone = make(chan struct{})
	defer close(r.closeDone)
	bs := make([]*sharedBrowser, 0, len(r.browsers))
	for _, b := range r.browsers {
		bs = append(bs, b)
	}
	clear(r.browsers)
	clear(r.groups)
	r.mu.Unlock()
	var errs []error
	for _, b := range bs {
		<-b.opened
		if b.s != nil {
			errs = append(errs, b.s.closeWith(context.Background(), ReasonExplicit))
		}
	}
	r.launches.Wait() // those of browsers already forgotten, too
	return errors.Join(errs...)
}

// registryClosed is the error of a call on a closed registry.
func registryClosed(op string) error {
	e := newError(op, ErrPoolClosed, "the registry is closed")
	e.Hint = "create a new Registry (over a Pool that is still open); a closed one cannot be reused"
	return e
}
