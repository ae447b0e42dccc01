package cdptest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
)

// These tests drive the fake over its raw transport and pin the wire
// format; mux_test.go drives it through internal/cdpmux and mafredri/cdp.

func TestUnknownMethodGetsChromesMethodNotFoundError(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":1,"method":"Storage.getUsageAndQuota"}`)
	r.send(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":3,"method":"Page.enable"}`) // no Page domain on the browser's own session
	r.send(`{"id":4,"sessionId":"SESSION_1","method":"DOM.getDocument"}`)

	want := []string{
		`{"id":1,"error":{"code":-32601,"message":"'Storage.getUsageAndQuota' wasn't found","data":"cdptest does not implement Storage.getUsageAndQuota: answer it with Browser.Handle(\"Storage.getUsageAndQuota\", …)"}}`,
		`{"method":"Target.attachedToTarget","params":{"sessionId":"SESSION_1","targetInfo":{"targetId":"TARGET_1","type":"page","title":"about:blank","url":"about:blank","attached":true,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"},"waitingForDebugger":false}}`,
		`{"id":2,"result":{"sessionId":"SESSION_1"}}`,
		`{"id":3,"error":{"code":-32601,"message":"'Page.enable' wasn't found"}}`,
		`{"id":4,"error":{"code":-32601,"message":"'DOM.getDocument' wasn't found","data":"cdptest does not implement DOM.getDocument: answer it with Browser.Handle(\"DOM.getDocument\", …)"},"sessionId":"SESSION_1"}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestCallOnUnknownSessionGetsSessionlessErrorReply(t *testing.T) {
	b := cdptest.NewBrowser(t)
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":7,"sessionId":"NOPE","method":"Runtime.evaluate","params":{"expression":"1"}}`)

	want := `{"id":7,"error":{"code":-32001,"message":"Session with given id not found."}}`
	if diff := cmp.Diff(want, r.next()); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestMalformedRequestsGetProtocolErrors(t *testing.T) {
	b := cdptest.NewBrowser(t)
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":1,`)
	r.send(`{"method":"Browser.getVersion"}`)
	r.send(`{"id":3}`)

	want := []string{
		`{"error":{"code":-32700,"message":"Message must be a valid JSON"}}`,
		`{"error":{"code":-32600,"message":"Message must have integer 'id' property"}}`,
		`{"id":3,"error":{"code":-32600,"message":"Message must have string 'method' property"}}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestNavigateRepliesThenSendsLoadEventsOnlyToSessionsThatEnabledPage(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":3,"sessionId":"SESSION_1","method":"Page.enable"}`)
	r.fence()

	r.send(`{"id":4,"sessionId":"SESSION_2","method":"Page.navigate","params":{"url":"https://example.com/a"}}`)

	want := []string{
		`{"id":4,"result":{"frameId":"TARGET_1","loaderId":"LOADER_2"},"sessionId":"SESSION_2"}`,
		`{"method":"Page.frameStartedLoading","params":{"frameId":"TARGET_1"},"sessionId":"SESSION_1"}`,
		`{"method":"Page.frameNavigated","params":{"frame":{"id":"TARGET_1","loaderId":"LOADER_2","url":"https://example.com/a","domainAndRegistry":"","securityOrigin":"https://example.com","mimeType":"text/html","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"Navigation"},"sessionId":"SESSION_1"}`,
		`{"method":"Page.domContentEventFired","params":{"timestamp":T},"sessionId":"SESSION_1"}`,
		`{"method":"Page.loadEventFired","params":{"timestamp":T},"sessionId":"SESSION_1"}`,
		`{"method":"Page.frameStoppedLoading","params":{"frameId":"TARGET_1"},"sessionId":"SESSION_1"}`,
	}
	got := r.fence()
	for i := range got {
		got[i] = maskTimestamp(got[i])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages after Page.navigate (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("https://example.com/a", b.Targets()[0].URL); diff != "" {
		t.Errorf("target URL (-want +got):\n%s", diff)
	}
}

// maskTimestamp replaces a "timestamp" number with T.
func maskTimestamp(msg string) string {
	before, after, ok := strings.Cut(msg, `"timestamp":`)
	if !ok {
		return msg
	}
	end := strings.IndexAny(after, ",}")
	return before + `"timestamp":T` + after[end:]
}

func TestLifecycleEventsReplayOnEnableThenFollowEachNavigation(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Page.enable"}`)
	r.fence()
	lifecycle := func(loader, name string) string {
		return `{"method":"Page.lifecycleEvent","params":{"frameId":"TARGET_1","loaderId":"` + loader + `","name":"` + name + `","timestamp":T},"sessionId":"SESSION_1"}`
	}
	masked := func(msgs []string) []string {
		var out []string
		for _, m := range msgs {
			if strings.Contains(m, `"Page.lifecycleEvent"`) || strings.HasPrefix(m, `{"id":`) {
				out = append(out, maskTimestamp(m))
			}
		}
		return out
	}

	r.send(`{"id":3,"sessionId":"SESSION_1","method":"Page.setLifecycleEventsEnabled","params":{"enabled":true}}`)
	want := []string{
		lifecycle("LOADER_1", "commit"),
		lifecycle("LOADER_1", "DOMContentLoaded"),
		lifecycle("LOADER_1", "load"),
		lifecycle("LOADER_1", "networkAlmostIdle"),
		lifecycle("LOADER_1", "networkIdle"),
		`{"id":3,"result":{},"sessionId":"SESSION_1"}`,
	}
	if diff := cmp.Diff(want, masked(r.fence())); diff != "" {
		t.Errorf("after enabling (-want +got):\n%s", diff)
	}

	r.send(`{"id":4,"sessionId":"SESSION_1","method":"Page.navigate","params":{"url":"https://a.test/"}}`)
	want = []string{
		`{"id":4,"result":{"frameId":"TARGET_1","loaderId":"LOADER_2"},"sessionId":"SESSION_1"}`,
		lifecycle("LOADER_2", "init"),
		lifecycle("LOADER_2", "commit"),
		lifecycle("LOADER_2", "DOMContentLoaded"),
		lifecycle("LOADER_2", "load"),
		lifecycle("LOADER_2", "networkAlmostIdle"),
		lifecycle("LOADER_2", "networkIdle"),
	}
	if diff := cmp.Diff(want, masked(r.fence())); diff != "" {
		t.Errorf("after Page.navigate (-want +got):\n%s", diff)
	}
}

// Hold on an event name holds that event even when it travels with a
// reply, as Page.navigate's lifecycle events do (issue 13 item 7).
func TestHoldOnAnEventHoldsTheEventsSentWithAReply(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Page.enable"}`)
	r.send(`{"id":3,"sessionId":"SESSION_1","method":"Page.setLifecycleEventsEnabled","params":{"enabled":true}}`)
	r.fence()
	names := func(msgs []string) []string {
		var out []string
		for _, m := range msgs {
			if strings.HasPrefix(m, `{"id":`) {
				out = append(out, "reply")
			} else if _, rest, ok := strings.Cut(m, `"name":"`); ok && strings.Contains(m, `"Page.lifecycleEvent"`) {
				out = append(out, strings.SplitN(rest, `"`, 2)[0])
			}
		}
		return out
	}
	gate := b.Hold("Page.lifecycleEvent")
	r.send(`{"id":4,"sessionId":"SESSION_1","method":"Page.navigate","params":{"url":"https://a.test/"}}`)
	if diff := cmp.Diff([]string{"reply"}, names(r.fence())); diff != "" {
		t.Errorf("while Page.lifecycleEvent is held (-want +got):\n%s", diff)
	}
	gate.Release()
	want := []string{"init", "commit", "DOMContentLoaded", "load", "networkAlmostIdle", "networkIdle"}
	if diff := cmp.Diff(want, names(r.fence())); diff != "" {
		t.Errorf("after Release (-want +got):\n%s", diff)
	}
}

func TestNavigateToFailInvalidReturnsNameNotResolved(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()

	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Page.navigate","params":{"url":"http://fail.invalid/x"}}`)

	want := `{"id":2,"result":{"frameId":"TARGET_1","loaderId":"LOADER_2","errorText":"net::ERR_NAME_NOT_RESOLVED"},"sessionId":"SESSION_1"}`
	if diff := cmp.Diff(want, r.next()); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
}

func TestEvaluateUnderstandsArithmeticStringsTitleAndHref(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("https://example.com/x?q=1"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()

	for _, tc := range []struct{ expr, want string }{
		{`1+1`, `{"type":"number","value":2,"description":"2"}`},
		{` (2 + 3) * -4 ; `, `{"type":"number","value":-20,"description":"-20"}`},
		{`7 / 2`, `{"type":"number","value":3.5,"description":"3.5"}`},
		{`7 % 4 - 10`, `{"type":"number","value":-7,"description":"-7"}`},
		{`1/0`, `{"type":"number","unserializableValue":"Infinity","description":"Infinity"}`},
		{`'it\'s' + " ok"`, `{"type":"string","value":"it's ok"}`},
		{`"n=" + 6*7`, `{"type":"string","value":"n=42"}`},
		{`document.title`, `{"type":"string","value":""}`}, // no page defined: no title
		{`location.href`, `{"type":"string","value":"https://example.com/x?q=1"}`},
		{``, `{"type":"undefined"}`},
	} {
		r.send(fmt.Sprintf(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":%q}}`, tc.expr))
		want := `{"id":2,"result":{"result":` + tc.want + `},"sessionId":"SESSION_1"}`
		if diff := cmp.Diff(want, r.next()); diff != "" {
			t.Errorf("Runtime.evaluate(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

func TestTargetsAndGetTargetsReportOpenPagesAndTheirSessions(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.createTarget","params":{"url":"https://a.test/"}}`)
	r.send(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"TARGET_2","flatten":true}}`)
	r.fence()

	want := []cdptest.Target{
		{ID: "TARGET_1", Type: "page", URL: "about:blank", Title: "about:blank"},
		{ID: "TARGET_2", Type: "page", URL: "https://a.test/", Title: "https://a.test/", Sessions: []string{"SESSION_1"}},
	}
	if diff := cmp.Diff(want, b.Targets()); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}

	r.send(`{"id":3,"method":"Target.getTargets"}`)
	wantReply := `{"id":3,"result":{"targetInfos":[` +
		`{"targetId":"TARGET_1","type":"page","title":"about:blank","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"},` +
		`{"targetId":"TARGET_2","type":"page","title":"https://a.test/","url":"https://a.test/","attached":true,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"}]}}`
	if diff := cmp.Diff(wantReply, r.next()); diff != "" {
		t.Errorf("Target.getTargets (-want +got):\n%s", diff)
	}
}

func TestDiscoveryReportsExistingAndNewTargets(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":1,"method":"Target.createTarget","params":{"url":"https://a.test/"}}`) // nobody discovers yet
	r.send(`{"id":2,"method":"Target.setDiscoverTargets","params":{"discover":true}}`)
	r.send(`{"id":3,"method":"Target.createTarget","params":{"url":""}}`)

	info := func(id, url string) string {
		return `{"targetId":"` + id + `","type":"page","title":"` + url + `","url":"` + url + `","attached":false,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"}`
	}
	want := []string{
		`{"id":1,"result":{"targetId":"TARGET_2"}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + info("TARGET_1", "about:blank") + `}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + info("TARGET_2", "https://a.test/") + `}}`,
		`{"id":2,"result":{}}`,
		`{"method":"Target.targetCreated","params":{"targetInfo":` + info("TARGET_3", "about:blank") + `}}`,
		`{"id":3,"result":{"targetId":"TARGET_3"}}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestCloseTargetRepliesThenDetachesItsSessionsThenDestroysIt(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"method":"Target.setDiscoverTargets","params":{"discover":true}}`)
	r.fence()

	r.send(`{"id":3,"method":"Target.closeTarget","params":{"targetId":"TARGET_1"}}`)
	r.send(`{"id":4,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":"1"}}`)

	want := []string{
		`{"id":3,"result":{"success":true}}`,
		`{"method":"Target.detachedFromTarget","params":{"sessionId":"SESSION_1","targetId":"TARGET_1"}}`,
		`{"method":"Target.targetDestroyed","params":{"targetId":"TARGET_1"}}`,
		`{"id":4,"error":{"code":-32001,"message":"Session with given id not found."}}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]cdptest.Target(nil), b.Targets()); diff != "" {
		t.Errorf("Targets after close (-want +got):\n%s", diff)
	}
}

func TestBrowserCloseRepliesThenExitsWithStatusZero(t *testing.T) {
	b := cdptest.NewBrowser(t)
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":1,"method":"Browser.close"}`)

	if diff := cmp.Diff(`{"id":1,"result":{}}`, r.next()); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}
	if _, err := r.tr.ReadMessage(); err != io.EOF {
		t.Errorf("ReadMessage after the reply: %v, want io.EOF", err)
	}
	<-b.Exited()
	if status, exited := b.ExitStatus(); status != 0 || !exited {
		t.Errorf("ExitStatus() = %d, %v; want 0, true", status, exited)
	}
	if err := r.tr.WriteMessage([]byte(`{"id":2,"method":"Browser.getVersion"}`)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("WriteMessage after exit: %v, want io.ErrClosedPipe", err)
	}
}

func TestExitKeepsWrittenMessagesReadableThenReportsEOF(t *testing.T) {
	b := cdptest.NewBrowser(t)
	r := newRaw(t, b)
	defer r.tr.Close()
	g := b.Hold("Target.getTargets")

	r.send(`{"id":1,"method":"Browser.getVersion"}`)
	r.send(`{"id":2,"method":"Target.getTargets"}`) // held: lost when the process exits
	b.Exit(3)

	if msg := r.next(); !strings.HasPrefix(msg, `{"id":1,"result":{"protocolVersion":"1.3"`) {
		t.Errorf("first message after Exit = %s, want the reply to Browser.getVersion", msg)
	}
	if _, err := r.tr.ReadMessage(); err != io.EOF {
		t.Errorf("ReadMessage: %v, want io.EOF", err)
	}
	g.Release()
	if _, err := r.tr.ReadMessage(); err != io.EOF {
		t.Errorf("ReadMessage after Release: %v, want io.EOF (held replies are lost)", err)
	}
	if status, exited := b.ExitStatus(); status != 3 || !exited {
		t.Errorf("ExitStatus() = %d, %v; want 3, true", status, exited)
	}
}

func TestDropConnectionLosesUnreadMessagesAndReportsUnexpectedEOF(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)

	b.DropConnection()

	if _, err := r.tr.ReadMessage(); err != io.ErrUnexpectedEOF {
		t.Errorf("ReadMessage: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, exited := b.ExitStatus(); exited {
		t.Errorf("the process exited; DropConnection should leave it running")
	}
	want := []cdptest.Target{{ID: "TARGET_1", Type: "page", URL: "about:blank", Title: "about:blank"}}
	if diff := cmp.Diff(want, b.Targets()); diff != "" {
		t.Errorf("Targets after the drop (-want +got):\n%s", diff)
	}
	b.Exit(0)
}

func TestTransportCloseUnblocksReadMessageAndExitsTheProcess(t *testing.T) {
	b := cdptest.NewBrowser(t)
	tr := b.Transport()
	errc := make(chan error)
	go func() {
		_, err := tr.ReadMessage()
		errc <- err
	}()

	tr.Close()

	if err := <-errc; !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("ReadMessage: %v, want io.ErrClosedPipe", err)
	}
	<-b.Exited()
	if status, _ := b.ExitStatus(); status != 0 {
		t.Errorf("exit status %d, want 0", status)
	}
}

func TestDetachTargetTellsTheParentAndAnswersLaterCallsWithoutSessionID(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()
	b.Hold("Runtime.evaluate")
	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":"1"}}`) // in flight

	b.DetachTarget("TARGET_1")
	r.send(`{"id":3,"sessionId":"SESSION_1","method":"Page.enable"}`)

	want := []string{
		`{"method":"Target.detachedFromTarget","params":{"sessionId":"SESSION_1","targetId":"TARGET_1"}}`,
		`{"id":3,"error":{"code":-32001,"message":"Session with given id not found."}}`,
	}
	if diff := cmp.Diff(want, r.fence()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestCrashTargetSilencesTheRendererButNotTheBrowser(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.setDiscoverTargets","params":{"discover":true}}`)
	r.send(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":3,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()

	b.CrashTarget("TARGET_1")
	r.send(`{"id":5,"sessionId":"SESSION_2","method":"Runtime.evaluate","params":{"expression":"1"}}`) // never answered
	r.send(`{"id":6,"sessionId":"SESSION_2","method":"Target.getTargets"}`)                            // answered by the browser
	r.send(`{"id":7,"sessionId":"SESSION_1","method":"Inspector.enable"}`)                             // likewise, repeating the news
	r.send(`{"id":8,"method":"Target.closeTarget","params":{"targetId":"TARGET_1"}}`)

	want := []string{
		`{"method":"Inspector.targetCrashed","params":{},"sessionId":"SESSION_1"}`,
		`{"method":"Inspector.targetCrashed","params":{},"sessionId":"SESSION_2"}`,
		`{"method":"Target.targetCrashed","params":{"targetId":"TARGET_1","status":"crashed","errorCode":139}}`,
		`{"id":6,"result":{"targetInfos":[{"targetId":"TARGET_1","type":"page","title":"about:blank","url":"about:blank","attached":true,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"}]},"sessionId":"SESSION_2"}`,
		`{"method":"Inspector.targetCrashed","params":{},"sessionId":"SESSION_1"}`,
		`{"id":7,"result":{},"sessionId":"SESSION_1"}`,
		`{"id":8,"result":{"success":true}}`,
		`{"method":"Target.detachedFromTarget","params":{"sessionId":"SESSION_1","targetId":"TARGET_1"}}`,
		`{"method":"Target.detachedFromTarget","params":{"sessionId":"SESSION_2","targetId":"TARGET_1"}}`,
		`{"method":"Target.targetDestroyed","params":{"targetId":"TARGET_1"}}`,
	}
	if diff := cmp.Diff(want, r.fence()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestHandlerOverridesAndFallsBackToTheBuiltin(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"), cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"method":"Target.attachToTarget","params":{"targetId":"TARGET_2","flatten":true}}`)
	r.fence()
	b.Handle("Runtime.evaluate", func(c *cdptest.Call) (any, error) {
		switch {
		case c.TargetID == "TARGET_1":
			return nil, cdptest.ErrNotHandled
		case strings.Contains(string(c.Params), "boom"):
			return nil, errors.New("boom")
		}
		return map[string]any{"result": map[string]any{"type": "string", "value": "scripted"}}, nil
	})

	r.send(`{"id":3,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":"1+1"}}`)
	r.send(`{"id":4,"sessionId":"SESSION_2","method":"Runtime.evaluate","params":{"expression":"1+1"}}`)
	r.send(`{"id":5,"sessionId":"SESSION_2","method":"Runtime.evaluate","params":{"expression":"boom"}}`)
	b.Handle("Runtime.evaluate", nil)
	r.send(`{"id":6,"sessionId":"SESSION_2","method":"Runtime.evaluate","params":{"expression":"1+1"}}`)

	want := []string{
		`{"id":3,"result":{"result":{"type":"number","value":2,"description":"2"}},"sessionId":"SESSION_1"}`,
		`{"id":4,"result":{"result":{"type":"string","value":"scripted"}},"sessionId":"SESSION_2"}`,
		`{"id":5,"error":{"code":-32000,"message":"boom"},"sessionId":"SESSION_2"}`,
		`{"id":6,"result":{"result":{"type":"number","value":2,"description":"2"}},"sessionId":"SESSION_2"}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}

func TestCallsRecordsEveryRequestWithItsTarget(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Page.enable"}`)
	r.send(`{"id":3,"sessionId":"GONE","method":"Page.enable"}`)

	want := []cdptest.Call{
		{Method: "Target.attachToTarget", Params: []byte(`{"targetId":"TARGET_1","flatten":true}`)},
		{Method: "Page.enable", SessionID: "SESSION_1", TargetID: "TARGET_1"},
		{Method: "Page.enable", SessionID: "GONE"},
	}
	if diff := cmp.Diff(want, b.Calls()); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
}

func TestGateWaitReturnsOnceTheCallsArrived(t *testing.T) {
	b := cdptest.NewBrowser(t)
	r := newRaw(t, b)
	defer r.tr.Close()
	g := b.Hold("Browser.getVersion")
	go func() {
		r.tr.WriteMessage([]byte(`{"id":1,"method":"Browser.getVersion"}`))
		r.tr.WriteMessage([]byte(`{"id":2,"method":"Browser.getVersion"}`))
	}()

	if err := g.Wait(t.Context(), 2); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	g.Release()

	got := r.nextN(2)
	for i, msg := range got {
		if want := fmt.Sprintf(`{"id":%d,"result":{"protocolVersion"`, i+1); !strings.HasPrefix(msg, want) {
			t.Errorf("reply %d = %s, want it to start with %s", i, msg, want)
		}
	}
}

func TestGateWaitFailsWhenTheConnectionEnds(t *testing.T) {
	b := cdptest.NewBrowser(t)
	g := b.Hold("Browser.getVersion")
	b.Transport().Close()

	if err := g.Wait(t.Context(), 1); err == nil {
		t.Errorf("Wait returned nil after the connection ended, want an error")
	}
}

func TestDelayedReplyWaitsOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := cdptest.NewBrowser(t)
		r := newRaw(t, b)
		defer r.tr.Close()
		b.Delay("Browser.getVersion", time.Minute)
		start := time.Now()

		r.send(`{"id":1,"method":"Browser.getVersion"}`)
		r.send(`{"id":2,"method":"Target.getTargets"}`)

		if diff := cmp.Diff(`{"id":2,"result":{"targetInfos":[]}}`, r.next()); diff != "" {
			t.Errorf("first reply (-want +got):\n%s", diff)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("undelayed reply took %v, want 0", got)
		}
		if msg := r.next(); !strings.HasPrefix(msg, `{"id":1,"result":`) {
			t.Errorf("second reply = %s, want the reply to Browser.getVersion", msg)
		}
		if got := time.Since(start); got != time.Minute {
			t.Errorf("delayed reply took %v, want %v", got, time.Minute)
		}
	})
}

func TestConnectionEndStopsPendingDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := cdptest.NewBrowser(t)
		r := newRaw(t, b)
		b.Delay("Browser.getVersion", time.Hour)
		r.send(`{"id":1,"method":"Browser.getVersion"}`)

		r.tr.Close()
		synctest.Wait()

		// Had the timer survived, the bubble would wait an hour here
		// and then find a reply queued on a closed connection.
		if _, err := r.tr.ReadMessage(); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("ReadMessage: %v, want io.ErrClosedPipe", err)
		}
	})
}

func TestLeakCheckNamesTheOpenTransportAndTheAttachedSessions(t *testing.T) {
	tb := &fakeTB{TB: t}
	b := cdptest.NewBrowser(tb, cdptest.WithPage("https://a.test/"))
	r := newRaw(t, b)
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)

	tb.runCleanups()

	want := []string{"cdptest: the browser was left running: " +
		"the transport is still open (the client neither closed it nor called Browser.close); " +
		"session SESSION_1 is still attached to target TARGET_1 (https://a.test/)"}
	if diff := cmp.Diff(want, tb.reported()); diff != "" {
		t.Errorf("cleanup errors (-want +got):\n%s", diff)
	}
	if status, exited := b.ExitStatus(); status != -1 || !exited {
		t.Errorf("ExitStatus() after cleanup = %d, %v; want -1, true (killed)", status, exited)
	}
}

func TestLeakCheckIsQuietWhenTheClientClosedTheBrowserOrTheCheckIsOff(t *testing.T) {
	for name, tc := range map[string]struct {
		opts []cdptest.Option
		end  func(*cdptest.Browser)
	}{
		"transport closed": {end: func(b *cdptest.Browser) { b.Transport().Close() }},
		"Browser.close": {end: func(b *cdptest.Browser) {
			b.Transport().WriteMessage([]byte(`{"id":1,"method":"Browser.close"}`))
		}},
		"check off": {opts: []cdptest.Option{cdptest.WithoutLeakCheck()}, end: func(*cdptest.Browser) {}},
	} {
		t.Run(name, func(t *testing.T) {
			tb := &fakeTB{TB: t}
			b := cdptest.NewBrowser(tb, append(tc.opts, cdptest.WithPage("about:blank"))...)
			b.Transport().WriteMessage([]byte(`{"id":9,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`))
			tc.end(b)

			tb.runCleanups()

			if len(tb.reported()) > 0 {
				t.Errorf("cleanup reported %q, want nothing", tb.reported())
			}
		})
	}
}

func TestAnExpressionTheFakeCannotEvaluateIsAnErrorNamingItAndHowToScriptIt(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("https://example.com/"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()
	for _, expr := range []string{`document.querySelector('a')`, `1 +`, `'a' - 1`} {
		r.send(fmt.Sprintf(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":%q}}`, expr))
		var reply struct {
			Error struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal([]byte(r.next()), &reply); err != nil {
			t.Fatal(err)
		}
		quoted, _ := json.Marshal(expr)
		for _, want := range []string{"cannot evaluate " + string(quoted), "Page.Script", "Browser.Handle"} {
			if !strings.Contains(reply.Error.Message, want) {
				t.Errorf("Runtime.evaluate(%q): error %q does not say %q", expr, reply.Error.Message, want)
			}
		}
		if reply.Error.Code != -32000 {
			t.Errorf("Runtime.evaluate(%q): code %d, want -32000", expr, reply.Error.Code)
		}
	}
}

func TestGetTargetInfoAnswersForTheSessionsOwnTargetOrTheOneNamed(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"), cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_2","flatten":true}}`)
	r.fence()
	r.send(`{"id":2,"sessionId":"SESSION_1","method":"Target.getTargetInfo"}`)
	r.send(`{"id":3,"method":"Target.getTargetInfo","params":{"targetId":"TARGET_1"}}`)
	r.send(`{"id":4,"method":"Target.getTargetInfo","params":{"targetId":"NOPE"}}`)
	want := []string{
		`{"id":2,"result":{"targetInfo":{"targetId":"TARGET_2","type":"page","title":"about:blank","url":"about:blank","attached":true,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"}},"sessionId":"SESSION_1"}`,
		`{"id":3,"result":{"targetInfo":{"targetId":"TARGET_1","type":"page","title":"about:blank","url":"about:blank","attached":false,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"}}}`,
		`{"id":4,"error":{"code":-32602,"message":"No target with given id found"}}`,
	}
	if diff := cmp.Diff(want, r.fence()); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestABatchOfCookiesWithOneChromiumRefusesSetsNone(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("about:blank"))
	r := newRaw(t, b)
	defer r.tr.Close()

	r.send(`{"id":1,"method":"Storage.setCookies","params":{"cookies":[{"name":"a","value":"1","domain":"a.test"},{"name":"b","value":"2"}]}}`)
	r.send(`{"id":2,"method":"Storage.getCookies"}`)
	r.send(`{"id":3,"method":"Storage.setCookies","params":{"cookies":[{"name":"a","value":"1","url":"https://a.test/"}]}}`)
	r.send(`{"id":4,"method":"Storage.getCookies"}`)
	r.send(`{"id":5,"method":"Storage.clearCookies"}`)
	r.send(`{"id":6,"method":"Storage.getCookies"}`)
	want := []string{
		`{"id":1,"error":{"code":-32602,"message":"Invalid cookie fields"}}`,
		`{"id":2,"result":{"cookies":[]}}`,
		`{"id":3,"result":{}}`,
		`{"id":4,"result":{"cookies":[{"name":"a","value":"1","domain":"a.test","path":"/","expires":-1,"size":2,"httpOnly":false,"secure":false,"session":true,"priority":"Medium","sourceScheme":"Secure","sourcePort":443}]}}`,
		`{"id":5,"result":{}}`,
		`{"id":6,"result":{"cookies":[]}}`,
	}
	if diff := cmp.Diff(want, r.nextN(len(want))); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
}
