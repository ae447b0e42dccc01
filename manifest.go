// Room: the manifest, the durable record of every spawn. Manifest.mu
// serializes this process's read-modify-write cycles; a flock on
// <Root>/manifest.lock serializes them across processes sharing the root.
// Both are held only around the file's own I/O, never around a launch or a
// kill.

package browserpool

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/browserpool/browserpool/internal/proc"
)

// ManifestEntry is one recorded spawn.
type ManifestEntry struct {
	Session    string    `json:"session"`
	State      string    `json:"state"` // reserved, spawned, ready
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
}

type manifestFile struct {
	Version int             `json:"version"`
	Entries []ManifestEntry `json:"entries"`
}

// Manifest is the durable JSON record (<Root>/manifest.json, mode 0600) of
// every browser a pool spawned, written before the pool waits for the
// browser to be ready and removed only after its process group is reaped and
// its profile dir deleted. Writes are atomic (temp file, fsync, rename,
// fsync of the directory). A torn or garbage file is kept aside as
// manifest.json.corrupt and replaced, never a crash. It is safe for
// concurrent use by several pools in several processes.
type Manifest struct {
	path, lockPath string
	owner          ManifestEntry // owner fields for new entries

	mu      sync.Mutex // serializes this process's updates
	corrupt error      // guarded by mu; the last corruption found, for the sweep's report
}

func openManifest(root string) (*Manifest, error) {
	m := &Manifest{path: filepath.Join(root, "manifest.json"), lockPath: filepath.Join(root, "manifest.lock")}
	m.owner.OwnerPID = os.Getpid()
	if st, err := proc.StartTime(m.owner.OwnerPID); err == nil {
		m.owner.OwnerStart = st
	}
	m.owner.OwnerBoot, _ = proc.BootID()
	// Create the file if needed, to fail early on an unwritable root.
	return m, m.update(func([]ManifestEntry) []ManifestEntry { return nil }, true)
}

func entryFor(id string, info SpawnInfo) ManifestEntry {
	return ManifestEntry{Session: id, PID: info.PID, PGID: info.PGID, StartTime: info.StartTime,
		BootID: info.BootID, Dir: info.Dir, Port: info.Port}
}

// Entries returns the recorded entries.
func (m *Manifest) Entries() ([]ManifestEntry, error) {
	var out []ManifestEntry
	err := m.update(func(es []ManifestEntry) []ManifestEntry {
		out = slices.Clone(es)
		return nil
	}, false)
	return out, err
}

// Reserve records a session about to be launched (state reserved) so that
// a sweep by another pool sharing the root does not take its dir for an
// orphan.
func (m *Manifest) Reserve(id, dir string) error {
	e := m.owner
	e.Session, e.Dir, e.State, e.Created = id, dir, "reserved", time.Now().UTC()
	return m.update(func(es []ManifestEntry) []ManifestEntry {
		es = slices.DeleteFunc(es, func(x ManifestEntry) bool { return x.Session == id })
		return append(es, e)
	}, true)
}

// Add records the spawn of e.Session (state spawned), keeping the owner and
// created time of its reservation.
func (m *Manifest) Add(e ManifestEntry) error { return m.set(e, "spawned") }

// Update records that e.Session is ready (its port is known).
func (m *Manifest) Update(e ManifestEntry) error { return m.set(e, "ready") }

func (m *Manifest) set(e ManifestEntry, state string) error {
	return m.update(func(es []ManifestEntry) []ManifestEntry {
		i := slices.IndexFunc(es, func(x ManifestEntry) bool { return x.Session == e.Session })
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
		if i >= 0 {
			es[i] = base
			return es
		}
		return append(es, base)
	}, true)
}

// Remove drops the entry of session id.
func (m *Manifest) Remove(id string) error {
	return m.update(func(es []ManifestEntry) []ManifestEntry {
		return slices.DeleteFunc(es, func(x ManifestEntry) bool { return x.Session == id })
	}, true)
}

// RemoveDir drops the entry whose dir is dir.
func (m *Manifest) RemoveDir(dir string) error {
	return m.update(func(es []ManifestEntry) []ManifestEntry {
		return slices.DeleteFunc(es, func(x ManifestEntry) bool { return x.Dir == dir })
	}, true)
}

// update runs f on the current entries under both locks and, when write is
// set, stores what f returns.
func (m *Manifest) update(f func([]ManifestEntry) []ManifestEntry, write bool) error {
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
		os.Rename(m.path, m.path+".corrupt")
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
			out = []ManifestEntry{}
		}
	}
	return m.writeLocked(out)
}

func (m *Manifest) readLocked() ([]ManifestEntry, error) {
	data, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseManifest(data)
}

// parseManifest decodes a manifest file. It never panics; anything that is
// not a manifest is an error.
func parseManifest(data []byte) ([]ManifestEntry, error) {
	var f manifestFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("manifest has version %d, want 1", f.Version)
	}
	for i, e := range f.Entries {
		if ValidateID("session", e.Session) != nil || !filepath.IsAbs(e.Dir) || e.PID < 0 || e.PGID < 0 || e.OwnerPID < 0 {
			return nil, fmt.Errorf("manifest entry %d is malformed", i)
		}
	}
	return f.Entries, nil
}

func (m *Manifest) writeLocked(entries []ManifestEntry) error {
	data, err := json.MarshalIndent(manifestFile{Version: 1, Entries: entries}, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(m.path)
	tmp, err := os.CreateTemp(dir, ".manifest-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
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
	if err := os.Rename(tmp.Name(), m.path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// takeCorrupt returns and clears the last corruption found.
func (m *Manifest) takeCorrupt() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	err := m.corrupt
	m.corrupt = nil
	return err
}
