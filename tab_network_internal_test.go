package browserpool

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func netEv(t *testing.T, l *netLog, method string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	l.note(method, b)
}

func TestNetworkLogEndsARedirectAndLogsItsTarget(t *testing.T) {
	l := &netLog{recording: true, inflight: map[string]*netEntry{}}
	netEv(t, l, "Network.requestWillBeSent", map[string]any{"requestId": "1", "timestamp": 10.0, "wallTime": 1.7e9, "type": "Document",
		"request": map[string]any{"method": "GET", "url": "http://a.test/login?code=secret123456789abcdef"}})
	netEv(t, l, "Network.requestWillBeSent", map[string]any{"requestId": "1", "timestamp": 10.5, "wallTime": 1.7e9 + 0.5, "type": "Document",
		"request": map[string]any{"method": "GET", "url": "http://a.test/home"}, "redirectResponse": map[string]any{"status": 302, "mimeType": "text/html"}})
	netEv(t, l, "Network.responseReceived", map[string]any{"requestId": "1", "timestamp": 10.7, "type": "Document", "response": map[string]any{"status": 200, "mimeType": "text/html"}})
	netEv(t, l, "Network.loadingFinished", map[string]any{"requestId": "1", "timestamp": 11.0})
	var got []NetworkRequest
	for _, e := range l.entries {
		got = append(got, e.r)
	}
	want := []NetworkRequest{
		{Method: "GET", URL: "http://a.test/login?code=REDACTED", Type: "Document", Status: 302, MIMEType: "text/html", Duration: 500 * time.Millisecond, Done: true},
		{Method: "GET", URL: "http://a.test/home", Type: "Document", Status: 200, MIMEType: "text/html", Duration: 500 * time.Millisecond, Done: true},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(NetworkRequest{}, "Time")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if len(l.inflight) != 0 {
		t.Errorf("%d requests still in flight, want none", len(l.inflight))
	}
}

func TestNetworkLogKeepsTheNewestRequestsAndNothingBeforeItStarts(t *testing.T) {
	l := &netLog{}
	netEv(t, l, "Network.requestWillBeSent", map[string]any{"requestId": "early", "request": map[string]any{"url": "http://a.test/"}})
	if len(l.entries) != 0 {
		t.Fatalf("a log not started recorded %d entries", len(l.entries))
	}
	l.recording, l.inflight = true, map[string]*netEntry{}
	for i := range NetworkLogLimit + 100 {
		netEv(t, l, "Network.requestWillBeSent", map[string]any{"requestId": fmt.Sprint(i), "request": map[string]any{"url": fmt.Sprintf("http://a.test/%d", i)}})
	}
	if len(l.entries) != NetworkLogLimit || len(l.inflight) != NetworkLogLimit {
		t.Errorf("%d entries and %d in flight, want %d of each", len(l.entries), len(l.inflight), NetworkLogLimit)
	}
	if got := l.entries[0].r.URL; got != "http://a.test/100" {
		t.Errorf("oldest entry kept = %s, want http://a.test/100", got)
	}
	// The end of a dropped request changes nothing.
	netEv(t, l, "Network.loadingFailed", map[string]any{"requestId": "5", "errorText": "net::ERR_FAILED"})
	for _, e := range l.entries {
		if e.r.Failure != "" {
			t.Errorf("a dropped request's failure landed on %s", e.r.URL)
		}
	}
}

func TestConsoleKeepsTheNewestMessagesAndCountsRepeatsInTheTrace(t *testing.T) {
	tab := &Tab{}
	x := &tabExt{t: tab}
	tab.x = x
	for i := range ConsoleLimit + 10 {
		b, _ := json.Marshal(map[string]any{"type": "error", "args": []any{map[string]any{"type": "string", "value": fmt.Sprint("m", i)}}})
		x.consoleCalled(b)
	}
	if msgs := x.console.messages(); len(msgs) != ConsoleLimit || msgs[0].Text != "m10" {
		t.Errorf("%d messages, oldest %q; want %d, oldest m10", len(msgs), msgs[0].Text, ConsoleLimit)
	}
	x.exceptionThrown(json.RawMessage(`{"timestamp":1,"exceptionDetails":{"text":"Uncaught","lineNumber":0,"columnNumber":4,"url":"http://a.test/app.js?sig=abcdef0123456789abcdef","exception":{"type":"object","description":"Error: boom\n    at f (app.js:1:5)"}}}`))
	want := []TraceEntry{
		{Action: "console", Args: fmt.Sprintf("error (page) (×%d)", ConsoleLimit+10)},
		{Action: "console", Args: "pageerror http://a.test/app.js"},
	}
	if diff := cmp.Diff(want, x.t.Trace(), cmpopts.IgnoreFields(TraceEntry{}, "Time", "Duration")); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
	msgs := x.console.messages()
	last := msgs[len(msgs)-1]
	if want := (ConsoleMessage{Level: ConsolePageError, Text: "Uncaught Error: boom", URL: "http://a.test/app.js?sig=REDACTED", Line: 1, Column: 5}); !cmp.Equal(want, last, cmpopts.IgnoreFields(ConsoleMessage{}, "Time")) {
		t.Errorf("page error = %+v, want %+v", last, want)
	}
}
