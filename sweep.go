// Room: the orphan sweep at NewPool and Pool.Orphans. It takes Pool.mu only
// to copy tables and bump counters; /proc reads, kills, waits and file I/O
// run unlocked.

package browserpool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/browserpool/browserpool/internal/manifest"
	"github.com/browserpool/browserpool/internal/proc"
)

// Environment markers the local launcher gives every browser it starts.
const (
	sessionMarker  = "BROWSERPOOL_SESSION" // the session id (internal/launch sets it)
	ownerMarkerEnv = "BROWSERPOOL_OWNER"   // "pid:starttime" of the host process
)

// Bounds of the sweep's waits.
const (
	// sweepRounds bounds how often the sweep looks again after killing:
	// children of a browser that died become provable once their group
	// leader is gone, and a crashpad handler may appear late.
	sweepRounds = 4
	// sweepGoneWait bounds each wait for killed processes to disappear.
	sweepGoneWait = 5 * time.Second
	// unprovenGrace is how long processes not proven ours may take to
	// exit on their own before they are counted and their dirs kept.
	unprovenGrace = 200 * time.Millisecond
)

// browserExes are the executable names (of /proc/PID/exe, after any
// wrapper's exec) of Chromium-family browsers and of their crash handlers.
var browserExes = []string{
	"chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable",
	"google-chrome-beta", "google-chrome-unstable", "chrome-headless-shell", "headless_shell",
	"msedge", "microsoft-edge", "brave", "brave-browser",
	"chrome_crashpad_handler", "crashpad_handler",
}

// sweeper is one sweep's view of the root. Only the sweep's goroutine uses it.
type sweeper struct {
	p        *Pool
	sessions string // <Root>/sessions
	prefix   string // sessions + "/": what a command line names
	boot     string
	self     int
	selfSt   uint64          // this process's start time as its manifest records it (0: unknown)
	exes     []string        // browser executable base names
	kept     map[string]bool // sessions of live owners and remote leases: never touched
	dropped  map[string]manifest.Entry
	remote   []manifest.Entry // remote leases of owners that are gone
	ev       SweepEvent

	blind      bool              // the manifest could not be read: only proven dirs are removed (sweep_damage.go)
	proven     map[string]bool   // sessions of processes proven ours: their owner is gone
	guarded    map[string]bool   // dirs named by malformed entries whose owner may live: never removed
	dropBroken []json.RawMessage // malformed entries whose owner is gone, dropped at the end
}

// sweep runs at NewPool: it kills what earlier runs sharing this root left
// behind, and only what it can prove is theirs (M2, M3), and returns once
// what it killed is gone.
//
// A process is proven ours only when every proof holds; a missing proof
// means hands off (counted in Stats.OrphansSkipped, logged):
//
//   - its executable is a Chromium-family browser or crash handler;
//   - its command line runs on one session dir directly under
//     <Root>/sessions (--user-data-dir=<dir>/user-data, or the crash
//     handler's --database inside <dir>);
//   - its environment carries our marker: BROWSERPOOL_SESSION naming that
//     same session and BROWSERPOOL_OWNER naming a host that is gone; when a
//     dropped manifest entry records its pid, the start time and boot match
//     too. Chromium's zygote and its children overwrite the memory
//     /proc/PID/environ shows, so a process without a readable marker is
//     ours only if it is such a child (it has --type=), runs on the session's
//     --user-data-dir, and its process group leader is gone or proven ours.
//
// A proven process that leads its own group has its group killed (the
// group's number is read from /proc at that moment, never from the
// manifest); any other proven process is killed alone, through a pidfd after
// checking its start time. Entries of a live owner are kept untouched.
//
// Then every session dir that no live owner's entry names and no surviving
// process uses is removed, and only if it is a real directory (not a
// symlink) directly under <Root>/sessions named by a valid session id, with
// <Root>/sessions itself inside the root. Anything else an entry names is
// refused and counted as skipped.
//
// An entry of a remote lease (Fleet set) names no local process or dir the
// sweep may touch: its session is kept out of the process and dir sweep.
// When its owner is gone, the pool's launcher ends the lease if it is a
// LeaseEnder of the same fleet and endpoint, and the entry is dropped;
// otherwise (another fleet, no LeaseEnder, the end failed or ran out of
// time) the entry stays for a later pool and is counted as skipped.
//
// The manifest may be damaged (sweep_damage.go): an entry that does not
// verify is counted and kept, with its dir, while its owner may live, and
// dropped once its owner is gone; a manifest that cannot be read at all
// (torn, kept aside by the manifest) leaves every session dir in place but
// those of browsers proven orphaned, and says so in SweepEvent.Err.
//
// Entries of this process are its live pools' (kept) unless they name a pool
// of this process that has finished closing: those are a dead owner's
// (Pool.Close's leftovers). Entries written without a pool id count as a
// live pool's.
func (p *Pool) sweep() {
	registerPool(p)
	sw := &sweeper{p: p, sessions: filepath.Join(p.cfg.Root, "sessions"), self: os.Getpid(),
		kept: map[string]bool{}, dropped: map[string]manifest.Entry{},
		proven: map[string]bool{}, guarded: map[string]bool{}}
	sw.prefix = sw.sessions + string(filepath.Separator)
	sw.boot, _ = proc.BootID()
	sw.selfSt = p.manifest.Owner().OwnerStart
	sw.exes = browserExeNames(p)
	sw.ev.Time = time.Now()

	contents, err := p.manifest.Read()
	if err != nil {
		sw.ev.Err, sw.blind = err, true
		p.log.Warn("browserpool: the manifest cannot be read; the sweep removes only the session dirs of browsers it proves orphaned", "err", err)
	}
	if c := p.manifest.TakeCorrupt(); c != nil {
		sw.ev.Err, sw.blind = c, true
		p.log.Warn("browserpool: the manifest was unreadable and was kept aside and replaced; orphans are found by their command line instead", "err", c)
	}
	for _, e := range contents.Entries {
		if sw.ownerLive(e) {
			sw.kept[e.Session] = true
			sw.ev.Skipped++
			continue
		}
		if e.Remote() {
			sw.kept[e.Session] = true // nothing local is its own
			sw.remote = append(sw.remote, e)
			continue
		}
		sw.dropped[e.Session] = e
	}
	sw.judgeMalformed(contents.Malformed)

	inUse := sw.sweepProcesses()
	for dir := range sw.guarded {
		inUse[dir] = true
	}
	sw.refuseRecords(inUse)
	if sw.blind {
		sw.sweepProvenDirs(inUse)
	} else {
		sw.sweepDirs(inUse)
	}
	for id := range sw.dropped {
		p.manifest.Remove(id)
	}
	if err := p.manifest.DropMalformed(sw.dropBroken); err != nil {
		p.log.Warn("browserpool: sweep could not drop the malformed manifest entries of owners that are gone", "err", err)
	}
	sw.endLeases()

	ev := sw.ev
	p.mu.Lock()
	p.stats.OrphansSwept += uint64(ev.Swept)
	p.stats.OrphansSkipped += uint64(ev.Skipped)
	p.stats.OrphanDirsRemoved += uint64(ev.DirsRemoved)
	p.stats.OrphanLeasesEnded += uint64(ev.LeasesEnded)
	p.mu.Unlock()
	if ev.Swept+ev.Skipped+ev.DirsRemoved+ev.LeasesEnded > 0 || ev.Err != nil {
		p.log.Info("browserpool: swept leftovers of earlier runs", "swept", ev.Swept, "skipped", ev.Skipped, "dirs_removed", ev.DirsRemoved, "leases_ended", ev.LeasesEnded)
	}
	p.events.emit(p.hook(func(h Hooks) {
		if h.OrphansSwept != nil {
			h.OrphansSwept(ev)
		}
	}))
}

// verdict is what the sweep decided about one process.
type verdict struct {
	info    proc.Info
	session string
	ours    bool
	group   bool   // ours and leads its group: the group is killed
	covered bool   // ours and in the group of a leader being killed
	ignore  bool   // a live owner's session: not ours to judge
	why     string // why it is not proven ours
}

// sweepProcesses kills, in rounds, every process proven ours, waits for
// them to go, and counts what it leaves alone. It returns the session dirs
// surviving unproven processes name: they are not removed.
func (sw *sweeper) sweepProcesses() map[string]bool {
	var last []verdict
	for range sweepRounds {
		vs := sw.classify()
		last = vs
		var pids []int
		var groups []int
		for _, v := range vs {
			switch {
			case !v.ours:
				continue
			case v.covered:
				sw.proven[v.session] = true
				continue
			case v.group:
				if err := proc.KillGroup(v.info.PID, v.info.StartTime); err != nil {
					sw.p.log.Debug("browserpool: sweep: group not killed", "pgid", v.info.PID, "err", err)
					continue
				}
				groups = append(groups, v.info.PID)
			default:
				if err := proc.Kill(v.info.PID, v.info.StartTime); err != nil {
					sw.p.log.Debug("browserpool: sweep: process not killed", "pid", v.info.PID, "err", err)
					continue
				}
			}
			pids = append(pids, v.info.PID)
			sw.proven[v.session] = true
			sw.ev.Swept++
			sw.p.log.Info("browserpool: sweep killed an orphan browser process", "session", v.session, "pid", v.info.PID, "group", v.group)
		}
		if len(pids) == 0 {
			break
		}
		waitGone(pids, groups, sweepGoneWait)
		last = nil
	}
	if last == nil {
		last = sw.classify()
	}
	// A process caught while it exits shows no environment: give what is
	// not proven a moment to go before counting it and keeping its dir.
	var unproven []int
	for _, v := range last {
		if !v.ignore && !v.ours {
			unproven = append(unproven, v.info.PID)
		}
	}
	waitGone(unproven, nil, unprovenGrace)
	inUse := map[string]bool{}
	for _, v := range last {
		if v.ignore || v.ours || !proc.Alive(v.info.PID) {
			continue
		}
		sw.ev.Skipped++
		if v.session != "" {
			inUse[filepath.Join(sw.sessions, v.session)] = true
		}
		sw.p.log.Warn("browserpool: sweep left a process alone: not proven ours", "pid", v.info.PID, "session", v.session, "why", v.why)
	}
	return inUse
}

// classify judges every process whose command line names a path under
// <Root>/sessions. Processes with a readable marker are judged first, so
// that a marker-less child can be judged by its group leader.
func (sw *sweeper) classify() []verdict {
	procs, _ := proc.List(func(i proc.Info) bool {
		return i.PID != sw.self && i.PID > 1 && !i.Gone() && namesPath(i.Cmdline, sw.prefix)
	})
	vs := make([]verdict, len(procs))
	byPID := map[int]int{}
	var later []int
	for i, pi := range procs {
		byPID[pi.PID] = i
		v := &vs[i]
		v.info = pi
		v.session = sessionNamed(pi.Cmdline, sw.prefix)
		if v.session == "" {
			v.why = "its command line names no valid session dir"
			continue
		}
		if sw.kept[v.session] {
			v.ignore = true
			continue
		}
		if exe, err := proc.Exe(pi.PID); err != nil || !sw.isBrowser(exe) {
			v.why = fmt.Sprintf("not a browser executable (%q)", exe)
			continue
		}
		dir := sw.prefix + v.session
		udd := hasArg(pi.Cmdline, "--user-data-dir="+dir+"/user-data")
		if !udd && !strings.Contains(pi.Cmdline, " --database="+dir+"/") {
			v.why = "it does not run on the session's profile"
			continue
		}
		marker, ok, err := proc.Environ(pi.PID, sessionMarker)
		if err != nil || !ok {
			if !udd || !strings.Contains(pi.Cmdline, " --type=") {
				v.why = "no environment marker, and not a browser child process"
				continue
			}
			later = append(later, i)
			continue
		}
		if marker != v.session {
			v.why = fmt.Sprintf("its marker names session %q", marker)
			continue
		}
		if why := sw.ownerGone(pi, v.session); why != "" {
			v.why = why
			continue
		}
		if e, ok := sw.dropped[v.session]; ok && e.PID == pi.PID &&
			(e.StartTime != pi.StartTime || e.BootID != "" && e.BootID != sw.boot) {
			v.why = "its start time or boot differs from the recorded spawn"
			continue
		}
		v.ours, v.group = true, pi.PGID == pi.PID
	}
	// Children whose environment the zygote overwrote.
	for _, i := range later {
		v := &vs[i]
		leader := v.info.PGID
		if leader == v.info.PID {
			v.why = "a browser child leading its own group, without a marker"
			continue
		}
		if j, ok := byPID[leader]; ok && vs[j].ours && vs[j].group {
			v.ours, v.covered = true, true
			continue
		}
		if proc.Alive(leader) {
			v.why = fmt.Sprintf("its process group leader %d is not proven ours", leader)
			continue
		}
		v.ours = true
	}
	return vs
}

// isSelf reports whether the owner pid, started at start, is this process:
// the same pid alone is not enough, as a host restarted in a fresh pid
// namespace (a container) gets the pid its predecessor had. An unknown
// start time on either side counts as this process: never sweep a live
// pool's browsers.
func (sw *sweeper) isSelf(pid int, start uint64) bool {
	return pid == sw.self && (start == sw.selfSt || start == 0 || sw.selfSt == 0)
}

// ownerGone returns "" when the BROWSERPOOL_OWNER marker of pi (a browser
// of session) names a host that is gone, else why not. A marker naming this
// process names a host that is gone only for the browser that a pool of
// this process which has finished closing recorded: its entry is dropped
// (see ownerLive) and records this very pid, start time and boot.
func (sw *sweeper) ownerGone(pi proc.Info, session string) string {
	pid := pi.PID
	v, ok, _ := proc.Environ(pid, ownerMarkerEnv)
	if !ok {
		return "no owner marker"
	}
	opid, ost, ok := strings.Cut(v, ":")
	n, err1 := strconv.Atoi(opid)
	st, err2 := strconv.ParseUint(ost, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Sprintf("malformed owner marker %q", v)
	}
	if sw.isSelf(n, st) {
		if e, ok := sw.dropped[session]; ok && e.OwnerPool != "" && e.PID == pid && e.StartTime == pi.StartTime &&
			(e.BootID == "" || e.BootID == sw.boot) {
			return ""
		}
		return fmt.Sprintf("its owner %d still runs", n)
	}
	if ownerAlive(n, st, "", sw.boot) {
		return fmt.Sprintf("its owner %d still runs", n)
	}
	return ""
}

// refuseRecords counts what dropped entries record but the sweep did not
// touch: a live pid not proven ours (a reused pid, a process that is not a
// browser), and a recorded process group that is not the browser's own.
func (sw *sweeper) refuseRecords(inUse map[string]bool) {
	// A browser caught while it exits still counts as alive but shows an
	// empty command line: give recorded pids a moment to go first.
	var live []int
	for _, e := range sw.dropped {
		if e.PID > 0 && e.PID != sw.self && proc.Alive(e.PID) && !sw.namesSession(e.PID, e.Session) {
			live = append(live, e.PID)
		}
	}
	waitGone(live, nil, unprovenGrace)
	for _, e := range sw.dropped {
		if slices.Contains(live, e.PID) && proc.Alive(e.PID) && !sw.namesSession(e.PID, e.Session) {
			sw.ev.Skipped++
			sw.p.log.Warn("browserpool: sweep left a recorded pid alone: not proven ours", "session", e.Session, "pid", e.PID)
		}
		if e.PGID > 0 && e.PGID != e.PID {
			sw.ev.Skipped++
			sw.p.log.Warn("browserpool: sweep refused a recorded process group that is not its browser's", "session", e.Session, "pid", e.PID, "pgid", e.PGID)
		}
	}
}

// namesSession reports whether pid's command line names session id's dir:
// then the process scan has judged (and counted) it already.
func (sw *sweeper) namesSession(pid int, id string) bool {
	cl, err := proc.Cmdline(pid)
	return err == nil && sessionNamed(cl, sw.prefix) == id
}

// waitGone waits, at most d, until every pid is gone and no live process
// is left in any of groups.
func waitGone(pids, groups []int, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		left := slices.ContainsFunc(pids, proc.Alive)
		if !left && len(groups) > 0 {
			members, _ := proc.List(func(i proc.Info) bool { return slices.Contains(groups, i.PGID) && !i.Gone() })
			left = len(members) > 0
		}
		if !left {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// browserExeNames returns the executable base names the sweep takes for a
// browser: the Chromium family's, and the configured executable's.
func browserExeNames(p *Pool) []string {
	names := slices.Clone(browserExes)
	exes := []string{p.cfg.Executable}
	if l, ok := p.launcher.(*LocalLauncher); ok {
		exes = append(exes, l.Executable)
	}
	for _, e := range exes {
		if e == "" {
			continue
		}
		names = append(names, filepath.Base(e))
		if r, err := filepath.EvalSymlinks(e); err == nil {
			names = append(names, filepath.Base(r))
		}
	}
	return names
}

// isBrowser reports whether exe (a /proc/PID/exe target) is a browser.
func (sw *sweeper) isBrowser(exe string) bool {
	exe = strings.TrimSuffix(exe, " (deleted)")
	return exe != "" && slices.Contains(sw.exes, filepath.Base(exe))
}

// ownerAlive reports whether the host process pid, started at start on
// boot ownerBoot ("" if unrecorded), still runs on boot.
func ownerAlive(pid int, start uint64, ownerBoot, boot string) bool {
	if pid <= 0 || (ownerBoot != "" && ownerBoot != boot) || !proc.Alive(pid) {
		return false
	}
	st, err := proc.StartTime(pid)
	return err == nil && st == start
}

// namesPath reports whether cmd names a path starting with prefix as a whole
// argument or a flag's value (after a space or '=').
func namesPath(cmd, prefix string) bool {
	for i := 0; ; {
		j := strings.Index(cmd[i:], prefix)
		if j < 0 {
			return false
		}
		j += i
		if j == 0 || cmd[j-1] == ' ' || cmd[j-1] == '=' {
			return true
		}
		i = j + 1
	}
}

// sessionNamed returns the valid session id of the first session dir
// (prefix + id, then '/', ' ' or the end) cmd names, or "".
func sessionNamed(cmd, prefix string) string {
	for i := 0; ; {
		j := strings.Index(cmd[i:], prefix)
		if j < 0 {
			return ""
		}
		j += i
		i = j + 1
		if j > 0 && cmd[j-1] != ' ' && cmd[j-1] != '=' {
			continue
		}
		rest := cmd[j+len(prefix):]
		if end := strings.IndexAny(rest, "/ "); end >= 0 {
			rest = rest[:end]
		}
		if manifest.ValidID(rest) {
			return rest
		}
	}
}

// hasArg reports whether cmd (arguments joined by spaces) holds arg as a
// whole argument.
func hasArg(cmd, arg string) bool {
	return strings.HasSuffix(cmd, " "+arg) || strings.Contains(cmd, " "+arg+" ")
}
