// Room: the pool's side of the manifest (internal/manifest holds the file
// format, its lock and its atomic write). No locks of its own: the manifest
// file serializes its own updates.

package browserpool

import (
	"errors"
	"fmt"

	"github.com/browserpool/browserpool/internal/manifest"
)

// openManifest opens the manifest of root, with this process as the owner of
// the entries the pool adds. A manifest of a newer version is left
// untouched and refused, with what to do about it.
func openManifest(root string) (*manifest.File, error) {
	m, err := manifest.Open(root)
	var ve *manifest.VersionError
	if errors.As(err, &ve) {
		return nil, fmt.Errorf("%w: use a browserpool release that reads version %d for this Root, or set Config.Root to another directory", err, ve.Version)
	}
	return m, err
}

// entryFor is the manifest entry of session id's spawn: a local process, or
// a remote lease (its fleet, endpoint without credentials, and lease id).
func entryFor(id string, info SpawnInfo) manifest.Entry {
	return manifest.Entry{Session: id, PID: info.PID, PGID: info.PGID, StartTime: info.StartTime,
		BootID: info.BootID, Dir: info.Dir, Port: info.Port,
		Fleet: info.Fleet, Endpoint: info.Endpoint, LeaseID: info.LeaseID}
}

// leaseOf is the SpawnInfo a LeaseEnder gets for a remote entry: where the
// lease lives and its id, nothing local.
func leaseOf(e manifest.Entry) SpawnInfo {
	return SpawnInfo{Fleet: e.Fleet, Endpoint: e.Endpoint, LeaseID: e.LeaseID}
}
