package browserpool_test

import (
	"fmt"

	"github.com/browserpool/browserpool"
)

// An identity without a browser id acts on its tool session's own browser,
// so callers that predate the split keep working.
func ExampleIdentity_BrowserKey() {
	id := browserpool.NewIdentity("chat-42")
	fmt.Println(id.BrowserKey())
	// Output: chat-42
}

// A child agent shares its parent's browser by default; tool routing stays
// on the parent's tool session, and the child holds the browser under its
// own holder key.
func ExampleIdentity_Child() {
	parent := browserpool.NewIdentity("chat-42")
	child := parent.Child("researcher")
	fmt.Println(child.ToolSessionID, child.BrowserKey(), child.HolderKey())
	// Output: chat-42 chat-42 chat-42/researcher
}

// Asking for isolation gives the child a browser of its own and keeps its
// tool session id, so tool routing does not move.
func ExampleIdentity_IsolatedChild() {
	parent := browserpool.NewIdentity("chat-42")
	child := parent.IsolatedChild("scraper")
	fmt.Println(child.ToolSessionID == parent.ToolSessionID, child.BrowserKey() != parent.BrowserKey())
	// Output: true true
}

// A workspace's step group has a stable browser key built from the
// canonical group id; a display name is refused.
func ExampleGroupKey() {
	key, _ := browserpool.GroupKey("/srv/workspaces/acme", "group_7")
	fmt.Println(key)
	_, err := browserpool.GroupKey("/srv/workspaces/acme", "Login flow")
	fmt.Println(err)
	// Output:
	// browser::247e4eee9cf8::group_7
	// browserpool: GroupKey: invalid identity: "Login flow" is not a canonical group id (hint: pass the group's id (letters, digits, '-' or '_', up to 64), not its display name)
}
