// Room: a holder's tabs: OpenTab, Tab, Tabs, HandTab, and the errors of
// a holder with no such tab or detached. Registry.mu (identity.go) guards
// the owners table and the holder's fields; no CDP call is made with it
// held.

package browserpool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// OpenTab opens a tab that belongs to this holder, as Session.OpenTab
// does (a failed navigation returns the tab, open and held, with the
// error). On a detached holder it opens nothing and returns an
// ErrInvalidIdentity error; a tab whose open finished after the holder was
// detached is closed again, and the same error is returned.
func (h *Holder) OpenTab(ctx context.Context, url string) (*Tab, error) {
	const op = "Holder.OpenTab"
	if err := h.check(op); err != nil {
		return nil, err
	}
	t, err := h.b.s.OpenTab(ctx, url)
	if t == nil {
		return nil, err
	}
	h.r.mu.Lock()
	by := h.detachedBy
	if by == "" {
		h.b.seq++
		h.b.owners[t.ID()] = tabOwner{holder: h.id.HolderKey(), seq: h.b.seq}
		h.hadTab = true
	}
	h.r.mu.Unlock()
	if by != "" {
		// Detached while the tab opened: the Detach could not close a
		// tab it did not know of, and nobody holds it now.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), orphanCloseTimeout)
		h.b.s.CloseTab(cctx, t.ID()) // an error leaves nothing to do: the browser may have closed with its last holder
		cancel()
		return nil, h.detachedErr(op, by, "the tab its call opened meanwhile was closed again")
	}
	return t, err
}

// orphanCloseTimeout bounds the close of a tab a detached holder's OpenTab
// opened: the caller's ctx may be what ended.
const orphanCloseTimeout = 5 * time.Second

// check returns the error of op on a detached holder, or nil.
func (h *Holder) check(op string) error {
	h.r.mu.Lock()
	by := h.detachedBy
	h.r.mu.Unlock()
	if by != "" {
		return h.detachedErr(op, by, nothingDone)
	}
	return nil
}

// detachedErr is the error of op on a holder that by (Holder.Detach or
// Registry.EndToolSession) detached; what says what became of the call.
func (h *Holder) detachedErr(op, by, what string) error {
	e := newError(op, ErrInvalidIdentity, fmt.Sprintf("holder %s was detached from browser %s by %s: it holds no tab and can no longer act; %s",
		echo(h.id.HolderKey()), echo(h.b.key), by, what))
	e.Session = h.b.s.ID()
	e.Hint = "attach again with Registry.Attach or Registry.AttachGroup to get a new holder, and act through it"
	return e
}

// nothingDone is what became of a call a detached holder refused.
const nothingDone = "nothing was done"

// Tab returns one of this holder's open tabs (its own, or one handed to
// it). An empty id means the holder's latest tab: the one opened or handed
// to it last that is still open. A tab of another holder does not resolve
// (ErrTabNotHeld); an id the holder does not hold, or a tab of its that
// was closed, is an ErrTabNotFound error naming the holder's open tabs
// only. A closed tab is forgotten. On a detached holder Tab returns an
// ErrInvalidIdentity error.
func (h *Holder) Tab(ctx context.Context, id string) (*Tab, error) {
	const op = "Holder.Tab"
	mine := h.id.HolderKey()
	var closed []string // this holder's tabs found closed by this call
	for {
		h.r.mu.Lock()
		if by := h.detachedBy; by != "" {
			h.r.mu.Unlock()
			return nil, h.detachedErr(op, by, nothingDone)
		}
		want := id
		if want == "" {
			want = h.latestLocked()
		}
		o, known := h.b.owners[want]
		hadTab := h.hadTab
		h.r.mu.Unlock()
		switch {
		case want == "":
			return nil, h.noTab(op, hadTab, closed)
		case !known:
			return nil, h.notHeld(ctx, op, want)
		case o.holder != mine:
			e := newError(op, ErrTabNotHeld, fmt.Sprintf("tab %s belongs to holder %s, not %s", echo(want), echo(o.holder), echo(mine)))
			if o.holder == "" {
				e.Detail = fmt.Sprintf("tab %s was left by the browser's publishing holders for the next holder that attaches by group, not held by %s", echo(want), echo(mine))
			}
			e.Session, e.Tab = h.b.s.ID(), want
			e.Hint = "open a tab of your own with Holder.OpenTab, or ask its holder to hand it over with Holder.HandTab"
			return nil, e
		}
		t, err := h.b.s.Tab(ctx, want)
		if err == nil {
			if err := h.check(op); err != nil {
				return nil, err // detached meanwhile: the Detach closes (or keeps for its group) the tab
			}
			return t, nil
		}
		if !errors.Is(err, ErrTabNotFound) {
			return nil, err
		}
		// The browser no longer lists the tab: it was closed (by
		// Session.CloseTab, by its page, by a person). Forget it.
		h.r.mu.Lock()
		if cur, ok := h.b.owners[want]; ok && cur == o {
			delete(h.b.owners, want)
		}
		h.r.mu.Unlock()
		closed = append(closed, want)
		if id != "" {
			return nil, h.tabClosed(ctx, op, want)
		}
	}
}

// latestLocked returns the holder's tab with the highest seq, or "".
func (h *Holder) latestLocked() string {
	mine := h.id.HolderKey()
	var id string
	var seq uint64
	for tid, o := range h.b.owners {
		if o.holder == mine && o.seq > seq {
			id, seq = tid, o.seq
		}
	}
	return id
}

// noTab is Tab's error for a holder with no open tab; closed lists the
// tabs of its that this call found closed.
func (h *Holder) noTab(op string, hadTab bool, closed []string) error {
	key := echo(h.id.HolderKey())
	e := newError(op, ErrTabNotFound, fmt.Sprintf("holder %s has no tab yet", key))
	e.Session = h.b.s.ID()
	e.Hint = "open one with Holder.OpenTab first"
	if len(closed) > 0 {
		e.Detail = fmt.Sprintf("holder %s has no open tab: its tabs %s were closed", key, fmtIDs(closed))
		e.Hint = "open a new one with Holder.OpenTab"
	} else if hadTab {
		e.Detail = fmt.Sprintf("holder %s has no open tab: the tabs it held were closed or handed over", key)
		e.Hint = "open a new one with Holder.OpenTab"
	}
	return e
}

// notHeld is Tab's error for an id the holder does not hold (never did,
// or a closed tab it has forgotten).
func (h *Holder) notHeld(ctx context.Context, op, id string) error {
	e := newError(op, ErrTabNotFound, fmt.Sprintf("holder %s has no tab %s; its open tabs: %s", echo(h.id.HolderKey()), echo(id), fmtIDs(h.openIDs(ctx))))
	e.Session, e.Tab = h.b.s.ID(), id
	e.Hint = "use one of the holder's own tabs (Holder.Tabs lists them), or open one with Holder.OpenTab"
	return e
}

// tabClosed is Tab's error for a tab of the holder's that was closed.
func (h *Holder) tabClosed(ctx context.Context, op, id string) error {
	e := newError(op, ErrTabNotFound, fmt.Sprintf("tab %s of holder %s was closed; its open tabs: %s", echo(id), echo(h.id.HolderKey()), fmtIDs(h.openIDs(ctx))))
	e.Session, e.Tab = h.b.s.ID(), id
	e.Hint = "use one of the holder's open tabs (Holder.Tabs lists them), or open a new one with Holder.OpenTab"
	return e
}

// openIDs returns the ids of the holder's open tabs, for an error's text:
// those the browser lists, or, when it cannot be asked, those the holder
// records.
func (h *Holder) openIDs(ctx context.Context) []string {
	tabs, err := h.tabs(ctx)
	ids := make([]string, 0, len(tabs))
	if err == nil {
		for _, t := range tabs {
			ids = append(ids, t.TabID)
		}
		return ids
	}
	mine := h.id.HolderKey()
	h.r.mu.Lock()
	for tid, o := range h.b.owners {
		if o.holder == mine {
			ids = append(ids, tid)
		}
	}
	h.r.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// Tabs lists this holder's open tabs only, and forgets those of its tabs
// that were closed. On a detached holder it returns an ErrInvalidIdentity
// error.
func (h *Holder) Tabs(ctx context.Context) ([]TabInfo, error) {
	const op = "Holder.Tabs"
	if err := h.check(op); err != nil {
		return nil, err
	}
	out, err := h.tabs(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.check(op); err != nil {
		return nil, err // detached meanwhile: the tabs are no longer its own
	}
	return out, nil
}

// tabs lists the holder's open tabs and forgets the closed ones.
func (h *Holder) tabs(ctx context.Context) ([]TabInfo, error) {
	h.r.mu.Lock()
	before := h.b.seq
	h.r.mu.Unlock()
	all, err := h.b.s.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	mine := h.id.HolderKey()
	listed := make(map[string]bool, len(all))
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	out := all[:0]
	for _, t := range all {
		listed[t.TabID] = true
		if h.b.owners[t.TabID].holder == mine {
			out = append(out, t)
		}
	}
	for tid, o := range h.b.owners {
		// A tab the holder got before the listing began, and that the
		// browser does not list, was closed; one it got since may just
		// have opened.
		if o.holder == mine && o.seq <= before && !listed[tid] {
			delete(h.b.owners, tid)
		}
	}
	return out, nil
}

// HandTab gives one of this holder's tabs to another holder of the same
// browser; it becomes the receiver's latest tab. On a detached holder it
// returns an ErrInvalidIdentity error.
func (h *Holder) HandTab(tabID string, to Identity) error {
	const op = "Holder.HandTab"
	h.r.mu.Lock()
	defer h.r.mu.Unlock()
	if by := h.detachedBy; by != "" {
		return h.detachedErr(op, by, nothingDone)
	}
	if h.b.owners[tabID].holder != h.id.HolderKey() {
		e := newError(op, ErrTabNotHeld, fmt.Sprintf("tab %s is not held by %s", echo(tabID), echo(h.id.HolderKey())))
		e.Session, e.Tab = h.b.s.ID(), tabID
		e.Hint = "hand over one of your own tabs (Holder.Tabs lists them)"
		return e
	}
	recv, _ := h.b.holders.get(to.HolderKey())
	if recv == nil {
		e := newError(op, ErrInvalidIdentity, fmt.Sprintf("%s does not hold this browser", echo(to.HolderKey())))
		e.Hint = "attach the receiving identity to the same browser first"
		return e
	}
	h.b.seq++
	h.b.owners[tabID] = tabOwner{holder: to.HolderKey(), seq: h.b.seq}
	recv.hadTab = true
	return nil
}
