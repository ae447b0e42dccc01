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
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	FileName = "manifest.json"
	LockName = "manifest.lock"
	// CorruptPrefix starts the name of an unreadable file kept aside:
	// manifest.json.corrupt-<UTC time>-<n>. A name is never reused, so a
	// second corruption never overwrites the first one's copy.
	CorruptPrefix = FileName + ".corrupt-"
	// CorruptKeep is how many kept-aside files a root keeps: the oldest
	// beyond it are removed, so a writer that keeps damaging the file
	// cannot fill the disk.
	CorruptKeep = 10
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
	// OwnerPool names the File (one per pool) that recorded the entry, so
	// that a later pool of the same process can tell a closed pool's
	// leftovers from a live pool's sessions. "" in files written before it
	// existed.
	OwnerPool string `json:"owner_pool,omitempty"`
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

// File is the manifest of one root (<Root>/manifest.json, mode 0600). Writes
// are atomic (temp file, fsync, rename, fsync of the directory), and take
// effect only on a file this package can read:
//
//   - a file of a newer version (VersionError) is never rewritten or renamed:
//     every call returns the error;
//   - an unreadable file (ErrUnreadable: torn, garbage) is left as it is by
//     reads, and kept aside under a new CorruptPrefix name and replaced by an
//     empty manifest at the next write (Open writes), never a crash;
//   - an entry that does not verify is left out of Entries and kept in the
//     file as it was, until DropMalformed removes it.
//
// A File is safe for concurrent use, and several Files (in several
// processes) may share a root. Its zero value is not usable: call Open.
type File struct {
	path, lockPath string
	owner          Entry // owner fields for new entries

	mu      sync.Mutex // serializes this process's updates
	corrupt error      // guarded by mu; the last file kept aside, for the sweep's report
}

// Open opens (creating it if needed) the manifest of root, with this process
// as the owner of the entries it adds and a fresh owner pool id naming this
// File. It fails early on an unwritable root and on a manifest of a newer
// version (a *VersionError; the file is left untouched). It keeps aside an
// unreadable file (see TakeCorrupt). It removes the temp files of writes
// that a killed process left (a write makes and renames its temp file under
// the lock, so one seen under the lock is no writer's).
func Open(root string) (*File, error) {
	m := &File{path: filepath.Join(root, FileName), lockPath: filepath.Join(root, LockName)}
	m.owner.OwnerPID = os.Getpid()
	if st, err := proc.StartTime(m.owner.OwnerPID); err == nil {
		m.owner.OwnerStart = st
	}
	m.owner.OwnerBoot, _ = proc.BootID()
	m.owner.OwnerPool = rand.Text()
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

// Owner returns the owner fields (OwnerPID, OwnerStart, OwnerBoot,
// OwnerPool) this File gives its new entries.
func (m *File) Owner() Entry { return m.owner }

// Entries returns the recorded entries that verify. It never changes the
// file: on an unreadable file it returns an error wrapping ErrUnreadable,
// on a newer one a *VersionError.
func (m *File) Entries() ([]Entry, error) {
	c, err := m.Read()
	return c.Entries, err
}

// Read returns the file's contents: the entries that verify and those that
// do not. It never changes the file; its errors are those of Entries.
func (m *File) Read() (Contents, error) {
	var out Contents
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.cycleLocked(func(c *Contents) {
		out = Contents{Entries: slices.Clone(c.Entries), Malformed: slices.Clone(c.Malformed)}
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

// DropMalformed removes from the file the malformed entries whose Raw is
// one of raws (as Read returned them); the others stay as they are.
func (m *File) DropMalformed(raws []json.RawMessage) error {
	if len(raws) == 0 {
		return nil
	}
	return m.updateAll(func(c *Contents) {
		c.Malformed = slices.DeleteFunc(c.Malformed, func(x Malformed) bool {
			return slices.ContainsFunc(raws, func(r json.RawMessage) bool { return sameRaw(r, x.Raw) })
		})
	})
}

// TakeCorrupt returns and clears the last corruption found: the unreadable
// file was kept aside under a CorruptPrefix name (the error names it) and
// replaced by an empty manifest. It wraps ErrUnreadable.
func (m *File) TakeCorrupt() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.corrupt
	m.corrupt = nil
	return err
}

// update runs f on the current entries under both locks and, when write is
// set, stores what f returns (the entries as read when f returns nil),
// keeping the file's malformed entries as they were.
func (m *File) update(f func([]Entry) []Entry, write bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cycleLocked(func(c *Contents) {
		if out := f(c.Entries); out != nil {
			c.Entries = out
		}
	}, write)
}

// updateAll is a write with f seeing (and changing) the whole contents.
func (m *File) updateAll(f func(*Contents)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cycleLocked(f, true)
}

// cycleLocked reads the file under the flock, runs f on its contents and,
// when write is set, writes them back. A file of a newer version is never
// written and f does not run; an unreadable one is kept aside and replaced
// (f runs on nothing) only by a write: a read returns its error and leaves
// it as it is. m.mu must be held.
func (m *File) cycleLocked(f func(*Contents), write bool) error {
	lf, err := os.OpenFile(m.lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("manifest lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("manifest lock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)

	c, err := m.readLocked()
	switch {
	case err == nil:
	case !errors.Is(err, ErrUnreadable) || !write:
		return err // a newer version, an I/O error, or a read of a torn file
	default:
		aside, kerr := m.keepAsideLocked()
		if kerr != nil {
			return fmt.Errorf("%w; it could not be kept aside, so it was left as it is: %v", err, kerr)
		}
		m.corrupt = fmt.Errorf("%w; it was kept aside as %s and replaced by an empty manifest", err, aside)
		c = Contents{}
	}
	f(&c)
	if !write {
		return nil
	}
	if c.Entries == nil {
		c.Entries = []Entry{}
	}
	return writeAtomic(m.path, c.Entries, c.Malformed)
}

func (m *File) readLocked() (Contents, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return Contents{}, nil
	}
	if err != nil {
		return Contents{}, fmt.Errorf("manifest %s: %w", m.path, err)
	}
	c, err := Decode(data)
	var ve *VersionError
	switch {
	case errors.As(err, &ve):
		ve.Path = m.path
	case err != nil:
		err = fmt.Errorf("the manifest %s: %w", m.path, err)
	}
	return c, err
}

// keepAsideLocked links the unreadable file to a fresh CorruptPrefix name
// (a link never replaces an existing file; a rename after a check under the
// flock where links are not supported), then removes the oldest kept-aside
// files beyond CorruptKeep. It returns the name.
func (m *File) keepAsideLocked() (string, error) {
	dir := filepath.Dir(m.path)
	stamp := time.Now().UTC().Format("20060102T150405.000000000Z")
	var name string
	for n := 1; ; n++ {
		name = fmt.Sprintf("%s%s-%d", CorruptPrefix, stamp, n)
		err := os.Link(m.path, filepath.Join(dir, name))
		if err == nil {
			break
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if _, lerr := os.Lstat(filepath.Join(dir, name)); !errors.Is(lerr, fs.ErrNotExist) {
			return "", err
		}
		if err := os.Rename(m.path, filepath.Join(dir, name)); err != nil {
			return "", err
		}
		break
	}
	des, _ := os.ReadDir(dir) // sorted by name: by time, oldest first
	var kept []string
	for _, de := range des {
		if strings.HasPrefix(de.Name(), CorruptPrefix) {
			kept = append(kept, de.Name())
		}
	}
	for len(kept) > CorruptKeep {
		os.Remove(filepath.Join(dir, kept[0]))
		kept = kept[1:]
	}
	return name, nil
}

// writeAtomic replaces path with entries and the kept malformed entries: a
// temp file in the same directory (mode 0600), fsync, rename over path,
// fsync of the directory.
func writeAtomic(path string, entries []Entry, kept []Malformed) error {
	data, err := marshal(entries, kept)
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
