package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/google/go-cmp/cmp"
)

// libraryClasses names every error class of the library. The test below
// parses the library's source to keep it complete: a new class needs a hint
// in tool names before this package's tests pass.
var libraryClasses = map[string]error{
	"ErrPoolClosed": browserpool.ErrPoolClosed, "ErrBrowserNotFound": browserpool.ErrBrowserNotFound,
	"ErrLaunchFailed": browserpool.ErrLaunchFailed, "ErrSessionNotFound": browserpool.ErrSessionNotFound,
	"ErrAmbiguousSession": browserpool.ErrAmbiguousSession, "ErrSessionClosed": browserpool.ErrSessionClosed,
	"ErrBrowserExited": browserpool.ErrBrowserExited, "ErrTabNotFound": browserpool.ErrTabNotFound,
	"ErrTabNotInSession": browserpool.ErrTabNotInSession, "ErrTabClosed": browserpool.ErrTabClosed,
	"ErrInvalidURL": browserpool.ErrInvalidURL, "ErrInvalidID": browserpool.ErrInvalidID,
	"ErrNavigation": browserpool.ErrNavigation, "ErrTimeout": browserpool.ErrTimeout,
	"ErrPathEscapes": browserpool.ErrPathEscapes, "ErrProtocol": browserpool.ErrProtocol,
	"ErrCloseFailed": browserpool.ErrCloseFailed, "ErrInvalidArgument": browserpool.ErrInvalidArgument,
	"ErrInvalidConfig": browserpool.ErrInvalidConfig, "ErrInvalidIdentity": browserpool.ErrInvalidIdentity,
	"ErrTabNotHeld": browserpool.ErrTabNotHeld, "ErrJavaScript": browserpool.ErrJavaScript,
	"ErrSessionLimit": browserpool.ErrSessionLimit, "ErrAllBusy": browserpool.ErrAllBusy,
	"ErrNoRoom":      browserpool.ErrNoRoom,
	"ErrTabRequired": browserpool.ErrTabRequired, "ErrCDPRefused": browserpool.ErrCDPRefused,
	"ErrCDPUnreachable": browserpool.ErrCDPUnreachable, "ErrCDPNotDevTools": browserpool.ErrCDPNotDevTools,
	"ErrCDPTimeout": browserpool.ErrCDPTimeout, "ErrCDPPromptPending": browserpool.ErrCDPPromptPending,
	"ErrCDPRejected": browserpool.ErrCDPRejected, "ErrDialogOpen": browserpool.ErrDialogOpen,
	"ErrDownloadFailed": browserpool.ErrDownloadFailed, "ErrCovered": browserpool.ErrCovered, "ErrDragNotStarted": browserpool.ErrDragNotStarted,
	"ErrNotVisible": browserpool.ErrNotVisible, "ErrClickMissed": browserpool.ErrClickMissed,
	"ErrStaleRef": browserpool.ErrStaleRef, "ErrNotBound": browserpool.ErrNotBound,
	"ErrWrongComputer": browserpool.ErrWrongComputer, "ErrUnknownComputer": browserpool.ErrUnknownComputer,
	"ErrRejected": browserpool.ErrRejected, "ErrQueueFull": browserpool.ErrQueueFull,
	"ErrQueueTimeout": browserpool.ErrQueueTimeout, "ErrTaskBusy": browserpool.ErrTaskBusy,
	"ErrNotShared": browserpool.ErrNotShared, "ErrTaskFinished": browserpool.ErrTaskFinished,
	"ErrLeaked": browserpool.ErrLeaked, "ErrFFmpegNotFound": browserpool.ErrFFmpegNotFound,
	"ErrProfileInUse": browserpool.ErrProfileInUse, "ErrProfileNotFound": browserpool.ErrProfileNotFound,
	"ErrInvalidStorageState": browserpool.ErrInvalidStorageState, "ErrBlockedByPolicy": browserpool.ErrBlockedByPolicy,
	"ErrDecode": browserpool.ErrDecode, "ErrNoHistory": browserpool.ErrNoHistory, "ErrFleetFull": browserpool.ErrFleetFull,
	"ErrFileTransfer": browserpool.ErrFileTransfer, "ErrFocusLost": browserpool.ErrFocusLost,
}

func TestEveryLibraryErrorClassIsListed(t *testing.T) {
	files, err := filepath.Glob("../../*.go")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if file.Name.Name != "browserpool" {
			continue
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, sp := range gd.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() || !strings.HasPrefix(n.Name, "Err") || i >= len(vs.Values) {
						continue
					}
					if c, ok := vs.Values[i].(*ast.CallExpr); ok {
						if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "New" {
							found = append(found, n.Name)
						}
					}
				}
			}
		}
	}
	var listed []string
	for n := range libraryClasses {
		listed = append(listed, n)
	}
	sort.Strings(found)
	sort.Strings(listed)
	if diff := cmp.Diff(found, listed); diff != "" {
		t.Errorf("the library's error classes (-want) differ from those listed here (+got); give each new class a hint in classHints:\n%s", diff)
	}
}

func TestEveryErrorClassHasANextStepInToolNames(t *testing.T) {
	s := newServer(t, Config{Pool: browserpool.Config{Launcher: noLauncher{}}})
	var tools []string
	for _, tl := range listTools(t, connect(t, s)) {
		tools = append(tools, tl.Name)
	}
	toolRef := regexp.MustCompile(`browser_\w+`)
	for name, class := range libraryClasses {
		h, ok := classHints[class]
		if !ok {
			t.Errorf("%s has no hint in classHints", name)
			continue
		}
		if m := goName.FindString(h); m != "" {
			t.Errorf("%s's hint names Go API %q: %s", name, m, h)
		}
		for _, tool := range toolRef.FindAllString(h, -1) {
			if !slices.Contains(tools, tool) {
				t.Errorf("%s's hint names %s, which is not a tool: %s", name, tool, h)
			}
		}
	}
}

func TestGoMethodNamesBecomeToolNames(t *testing.T) {
	for _, p := range goToTool {
		if got := toolNames("call " + p.goName + " again"); got != "call "+p.tool+" again" {
			t.Errorf("toolNames(%q) = %q, want the tool %s", p.goName, got, p.tool)
		}
	}
	// A library error: the operation and the detail are rewritten, and the
	// hint is the class's hint in tool names.
	err := &browserpool.Error{Op: "Tab.Click", Session: "s-1", Tab: "T1", Class: browserpool.ErrStaleRef,
		Detail: "ref @e9 is not in the latest snapshot", Hint: "take a new snapshot with Tab.Snapshot and use a ref it shows"}
	want := "Error: browserpool: browser_click session=s-1 tab=T1: stale element ref: ref @e9 is not in the latest snapshot\n" +
		"Next: call browser_snapshot and use a ref it shows"
	if diff := cmp.Diff(want, describe(err)); diff != "" {
		t.Errorf("describe (-want +got):\n%s", diff)
	}
	// A class without a table entry keeps the library's hint, rewritten,
	// unless it still names Go API.
	odd := errors.New("odd")
	err = &browserpool.Error{Op: "Tab.Fill", Class: odd, Hint: "retry Tab.Fill after Tab.Snapshot"}
	if got := describe(err); !strings.HasSuffix(got, "\nNext: retry browser_type after browser_snapshot") {
		t.Errorf("describe of an unlisted class = %q", got)
	}
	// A navigation Chromium aborted: browser_navigate answers a URL that
	// is a file with the file's path, so an abort left is no download.
	err = &browserpool.Error{Op: "Tab.Navigate", Class: browserpool.ErrNavigation, Detail: "http://x/page: net::ERR_ABORTED",
		Hint: "the load was cancelled, most often because the URL answers with a file to download: fetch it with Tab.WaitDownload"}
	if got := describe(err); strings.Contains(got, "download") || !strings.Contains(got, "\nNext: the load was cancelled before the page came") {
		t.Errorf("describe of an aborted navigation = %q", got)
	}
	// The call's own deadline: the library's hint, for a Go caller, is
	// said in tools, and so is the error.
	err = &browserpool.Error{Op: "Tab.Navigate", Class: context.DeadlineExceeded, Detail: "http://x/ did not finish loading before the caller's context ended",
		Hint: "the page may still be usable: take a snapshot; pass a context with a longer deadline to wait longer"}
	want = "Error: browserpool: browser_navigate: timed out: http://x/ did not finish loading before the call's time ran out\n" +
		"Next: the page may still be usable: call browser_snapshot; to wait longer, call browser_wait_for"
	if diff := cmp.Diff(want, describe(err)); diff != "" {
		t.Errorf("describe of a call's deadline (-want +got):\n%s", diff)
	}
	// A page busy in a script: the library stops it, and its hint says so.
	err = &browserpool.Error{Op: "Tab.Click", Class: context.DeadlineExceeded, Detail: "the page did not answer",
		Hint: "retry, with a longer deadline if the page is only slow; if a script of the page's keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes commands again"}
	if got := describe(err); !strings.HasSuffix(got, "\nNext: call the tool again; if the page is only slow, wait for it first with browser_wait_for; if a script of the page's keeps it busy (a loop that never returns), it is stopped in a moment and the tab takes commands again") {
		t.Errorf("describe of a busy page's click = %q", got)
	}
	// A page busy in a script holds the tab (the library's hint says to
	// close it): no snapshot, which would wait too.
	err = &browserpool.Error{Op: "Tab.Navigate", Session: "s-1", Tab: "T1", Class: browserpool.ErrTimeout, Detail: "http://x/b did not finish loading within 30s",
		Hint: "its document never replaced the previous page, which most often means a script busy in that page holds the tab, and every later call of the tab waits: close the tab (Session.CloseTab) and open a new one; if the site is only slow, retry, or raise Config.NavigationTimeout"}
	if got := describe(err); !strings.Contains(got, "\nNext: a script busy in the tab's page holds it") || !strings.Contains(got, "browser_tabs action close and tab T1") {
		t.Errorf("describe of a tab a busy page holds = %q", got)
	}
	// A hint left speaking to a Go caller gives way to the class's.
	err = &browserpool.Error{Op: "Tab.Click", Class: context.DeadlineExceeded, Hint: "pass a context with a longer deadline"}
	if got := describe(err); !strings.HasSuffix(got, "\nNext: the call ran out of time; call browser_snapshot to see where the page is, then retry the step") {
		t.Errorf("describe of a call's deadline with a Go hint = %q", got)
	}
	// The tracker's words: a workflow is a client here, and the client
	// is the agent reading.
	err = &browserpool.Error{Op: "Tracker.Open", Session: "two", Workflow: "client-1", Class: browserpool.ErrSessionLimit,
		Detail: `cannot open browser session "two": workflow client-1 already has 1 active browser session (max 1 per workflow); active sessions: [default]`}
	want = "Error: browserpool: browser_session_open session=two client=client-1: session limit reached: cannot open browser session \"two\": you already have 1 browser session open (the limit per client is 1): [default]\n" +
		"Next: close a session you no longer need with browser_session_close, or keep using one you have (browser_session_list)"
	if diff := cmp.Diff(want, describe(err)); diff != "" {
		t.Errorf("describe (-want +got):\n%s", diff)
	}
	// A tab the calling tool could not resolve is that tool's error.
	err = &browserpool.Error{Op: "Session.Tab", Session: "s-1", Tab: "T1", Class: browserpool.ErrTabClosed, Detail: "the tab's renderer crashed; the browser still lists the tab, but it answers no call"}
	if got := describeFor("browser_click", err); !strings.HasPrefix(got, "Error: browserpool: browser_click session=s-1 tab=T1: ") || !strings.Contains(got, "browser_navigate without tab") {
		t.Errorf("describe of a crashed tab in browser_click = %q", got)
	}
	err = &browserpool.Error{Op: "Pool.Open", Class: odd, Hint: "set Config.Executable"}
	if got := describe(err); strings.Contains(got, "Config.Executable") {
		t.Errorf("describe kept a hint naming Go API: %q", got)
	}
}
