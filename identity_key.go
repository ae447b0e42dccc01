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
	"strings"
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
	// Agent is the path of the agent within the tool session that holds
	// the browser: "" for the tool session's own (root) agent, else the
	// names of the agents from the root's child down, joined by "/"
	// ("writer/researcher" is the researcher that the writer started).
	// Each name in it has "%" written as "%25" and "/" as "%2F", as
	// Identity.Child writes it, so that every path names one agent. Each
	// agent is a separate holder with its own tabs.
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
// "<tool session>" for a tool session's root agent, else
// "<tool session>/<agent path>" ("chat-1/writer/researcher"). In the tool
// session id, "%" is written as "%25" and "/" as "%2F", so the first "/"
// of a key always ends the tool session id: the tool session "a/b" has the
// key "a%2Fb", apart from "a/b", the key of agent "b" of tool session "a".
// An id with neither character is its own key ("chat-1",
// "chat-1/researcher"). Two identities have the same holder key exactly
// when they have the same tool session id and agent path.
func (id Identity) HolderKey() string {
	tool := escapeKeyPart(id.ToolSessionID)
	if id.Agent == "" {
		return tool
	}
	return tool + "/" + id.Agent
}

// Child returns the identity of a child agent named agent that shares this
// identity's browser (the default for a parent and its sub-agents). Tool
// routing does not move. The child's agent path nests under its parent's:
// root.Child("writer").Child("researcher") has the agent path
// "writer/researcher", a holder apart from root.Child("researcher"). In the
// name, "%" is written as "%25" and "/" as "%2F", so Child("a/b") is an
// agent apart from Child("a").Child("b"). An empty name adds nothing: the
// child is its parent's holder.
func (id Identity) Child(agent string) Identity {
	return Identity{ToolSessionID: id.ToolSessionID, BrowserSessionID: id.BrowserKey(), Agent: childPath(id.Agent, agent)}
}

// IsolatedChild returns the identity of a child agent with a browser of its
// own: a new browser id, the same tool session id (tool routing does not
// move). Its agent path nests under its parent's, as with Child.
func (id Identity) IsolatedChild(agent string) Identity {
	var b [6]byte
	rand.Read(b[:])
	return Identity{ToolSessionID: id.ToolSessionID, BrowserSessionID: "browser-" + hex.EncodeToString(b[:]), Agent: childPath(id.Agent, agent)}
}

// childPath returns the agent path of the child named name of the agent at
// parent: parent, "/", and name with "%" and "/" escaped.
func childPath(parent, name string) string {
	if name == "" {
		return parent
	}
	name = escapeKeyPart(name)
	if parent == "" {
		return name
	}
	return parent + "/" + name
}

// escapeKeyPart writes "%" as "%25" and "/" as "%2F" in s, so that s
// cannot be read as more than one part of a "/"-separated key. A string
// with neither is returned as it is.
func escapeKeyPart(s string) string {
	if !strings.ContainsAny(s, "%/") {
		return s
	}
	return keyPartEscaper.Replace(s)
}

var keyPartEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// String shows the identity's tool session, browser key and holder key.
func (id Identity) String() string {
	return fmt.Sprintf("tool=%s browser=%s holder=%s", id.ToolSessionID, id.BrowserKey(), id.HolderKey())
}

// ErrInvalidIdentity: an Identity, group id or Holder is not usable (an
// empty tool session id, a display name where a canonical id is needed,
// a holder detached by Holder.Detach or Registry.EndToolSession).
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
