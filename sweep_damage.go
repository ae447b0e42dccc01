// Room: the sweep facing a damaged manifest (entries that do not verify, a
// file that cannot be read) and the live pools of this process. livePools.mu
// guards only the table of pools; a pool's own mu is taken after it is
// released, never with it held. /proc reads and file I/O run unlocked.

package browserpool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/browserpool/browserpool/internal/manifest"
)

// livePools holds the pools of this process by the pool id their manifest
// gives its entries (manifest.Entry.OwnerPool), so that a sweep tells the
// sessions of a live pool of this process from what a closed one left. It
// holds weak pointers: a pool dropped without Close is not kept alive by it,
// and counts as closed.
var livePools struct {
	mu    sync.Mutex
	pools map[string]weak.Pointer[Pool] // guarded by mu
}

// registerPool records p as a live pool of this process, and forgets the
// pools that have finished closing or are gone.
func registerPool(p *Pool) {
	livePools.mu.Lock()
	if livePools.pools == nil {
		livePools.pools = map[string]weak.Pointer[Pool]{}
	}
	livePools.pools[p.manifest.Owner().OwnerPool] = weak.Make(p)
	ids := make([]string, 0, len(livePools.pools))
	for id := range livePools.pools {
		ids = append(ids, id)
	}
	livePools.mu.Unlock()
	for _, id := range ids {
		poolLive(id) // forgets it if it is not
	}
}

// poolLive reports whether the pool of this process with pool id id is
// alive: not collected, and its Close has not finished. A pool whose Close
// is under way is alive: it still stops its browsers and retries what they
// left.
func poolLive(id string) bool {
	livePools.mu.Lock()
	w, ok := livePools.pools[id]
	livePools.mu.Unlock()
	if !ok {
		return false
	}
	if q := w.Value(); q != nil && !q.closeFinished() {
		return true
	}
	livePools.mu.Lock()
	delete(livePools.pools, id)
	livePools.mu.Unlock()
	return false
}

// closeFinished reports whether p's Close has done its work: every browser
// stopped and every retry made. It reads an atomic flag and receives from
// no channel or context, so it may ask a pool made in another synctest
// bubble.
func (p *Pool) closeFinished() bool { return p.finished.Load() }

// ownerLive reports whether the owner of e still runs: another process that
// is alive, or a live pool of this process. An entry of this process without
// a pool id (written before entries had one) counts as a live pool's.
func (sw *sweeper) ownerLive(e manifest.Entry) bool {
	if sw.isSelf(e.OwnerPID, e.OwnerStart) {
		return e.OwnerPool == "" || poolLive(e.OwnerPool)
	}
	return ownerAlive(e.OwnerPID, e.OwnerStart, e.OwnerBoot, sw.boot)
}

// judgeMalformed counts every manifest entry that does not verify (M2) and
// decides its fate. One whose owner is known and gone is dropped from the
// manifest at the end of the sweep; its dir, if it is a session dir, is
// then like any dir no entry names. One whose owner may still run (alive,
// or unreadable while the entry names a dir or session) stays in the
// manifest, and its session and dir are kept from the sweep (M3). One that
// names nothing and no owner is dropped.
func (sw *sweeper) judgeMalformed(ms []manifest.Malformed) {
	for _, m := range ms {
		sw.ev.Skipped++
		e := m.Entry
		if m.OwnerKnown && !sw.ownerLive(e) || !m.OwnerKnown && e.Dir == "" && e.Session == "" {
			sw.dropBroken = append(sw.dropBroken, m.Raw)
			sw.p.log.Warn("browserpool: sweep dropped a manifest entry that does not verify: its owner is gone",
				"entry", m.Index, "why", m.Why, "session", e.Session, "owner", e.OwnerPID)
			continue
		}
		if manifest.ValidID(e.Session) {
			sw.kept[e.Session] = true
		}
		if filepath.IsAbs(e.Dir) {
			dir := filepath.Clean(e.Dir)
			sw.guarded[dir] = true
			if filepath.Dir(dir) == sw.sessions {
				sw.kept[filepath.Base(dir)] = true
			}
		}
		sw.p.log.Warn("browserpool: sweep kept a manifest entry that does not verify, and its dir: its owner may still run",
			"entry", m.Index, "why", m.Why, "session", e.Session, "dir", e.Dir, "owner", e.OwnerPID, "owner_known", m.OwnerKnown)
	}
}

// sweepProvenDirs is sweepDirs for a sweep that could not read the
// manifest: with no entry to tell whose a session dir is, it removes only
// the dirs of sessions whose browser it proved orphaned (sweepProcesses),
// keeps every other one, counts them as skipped and names them in
// SweepEvent.Err.
func (sw *sweeper) sweepProvenDirs(inUse map[string]bool) {
	des, err := os.ReadDir(sw.sessions)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		sw.p.log.Warn("browserpool: sweep cannot list the sessions dir", "err", err)
	}
	// Entries recorded since the manifest was replaced (a pool sharing
	// the root reserves its entry before it makes the dir) are kept.
	if es, err := sw.p.manifest.Entries(); err == nil {
		for _, e := range es {
			sw.kept[e.Session] = true
		}
	}
	var kept []string
	for _, de := range des {
		dir := filepath.Join(sw.sessions, de.Name())
		name, ok := sw.leftDir(dir, inUse)
		if !ok {
			continue
		}
		if !sw.proven[name] {
			kept = append(kept, name)
			continue
		}
		sw.removeLeft(dir, name)
	}
	if len(kept) == 0 {
		return
	}
	sw.ev.Skipped += len(kept)
	slices.Sort(kept)
	shownIDs := kept
	if len(shownIDs) > 5 {
		shownIDs = shownIDs[:5]
	}
	list := strings.Join(shownIDs, ", ")
	if len(kept) > len(shownIDs) {
		list += fmt.Sprintf(", and %d more", len(kept)-len(shownIDs))
	}
	sw.ev.Err = fmt.Errorf("%w; so the sweep kept %d session dirs under %s that no running browser proved orphaned (%s): a later NewPool on this Root removes those that no entry and no running browser claims by then; remove them sooner by hand only if no pool uses this Root",
		sw.ev.Err, len(kept), sw.sessions, list)
	sw.p.log.Warn("browserpool: sweep kept session dirs it could not prove orphaned: the manifest was unreadable", "dirs", len(kept), "sessions", list)
}
