// Package browserpool drives real Chromium browsers over the Chrome DevTools
// Protocol on behalf of AI agents and the Go programs that orchestrate them.
//
// # Sessions and tabs
//
// A [Pool] owns isolated browser sessions. Each [Session] is its own browser
// process (its own process group), its own profile directory (0700, under
// [Config.Root]) and its own DevTools port on 127.0.0.1; nothing is shared.
// [Pool.Open] starts a new session; [Pool.Session] resolves an id the way an
// agent's tool call should: an empty id means the only live session, a new
// one when none is live, and an [ErrAmbiguousSession] error listing the live
// ids when several are. It never guesses.
//
// A [Tab] is one page target. [Session.OpenTab] accepts http, https and
// about:blank only; [Tab.Navigate] only http and https, and waits for the
// page's load event (matched by loader id). A page the server answers with
// 404 or 500 still loads: [NavigateResult.Status] is the main resource's
// HTTP status and [NavigateResult.FinalURL] where redirects led
// ([Tab.LastNavigation] gives the same for the navigation of
// [Session.OpenTab]). A tab id is checked to belong to
// its session before any action: a tab of another session does not resolve.
// Actions without a tab id use the session's active tab. A navigation's
// result names the session id, the tab id and the channel ("cdp"); every
// error of a tab names its session and tab. [Session.Browser] and
// [Tab.Client] give the raw *cdp.Client of github.com/mafredri/cdp for
// anything the package does not wrap.
//
// Every tab of a launched browser starts with a 1280x720 viewport
// ([Config.Viewport]; [Tab.SetViewport] resizes one). Beyond snapshots,
// clicks and forms, a tab goes [Tab.Back], [Tab.Forward] and [Tab.Reload]
// (waiting like Navigate; [ErrNoHistory] at either end), drags one ref onto
// another ([Tab.Drag], HTML5 or mouse-event drags), runs a function on an
// element ([Tab.EvaluateOn]), prints a PDF ([Tab.PDF], into the output dir
// like screenshots), and keeps what the page logged ([Tab.Console]: console
// messages and uncaught errors) and fetched ([Tab.Network]), both bounded
// and started by their first call, so a tab that never asks pays nothing.
//
// The JavaScript the actions run in a page (to find where a click lands, to
// fill and select, to see whether an element shows) runs in an isolated
// world of each frame, which the page's scripts cannot reach: a page that
// replaced Array.prototype methods, Event, Promise or
// Element.prototype.matches breaks none of it. The caller's own code runs
// in the page's world, with the page's globals: [Tab.Evaluate],
// [Tab.EvaluateOn] and [Tab.WaitCondition].
//
// [Tab.Screenshot] captures the viewport (scrollbar included), the whole
// page, a [Rect] of the page or one element by snapshot ref, as PNG or
// JPEG, optionally scaled to a maximum dimension; the image lands in the
// session's output dir or, with NoFile, only in memory (Screenshot.Data).
// A name already taken is an error unless Overwrite is set.
//
// Every download of a local session lands in [Session.DownloadDir] under
// its suggested name, whether a [Tab.WaitDownload] waited for it or not
// (a click on a download link), and [Session.Downloads] lists them.
//
// Files work the same on a remote browser (a [Browserless] or
// [SeleniumGrid] lease) as on a local one: [Tab.WaitDownload] delivers the
// file into the local [Session.DownloadDir] and [Tab.Upload] takes local
// paths. On a remote browser both travel over CDP: the browser is told to
// deny downloads (it writes nothing on its machine) and WaitDownload
// streams the download's response body into the local dir (Fetch and IO);
// Upload sends the files' bytes into the page as File objects, at most
// [MaxRemoteUploadBytes] per call. What cannot travel (a blob: URL the page
// revoked at once, a bigger upload) is an [ErrFileTransfer] error, never a
// missing file.
//
// # Warm sessions
//
// A cold browser start takes half a second or more. With [Config.Warm] set,
// the pool keeps that many launched, unclaimed browsers ready: [Pool.Open]
// (and so [Tracker.Open] and [Allocator.Acquire]) takes one in microseconds
// and a replacement starts in the background. Warm browsers are recorded in
// the manifest and counted in Stats.SessionsWarm, but they are not sessions
// until claimed: no id resolves to one, and no workflow limit or computer
// cap counts them. One that dies, or waits longer than [Config.WarmMaxAge],
// is replaced; [Pool.Close] closes them all.
//
// # Lifetimes
//
// The pool's lifetime is its own. A context passed to a method bounds that
// call only: a caller that gives up while a browser starts does not kill it;
// the launch completes on the pool's context and is closed if nobody claims
// it. Every session ends through one close path, whatever the reason
// (explicit, idle, LRU, workflow end, task end, crash, shutdown): it leaves
// the pool's tables, its browser is closed (bounded), its process group
// killed and reaped, its profile dir deleted, and exactly one
// SessionClosed hook runs with the reason. [Pool.Close] closes everything
// and returns when no process, profile dir or goroutine of the pool is left.
// Artifacts are not cleanup: screenshots and downloads stay in
// [Config.OutputDir] (a session's dir is made on its first artifact) until
// the host removes them.
//
// Local browsers are controlled over --remote-debugging-pipe: when the host
// process dies, even by SIGKILL, the browser sees EOF and exits. Every spawn
// is also recorded in a durable manifest (<Root>/manifest.json) before the
// pool waits for the browser, and [NewPool] sweeps what an earlier run left
// behind: it signals only browser processes whose environment marker, command
// line and start time prove they are ours and whose owner is gone, and
// removes only session dirs directly under <Root>/sessions. That sweep only
// visits the Root it is given: keep Root stable across runs. Each local
// browser's TMPDIR is inside its session dir, so its temporary files
// (Chromium's org.chromium.Chromium.* dirs) go with the profile. Chromium's
// singleton socket, <TMPDIR>/org.chromium.Chromium.XXXXXX/SingletonSocket,
// must fit in 107 bytes, so a TMPDIR holds at most 62: when
// <Root>/sessions/<id>/tmp is longer (a Root over 34 bytes), the browser
// gets a private TMPDIR (0700) instead, <base>/bp-<uid>/<name>, where name
// is the session id (its first 16 bytes) and a hash of the session dir's
// path, and base is /tmp, or $TMPDIR when /tmp is not usable and the path
// fits there. Closing the session removes it, and so does the sweep when
// it removes the session dir (it looks in /tmp and its own $TMPDIR). When
// no TMPDIR fits, [Pool.Open] fails at once, before starting the browser,
// with an error that says what to shorten.
//
// A session with no call for [Config.IdleTimeout] (10 minutes by default;
// the BROWSERPOOL_IDLE_TIMEOUT_MS environment variable overrides it) is
// closed with reason idle. A call in flight keeps a session alive however
// long it runs; events a page sends do not count as use, nor do the calls
// the pool makes on its own in answer to them (closing a dialog no handler
// keeps open). The reaper looks every IdleTimeout/10 (at most every 30 s),
// so a session closes up to that much after its timeout.
//
// # Profiles, storage state and the network policy
//
// [Pool.OpenProfile] opens a session on a named persistent profile under
// <Root>/profiles/<name>: cookies, local storage and logins survive the
// session for the next one opened on the name. A profile is held by one
// live session at a time, across pools sharing the root (a second open is
// an [ErrProfileInUse] error naming the holder); neither closing nor the
// sweep removes it, only [Pool.RemoveProfile]. [Session.StorageState]
// exports cookies plus the localStorage of given origins as JSON in
// Playwright's storageState shape, and [Session.SetStorageState] imports
// it, so a login moves between sessions, pools and fleets;
// [Session.Cookies], [Session.SetCookies] and [Session.ClearCookies] read
// and write cookies directly.
//
// [Config.Network] says where the browsers may go: Allow and Block rules
// (hosts, *.wildcards, IPs, CIDR prefixes), and by default every host but
// link-local and cloud-metadata addresses (169.254.0.0/16, fe80::/10,
// metadata.google.internal, ...). It is enforced by the browser's own
// network stack, through a loopback proxy the pool owns, for navigations,
// subresources, iframes, redirects, fetch() and downloads of every tab
// alike; a refused navigation is an [ErrBlockedByPolicy] error naming the
// rule. Loopback is allowed by default; block it with "127.0.0.0/8", "::1"
// and "localhost" in Block.
//
// # Limits and queues
//
// A [Tracker] hands out named sessions owned by workflows (chats): at most
// [TrackerConfig.PerWorkflow] per workflow (1 by default; over it, an
// [ErrSessionLimit] error names the session asked for, the limit and the
// workflow's active sessions) and [TrackerConfig.Global] in all (8 by
// default; at it, the least-recently-used session with no call in flight is
// closed with reason lru, or [ErrAllBusy] if all are busy;
// [TrackerConfig.EvictGrace] keeps other workflows' recently used sessions
// open, failing with [ErrNoRoom] instead). Reopening a held
// name is a reuse. [Tracker.EndWorkflow] closes a workflow's sessions, and
// [Tracker.Handler] serves a JSON view for an admin page.
//
// An [Allocator] binds tasks to computers (each a Pool with a cap of
// concurrent sessions, 4 by default) and gives each task its own session.
// At the cap a task waits in a strict FIFO queue (30 s budget, then
// [ErrQueueTimeout]) or is rejected at once ([ErrRejected]), as it asks; a
// freed slot goes to the head of the queue, never to a newcomer. A task that
// finishes has its session reclaimed; a close that fails is counted as
// leaked and retried.
//
// # Fleets
//
// When one machine is not enough, put a remote fleet in [Config.Launcher]:
// [Browserless] leases one fresh browser per websocket from a browserless v2
// server, [SeleniumGrid] one W3C session (driven over its se:cdp websocket)
// from a Selenium Grid 4. One Pool is one fleet, and its sessions behave
// like local ones; [SessionInfo] Fleet and Endpoint (also in the
// [Tracker.Handler] view) say where each lives, its URL without credentials
// or token. A full fleet is an [ErrFleetFull] error, which an [Allocator]
// queues on. Every lease is recorded in the manifest as soon as the fleet
// grants it (fleet kind, endpoint, Grid session id; never a token), so after
// a host crash the next [NewPool] on the same Root ends the orphaned Grid
// session through its launcher ([LeaseEnder]); a browserless lease ends
// with its socket. [DialWebSocket] is the transport to write a launcher for
// another fleet.
//
// # Identities
//
// An [Identity] separates who calls (the tool session, which routes tool
// calls) from which browser they act on (the browser session). A child
// agent shares its parent's browser by default ([Identity.Child]) or gets
// its own ([Identity.IsolatedChild]) without moving tool routing. A
// [Registry] records the holders of each browser: each holder has its own
// tabs, and a browser closes only when no holder is left and no group
// publication ([Holder.Publish], [GroupKey]) pins it.
//
// # Errors
//
// Every error is an [*Error] with the operation, session and tab, a class
// for errors.Is ([ErrSessionNotFound], [ErrTabNotInSession],
// [ErrInvalidURL], ...) and a hint that says what to do next, written to be
// read verbatim by a person or an LLM:
//
//	browserpool: Pool.Session: several sessions are live and no session id was given: live sessions: [s-1, s-2] (hint: pass one of the live session ids: s-1, s-2)
//
// A JavaScript value that does not fit the Go value given to receive it is
// [ErrDecode], never [ErrProtocol]: the browser raised nothing. Errors name
// a Tracker's sessions by their name (name=research) and every other
// session by its id (session=s-…); a caller's long input (a 70 KB URL) is
// cut short in a message, which says how long it was.
//
// CDP errors stay reachable with errors.As(err, **rpcc.ResponseError).
// Messages never carry query strings, cookies or typed passwords.
//
// A failed call is safe to retry when [Error.Retryable] reports true: the
// request provably never reached the browser (the connection or session was
// already gone, or the tab already closed), so it had no effect. Otherwise
// the browser may have run it (a reply lost when a connection dropped, a
// context that ended mid-call) and a retry may apply it twice.
//
// # Hooks and stats
//
// [Hooks] is a struct of optional funcs. They run one at a time on a
// goroutine of the pool, never under its locks; a slow hook delays only
// later hooks and a panicking one is recovered. [Pool.Stats] returns a plain
// value: gauges now and counters since the start.
//
// # Recording
//
// [Session.StartRecording] (or [Config.Recording] for every session a pool
// launches) records what its tabs do for a person to review: after every
// state-changing action a JPEG frame of the page as the action left it and
// a line in events.jsonl (the arguments as the trace shows them, password
// text masked, token-like URL values REDACTED), in <output dir>/recording.
// Read-only actions are not recorded. [Recording.Stop] writes index.html, a
// self-contained replay page stepped with the arrow keys;
// [Recording.ExportVideo] renders an MP4 with ffmpeg ([ErrFFmpegNotFound]
// without it). Frames are captured after the action, on its path; see
// [Recording] for why, and BenchmarkRecordingClick for the cost.
//
// # Attaching to the user's browser
//
// [Pool.CheckCDP] tells, in words a user can act on, whether a Chrome
// started with --remote-debugging-port answers (refused, not DevTools,
// timeout, or the "Allow remote debugging?" prompt still pending); the
// connection waiting on that prompt is kept for the same pool's Attach, so
// the user is asked once. The plain [CheckCDP] needs no pool and leaves
// nothing running. [Pool.Attach] connects to it: all workflows share one
// session per port (shared-cdp-<port>), closing it only disconnects, and
// the user's browser and tabs are never closed. Through
// [Session.ForWorkflow] each workflow names the tab of every page action
// ([AttachedView.Do]) and has its own selected tab; actions on one port are
// serialized. Acting on a visible browser may bring it to the foreground.
//
// # Testing with cdptest
//
// Package cdptest is an in-memory fake browser, like net/http/httptest: set
// [Config.Launcher] to its launcher and test your own code without Chromium,
// with scripted replies and injected faults (slow replies, crashes,
// detaches, dropped connections). Its fake pages (cdptest.NewPage) are
// pages described as data on which the agent actions work as on Chromium,
// so an agent's whole flow (snapshot, fill, click, wait, dialogs,
// downloads, screenshots) runs in a unit test in milliseconds; its doc
// lists the CDP methods each Tab method uses. Not faked: Drag and DragTo,
// EvaluateOn, PDF, cookies and storage state, and the network policy
// (Config.Network: a fake browser reaches every page it is given); script
// the calls with cdptest.Browser.Handle.
package browserpool
