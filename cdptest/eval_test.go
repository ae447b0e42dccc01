package cdptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/pagejs"
)

func TestEvaluateDecodesJavaScriptEscapesAndLiterals(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("https://example.com/"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()

	for _, tc := range []struct{ expr, want string }{
		{`'\x41'`, `{"type":"string","value":"A"}`},
		{`"\u0041\u{1F600}\uD83D\uDE00"`, `{"type":"string","value":"A😀😀"}`},
		{`'a\
b\q\0'`, `{"type":"string","value":"ab` + "q\\u0000" + `"}`},
		{`true`, `{"type":"boolean","value":true}`},
		{`null`, `{"type":"object","subtype":"null","value":null}`},
		{`undefined`, `{"type":"undefined"}`},
		{`[1, "a", [null]]`, `{"type":"object","subtype":"array","className":"Array","value":[1,"a",[null]],"description":"Array(3)"}`},
		{`"x".length + "😀".length`, `{"type":"number","value":3,"description":"3"}`},
		{`2**3**2`, `{"type":"number","value":512,"description":"512"}`},
		{`1e21`, `{"type":"number","value":1e+21,"description":"1e+21"}`},
		{`'a' + true + null`, `{"type":"string","value":"atruenull"}`},
		{`"" + 0.0000001 + " " + 1.5e-10`, `{"type":"string","value":"1e-7 1.5e-10"}`}, // JavaScript's exponent has no leading zero
	} {
		r.send(fmt.Sprintf(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":%q}}`, tc.expr))
		want := `{"id":2,"result":{"result":` + tc.want + `},"sessionId":"SESSION_1"}`
		if diff := cmp.Diff(want, r.next()); diff != "" {
			t.Errorf("Runtime.evaluate(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

func TestEvaluateRefusesWhatItCannotGetRightInsteadOfGuessing(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("https://example.com/"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()
	for _, expr := range []string{`'\x4'`, `'\u12'`, `'\1'`, `true + 1`, `-2**2`, `0x10`, `[1] + 1`} {
		r.send(fmt.Sprintf(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":%q}}`, expr))
		var reply struct {
			Error *struct{ Message string }
		}
		if err := json.Unmarshal([]byte(r.next()), &reply); err != nil {
			t.Fatal(err)
		}
		if reply.Error == nil || !strings.Contains(reply.Error.Message, "is not scripted") {
			t.Errorf("Runtime.evaluate(%q) answered %+v; want an error saying it is not scripted", expr, reply.Error)
		}
	}
}

func TestAnUnscriptedExpressionReadsAsNotScriptedInTheLibrarysError(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"))
	var v any
	err := tab.Evaluate(testCtx(t), "window.app.ready", &v)
	want := `cdptest: the fake page cannot evaluate "window.app.ready": it is not scripted; ` +
		`script it on the page with Page.Script("window.app.ready", func(*cdptest.Page) (any, error) {…})`
	if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), want) {
		t.Errorf("Evaluate = %v\nwant an ErrProtocol error saying %q", err, want)
	}
}

func TestTheLeakCheckOfALaunchedBrowserSaysToCloseThePoolOrSession(t *testing.T) {
	tb := &fakeTB{TB: t}
	l := cdptest.NewLauncher(tb)
	if _, err := l.Launch(context.Background(), browserpool.LaunchSpec{}); err != nil {
		t.Fatal(err)
	}

	tb.runCleanups()

	want := []string{"cdptest: the test ended with a browser of its pool still running: close the Pool (Pool.Close) " +
		"or the Session (Session.Close) before the test ends, e.g. with t.Cleanup(func() { pool.Close() }) right after NewPool"}
	if diff := cmp.Diff(want, tb.reported()); diff != "" {
		t.Errorf("cleanup report (-want +got):\n%s", diff)
	}
}

func TestFailStopsFailsStopWhileTheClosedBrowserExitsAsDocumented(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p, err := browserpool.NewPool(browserpool.Config{Launcher: l, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := testCtx(t)
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.FailStops(errors.New("kill: operation not permitted"))
	closeErr := s.Close(ctx)
	b := l.Browsers()[0]
	select {
	case <-b.Exited():
	case <-ctx.Done():
		t.Fatal("the browser did not exit after Session.Close")
	}
	if closeErr == nil || !strings.Contains(closeErr.Error(), "operation not permitted") {
		t.Errorf("Session.Close = %v, want Stop's error", closeErr)
	}
}

func TestALongUnscriptedExpressionSaysToScriptTheWholeOfIt(t *testing.T) {
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/", "A"))
	long := "window.app.items.filter(i => i.visible).map(i => i.title).join(', ') + " + strings.Repeat("' '", 60)
	err := tab.Evaluate(testCtx(t), long, nil)
	if !errors.Is(err, browserpool.ErrProtocol) || !strings.Contains(err.Error(), "Page.Script(the whole expression, exactly as evaluated") {
		t.Errorf("Evaluate of a %d-byte expression = %v\nwant it to say Page.Script takes the whole expression, not the cut one it quotes", len(long), err)
	}
}

func TestTheLibrarysLoadedStatusReadIsAnswered(t *testing.T) {
	b := cdptest.NewBrowser(t, cdptest.WithPage("https://example.com/"))
	r := newRaw(t, b)
	defer r.tr.Close()
	r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	r.fence()
	r.send(fmt.Sprintf(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":%q,"returnByValue":true}}`, pagejs.LoadedStatus))
	got := r.next()
	// No page is described for the URL, so it is served as a 404.
	if !strings.Contains(got, `"status":404`) || !strings.Contains(got, `"url":"https://example.com/"`) {
		t.Errorf("Runtime.evaluate(pagejs.LoadedStatus) answered %s; want the page's status and URL", got)
	}
}
