// Room: identity values. Who calls (tool session) versus which browser
// they act on (browser session), and the keys of groups. Values only; no
// locks.

package browserpool

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
)

// Identity says who is calling and which browser they act on. Tool calls
// are routed by ToolSessionID; browser reuse is keyed by BrowserKey. The
// zero value is invalid; build one with NewIdentity.
type Identity struct {
	// ToolSessionID routes tool calls (per chat or workflow agent).
	ToolSessionID string
	// BrowserSessionID names the browser to reuse. Empty means the tool
	// session's own browser (BrowserKey falls back to ToolSessionID), so
	// callers that predate the split keep working.
	BrowserSessionID string
	// Agent names the agent within the tool session that holds the
	// browser (a parent is "", a child has its own name). Each agent is a
	// separate holder with its own tabs.
	Agent string
}

// NewIdentity returns the identity of a tool session acting on its own
// browser.
func NewIdentity(toolSessionID string) Identity {
	return Identity{ToolSessionID: toolSessionID}
}

// BrowserKey returns the key of the browser this identity acts on:
// BrowserSessionID, or ToolSessionID when that is empty.
func (id Identity) BrowserKey() string {
	if id.BrowserSessionID != "" {
		return id.BrowserSessionID
	}
	return id.ToolSessionID
}

// HolderKey names this identity as a holder of a browser:
// "<tool session>" or "<tool session>/<agent>".
func (id Identity) HolderKey() string {
	if id.Agent == "" {
		return id.ToolSessionID
	}
	return id.ToolSessionID + "/" + id.Agent
}

// Child returns the identity of a child agent that shares this identity's
// browser (the default for a parent and its sub-agents). Tool routing does
// not move.
func (id Identity) Child(agent string) Identity {
	return Identity{ToolSessionID: id.ToolSessionID, BrowserSessionID: id.BrowserKey(), Agent: agent}
}

// IsolatedChild returns the identity of a child agent with a browser of its
// own: a new browser id, the same tool session id (tool routing does not
// move).
func (id Identity) IsolatedChild(agent string) Identity {
	var b [6]byte
	rand.Read(b[:])
	return Identity{ToolSessionID: id.ToolSessionID, BrowserSessionID: "browser-" + hex.EncodeToString(b[:]), Agent: agent}
}

// String shows the identity's tool session, browser key and holder key.
func (id Identity) String() string {
	return fmt.Sprintf("tool=%s browser=%s holder=%s", id.ToolSessionID, id.BrowserKey(), id.HolderKey())
}

// ErrInvalidIdentity: an Identity or group id is not usable (empty tool
// session id, a display name where a canonical id is needed).
var ErrInvalidIdentity = errors.New("invalid identity")

// ErrTabNotHeld: the tab belongs to the browser but to another holder.
var ErrTabNotHeld = errors.New("tab belongs to another holder")

// GroupKey returns the browser key of a workspace's step group:
// "browser::<workspace-hash>::<group-id>". The workspace hash is the first
// 12 hex digits of the SHA-256 of the workspace's cleaned absolute path:
// stable across runs, short, and not reversible to the path. groupID must
// be the canonical group id ([A-Za-z0-9_-]{1,64}), never a display name.
func GroupKey(workspace, groupID string) (string, error) {
	if !isValidID(groupID) {
		return "", &Error{Op: "GroupKey", Class: ErrInvalidIdentity,
			Detail: fmt.Sprintf("%q is not a canonical group id", echo(groupID)),
			Hint:   "pass the group's id (letters, digits, '-' or '_', up to 64), not its display name"}
	}
	if workspace == "" {
		return "", &Error{Op: "GroupKey", Class: ErrInvalidIdentity, Detail: "empty workspace", Hint: "pass the workspace's path"}
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		abs = filepath.Clean(workspace)
	}
	sum := sha256.Sum256([]byte(abs))
	return "browser::" + hex.EncodeToString(sum[:6]) + "::" + groupID, nil
}
