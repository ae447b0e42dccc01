// Room: the manifest's file format: what Decode accepts, what it drops
// entry by entry, and what it refuses whole (a torn file, a newer version).
// No locks.

package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// ErrUnreadable is the class of a manifest file that cannot be read at all:
// it is not JSON, its entries are not a list, or it has no valid version.
// A write keeps such a file aside (CorruptPrefix) and starts an empty one; a
// read leaves it as it is.
var ErrUnreadable = errors.New("manifest is unreadable")

// VersionError reports a manifest written by a newer version of the
// package. Such a file is never rewritten, renamed or swept from: every
// call of a File on it returns this error and leaves it untouched.
type VersionError struct {
	Path    string // the file, when known
	Version int    // the version the file declares (above Version)
}

func (e *VersionError) Error() string {
	what := "the manifest"
	if e.Path != "" {
		what = "the manifest " + e.Path
	}
	return fmt.Sprintf("%s has version %d, written by a newer browserpool, and this browserpool reads only version %d; it left the file untouched",
		what, e.Version, Version)
}

// Contents is a manifest file as Decode reads it.
type Contents struct {
	Entries   []Entry     // the entries that verify, in file order
	Malformed []Malformed // the entries that do not, in file order
}

// Malformed is an entry of the file that does not verify. A File keeps it
// in the file as it was (another writer's record is never lost by a
// rewrite) until DropMalformed removes it; the sweep decides when.
type Malformed struct {
	Index int             // its position among the file's entries
	Why   string          // what is wrong with it, for a log or a person
	Raw   json.RawMessage // the entry, compact, as a File writes it back
	// Entry holds what could be read of it (zero where a field could not).
	Entry Entry
	// OwnerKnown reports that its owner fields could be read and name a
	// process (Entry.OwnerPID above zero): only then can anyone tell
	// whether its owner is gone.
	OwnerKnown bool
}

// Parse decodes a manifest file and returns the entries that verify (see
// Decode); an entry that does not is left out, and Decode reports it.
// Parse never panics.
func Parse(data []byte) ([]Entry, error) {
	c, err := Decode(data)
	return c.Entries, err
}

// Decode decodes a manifest file entry by entry. It never panics. A file
// that is not JSON, whose entries are not a list, or whose version is
// missing or below 1 is an error wrapping ErrUnreadable; a file of a newer
// version is a *VersionError, whatever its entries hold. Otherwise every
// entry that has a valid session id, an absolute dir and no negative pid,
// group or owner is in Contents.Entries and every other one in
// Contents.Malformed. Decode does not judge whether a dir is safe to
// remove: the sweep does.
func Decode(data []byte) (Contents, error) {
	var head struct {
		Version json.RawMessage `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Contents{}, fmt.Errorf("%w: it is not valid JSON (%v)", ErrUnreadable, err)
	}
	var version int
	if err := json.Unmarshal(head.Version, &version); err != nil || version < 1 {
		return Contents{}, fmt.Errorf("%w: it has no valid version (got %s)", ErrUnreadable, shown(head.Version))
	}
	if version > Version {
		return Contents{}, &VersionError{Version: version}
	}
	var body struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return Contents{}, fmt.Errorf("%w: its entries are not a list of objects (%v)", ErrUnreadable, err)
	}
	var c Contents
	for i, raw := range body.Entries {
		e, why := decodeEntry(raw)
		if why == "" {
			c.Entries = append(c.Entries, e)
			continue
		}
		norm, _ := json.Marshal(raw) // compact; cannot fail on what Unmarshal accepted
		m := Malformed{Index: i, Why: why, Raw: norm, Entry: e}
		var owner struct {
			PID   int    `json:"owner_pid"`
			Start uint64 `json:"owner_start"`
			Boot  string `json:"owner_boot"`
		}
		if json.Unmarshal(raw, &owner) == nil && owner.PID > 0 {
			m.OwnerKnown = true
			m.Entry.OwnerPID, m.Entry.OwnerStart, m.Entry.OwnerBoot = owner.PID, owner.Start, owner.Boot
		}
		c.Malformed = append(c.Malformed, m)
	}
	return c, nil
}

// decodeEntry decodes one entry and returns why it does not verify ("" if
// it does), with what could be read of it.
func decodeEntry(raw json.RawMessage) (Entry, string) {
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		// A field of the wrong type: the others are read (encoding/json
		// goes on), but the entry as a whole cannot be trusted.
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return e, fmt.Sprintf("its field %q is not a %v", ute.Field, ute.Type)
		}
		return e, fmt.Sprintf("it is not an entry object (%v)", err)
	}
	switch {
	case !ValidID(e.Session):
		return e, fmt.Sprintf("its session id %s is not 1 to 64 of [A-Za-z0-9_-]", shown([]byte(fmt.Sprintf("%q", e.Session))))
	case !filepath.IsAbs(e.Dir):
		return e, fmt.Sprintf("its dir %s is not an absolute path", shown([]byte(fmt.Sprintf("%q", e.Dir))))
	case e.PID < 0 || e.PGID < 0 || e.OwnerPID < 0:
		return e, fmt.Sprintf("it has a negative pid, group or owner (%d, %d, %d)", e.PID, e.PGID, e.OwnerPID)
	}
	return e, ""
}

// shown returns b for a message, cut to 64 bytes.
func shown(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}

// Marshal encodes entries as a manifest file (what Parse reads back).
func Marshal(entries []Entry) ([]byte, error) { return marshal(entries, nil) }

// marshal encodes entries, then the kept malformed entries as they were.
func marshal(entries []Entry, kept []Malformed) ([]byte, error) {
	raws := make([]json.RawMessage, 0, len(entries)+len(kept))
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		raws = append(raws, b)
	}
	for _, m := range kept {
		raws = append(raws, m.Raw)
	}
	data, err := json.MarshalIndent(struct {
		Version int               `json:"version"`
		Entries []json.RawMessage `json:"entries"`
	}{Version, raws}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// sameRaw reports whether two entries are the same JSON once compacted.
func sameRaw(a, b json.RawMessage) bool {
	na, err1 := json.Marshal(a)
	nb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(na, nb)
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
