package cdptest_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/pagejs"
)

func TestAWaitSeesAConditionThatComesTrueWithNoOtherCallToThePage(t *testing.T) {
	start := time.Now()
	_, tab := pageTab(t, cdptest.NewPage("https://a.test/job", "Job").Script("window.jobDone", func(*cdptest.Page) (any, error) {
		return time.Since(start) > 200*time.Millisecond, nil
	}))
	ctx, cancel := context.WithTimeout(testCtx(t), 3*time.Second)
	defer cancel()
	var done bool
	if err := tab.WaitCondition(ctx, "window.jobDone", &done); err != nil || !done {
		t.Errorf("WaitCondition of a condition true after 200 ms = %v, %v; want true, nil (Chromium re-checks the condition on its own)", done, err)
	}
}

func TestAPagesAfterFuncChangesItLaterAndAWaitSeesTheChange(t *testing.T) {
	_, tab := pageTab(t,
		cdptest.NewPage("https://a.test/", "A",
			cdptest.Button("Start").Does(func(p *cdptest.Page) {
				p.After(100*time.Millisecond, func(p *cdptest.Page) {
					p.Add(cdptest.Text("Finished").WithID("finished"))
				})
			}),
		).After(50*time.Millisecond, func(p *cdptest.Page) {
			p.Add(cdptest.Text("Loaded").WithID("loaded"))
		}),
	)
	ctx := testCtx(t)
	if err := tab.WaitVisible(ctx, "#loaded"); err != nil {
		t.Fatalf("WaitVisible of what the page's After adds: %v", err)
	}
	if err := tab.Click(ctx, mustSnap(t, tab).Find("button", "Start")); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitVisible(ctx, "#finished"); err != nil {
		t.Fatalf("WaitVisible of what an After set by a click adds: %v", err)
	}
}

func TestAPendingPollChecksAgainEvery50msOnTheFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		b := cdptest.NewBrowser(t, cdptest.WithPage("https://a.test/"), cdptest.WithPages(
			cdptest.NewPage("https://a.test/", "A").Script("window.ready", func(*cdptest.Page) (any, error) {
				return time.Since(start) >= 120*time.Millisecond, nil
			})))
		r := newRaw(t, b)
		defer r.tr.Close()
		r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
		r.fence()
		poll, _ := json.Marshal(pagejs.PollCall(pagejs.Condition("window.ready"), 1000))
		r.send(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":` + string(poll) + `,"returnByValue":true,"awaitPromise":true}}`)

		got := r.next()
		want := `{"id":2,"result":{"result":{"type":"object","value":{"ok":true,"value":true}}},"sessionId":"SESSION_1"}`
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the poll's reply (-want +got):\n%s", diff)
		}
		if d := time.Since(start); d != 150*time.Millisecond {
			t.Errorf("the poll of a condition true from 120 ms was answered at %v, want the third check, at 150 ms", d)
		}
	})
}

func TestAnAfterFuncThatNavigatesLoadsThePageAndOneOfAPageLeftNeverRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var leftRan atomic.Bool
		b := cdptest.NewBrowser(t, cdptest.WithPage("https://a.test/"), cdptest.WithPages(
			cdptest.NewPage("https://a.test/", "A").After(10*time.Millisecond, func(p *cdptest.Page) {
				p.Navigate("/left")
			}),
			cdptest.NewPage("https://a.test/left", "Left").After(20*time.Millisecond, func(p *cdptest.Page) {
				leftRan.Store(true)
			}),
		))
		r := newRaw(t, b)
		defer r.tr.Close()

		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if diff := cmp.Diff("https://a.test/left", b.Targets()[0].URL); diff != "" {
			t.Errorf("the URL once the page's After navigated (-want +got):\n%s", diff)
		}
		r.send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
		r.send(`{"id":2,"sessionId":"SESSION_1","method":"Page.navigate","params":{"url":"https://a.test/other"}}`)
		r.fence()
		time.Sleep(time.Second)
		synctest.Wait()
		if leftRan.Load() {
			t.Errorf("the After of a page navigated away from ran")
		}
	})
}
