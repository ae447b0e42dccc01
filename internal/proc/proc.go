// Package proc reads what Linux tells about processes under /proc: start
// times, command lines, environments, process groups, liveness, CPU time and
// memory. It holds no state and starts no goroutine.
//
// Room: /proc readers. No locks.
//
// Every function that reads one process returns an error wrapping
// os.ErrNotExist when that process does not exist (it never did, it exited
// and was reaped, or it vanished while being read), so callers can tell "gone"
// from "unreadable" with errors.Is(err, os.ErrNotExist).
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ClockTicks is the unit of the time fields of /proc/PID/stat (USER_HZ): 100
// per second on every Linux architecture Go supports.
const ClockTicks = 100

// Stat is the part of /proc/PID/stat this package uses.
type Stat struct {
	PID   int
	Comm  string // executable name, at most 15 bytes, may hold spaces and parentheses
	State byte   // R, S, D, Z (zombie), X (dead), T, t, I, ...
	PPID  int
	PGID  int
	UTime uint64 // user CPU time, in clock ticks
	STime uint64 // system CPU time, in clock ticks
	// StartTime is when the process started, in clock ticks since boot
	// (field 22). With the boot id and the pid it names a process uniquely
	// across pid reuse.
	StartTime uint64
}

// Gone reports whether the state is a zombie or a dead process: one that has
// exited, whether or not its parent has reaped it yet.
func (s Stat) Gone() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads and parses /proc/PID/stat.
func ReadStat(pid int) (Stat, error) {
	b, err := read(pid, "stat")
	if err != nil {
		return Stat{}, err
	}
	s, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("proc: pid %d: %w", pid, err)
	}
	return s, nil
}

// ParseStat parses the content of a /proc/PID/stat file. The command name
// (field 2) is enclosed in parentheses and may itself contain spaces and
// parentheses, so the fields after it are found after the last ')'.
func ParseStat(b []byte) (Stat, error) {
	s, err := parseStat(b)
	if err != nil {
		return Stat{}, err
	}
	s.Comm = string(b[bytes.IndexByte(b, '(')+1 : bytes.LastIndexByte(b, ')')])
	return s, nil
}

// statSpaces are the bytes that separate the fields of a stat file: the
// ASCII spaces, as strings.Fields splits them (the kernel writes one space).
const statSpaces = " \t\n\v\f\r"

// parseStat is ParseStat without the command name, and without allocating
// unless it fails: List parses the stat file of every process on the
// machine.
func parseStat(b []byte) (Stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("malformed stat %q: no command name", truncate(b))
	}
	var s Stat
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return Stat{}, fmt.Errorf("malformed stat %q: pid: %v", truncate(b), err)
	}
	s.PID = pid
	// Field N counts from the pid (1) and the command name (2); the rest
	// are read up to field 22, the start time.
	n := 2
	for rest := b[end+1:]; n < 22; {
		rest = bytes.TrimLeft(rest, statSpaces)
		if len(rest) == 0 {
			return Stat{}, fmt.Errorf("malformed stat %q: %d fields after the command name", truncate(b), n-2)
		}
		i := bytes.IndexAny(rest, statSpaces)
		if i < 0 {
			i = len(rest)
		}
		var f []byte
		f, rest = rest[:i], rest[i:]
		n++
		var err error
		switch n {
		case 3:
			if len(f) != 1 {
				return Stat{}, fmt.Errorf("malformed stat %q: state %q", truncate(b), f)
			}
			s.State = f[0]
		case 4:
			s.PPID, err = strconv.Atoi(string(f))
		case 5:
			s.PGID, err = strconv.Atoi(string(f))
		case 14:
			s.UTime, err = strconv.ParseUint(string(f), 10, 64)
		case 15:
			s.STime, err = strconv.ParseUint(string(f), 10, 64)
		case 22:
			s.StartTime, err = strconv.ParseUint(string(f), 10, 64)
		}
		if err != nil {
			return Stat{}, fmt.Errorf("malformed stat %q: field %d: %v", truncate(b), n, err)
		}
	}
	return s, nil
}

// StartTime returns the start time of pid in clock ticks since boot
// (/proc/PID/stat field 22).
func StartTime(pid int) (uint64, error) {
	s, err := ReadStat(pid)
	return s.StartTime, err
}

// PGID returns the process group of pid.
func PGID(pid int) (int, error) {
	s, err := ReadStat(pid)
	return s.PGID, err
}

// Alive reports whether pid exists and has not exited. A zombie (exited, not
// yet reaped) is not alive.
func Alive(pid int) bool {
	s, err := ReadStat(pid)
	return err == nil && !s.Gone()
}

// Cmdline returns the command line of pid with its NUL separators turned
// into spaces. Chromium's child processes rewrite their command line into one
// space-joined string, so the two forms look the same here; match a path as a
// substring. A zombie's command line is empty.
func Cmdline(pid int) (string, error) {
	b, err := read(pid, "cmdline")
	if err != nil {
		return "", err
	}
	return cmdline(b), nil
}

func cmdline(b []byte) string {
	b = bytes.TrimRight(b, "\x00")
	var sb strings.Builder
	sb.Grow(len(b))
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			sb.Write(b)
			return sb.String()
		}
		sb.Write(b[:i])
		sb.WriteByte(' ')
		b = b[i+1:]
	}
}

// Environ returns the value of the environment variable name in the initial
// environment of pid (/proc/PID/environ), and whether it is set. Reading
// another user's process needs privileges; that error is returned as is.
func Environ(pid int, name string) (string, bool, error) {
	b, err := read(pid, "environ")
	if err != nil {
		return "", false, err
	}
	v, ok := lookupEnv(b, name)
	return v, ok, nil
}

func lookupEnv(environ []byte, name string) (string, bool) {
	prefix := name + "="
	for kv := range strings.SplitSeq(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, prefix); ok {
			return v, true
		}
	}
	return "", false
}

// BootID returns the kernel's boot id (/proc/sys/kernel/random/boot_id), which
// changes on every boot. A pid and start time mean the same process only
// under the same boot id.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("proc: reading boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Exe returns the path of the executable pid runs (/proc/PID/exe). After an
// exec in place (as the Debian /usr/bin/chromium wrapper does) it is the new
// program.
func Exe(pid int) (string, error) {
	s, err := os.Readlink(path(pid, "exe"))
	if err != nil {
		return "", wrap(pid, "exe", err)
	}
	return s, nil
}

// read reads /proc/PID/name.
func read(pid int, name string) ([]byte, error) {
	return readInto(nil, pid, name)
}

// readInto reads /proc/PID/name into buf's storage, grown as needed, and
// returns it. It opens and reads the file with bare system calls, without
// an *os.File and a buffer of its own for every file: List reads two files
// of every process on the machine with one buffer.
func readInto(buf []byte, pid int, name string) ([]byte, error) {
	buf = buf[:0]
	fd, err := syscall.Open(path(pid, name), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return buf, wrap(pid, name, &fs.PathError{Op: "open", Path: path(pid, name), Err: err})
	}
	defer syscall.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, cap(buf)))
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return buf[:0], wrap(pid, name, &fs.PathError{Op: "read", Path: path(pid, name), Err: err})
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func path(pid int, name string) string {
	return "/proc/" + strconv.Itoa(pid) + "/" + name
}

// wrap names the process in err and makes every "it is gone" condition wrap
// os.ErrNotExist. Reading a file of a process that exits while it is open
// fails with ESRCH instead of ENOENT.
func wrap(pid int, name string, err error) error {
	if pid <= 0 {
		return fmt.Errorf("proc: invalid pid %d: %w", pid, os.ErrNotExist)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("proc: process %d is gone (reading %s): %w", pid, name, os.ErrNotExist)
	}
	return fmt.Errorf("proc: process %d: %w", pid, err)
}

func truncate(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

// Kill sends SIGKILL to pid only if pid is still the live process that
// started at start (clock ticks since boot). It opens a pidfd first (through
// os.FindProcess) and checks the start time after, so a pid reused between a
// scan and the kill is never signalled. The error wraps os.ErrNotExist when
// the process is gone or is not that one.
func Kill(pid int, start uint64) error {
	if pid <= 1 {
		return fmt.Errorf("proc: refusing to signal pid %d: %w", pid, os.ErrNotExist)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return wrap(pid, "pidfd", err)
	}
	defer p.Release()
	s, err := ReadStat(pid)
	if err != nil {
		return err
	}
	if s.StartTime != start || s.Gone() {
		return fmt.Errorf("proc: process %d is not the one that started at %d: %w", pid, start, os.ErrNotExist)
	}
	if err := p.Signal(syscall.SIGKILL); err != nil {
		if errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("proc: process %d is gone: %w", pid, os.ErrNotExist)
		}
		return fmt.Errorf("proc: killing %d: %w", pid, err)
	}
	return nil
}

// KillGroup sends SIGKILL to the process group led by leader, only if leader
// is alive, started at start and leads its group now (as /proc/PID/stat
// says at the time of the call). A group whose leader is another process is
// never signalled. The error wraps os.ErrNotExist when the leader is gone or
// is not that process, and names the group when leader does not lead it.
//
// While any member of a group remains, its number cannot be given to a new
// process, so a group proven by its live leader is still that group when the
// signal arrives a moment later.
func KillGroup(leader int, start uint64) error {
	if leader <= 1 {
		return fmt.Errorf("proc: refusing to signal process group %d: %w", leader, os.ErrNotExist)
	}
	s, err := ReadStat(leader)
	if err != nil {
		return err
	}
	if s.StartTime != start || s.Gone() {
		return fmt.Errorf("proc: process %d is not the one that started at %d: %w", leader, start, os.ErrNotExist)
	}
	if s.PGID != leader {
		return fmt.Errorf("proc: process %d does not lead its process group (%d)", leader, s.PGID)
	}
	if err := syscall.Kill(-leader, syscall.SIGKILL); err != nil {
		return fmt.Errorf("proc: killing process group %d: %w", leader, err)
	}
	return nil
}
