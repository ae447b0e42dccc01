package browserpool

import (
	"context"
	"encoding/json"
)

// StatusReads returns how many of t's navigations asked the page for their
// HTTP status at commit, and how many after the load event (an extra round
// trip).
func StatusReads(t *Tab) [2]int64 {
	return [2]int64{t.statusCommitReads.Load(), t.statusFallbacks.Load()}
}

// MuxCall makes a direct call on t's CDP session (cdpmux.Mux.Call), for
// benchmarks of the mux alone.
func MuxCall(ctx context.Context, t *Tab, method string, params []byte) (json.RawMessage, error) {
	return t.s.mux.Call(ctx, t.sessionID, method, params)
}
