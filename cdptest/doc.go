// Package cdptest provides an in-memory fake browser that speaks the Chrome
// DevTools Protocol, for tests of code that drives a browser, as
// net/http/httptest does for HTTP. No browser process is started: a
// [Browser] is a small state machine with targets, flattened sessions and a
// message queue, and [Browser.Transport] is its one connection.
//
// # Connecting
//
// A test makes a browser with [NewBrowser] and hands [Browser.Transport] to
// the code under test in place of a pipe or a websocket. The transport
// carries whole JSON messages: the client writes requests with
// WriteMessage and reads replies and events with ReadMessage. Sessions are
// flattened (each message names its sessionId), as over
// --remote-debugging-pipe.
//
//	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
//	client := mycdp.New(b.Transport()) // the code under test
//
// To run a browserpool.Pool on fake browsers, give its Config a [Launcher]:
// each launch starts a new Browser.
//
// # What it answers
//
// Without scripting the browser answers like Chrome for a small set of
// methods: Browser.getVersion and Browser.close; Target.createTarget,
// attachToTarget (flatten: true only), detachFromTarget, closeTarget,
// getTargets, activateTarget and setDiscoverTargets, with Chrome's
// Target.* events; Page.enable, navigate (with the load and lifecycle
// events of a session that enabled Page; a URL on host fail.invalid fails
// with net::ERR_NAME_NOT_RESOLVED), setLifecycleEventsEnabled,
// getFrameTree and getNavigationHistory;
// Runtime.enable and Runtime.evaluate of a tiny subset (number
// arithmetic, string literals, document.title, location.href; anything
// else is undefined); Inspector.enable; Emulation.setDeviceMetricsOverride
// (accepted, no effect). Any other method gets Chrome's
// {"code":-32601,"message":"'X.y' wasn't found"}, and a call on a session
// the browser does not know gets Chrome's sessionless reply
// {"id":N,"error":{"code":-32001,"message":"Session with given id not
// found."}}. Events that Chrome sends only to a session that enabled a
// domain or turned on discovery are sent the same way here, so code that
// forgets Page.enable waits for a load event here as it would in Chrome.
//
// # Scripting
//
// [Browser.Handle] replaces a method's answer, [Browser.Delay] slows its
// replies, [Browser.Hold] keeps them in flight until [Gate.Release], and
// [Browser.Emit] sends any event. A handler returns an *[Error] for a CDP
// error reply.
//
// # Faults
//
// [Browser.Exit] ends the process (the transport reports io.EOF and
// [Browser.Exited] is closed), [Browser.DropConnection] breaks the
// connection (io.ErrUnexpectedEOF), [Browser.CrashTarget] crashes a page,
// [Browser.DetachTarget] takes a page's sessions away, and
// [Browser.SessionlessErrorFor] answers a method with the sessionless
// error reply Chrome sends for a session it no longer knows. Replies lost
// to a fault are never sent, so a client's pending calls must be ended by
// the client itself.
//
// # Recording and cleanup
//
// [Browser.Calls] lists every request received and [Browser.Targets] the
// open pages, as plain values for cmp.Diff. When the test ends, the
// browser fails it if the code under test left the connection open, and
// names the sessions still attached ([WithoutLeakCheck] turns that off).
//
// # Concurrency and time
//
// A Browser is safe for concurrent use. It starts no goroutine of its own:
// requests are handled on the goroutine that writes them and ReadMessage
// blocks on a channel, so a browser made inside a testing/synctest bubble
// lives entirely in it. Delays use time.AfterFunc, which runs on the
// bubble's fake clock; they are stopped when the connection ends.
package cdptest
