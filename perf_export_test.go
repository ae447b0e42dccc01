package browserpool

import (
	"context"
	"encoding/json"
)

// StatusReadsAfterLoad returns how many of t's navigations had to ask the
// page for their HTTP status after the load event (an extra round trip).
func StatusReadsAfterLoad(t *Tab) int64 { return t.statusFallbacks.Load() }

// MuxCall makes a direct call on t's CDP session (cdpmux.Mux.Call), for
// benchmarks of the mux alone.
func MuxCall(ctx context.Context, t *Tab, method string, params []byte) (json.RawMessage, error) {
	return t.s.mux.Call(ctx, t.direct.ID(), method, params)
}

// ClientBuilt reports whether t has built its generated CDP client
// (cdpClient). Call it only while nothing else uses t.
func ClientBuilt(t *Tab) bool { return t.client != nil }

// ConnDialed reports whether t's session has dialed its rpcc.Conn (and
// so runs a goroutine for it).
func ConnDialed(t *Tab) bool { return t.direct.Dialed() }
