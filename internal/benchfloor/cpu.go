// Room: the CPU time the benchmarks charge to each side: this process's
// (the Go client's, precise) and a browser's process group's (every
// process of one browser, in clock ticks). No locks.

package benchfloor

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's times (USER_HZ, 100 on
// every Linux the package runs on).
const clockTick = 10 * time.Millisecond

// ProcessCPU returns the CPU time (user and system) this process has used,
// every thread included.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// GroupCPU returns the CPU time (user and system) used by the processes of
// process group pgid, and by those of their children that exited and were
// waited for (a browser's closed renderers), in clock ticks (10 ms): read
// it over a whole row, not per operation. A browser the launcher or Start
// started leads a group of its own: pgid is its pid.
func GroupCPU(pgid int) (time.Duration, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	found := false
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ... utime stime cutime cstime: the
		// comm may hold spaces and parentheses, so count from the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 15 {
			continue
		}
		if pg, _ := strconv.Atoi(f[2]); pg != pgid {
			continue
		}
		found = true
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	if !found {
		return 0, fmt.Errorf("no process in group %d: the browser leading it has exited (crashed, or stopped before the row ended)", pgid)
	}
	return time.Duration(ticks) * clockTick, nil
}

// PID returns the browser's pid, which leads its process group.
func (b *Bare) PID() int { return b.cmd.Process.Pid }

// SettleRow waits, with the side-by-side rows' settings, until the
// browsers leading process groups pgids are idle: every group used at
// most 20 ms of CPU in half a second, within 30 s (see Settle).
func SettleRow(pgids ...int) error {
	return Settle(500*time.Millisecond, 20*time.Millisecond, 30*time.Second, pgids...)
}

// Settle waits until the browsers leading process groups pgids are idle:
// a browser keeps working for a second or more after its first tab and
// call (about 1.6 s of CPU in the first second on a 2-core machine), and
// a row timed during that work charges it to whichever side runs then,
// mostly to that browser's own calls (the browser started second looked
// up to 15 % slower). It returns once every group used at most quiet in
// one window of window, or an error after limit.
func Settle(window, quiet, limit time.Duration, pgids ...int) error {
	prev := make([]time.Duration, len(pgids))
	for i, pg := range pgids {
		c, err := GroupCPU(pg)
		if err != nil {
			return err
		}
		prev[i] = c
	}
	for deadline := time.Now().Add(limit); ; {
		time.Sleep(window)
		idle := true
		for i, pg := range pgids {
			c, err := GroupCPU(pg)
			if err != nil {
				return err
			}
			idle = idle && c-prev[i] <= quiet
			prev[i] = c
		}
		if idle {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the browsers of process groups %v were still busy after %v", pgids, limit)
		}
	}
}
