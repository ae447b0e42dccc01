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
// methods: Browser.getVersion, Browser.close and
// Browser.setDownloadBehavior; Target.createTarget, attachToTarget
// (flatten: true only), detachFromTarget, closeTarget, getTargets,
// activateTarget and setDiscoverTargets, with Chrome's Target.* events;
// Page.enable, navigate (with the load and lifecycle events of a session
// that enabled Page; a URL on host fail.invalid fails with
// net::ERR_NAME_NOT_RESOLVED and leaves the tab on Chromium's error page,
// chrome-error://chromewebdata/, titled with the host; a URL that differs
// from the current one only by its #fragment is a same-document navigation:
// no loaderId, Page.navigatedWithinDocument, the page kept), reload,
// navigateToHistoryEntry and getNavigationHistory (a history with a current
// entry; a new navigation drops the entries forward of it, as in
// Chromium), setLifecycleEventsEnabled, getFrameTree and
// addScriptToEvaluateOnNewDocument (recorded, not run: see the status
// below); Performance.enable; Runtime.enable; Inspector.enable;
// Emulation.setDeviceMetricsOverride (the fake page's viewport and
// screenshots follow it, deviceScaleFactor included); and the page
// protocol of fake pages (below). A method it does not implement gets
// Chrome's {"code":-32601,"message":"'X.y' wasn't found"}, with a data
// field saying to answer it with [Browser.Handle]; a call on a session
// the browser does not know gets Chrome's sessionless reply
// {"id":N,"error":{"code":-32001,"message":"Session with given id not
// found."}}. Events that Chrome sends only to a session that enabled a
// domain or turned on discovery are sent the same way here, so code that
// forgets Page.enable waits for a load event here as it would in Chrome.
//
// No silent fallbacks: Runtime.evaluate answers the library's own page
// expressions, a page's scripts ([Page.Script]), literals (numbers,
// strings with all of JavaScript's escapes, true, false, null, undefined,
// NaN, Infinity, arrays), number arithmetic (+ - * / % **), string
// concatenation, .length, document.title and location.href; any other
// expression, or a mix of types whose coercion the fake does not model, is
// a -32000 error saying the expression is not scripted and how to script
// it, never undefined and never a guess. The library shows it as an
// ErrProtocol error whose text carries that message.
// Runtime.callFunctionOn of a function that is not the library's page
// JavaScript is the same kind of error.
//
// # Fake pages
//
// A test describes a page as data with [NewPage] and element constructors
// ([Heading], [Text], [TextBox], [Password], [Button], [Link], [Checkbox],
// [Select], [FileInput], [Table], [Group]), says what acting on an element
// does ([Element.Does] runs a Go func that changes the page,
// [Element.Navigates], [Element.Submits], [Element.Confirms],
// [Element.Alerts], [Element.Prompts], [Element.Downloads],
// [Element.OnChange]) and gives the pages to the browser with
// [WithPages]. Loading a page's URL loads a fresh copy of it (Back,
// Forward and Reload too). A URL matches the page given at it, ignoring
// its #fragment; a URL with a query string that no page is given at
// matches the page given at the URL without the query (so a page defined
// at /form serves /form?q=1, unless a page is defined at /form?q=1). A
// URL no page matches loads an empty page with no title, served with
// status 404; a defined page is served with its [Page.Status] (200 by
// default), which NavigateResult.Status reports: the fake sends the
// report of the library's status script (Performance.metrics) for a
// session that enabled Performance and added that script. As in
// Chromium, a page without a title (about:blank included) has
// document.title "" and is listed by Target.getTargets under its URL, and
// "http://host:port" is "http://host:port/". Every Tab
// action of browserpool then works on it as a caller sees it on Chromium:
// the same snapshot text and refs (the fake answers
// Accessibility.getFullAXTree from the page and the library formats it),
// clicks confirmed by the library's click watch, fills, selects, uploads,
// keys, scrolls, navigations and their waits, PageInfo, screenshots (a
// real PNG or JPEG of the size asked for), dialogs with the tab's handler,
// deferral and AnswerDialog, and downloads (the declared bytes land in the
// session's download dir). The fake recognises the library's page
// JavaScript by identity (internal/pagejs), so a test never matches
// JavaScript source. Pages and the library cannot drift apart: the
// package's parity test runs one agent flow against fake pages and their
// HTML twins in Chromium and compares what the caller sees.
//
// Where a fake page differs from Chromium:
//
//   - Layout: each rendered element is a 300×30 box at x=8, one row per
//     element in document order, 40 px apart; the viewport is what the tab
//     set with Emulation.setDeviceMetricsOverride (the pool's
//     Config.Viewport, 1280×720 by default), else 780×493 CSS pixels
//     (headless Chromium's own). Coordinates in
//     errors and ClickAt's target follow this layout, not CSS. Nothing is
//     ever covered, so ErrCovered never happens.
//   - Screenshots have Chromium's size (the clip or viewport times the
//     scale and the device scale factor) but show grey boxes, not a
//     rendering.
//   - Tab.WaitVisible matches only #id selectors ([Element.WithID]);
//     Tab.WaitCondition and Tab.Evaluate answer only scripted expressions
//     ([Page.Script]) and the tiny evaluator. A script's error is thrown
//     as "Error: <text>" at line 1, column 1.
//   - The keyboard knows Enter (clicks the focused button or link, or
//     submits from a text field: the page's first [Element.Submits]),
//     Tab, Backspace, Delete, Control/Meta+A and printable keys.
//   - No network: no Network.* events, so Tab.WaitNetworkIdle is idle
//     after its quiet time. A download completes at once, and only once a
//     client routed downloads (Browser.setDownloadBehavior).
//   - One document per page: no iframes.
//   - After a confirm or prompt, an element's Navigates and Downloads
//     happen only if it was accepted (an alert's always).
//   - A page's Go funcs ([Element.Does], [Page.Script], dialog answers,
//     [Element.OnChange]) run with the browser locked: they must change
//     only the *Page they get, never call the Browser. A panic in one is
//     recovered: the test fails with the panic and its stack, and the CDP
//     call that ran the func fails at once with a -32000 error naming the
//     func and the panic ("cdptest: Element.Does of button "Go" panicked:
//     …"), so the Tab action returns it instead of hanging. The click,
//     change or answer goes no further (no dialog, download or navigation).
//   - [Page.Script] called on a loaded page (from its Go func) changes that
//     copy only; the next load starts from the page given to WithPages.
//
// # Which CDP methods each Tab method uses
//
// For tests that script their own answers ([Browser.Handle]) instead of
// fake pages. Every action on a ref may first call Page.getFrameTree to
// see whether the page navigated since the snapshot.
//
//   - Session.OpenTab, Session.Tab: Target.createTarget, Target.attachToTarget,
//     Page.enable, Page.setLifecycleEventsEnabled (and, for a tab that
//     existed before, Page.handleJavaScriptDialog to dismiss a dialog
//     nobody saw). Pool.Open: Browser.setDownloadBehavior.
//   - Navigate: Page.navigate, then the Page.lifecycleEvent "load" of its
//     loader; NavigateResult.Status from the Performance.metrics report of
//     the status script (Performance.enable and
//     Page.addScriptToEvaluateOnNewDocument, sent when a tab connects),
//     else Runtime.evaluate after the load.
//   - Back, Forward: Page.getNavigationHistory, Page.navigateToHistoryEntry,
//     Runtime.evaluate (pagejs.ReadyState). Reload: Page.reload.
//   - Snapshot: Page.getFrameTree, Accessibility.getFullAXTree (per
//     document), DOMSnapshot.captureSnapshot (per process: the elements a
//     page made clickable without a role; the fake does not implement it,
//     so on a fake page only elements with roles get refs),
//     DOM.describeNode (iframes), Target.getTargets and
//     Target.attachToTarget (out-of-process iframes).
//   - The package's own page functions run in an isolated world of each
//     frame, made once per document with Page.createIsolatedWorld; nodes
//     are resolved into it (DOM.resolveNode with executionContextId), and
//     WaitVisible evaluates in it (Runtime.evaluate with contextId). A
//     world is gone after a navigation, as in Chromium.
//   - Click: DOM.scrollIntoViewIfNeeded, DOM.getContentQuads,
//     Page.getLayoutMetrics, DOM.getNodeForLocation (DOM.getBoxModel on
//     the way through out-of-process iframes), DOM.resolveNode,
//     Runtime.callFunctionOn (pagejs.ClickArm, ClickReport, and Cover when
//     another node is hit, then ScrollCenter and LabelOf to aim again,
//     ClickDisarm on failure), Input.dispatchMouseEvent (mouseMoved,
//     mousePressed, mouseReleased), Runtime.releaseObjectGroup.
//   - Hover: as Click up to the hit test, then Input.dispatchMouseEvent
//     (mouseMoved). ClickAt, HoverAt: Input.dispatchMouseEvent only.
//   - Fill: DOM.scrollIntoViewIfNeeded, DOM.resolveNode,
//     Runtime.callFunctionOn (pagejs.Fill, FillDone), Input.insertText (or
//     Input.dispatchKeyEvent Delete for an empty value),
//     Runtime.releaseObjectGroup.
//   - Type: Runtime.evaluate (pagejs.SecretFocus), Input.dispatchKeyEvent
//     (a keyDown with the character's text and a keyUp per character).
//     Press: Input.dispatchKeyEvent.
//   - Select: DOM.resolveNode, Runtime.callFunctionOn (pagejs.Select),
//     Runtime.releaseObjectGroup. Upload: DOM.describeNode,
//     DOM.setFileInputFiles.
//   - Scroll: Page.getLayoutMetrics (or, with a ref, Click's aiming
//     without the hit test), Input.dispatchMouseEvent (mouseWheel).
//   - Evaluate: Runtime.evaluate (returnByValue, awaitPromise). PageInfo:
//     Runtime.evaluate (pagejs.PageInfo).
//   - WaitLoad: Page.getFrameTree, Runtime.evaluate (pagejs.ReadyState),
//     Page.lifecycleEvent. WaitNavigation: Page.getFrameTree,
//     Page.lifecycleEvent.
//   - WaitVisible, WaitCondition: Runtime.evaluate of pagejs.PollCall
//     (awaitPromise), again after a navigation; Page.getFrameTree.
//   - WaitNetworkIdle: Network.enable, then Network.requestWillBeSent,
//     loadingFinished and loadingFailed.
//   - Screenshot: Page.getLayoutMetrics, Page.captureScreenshot.
//   - Dialogs (SetDialogHandler, AnswerDialog): Page.javascriptDialogOpening
//     and javascriptDialogClosed, Page.handleJavaScriptDialog. While a
//     dialog is open the page answers nothing else.
//   - Session.Downloads: no call; it reads Browser.downloadWillBegin and
//     Browser.downloadProgress on the browser's session, as WaitDownload
//     does.
//   - WaitDownload: Browser.downloadWillBegin and Browser.downloadProgress
//     (on the browser's session), Page.getFrameTree.
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
