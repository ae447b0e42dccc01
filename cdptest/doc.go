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
// getTargetInfo (a page session's own, or targetId's), activateTarget and
// setDiscoverTargets, with Chrome's Target.* events;
// Page.enable, navigate (with the load and lifecycle events of a session
// that enabled Page; a URL on host fail.invalid fails with
// net::ERR_NAME_NOT_RESOLVED and leaves the tab on Chromium's error page,
// chrome-error://chromewebdata/, titled with the host; a URL that differs
// from the current one only by its #fragment is a same-document navigation:
// no loaderId, Page.navigatedWithinDocument, the page kept), reload,
// navigateToHistoryEntry and getNavigationHistory (a history with a current
// entry; a new navigation drops the entries forward of it, and a load of
// the URL the tab is on replaces its entry and keeps them, as in Chromium), setLifecycleEventsEnabled, getFrameTree and
// addScriptToEvaluateOnNewDocument (recorded, not run: see the status
// below); Performance.enable; Runtime.enable and
// Runtime.discardConsoleEntries (fake pages log nothing); Inspector.enable;
// Emulation.setDeviceMetricsOverride (the fake page's viewport and
// screenshots follow it, deviceScaleFactor included); Storage.getCookies,
// setCookies and clearCookies on one cookie jar per browser (a cookie
// replaces the one of the same name, domain, path and partition, an
// expired one deletes it, one without a domain or with neither name nor
// value fails the call with Chromium's "Invalid cookie fields" and sets
// none; fake pages neither send nor see cookies); and the page protocol
// of fake pages (below). A method it does not implement gets
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
// ([Heading], [Text], [TextBox], [SearchBox], [Password], [Button],
// [Link], [Checkbox], [Radio], [Select], [FileInput], [Table], [Group]),
// or as &Element{Role: …} literals, which act as the constructor of their
// role does; says what acting on an element does ([Element.Does] runs a
// Go func that changes the page, [Element.Navigates], [Element.Submits],
// [Element.Confirms], [Element.Alerts], [Element.Prompts],
// [Element.Downloads], [Element.OnChange]) and what the page does by
// itself later ([Page.After]); and gives the pages to the browser with
// [WithPages]. Loading a page's URL loads a fresh copy of it (Back,
// Forward and Reload too). A URL matches the page given at it, ignoring
// its #fragment; a URL with a query string that no page is given at
// matches the page given at the URL without the query (so a page defined
// at /form serves /form?q=1, unless a page is defined at /form?q=1). URLs
// are compared as Chromium writes them: the scheme and host in lower case,
// without the default port, and an empty path is "/" (a page given at
// https://A.test:443 is at https://a.test/, which Target.getTargets,
// Page.getFrameTree and PageInfo report). A URL no page matches loads an
// empty page with no title, served with status 404; a defined page is
// served with its [Page.Status] (200 by default), which
// NavigateResult.Status reports: the fake sends the report of the
// library's status script (Performance.metrics) for a session that
// enabled Performance and added that script. As in Chromium, a page
// without a title (about:blank included) has document.title "" and is
// listed by Target.getTargets under its URL.
//
// The actions of browserpool's Tab and Session then work on a fake page
// as a caller sees them on Chromium, except those listed under "Not
// faked" below: the same snapshot text and refs (the fake answers
// Accessibility.getFullAXTree from the page, a file input's value
// Chromium's "No file chosen", the chosen file's name or "2 files", and
// DOMSnapshot.captureSnapshot with its elements' tags and attributes,
// without layout; the library formats them),
// clicks confirmed by the library's click watch, fills, selects, uploads,
// the keys of the list below, scrolls, navigations (Navigate, Back,
// Forward, Reload) and their waits, form submits, PageInfo, Evaluate and
// WaitCondition of scripted expressions, screenshots (a real PNG or JPEG
// of the size asked for), the console and network logs (empty), dialogs
// with the tab's handler, deferral and AnswerDialog, and downloads (the
// declared bytes land in the session's download dir). The fake recognises
// the library's page JavaScript by identity (internal/pagejs), so a test
// never matches JavaScript source. Pages and the library cannot drift
// apart: the package's parity test runs one agent flow against fake pages
// and their HTML twins in Chromium and compares what the caller sees.
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
//   - Tab.WaitVisible matches only #id selectors ([Element.WithID]), and
//     an element with nothing to show (no text, no control, no child
//     showing anything) is not visible, as it has no size in Chromium;
//     Tab.WaitCondition and Tab.Evaluate answer only scripted expressions
//     ([Page.Script]) and the tiny evaluator. A script's error is thrown
//     as "Error: <text>" at line 1, column 1. A wait checks its condition
//     after every call to its tab and, as Chromium's polling does, every
//     50 ms on its own, so a condition that comes true with time, or by a
//     [Page.After] func, ends it.
//   - Forms: a form is a [Group] of role "form" (the page's elements in no
//     form are one more). A submit ([Element.Submits]) is a GET of the
//     form's named fields, and does nothing while a required field of the
//     form is empty, as Chromium's constraint validation; see
//     [Element.Submits]. Radio buttons are grouped by
//     [Element.RadioGroup] within a form.
//   - The keyboard acts as Chromium's on the focused control: Enter clicks
//     a button or follows a link, and in a text field, checkbox or radio
//     button clicks its form's first submit button; Space clicks a button
//     (on its keyUp, as Chromium), toggles a checkbox and checks a radio
//     button; the arrow keys move a radio group's choice, round from end to
//     start; ArrowDown, ArrowUp, Home and End move a select's choice,
//     stopping at the ends; Escape clears a search field; Tab and
//     Shift+Tab move the focus through the controls (a radio group is one
//     stop; past the last, or before the first, the focus leaves the page
//     and keys reach nothing; with nothing focused, Tab goes to the first
//     and Shift+Tab to the last); Backspace, Delete, Control/Meta+A and printable keys edit
//     a text field. Any other key on a focused control (the caret keys in a
//     text field, Space on a link, Enter on a select, any Control, Alt or
//     Meta chord but Control/Meta+A, …) is a -32000 error saying that
//     cdptest does not model that key there, rather than a key silently
//     ignored. With nothing focused, keys do nothing: the fake does not
//     scroll on Space, PageDown, the arrows, Home or End.
//   - No network: no Network.* events, so Tab.WaitNetworkIdle is idle
//     after its quiet time and Tab.Network is empty; and no network
//     policy: the pool's Config.Network is not enforced, every page given
//     to the fake loads (test your policy against Chromium). A download completes
//     at once, and only once a client routed downloads
//     (Browser.setDownloadBehavior).
//   - One document per page: no iframes.
//   - After a confirm or prompt, an element's Navigates and Downloads
//     happen only if it was accepted (an alert's always).
//   - A page's Go funcs ([Element.Does], [Page.Script], [Page.After],
//     dialog answers, [Element.OnChange]) run with the browser locked, on a
//     goroutine of the fake's, not the test's: they must change only the
//     *Page they get, never call the Browser. A panic in one is recovered:
//     the test fails with the panic and its stack, and the CDP call that
//     ran the func fails at once with a -32000 error naming the func and
//     the panic ("cdptest: Element.Does of button "Go" panicked: …"), so
//     the Tab action returns it instead of hanging. A t.Fatal or t.FailNow
//     in one fails the test but cannot stop it from there (testing allows
//     them only on the test's goroutine): the call fails with a -32000
//     error saying "the page func called t.FailNow/t.Fatal; use t.Error in
//     page funcs". Use t.Error (or t.Errorf) in page funcs. Either way the
//     click, change or answer goes no further (no dialog, download or
//     navigation).
//   - [Page.Script] and [Page.After] called on a loaded page (from its Go
//     func) change that copy only; the next load starts from the page
//     given to WithPages.
//
// # Not faked
//
// These actions fail on a fake page with a protocol error (ErrProtocol)
// that names the method the fake lacks; answer it with [Browser.Handle]
// to script them:
//
//   - Tab.Drag, Tab.DragTo: Input.setInterceptDrags, Input.dispatchDragEvent
//   - Tab.EvaluateOn: Runtime.callFunctionOn; of the caller's function,
//     which the fake cannot run
//   - Tab.PDF: Page.printToPDF
//   - Session.StorageState of an origin, Session.SetStorageState of an
//     origin: Network.setBypassServiceWorker, Fetch.enable; its helper
//     tab loads an empty document of the origin and runs JavaScript on
//     localStorage there, which fake pages have neither of (a state of
//     cookies alone is faked: see the next section)
//
// # Which CDP methods each action uses
//
// For tests that script their own answers ([Browser.Handle]) instead of
// fake pages, and for faults aimed at one call ([Browser.Hold],
// [Browser.Delay]). Each list is what the action calls, in the order of
// first use, on a new tab on a fake page just snapshotted; the package's
// tests check it. Calls made once per tab (Runtime.enable,
// Network.enable) or per document (Page.createIsolatedWorld, the isolated
// world the library's page functions run in) are not made again later.
// On Chromium an action may call more: for iframes and out-of-process
// iframes, for a covered element, or to recover from an error. Events the
// library waits for are not listed: hold one with [Browser.Hold] to see
// whether an action waits for it.
//
//   - Pool.Open: Browser.setDownloadBehavior
//   - Session.Tab: Target.getTargets, Target.attachToTarget,
//     Page.handleJavaScriptDialog, Page.enable, Page.setLifecycleEventsEnabled,
//     Emulation.setDeviceMetricsOverride, Performance.enable,
//     Page.addScriptToEvaluateOnNewDocument,
//     Page.setInterceptFileChooserDialog; for a tab that existed
//     before the session, such as the browser's first
//   - Session.OpenTab: Target.createTarget, Target.attachToTarget,
//     Page.enable, Page.setLifecycleEventsEnabled,
//     Emulation.setDeviceMetricsOverride, Performance.enable,
//     Page.addScriptToEvaluateOnNewDocument,
//     Page.setInterceptFileChooserDialog, Page.navigate
//   - Session.Tabs: Target.getTargets
//   - Session.Cookies, Session.StorageState: Storage.getCookies; the
//     state's cookies, with no origin
//   - Session.SetCookies, Session.SetStorageState: Storage.setCookies; a
//     state of cookies, with no origin
//   - Session.ClearCookies: Storage.clearCookies
//   - Session.CloseTab: Target.closeTarget
//   - Tab.Navigate: Page.navigate
//   - Tab.Back, Tab.Forward: Page.getNavigationHistory, Page.getFrameTree,
//     Page.navigateToHistoryEntry, Runtime.evaluate
//   - Tab.Reload: Page.getFrameTree, Page.reload, Runtime.evaluate
//   - Tab.Snapshot: Page.getFrameTree, Accessibility.getFullAXTree,
//     DOMSnapshot.captureSnapshot; the fake answers the last with the
//     page's elements as HTML tags and attributes but no layout, so a
//     file input reads as on Chromium (type=file) and only elements with
//     roles get refs (and Runtime.evaluate of document.readyState on a
//     page whose DOMContentLoaded did not come: the fake's always comes)
//   - Tab.Click: DOM.scrollIntoViewIfNeeded, DOM.getContentQuads,
//     Page.getLayoutMetrics, DOM.getNodeForLocation,
//     Page.createIsolatedWorld, DOM.resolveNode, Runtime.callFunctionOn,
//     Input.dispatchMouseEvent, Runtime.releaseObjectGroup
//   - Tab.Hover: DOM.scrollIntoViewIfNeeded, DOM.getContentQuads,
//     Page.getLayoutMetrics, DOM.getNodeForLocation, Input.dispatchMouseEvent
//   - Tab.ClickAt, Tab.HoverAt: Input.dispatchMouseEvent
//   - Tab.Fill: DOM.scrollIntoViewIfNeeded, Page.createIsolatedWorld,
//     DOM.resolveNode, Runtime.callFunctionOn, Runtime.releaseObjectGroup,
//     Input.insertText
//   - Tab.Type: Runtime.evaluate, Input.dispatchKeyEvent
//   - Tab.Press: Input.dispatchKeyEvent
//   - Tab.Select: Page.createIsolatedWorld, DOM.resolveNode,
//     Runtime.callFunctionOn, Runtime.releaseObjectGroup
//   - Tab.Upload: DOM.describeNode, Page.createIsolatedWorld,
//     DOM.resolveNode, Runtime.callFunctionOn, Runtime.releaseObjectGroup,
//     DOM.setFileInputFiles
//   - Tab.Scroll: Page.getLayoutMetrics, Input.dispatchMouseEvent
//   - Tab.Evaluate: Runtime.evaluate
//   - Tab.PageInfo: Page.createIsolatedWorld, Runtime.evaluate
//   - Tab.WaitLoad, Tab.WaitCondition: Page.getFrameTree, Runtime.evaluate
//   - Tab.WaitVisible: Page.getFrameTree, Page.createIsolatedWorld,
//     Runtime.evaluate
//   - Tab.WaitNavigation: Page.getFrameTree; and its action's calls
//   - Tab.WaitDownload: none of its own; its action's calls
//   - Tab.AnswerDialog: Page.handleJavaScriptDialog
//   - Tab.WaitNetworkIdle, Tab.Network: Network.enable
//   - Tab.Screenshot: Page.getLayoutMetrics, Runtime.evaluate,
//     Page.captureScreenshot
//   - Tab.SetViewport: Emulation.setDeviceMetricsOverride
//   - Tab.Console: Runtime.enable, Runtime.releaseObjectGroup
//   - Tab.ClearConsole: Runtime.enable, Runtime.releaseObjectGroup,
//     Runtime.discardConsoleEntries
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
// the client itself. With a pool, [Launcher.BrowserFor] finds the browser
// of a session, to aim a fault at it (see its example).
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
// A Browser is safe for concurrent use. It starts no goroutine that
// outlives a call: requests are handled on the goroutine that writes them
// (a page's Go func on a goroutine of its own, which ends before the
// request's handling does) and ReadMessage blocks on a channel, so a
// browser made inside a testing/synctest bubble lives entirely in it.
// Delays, a wait's checks every 50 ms and [Page.After] use
// time.AfterFunc, which runs on the bubble's fake clock; they are stopped
// when the connection ends.
package cdptest
