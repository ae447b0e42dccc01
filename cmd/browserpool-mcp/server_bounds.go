// Room: the bounds of the server's tool calls: each tool's page bound, and
// shutdown, which stops the calls in flight and lets their answers out.
// No locks of its own (Server.mu as in server.go; counters are atomic).

package main

import (
	"context"
	"time"
)

// shutdown refuses new tool calls and stops those in flight: the first
// step of Close, and what a signal does at once (a session's close waits
// for its calls, and HTTP Shutdown for their requests).
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if s.calls.Load() > 0 {
		s.stopped.Store(true)
	}
	s.stop()
}

// drainWait bounds drain.
const drainWait = 5 * time.Second

// drain waits, after shutdown, until the calls it stopped have returned
// (at most drainWait), so that their answers ("the server is shutting
// down") go out before the sessions close: a session that closes drops
// the answers not yet written.
func (s *Server) drain() {
	if !s.stopped.Load() {
		return
	}
	deadline := time.Now().Add(drainWait)
	for (s.calls.Load() > 0 || s.answering()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The SDK writes an answer just after its handler returns: over HTTP
	// answering says when it went out, over stdio nothing does.
	time.Sleep(50 * time.Millisecond)
}

// toolCall is one tool call of a client: the client, and the tool's page
// bound (toolBound), which pageCtx applies once the client's browser is
// open (a launch has its own bound).
type toolCall struct {
	*client
	bound time.Duration
}

// pageCtx returns ctx bounded by the calling tool's page bound: the
// server's CallTimeout, or the longer bound of a tool that waits by design
// (toolBound).
func (s *Server) pageCtx(ctx context.Context, c *toolCall) (context.Context, context.CancelFunc) {
	d := c.bound
	if d <= 0 {
		d = s.cfg.CallTimeout
	}
	return context.WithTimeout(ctx, d)
}

// toolBound is the page bound of tool: how long its work on a page may
// take. Most tools get CallTimeout; the ones that wait by design get what
// their own waits need, and never less.
func (s *Server) toolBound(tool string) time.Duration {
	var d time.Duration
	switch tool {
	case "browser_navigate", "browser_navigate_back", "browser_navigate_forward", "browser_session_open", "browser_tabs":
		// The library bounds a navigation by NavigationTimeout; a little
		// more lets its own error, which says where the tab is, arrive.
		d = s.pool.Config().NavigationTimeout + 15*time.Second
	case "browser_wait_for":
		d = waitForMax + 10*time.Second
	case "browser_download", "browser_stop_recording":
		d = longCallTimeout
	}
	return max(d, s.cfg.CallTimeout)
}
