// Package manifest is the durable record of every browser a pool spawned:
// the file format of <Root>/manifest.json, its lock, its atomic write and its
// parser. It knows nothing of a Pool; the pool writes an entry before it
// waits for a browser and the sweep at NewPool reads them.
//
// Room: the manifest file. File.mu serializes this process's
// read-modify-write cycles; a flock on <Root>/manifest.lock serializes them
// across processes sharing the root. Both are held only around the file's
// own I/O, never around a launch or a kill.
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// Names of the files the manifest keeps in a pool's root.
const (
	FileName    = "manifest.json"
	LockName    = "manifest.lock"
	CorruptName = FileName + ".corrupt" // a torn or garbage file, kept aside
	Version     = 1
)

// States of an entry.
const (
	Reserved = "reserved" // the session's dir is taken; no process yet
	Spawned  = "spawned"  // the process exists; not ready yet
	Ready    = "ready"    // the browser answered; its port is known
)

// Entry is one recorded spawn: a local browser process (PID and the
// process fields set) or a lease from a remote fleet (Fleet set; no process
// fields). The fleet fields are omitted when empty, so a file written
// before they existed reads the same.
type Entry struct {
	Session    string    `json:"session"`
	State      string    `json:"state"` // Reserved, Spawned, Ready
	PID        int       `json:"pid,omitempty"`
	PGID       int       `json:"pgid,omitempty"`
	StartTime  uint64    `json:"start_time,omitempty"` // /proc/PID/stat field 22
	BootID     string    `json:"boot_id,omitempty"`
	Dir        string    `json:"dir"`
	Port       int       `json:"port,omitempty"`
	OwnerPID   int       `json:"owner_pid"`
	OwnerStart uint64    `json:"owner_start"`
	OwnerBoot  string    `json:"owner_boot,omitempty"`
	Created    time.Time `json:"created"`
	// Fleet is the kind of fleet of a remote lease ("browserless",
	// "selenium-grid", a third-party launcher's name); "" for a local
	// browser. The sweep never touches a process or dir for a remote entry.
	Fleet string `json:"fleet,omitempty"`
	// Endpoint is the fleet's URL, scheme://host/path only: Add and Update
	// drop credentials, query and fragment (a token is never written).
	Endpoint string `json:"endpoint,omitempty"`
	// LeaseID is the fleet's id of the lease (a Grid session id); "" when
	// the fleet has none (a browserless lease ends with its socket).
	LeaseID string `json:"lease_id,omitempty"`
}

// Remote reports whether e records a lease from a remote fleet rather than
// a local process.
func (e Entry) Remote() bool { return e.Fleet != "" }

// RedactEndpoint returns raw as scheme://host/path, without credentials,
// query or fragment; what it cannot parse is cut before any '?' and after
// any '@'.
func RedactEndpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		s, _, _ := strings.Cut(raw, "?")
		s, _, _ = strings.Cut(s, "#")
		if i := strings.LastIndex(s, "@"); i >= 0 {
			s = s[i+1:]
		}
		return s
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

type fileFormat struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

// File is the manifest of one root (<Root>/manifest.json, mode 0600). Writes
// are atomic (temp file, fsync, rename, fsync of the directory). A torn or
// garbage file is kept aside as manifest.json.corrupt and replaced, never a
// crash. A File is safe for concurrent use, and several Files (in several
// processes) may share a root. Its zero value is not usable: call Open.
type File struct {
	path, lockPath string
	owner          Entry // owner fields for new entries

	mu      sync.Mutex // serializes this process's updates
	corrupt error      // guarded by mu; the last corruption found, for the sweep's report
}

// Open opens (creating it if needed) the manifest of root, with this process
// as the owner of the entries it adds. It fails early on an unwritable root.
// It removes the temp files of writes that a killed process left (a write
// makes and renames its temp file under the lock, so one seen under the
// lock is no writer's).
func Open(root string) (*File, error) {
	m := &File{path: filepath.Join(root, FileName), lockPath: filepath.Join(root, LockName)}
	m.owner.OwnerPID = os.Getpid()
	if st, err := proc.StartTime(m.owner.OwnerPID); err == nil {
		m.owner.OwnerStart = st
	}
	m.owner.OwnerBoot, _ = proc.BootID()
	return m, m.update(func([]Entry) []Entry {
		des, _ := os.ReadDir(root) // not filepath.Glob: root may hold [ or *
		for _, de := range des {
			if ok, _ := filepath.Match(tempPattern, de.Name()); ok {
				os.Remove(filepath.Join(root, de.Name()))
			}
		}
		return nil
	}, true)
}

// tempPattern names writeAtomic's temp files.
const tempPattern = ".manifest-*.tmp"

// Owner returns the owner fields (OwnerPID, OwnerStart, OwnerBoot) this File
// gives its new entries.
func (m *File) Owner() Entry { return m.owner }

// Entries returns the recorded entries.
func (m *File) Entries() ([]Entry, error) {
	var out []Entry
	err := m.update(func(es []Entry) []Entry {
		out = slices.Clone(es)
		return nil
	}, false)
	return out, err
}

// Reserve records a session about to be launched (state Reserved), so that
// a sweep by another pool sharing the root does not take its dir for an
// orphan.
func (m *File) Reserve(id, dir string) error {
	e := m.owner
	e.Session, e.Dir, e.State, e.Created = id, dir, Reserved, time.Now().UTC()
	return m.update(func(es []Entry) []Entry {
		es = slices.DeleteFunc(es, func(x Entry) bool { return x.Session == id })
		return append(es, e)
	}, true)
}

// Add records the spawn of e.Session (state Spawned), keeping the owner and
// created time of its reservation. For a remote lease (e.Fleet set) it
// records Fleet, the redacted Endpoint and LeaseID.
func (m *File) Add(e Entry) error { return m.set(e, Spawned) }

// Update records that e.Session is ready (state Ready; its port is known).
func (m *File) Update(e Entry) error { return m.set(e, Ready) }

func (m *File) set(e Entry, state string) error {
	return m.update(func(es []Entry) []Entry {
		i := slices.IndexFunc(es, func(x Entry) bool { return x.Session == e.Session })
		base := m.owner
		base.Created = time.Now().UTC()
		if i >= 0 {
			base = es[i]
		}
		base.Session, base.State = e.Session, state
		if e.PID != 0 {
			base.PID, base.PGID, base.StartTime, base.BootID = e.PID, e.PGID, e.StartTime, e.BootID
		}
		if e.Dir != "" {
			base.Dir = e.Dir
		}
		if e.Port != 0 {
			base.Port = e.Port
		}
		if e.Fleet != "" {
			base.Fleet, base.Endpoint, base.LeaseID = e.Fleet, RedactEndpoint(e.Endpoint), e.LeaseID
		}
		if i >= 0 {
			es[i] = base
			return es
		}
		return append(es, base)
	}, true)
}

// Remove drops the entry of session id.
func (m *File) Remove(id string) error {
	return m.update(func(es []Entry) []Entry {
		return slices.DeleteFunc(es, func(x Entry) bool { return x.Session == id })
	}, true)
}

// RemoveDir drops the entry whose dir is dir.
func (m *File) RemoveDir(dir string) error {
	return m.update(func(es []Entry) []Entry {
		return slices.DeleteFunc(es, func(x Entry) bool { return x.Dir == dir })
	}, true)
}

// TakeCorrupt returns and clears the last corruption found (the file was
// kept aside as CorruptName and replaced).
func (m *File) TakeCorrupt() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.corrupt
	m.corrupt = nil
	return err
}

// update runs f on the current entries under both locks and, when write is
// set, stores what f returns (the entries as read when f returns nil).
func (m *File) update(f func([]Entry) []Entry, write bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	lf, err := os.OpenFile(m.lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("manifest lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("manifest lock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)

	entries, err := m.readLocked()
	if err != nil {
		m.corrupt = err
		// Keep the bad file for diagnosis and start afresh.
		os.Rename(m.path, filepath.Join(filepath.Dir(m.path), CorruptName))
		entries = nil
		write = true
	}
	out := f(entries)
	if !write {
		return nil
	}
	if out == nil {
		out = entries
		if out == nil {
			out = []Entry{}
		}
	}
	return writeAtomic(m.path, out)
}

func (m *File) readLocked() ([]Entry, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse decodes a manifest file. It never panics; anything that is not a
// version 1 manifest whose entries each have a valid session id, an absolute
// dir and no negative pid is an error. Parse does not judge whether a dir is
// safe to remove: the sweep does.
func Parse(data []byte) ([]Entry, error) {
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON: %w", err)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("manifest has version %d, want %d", f.Version, Version)
	}
	for i, e := range f.Entries {
		if !ValidID(e.Session) || !filepath.IsAbs(e.Dir) || e.PID < 0 || e.PGID < 0 || e.OwnerPID < 0 {
			return nil, fmt.Errorf("manifest entry %d is malformed", i)
		}
	}
	return f.Entries, nil
}

// Marshal encodes entries as a manifest file (what Parse reads back).
func Marshal(entries []Entry) ([]byte, error) {
	if entries == nil {
		entries = []Entry{}
	}
	data, err := json.MarshalIndent(fileFormat{Version: Version, Entries: entries}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ValidID reports whether id is a valid session id: [A-Za-z0-9_-]{1,64}, the
// rule of browserpool.ValidateID, so it is always one safe path element.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// writeAtomic replaces path with entries: a temp file in the same directory
// (mode 0600), fsync, rename over path, fsync of the directory.
func writeAtomic(path string, entries []Entry) error {
	data, err := Marshal(entries)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
