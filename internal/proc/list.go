// Room: scans over every process, trees and resource usage. No locks.

package proc

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// Info describes one process found by List.
type Info struct {
	PID       int
	PPID      int
	PGID      int
	State     byte   // as in Stat.State; 'Z' for a zombie
	StartTime uint64 // clock ticks since boot, as in Stat.StartTime
	Cmdline   string // as returned by Cmdline; empty for a zombie or a kernel thread
}

// List scans /proc and returns every process for which match returns true
// (every process when match is nil), in ascending pid order. Processes that
// exit during the scan are left out.
func List(match func(Info) bool) ([]Info, error) {
	pids, err := pids()
	if err != nil {
		return nil, err
	}
	var out []Info
	var buf []byte // every file read, one after the other
	for _, pid := range pids {
		if buf, err = readInto(buf, pid, "stat"); err != nil {
			continue // gone
		}
		s, err := parseStat(buf)
		if err != nil {
			continue // a malformed entry we cannot use
		}
		if buf, err = readInto(buf, pid, "cmdline"); err != nil {
			continue
		}
		in := Info{PID: pid, PPID: s.PPID, PGID: s.PGID, State: s.State, StartTime: s.StartTime, Cmdline: cmdline(buf)}
		if match == nil || match(in) {
			out = append(out, in)
		}
	}
	return out, nil
}

// pids returns the pids listed in /proc, ascending.
func pids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("proc: listing /proc: %w", err)
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Tree returns pid followed by all its descendants (found by parent pid),
// parents before children. The error wraps os.ErrNotExist when pid itself
// does not exist. A process that was reparented away (for example a
// daemonized helper now child of pid 1) is not a descendant.
func Tree(pid int) ([]int, error) {
	if _, err := ReadStat(pid); err != nil {
		return nil, err
	}
	all, err := List(nil)
	if err != nil {
		return nil, err
	}
	return append([]int{pid}, Descendants(all, pid)...), nil
}

// TreeIn is Tree over procs, a List of every process taken once for many
// trees: pid followed by its descendants among procs, parents before
// children, or nil when pid is not among procs.
func TreeIn(procs []Info, pid int) []int {
	if _, ok := slices.BinarySearchFunc(procs, pid, func(p Info, pid int) int { return cmp.Compare(p.PID, pid) }); !ok {
		return nil
	}
	return append([]int{pid}, Descendants(procs, pid)...)
}

// Descendants returns the pids of the descendants of pid among procs, by
// parent pid, parents before children (breadth first), pid itself excluded.
func Descendants(procs []Info, pid int) []int {
	children := make(map[int][]int)
	for _, p := range procs {
		if p.PID != p.PPID {
			children[p.PPID] = append(children[p.PPID], p.PID)
		}
	}
	var out []int
	seen := map[int]bool{pid: true}
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// Usage sums the CPU time (user + system, from /proc/PID/stat) and the
// resident and proportional set sizes (Rss and Pss from
// /proc/PID/smaps_rollup, in bytes) of pids. Pass the result of Tree for a
// whole process tree. A process that has vanished, or whose files cannot be
// read, counts as zero: usage is a gauge, and a tree changes while it is read.
func Usage(pids []int) (cpu time.Duration, rssBytes, pssBytes uint64) {
	var ticks uint64
	for _, pid := range pids {
		s, err := ReadStat(pid)
		if err != nil {
			continue
		}
		ticks += s.UTime + s.STime
		rss, pss, err := memory(pid)
		if err != nil {
			continue
		}
		rssBytes += rss
		pssBytes += pss
	}
	return time.Duration(ticks) * (time.Second / ClockTicks), rssBytes, pssBytes
}

// memory reads Rss and Pss from /proc/PID/smaps_rollup.
func memory(pid int) (rss, pss uint64, err error) {
	b, err := read(pid, "smaps_rollup")
	if err != nil {
		return 0, 0, err
	}
	return parseRollup(b)
}

// parseRollup parses the "Rss:" and "Pss:" lines (in kB) of smaps_rollup.
func parseRollup(b []byte) (rss, pss uint64, err error) {
	var haveRss, havePss bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		var dst *uint64
		switch {
		case bytes.HasPrefix(line, []byte("Rss:")):
			dst, haveRss = &rss, true
		case bytes.HasPrefix(line, []byte("Pss:")):
			dst, havePss = &pss, true
		default:
			continue
		}
		f := bytes.Fields(line)
		if len(f) != 3 || string(f[2]) != "kB" {
			return 0, 0, fmt.Errorf("proc: malformed smaps_rollup line %q", line)
		}
		kb, err := strconv.ParseUint(string(f[1]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("proc: malformed smaps_rollup line %q: %v", line, err)
		}
		*dst = kb << 10
	}
	if !haveRss || !havePss {
		// A kernel thread or a zombie has an empty rollup.
		return 0, 0, errors.New("proc: smaps_rollup has no Rss or Pss")
	}
	return rss, pss, nil
}

// Gone reports whether the process had exited (zombie or dead) when it was
// listed.
func (i Info) Gone() bool { return i.State == 'Z' || i.State == 'X' }
