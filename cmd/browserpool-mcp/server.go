// Room: the server and its clients (their sessions and tabs are in
// server_sessions.go, the bounds of their calls in server_bounds.go).
// Server.mu guards the client table and the HTTP POST table (http.go);
// client.mu guards one client's session names and attached view. No CDP I/O,
// file I/O or tracker call runs under either lock.

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the zero Config fields.
const (
	// DefaultScreenshotMax is the long side, in pixels, screenshots are
	// scaled down to (some image-aware models refuse more than 2000 px).
	DefaultScreenshotMax = 1800
	// DefaultDialogTimeout is how long a JavaScript dialog stays open for
	// browser_handle_dialog before it is dismissed.
	DefaultDialogTimeout = time.Minute
	// DefaultSessionName is the name of the session a client gets when it
	// calls a page tool before opening one.
	DefaultSessionName = "default"
	// DefaultCallTimeout bounds a page tool's work on its tab (an action,
	// a read): a page stuck in a script answers in this time, and the
	// library then stops the script so that the next call works.
	DefaultCallTimeout = 30 * time.Second
	// DefaultEvictGrace is how recently another client's browser must have
	// been used for the server to refuse to close it to make room at the
	// -max-sessions limit.
	DefaultEvictGrace = 30 * time.Second
	// longCallTimeout bounds the page work of the tools whose own waits are
	// longer than a call's (browser_download with a ref waits for the whole
	// file; browser_stop_recording may encode a video).
	longCallTimeout = 2 * time.Minute
)

// Config configures a Server. The zero value launches local Chromium with
// the library's defaults.
type Config struct {
	// Pool configures the pool of browsers (root, executable, idle timeout,
	// output dir).
	Pool browserpool.Config
	// PerClient is how many browser sessions one MCP client may hold.
	// Zero means the Tracker's default (1).
	PerClient int
	// Global is how many browser sessions may exist over all clients; at
	// the limit the least recently used idle one is closed. Zero means the
	// Tracker's default (8).
	Global int
	// CDPEndpoint, when set, attaches to a browser the user runs (with
	// --remote-debugging-port) instead of launching browsers: every client
	// shares it, page tools must name their tab, and closing disconnects.
	CDPEndpoint string
	// ScreenshotMax is the default long side of screenshots in pixels.
	// Zero means DefaultScreenshotMax; negative means no limit.
	ScreenshotMax int
	// DialogTimeout is how long a JavaScript dialog waits for
	// browser_handle_dialog. Zero means DefaultDialogTimeout.
	DialogTimeout time.Duration
	// Trace, when set, receives the redacted action trace, one JSON object
	// per line.
	Trace io.Writer
	// Logger receives log lines. Nil means silent.
	Logger *slog.Logger
	// RecordingFrameTimeout bounds taking one frame of a recording after
	// an action (browser_start_recording); a frame not taken in time is
	// left out. Zero means browserpool.DefaultFrameTimeout.
	RecordingFrameTimeout time.Duration
	// CallTimeout bounds a page tool's work on its tab, once its browser is
	// open (a launch is bounded by Pool.LaunchTimeout). The tools that wait
	// longer by design keep longer bounds: browser_navigate and the history
	// tools the navigation timeout, browser_wait_for its own timeout
	// argument, browser_download with a ref two minutes. When a call runs
	// out, the library stops a script that keeps the page busy, and the
	// error says so. Zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// UploadDir, when set, confines browser_file_upload to the files inside
	// it (symbolic links resolved: a link inside that points outside is
	// refused); a relative path is taken from it. Empty means any file the
	// server's user may read, unless NoUploads.
	UploadDir string
	// NoUploads makes browser_file_upload refuse every file. The command
	// sets it when it serves HTTP without -upload-dir: any client that
	// reaches the server could otherwise upload any file the server's user
	// may read to any site.
	NoUploads bool
	// EvictGrace protects the browsers of other clients at the global
	// limit (Global): another client's browser is closed to make room only
	// once idle this long, and a new browser that finds none to close is
	// refused, with an error saying when to retry (two clients would
	// otherwise close each other's browser on every turn). The tracker
	// keeps it (TrackerConfig.EvictGrace), so concurrent opens never close
	// a protected browser. Zero means DefaultEvictGrace; negative means no
	// protection.
	EvictGrace time.Duration
}

// Server serves the pool's browsers as MCP tools. Each MCP client session
// is a tool identity (a Tracker workflow) with its own browsers; when the
// client goes away its browsers are closed. Create it with NewServer; the
// creator must call Close.
type Server struct {
	cfg     Config
	pool    *browserpool.Pool
	tracker *browserpool.Tracker // nil in attach mode
	mcp     *mcp.Server
	trace   *traceWriter // nil without Config.Trace
	log     *slog.Logger

	// base is the context every tool call's context derives from; stop
	// cancels it, first thing on shutdown, so no call holds the server up.
	base context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	clients map[*mcp.ServerSession]*client // guarded by mu
	next    int                            // guarded by mu: clients ever seen, for workflow ids
	closed  bool                           // guarded by mu
	posts   map[string]*httpPost           // guarded by mu: HTTP POSTs carrying tool calls, by postHeader (http.go)
	postSeq uint64                         // guarded by mu: POSTs seen, for postHeader

	calls   atomic.Int64 // tool calls in flight (add), which shutdown lets answer
	stopped atomic.Bool  // shutdown stopped calls in flight: drain waits for their answers

	closeOnce sync.Once
	closeErr  error // set by closeOnce

	watchers sync.WaitGroup // one per client: waits for its disconnect
	opens    sync.WaitGroup // one per session open under way (openSession)
}

// client is one MCP client session: a workflow of the tracker.
type client struct {
	id string // the workflow id, [A-Za-z0-9_-]{1,64}
	// ctx ends when the client goes away (or the server stops): its calls
	// derive from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	names  []string                  // guarded by mu: sessions it opened, oldest first
	ids    map[string]string         // guarded by mu: session id to name, for the sessions in names
	former map[string]string         // guarded by mu: session id to name, for sessions that ended lately (their close may be told after liveNames dropped them)
	notes  []string                  // guarded by mu: news for the next tool result (a session closed behind its back, a download done)
	seen   map[string]bool           // guarded by mu: download paths the client was told of
	view   *browserpool.AttachedView // guarded by mu: attach mode only
	ended  bool                      // guarded by mu: the client went away
	labels int                       // guarded by mu: tab labels generated in attach mode
	netlog map[*browserpool.Tab]bool // guarded by mu: tabs whose network log watchNetwork started
}

// NewServer returns a server over a new pool.
func NewServer(cfg Config) (*Server, error) {
	if cfg.ScreenshotMax == 0 {
		cfg.ScreenshotMax = DefaultScreenshotMax
	}
	if cfg.DialogTimeout <= 0 {
		cfg.DialogTimeout = DefaultDialogTimeout
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.EvictGrace == 0 {
		cfg.EvictGrace = DefaultEvictGrace
	}
	if cfg.UploadDir != "" {
		dir, err := filepath.Abs(cfg.UploadDir)
		if err == nil {
			dir, err = filepath.EvalSymlinks(dir)
		}
		if err != nil {
			return nil, fmt.Errorf("upload dir: %w", err)
		}
		cfg.UploadDir = dir
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.Pool.Logger = cfg.Logger
	s := &Server{cfg: cfg, log: log, clients: map[*mcp.ServerSession]*client{}, posts: map[string]*httpPost{}}
	s.base, s.stop = context.WithCancel(context.Background())
	closed := cfg.Pool.Hooks.SessionClosed
	cfg.Pool.Hooks.SessionClosed = func(e browserpool.SessionEvent) {
		s.sessionClosed(e)
		if closed != nil {
			closed(e)
		}
	}
	pool, err := browserpool.NewPool(cfg.Pool)
	if err != nil {
		s.stop()
		return nil, err
	}
	s.pool = pool
	if cfg.CDPEndpoint == "" {
		s.tracker, err = browserpool.NewTracker(browserpool.TrackerConfig{Pool: pool, PerWorkflow: cfg.PerClient, Global: cfg.Global, EvictGrace: max(cfg.EvictGrace, 0)})
		if err != nil {
			s.stop()
			pool.Close()
			return nil, err
		}
	}
	if cfg.Trace != nil {
		s.trace = &traceWriter{w: cfg.Trace}
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "browserpool-mcp", Title: "browserpool", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       cfg.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// A client's identity is its session. The 2026-07-28 protocol is
		// sessionless (each request stands alone), so it would give every
		// call a stranger's identity: offer the session-based versions only.
		SupportedProtocolVersions: sessionVersions(),
	})
	s.addTools()
	s.mcp.AddReceivingMiddleware(argumentNext)
	return s, nil
}

// argumentNext gives the SDK's refusal of a tool call's arguments (they do
// not match the tool's input schema: a missing or unknown property, a wrong
// type) the "Error:"/"Next:" shape of every other tool error, so an agent
// knows to fix the arguments and call again.
func argumentNext(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		tr, ok := res.(*mcp.CallToolResult)
		if err != nil || method != "tools/call" || !ok || !tr.IsError || len(tr.Content) != 1 {
			return res, err
		}
		tc, ok := tr.Content[0].(*mcp.TextContent)
		if !ok || strings.HasPrefix(tc.Text, "Error: ") || strings.Contains(tc.Text, "\nNext: ") {
			return res, err // ours: already shaped (notes may come first)
		}
		name := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			name = p.Name
		}
		tc.Text = "Error: the arguments do not match " + name + "'s input schema: " + tc.Text +
			"\nNext: call " + name + " again with the arguments its input schema asks for (tools/list shows it; the line above names what is missing or wrong)"
		return res, err
	}
}

const instructions = `Browser tools over isolated Chromium sessions. Each client gets its own browser; other clients never see it.
Work like this: browser_navigate to a URL, browser_snapshot to read the page with refs (@e1, @e2, ...), then act by ref (browser_click, browser_type, browser_fill_form, browser_select_option). Take a new snapshot after the page changes; old refs go stale.
Most tools take optional "session" (a name from browser_session_list) and "tab" (an id from browser_tabs); leave them empty to use your only session and its active tab.`

// sessionVersions returns the protocol versions that have sessions.
func sessionVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

// MCP returns the MCP server, to connect transports to.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close stops every tool call in flight, ends every client session,
// closes every browser and the pool, and returns when no goroutine of the
// server is left. It may be called more than once, also concurrently: every
// call returns when the first is done.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.shutdown()
		s.drain()
		// Every session, also those that never called a tool (they have no
		// client yet). A session's close waits for its calls in flight,
		// which shutdown has stopped.
		var sessions []*mcp.ServerSession
		for ss := range s.mcp.Sessions() {
			sessions = append(sessions, ss)
		}
		for _, ss := range sessions {
			ss.Close()
		}
		s.watchers.Wait()
		s.opens.Wait() // shutdown ended the clients' contexts: their opens return
		var errs []error
		if s.tracker != nil {
			errs = append(errs, s.tracker.Close())
		}
		errs = append(errs, s.pool.Close())
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// client returns the client of an MCP session, registering it on first use:
// a goroutine waits for the session to end and then reclaims its browsers.
func (s *Server) client(ss *mcp.ServerSession) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, toolErrorf("the server is shutting down", "reconnect to a running browserpool-mcp server")
	}
	if c := s.clients[ss]; c != nil {
		return c, nil
	}
	s.next++
	// The workflow is named after the MCP session id, hashed: the id itself
	// lets whoever holds it speak in the session, so it must not reach
	// error texts, logs or the trace. Transports without ids (stdio,
	// in-memory) get a counter.
	id := fmt.Sprintf("client-%d", s.next)
	if sid := ss.ID(); sid != "" {
		sum := sha256.Sum256([]byte(sid))
		id = "mcp-" + hex.EncodeToString(sum[:6])
	}
	c := &client{id: id, ids: map[string]string{}}
	c.ctx, c.cancel = context.WithCancel(s.base)
	s.clients[ss] = c
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		ss.Wait()
		s.endClient(ss, c)
	}()
	s.log.Info("client connected", "client", id)
	return c, nil
}

// endClient reclaims what a client that went away held: its browsers in
// launch mode, its labels and selected tab in attach mode.
func (s *Server) endClient(ss *mcp.ServerSession, c *client) {
	c.cancel()
	c.mu.Lock()
	c.ended = true
	view := c.view
	c.names = nil
	c.mu.Unlock()
	if view != nil {
		view.Forget()
	}
	if s.tracker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.pool.Config().CloseTimeout+5*time.Second)
		if err := s.tracker.EndWorkflow(ctx, c.id); err != nil {
			s.log.Warn("closing a departed client's browsers", "client", c.id, "err", err)
		}
		cancel()
	}
	s.mu.Lock()
	delete(s.clients, ss)
	s.mu.Unlock()
	s.log.Info("client disconnected", "client", c.id)
}

// sessionClosed tells the client whose session the pool closed behind its
// back (idle reclaim, the global limit, a crash) in its next tool result, so
// an agent knows why its pages are gone.
func (s *Server) sessionClosed(e browserpool.SessionEvent) {
	var why string
	switch e.Reason {
	case browserpool.ReasonIdle:
		why = "it had no tool call for the idle timeout"
	case browserpool.ReasonLRU:
		why = "the server's browser limit was reached and it was the least recently used idle browser"
	case browserpool.ReasonCrashed:
		why = "its browser crashed"
	default:
		return // the client closed it, or the client or server is ending
	}
	s.mu.Lock()
	clients := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()
	for _, c := range clients {
		c.mu.Lock()
		name, ok := c.ids[e.SessionID]
		if !ok {
			name, ok = c.former[e.SessionID]
		}
		delete(c.former, e.SessionID)
		if ok {
			c.notes = append(c.notes, fmt.Sprintf("your browser session %q (id %s) was closed because %s; its pages, cookies and storage are gone, and the next page tool opens a new browser", name, e.SessionID, why))
		}
		c.mu.Unlock()
	}
}

// noteDownloads adds a note for each download of the client's sessions
// that completed since the client was last told: a click on a download
// link saves the file, and the agent learns where. Reading them touches
// no session (liveNames).
func (s *Server) noteDownloads(c *client) {
	_, sess := s.liveNames(c)
	var fresh []browserpool.Download
	for _, se := range sess {
		fresh = append(fresh, se.Downloads()...)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range fresh {
		if c.seen[d.Path] {
			continue
		}
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		c.seen[d.Path] = true
		c.notes = append(c.notes, fmt.Sprintf("a download completed: %q (%d bytes) from %s, saved to %s", d.SuggestedName, d.Bytes, d.URL, d.Path))
	}
}

// sawDownload marks a download the client was told of in a tool's result
// (browser_download's), so that no note repeats it.
func (c *client) sawDownload(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[path] = true
}

// takeNotes returns and forgets the client's pending notes.
func (c *client) takeNotes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notes
	c.notes = nil
	return n
}

// networkStart bounds watchNetwork's call: a tab a busy page holds must
// not spend the tool call's time on it.
const networkStart = 2 * time.Second

// watchNetwork starts the tab's network log the first time a tool call
// reaches the tab, so that browser_network_requests lists what the page
// loaded from then on (the library's log is lazy: it starts at the first
// Tab.Network). A failure leaves it to the next call; the tool goes on.
func (s *Server) watchNetwork(ctx context.Context, c *client, t *browserpool.Tab) {
	c.mu.Lock()
	on := c.netlog[t]
	c.mu.Unlock()
	if on {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, networkStart)
	defer cancel()
	if _, err := t.Network(ctx); err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for old := range c.netlog {
		select {
		case <-old.Session().Done():
			delete(c.netlog, old) // its session ended: nothing to watch
		default:
		}
	}
	if c.netlog == nil {
		c.netlog = map[*browserpool.Tab]bool{}
	}
	c.netlog[t] = true
}

// prepare sets the tab's dialog handler (dialogs stay open for
// browser_handle_dialog) and its trace recorder.
func (s *Server) prepare(c *client, t *browserpool.Tab) {
	wait := s.cfg.DialogTimeout
	t.SetDialogHandler(func(browserpool.Dialog) browserpool.DialogReply { return browserpool.DialogReply{Defer: wait} })
	if s.trace != nil {
		session, tab := t.SessionID(), t.ID()
		t.SetRecorder(func(e browserpool.TraceEntry) { s.trace.write(c.id, session, tab, e) })
	}
}
