// Room: the reaper. Idle reclaim, retries of profile dirs a close could not
// remove, and the orphan sweep at NewPool. It takes Pool.mu only to copy
// tables and bump counters; kills, waits and file I/O run unlocked.

package browserpool

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// reaperPeriod is how often the reaper looks for idle sessions: a tenth of
// the idle timeout, between 10 ms and 30 s. A session is therefore closed
// between IdleTimeout and IdleTimeout + reaperPeriod after its last call
// ended (the documented lag).
func reaperPeriod(idle time.Duration) time.Duration {
	return min(max(idle/10, 10*time.Millisecond), 30*time.Second)
}

// startReaper starts the idle reaper once, when the first session goes live.
func (p *Pool) startReaperLocked() {
	if p.reaperOn || p.cfg.IdleTimeout < 0 {
		return
	}
	p.reaperOn = true
	p.wg.Add(1)
	go p.reap()
}

func (p *Pool) reap() {
	defer p.wg.Done()
	tick := time.NewTicker(reaperPeriod(p.cfg.IdleTimeout))
	defer tick.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case now := <-tick.C:
			p.reclaimIdle(now)
			p.retryPendingRemovals()
		}
	}
}

// reclaimIdle closes every session with no call in flight whose last call
// ended IdleTimeout or more before now. Calls in flight keep a session
// alive however long they take; page events never touch it.
func (p *Pool) reclaimIdle(now time.Time) {
	var idle []*Session
	for _, s := range p.Sessions() {
		last, busy := s.idleSince()
		if !busy && now.Sub(last) >= p.cfg.IdleTimeout {
			idle = append(idle, s)
		}
	}
	for _, s := range idle {
		// Re-check: a call may have started since.
		if last, busy := s.idleSince(); busy || now.Sub(last) < p.cfg.IdleTimeout {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.closeSession(s, ReasonIdle, nil)
		}()
	}
}

// sweep runs at NewPool: it kills what earlier runs that sharing this root
// left behind, and only what it can prove is theirs (M2, M3).
//
// For each manifest entry whose owner is gone: if the pid is alive, its
// start time matches the recorded one, it runs on the same boot, and its
// command line contains the entry's dir, its process group is killed.
// Otherwise nothing is signalled (a reused pid is left alone). Entries of a
// live owner are kept untouched. Then stray processes whose command line
// contains one of our session dirs and whose environment carries our
// session marker are killed, and session dirs no kept entry names are
// removed.
func (p *Pool) sweep() {
	ev := SweepEvent{Time: time.Now()}
	entries, err := p.manifest.Entries()
	if err != nil {
		ev.Err = err
	}
	if c := p.manifest.takeCorrupt(); c != nil {
		ev.Err = c
		p.log.Warn("browserpool: the manifest was unreadable and was replaced; orphans are found by their command line instead", "err", c)
	}
	boot, _ := proc.BootID()
	self := os.Getpid()
	var keep, drop []ManifestEntry
	for _, e := range entries {
		if e.OwnerPID == self || ownerAlive(e, boot) {
			keep = append(keep, e)
			ev.Skipped++
			continue
		}
		drop = append(drop, e)
		if e.PID <= 0 {
			continue
		}
		if verifyEntry(e, boot) {
			killGroup(e.PGID, e.PID)
			ev.Swept++
		} else if proc.Alive(e.PID) {
			ev.Skipped++ // a reused pid: never signalled
		}
	}
	sessionsDir := filepath.Join(p.cfg.Root, "sessions") + string(filepath.Separator)
	keptDirs := map[string]bool{}
	for _, e := range keep {
		keptDirs[e.Dir] = true
	}
	// Stray children (Chromium's rewrite their command line into one
	// string; match the dir as a substring) of dropped sessions, or of
	// sessions whose entry was lost with a corrupt manifest.
	strays, _ := proc.List(func(i proc.Info) bool { return strings.Contains(i.Cmdline, sessionsDir) && i.PID != self })
	for _, st := range strays {
		dir := dirIn(st.Cmdline, sessionsDir)
		if dir == "" || keptDirs[dir] {
			continue
		}
		// Only the browser's main process and its crashpad handlers keep
		// a readable environment (the zygote's children overwrite it), so
		// ask the process and its group leader whose it is: a live owner's
		// browser is left alone even if the manifest lost its entry.
		if m, ok, _ := proc.Environ(st.PID, "BROWSERPOOL_SESSION"); ok && m != filepath.Base(dir) {
			continue
		}
		if ownerMarkerAlive(st.PID, boot) || ownerMarkerAlive(st.PGID, boot) {
			continue
		}
		syscall.Kill(st.PID, syscall.SIGKILL)
		ev.Swept++
	}
	for _, e := range drop {
		if !keptDirs[e.Dir] {
			if removeDir(e.Dir) == nil {
				ev.DirsRemoved++
			}
		}
		p.manifest.Remove(e.Session)
	}
	if des, err := os.ReadDir(sessionsDir); err == nil {
		for _, de := range des {
			dir := filepath.Join(sessionsDir, de.Name())
			if keptDirs[dir] || slices.ContainsFunc(drop, func(e ManifestEntry) bool { return e.Dir == dir }) {
				continue
			}
			if removeDir(dir) == nil {
				ev.DirsRemoved++
			}
		}
	}
	p.mu.Lock()
	p.stats.OrphansSwept += uint64(ev.Swept)
	p.stats.OrphansSkipped += uint64(ev.Skipped)
	p.stats.OrphanDirsRemoved += uint64(ev.DirsRemoved)
	p.mu.Unlock()
	if ev.Swept+ev.Skipped+ev.DirsRemoved > 0 || ev.Err != nil {
		p.log.Info("browserpool: swept leftovers of earlier runs", "swept", ev.Swept, "skipped", ev.Skipped, "dirs_removed", ev.DirsRemoved)
	}
	p.events.emit(p.hook(func(h Hooks) {
		if h.OrphansSwept != nil {
			h.OrphansSwept(ev)
		}
	}))
}

// ownerAlive reports whether the pool that wrote e still runs.
func ownerAlive(e ManifestEntry, boot string) bool {
	if e.OwnerPID <= 0 || (e.OwnerBoot != "" && e.OwnerBoot != boot) || !proc.Alive(e.OwnerPID) {
		return false
	}
	st, err := proc.StartTime(e.OwnerPID)
	return err == nil && st == e.OwnerStart
}

// ownerMarkerAlive reads a process's BROWSERPOOL_OWNER marker
// ("pid:starttime") and reports whether that owner still runs.
func ownerMarkerAlive(pid int, boot string) bool {
	v, _, _ := proc.Environ(pid, "BROWSERPOOL_OWNER")
	opid, ost, ok := strings.Cut(v, ":")
	if !ok {
		return false
	}
	n, err1 := strconv.Atoi(opid)
	st, err2 := strconv.ParseUint(ost, 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	return ownerAlive(ManifestEntry{OwnerPID: n, OwnerStart: st}, boot)
}

// verifyEntry proves that e's pid is still the browser it recorded.
func verifyEntry(e ManifestEntry, boot string) bool {
	if e.BootID != "" && e.BootID != boot || !proc.Alive(e.PID) || e.Dir == "" {
		return false
	}
	st, err := proc.StartTime(e.PID)
	if err != nil || st != e.StartTime {
		return false
	}
	cmd, err := proc.Cmdline(e.PID)
	return err == nil && strings.Contains(cmd, e.Dir)
}

// killGroup SIGKILLs a verified browser's process group and waits (bounded)
// for its leader to go.
func killGroup(pgid, pid int) {
	if pgid > 1 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	} else {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && proc.Alive(pid); {
		time.Sleep(10 * time.Millisecond)
	}
}

// dirIn returns the session dir (sessionsDir + one path element) that cmd
// mentions, or "".
func dirIn(cmd, sessionsDir string) string {
	i := strings.Index(cmd, sessionsDir)
	if i < 0 {
		return ""
	}
	rest := cmd[i+len(sessionsDir):]
	end := strings.IndexAny(rest, "/ ")
	if end >= 0 {
		rest = rest[:end]
	}
	if rest == "" {
		return ""
	}
	return sessionsDir + rest
}

// Orphan is a browser process or manifest entry under the pool's root that
// is not a live session of this pool.
type Orphan struct {
	Session string // from the manifest entry or the process's marker
	PID     int
	Dir     string
	Owner   int  // pid of the pool that recorded it, if known
	Alive   bool // whether its owner still runs (then it is another pool's)
}

// Orphans lists manifest entries and browser processes under the pool's
// root that are not live sessions of this pool: other pools' sessions
// (Alive set) and leftovers the next sweep would remove.
func (p *Pool) Orphans() ([]Orphan, error) {
	entries, err := p.manifest.Entries()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	live := make(map[string]bool, len(p.sessions))
	for id := range p.sessions {
		live[id] = true
	}
	for op := range p.launches {
		live[op.id] = true
	}
	p.mu.Unlock()
	boot, _ := proc.BootID()
	var out []Orphan
	named := map[string]bool{}
	for _, e := range entries {
		named[e.Dir] = true
		if live[e.Session] && e.OwnerPID == os.Getpid() {
			continue
		}
		out = append(out, Orphan{Session: e.Session, PID: e.PID, Dir: e.Dir, Owner: e.OwnerPID, Alive: ownerAlive(e, boot)})
	}
	sessionsDir := filepath.Join(p.cfg.Root, "sessions") + string(filepath.Separator)
	procs, _ := proc.List(func(i proc.Info) bool { return strings.Contains(i.Cmdline, sessionsDir) })
	seen := map[string]bool{}
	for _, pi := range procs {
		dir := dirIn(pi.Cmdline, sessionsDir)
		if dir == "" || named[dir] || seen[dir] {
			continue
		}
		seen[dir] = true
		out = append(out, Orphan{Session: filepath.Base(dir), PID: pi.PID, Dir: dir})
	}
	return out, nil
}
