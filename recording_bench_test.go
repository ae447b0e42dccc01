package browserpool_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/page"

	"github.com/browserpool/browserpool"
)

// BenchmarkRecordingClick measures a click by ref on a simple page (the
// click changes the page's text) three ways, interleaved in one run so the
// machine's load hits them alike: recording off; recording on, the frame
// captured after the action (Page.captureScreenshot, what Recording does);
// and the alternative, screencast frames pushed by the browser
// (Page.startScreencast), taking the first frame that arrives after the
// click returned (bounded by 100 ms: no repaint, no frame). Each op is one
// click of each kind; the metrics are ms per click and the ratios to off.
func BenchmarkRecordingClick(b *testing.B) {
	e := newAgentEnv(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // b.N clicks of three kinds: longer than ctxT
	defer cancel()
	recSess := mustOpen(b, ctx, e.pool)
	if _, err := recSess.StartRecording(ctx, browserpool.RecordingOptions{MaxFrames: 1 << 20}); err != nil {
		b.Fatal(err)
	}
	const setup = "document.getElementById('banner').remove(); window.n = 0; document.getElementById('buy').onclick = () => { n++; document.getElementById('buy').textContent = 'Buy now ' + n }"
	prep := func(tab *browserpool.Tab) string {
		if err := tab.Evaluate(ctx, setup, nil); err != nil {
			b.Fatal(err)
		}
		return ref(b, snap(b, tab, browserpool.SnapshotOptions{}), "button", "Buy now")
	}
	off := e.tab(b, "/covered.html")
	offRef := prep(off)
	rt, err := recSess.OpenTab(ctx, e.site.URL+"/covered.html")
	if err != nil {
		b.Fatal(err)
	}
	recRef := prep(rt)
	sc := e.tab(b, "/covered.html")
	scRef := prep(sc)
	cast := startCast(b, sc)

	var tOff, tCap, tCast time.Duration
	var castMissed int
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if err := off.Click(ctx, offRef); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := rt.Click(ctx, recRef); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := sc.Click(ctx, scRef); err != nil {
			b.Fatal(err)
		}
		if !cast.frameAfter(time.Now(), 100*time.Millisecond) {
			castMissed++
		}
		t3 := time.Now()
		tOff += t1.Sub(t0)
		tCap += t2.Sub(t1)
		tCast += t3.Sub(t2)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(tOff.Seconds()*1e3/n, "ms-off/click")
	b.ReportMetric(tCap.Seconds()*1e3/n, "ms-capture/click")
	b.ReportMetric(tCast.Seconds()*1e3/n, "ms-screencast/click")
	b.ReportMetric(float64(tCap)/float64(tOff), "capture/off")
	b.ReportMetric(float64(tCast)/float64(tOff), "screencast/off")
	b.ReportMetric(float64(castMissed)/n, "screencast-misses/click")
	if st := recSess.Recording().Stats(); st.Events < b.N || st.Frames < b.N {
		b.Fatalf("the recording has %d events and %d frames for %d clicks", st.Events, st.Frames, b.N)
	}
}

// cast follows a tab's screencast frames, acking each.
type cast struct {
	mu      sync.Mutex
	last    time.Time     // guarded by mu; when the newest frame arrived
	changed chan struct{} // guarded by mu; closed at each frame
}

func startCast(b *testing.B, tab *browserpool.Tab) *cast {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := tab.Client()
	frames, err := c.Page.ScreencastFrame(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Page.StartScreencast(ctx, page.NewStartScreencastArgs().SetFormat("jpeg").SetQuality(60).SetEveryNthFrame(1)); err != nil {
		b.Fatal(err)
	}
	k := &cast{changed: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			f, err := frames.Recv()
			if err != nil {
				return
			}
			k.mu.Lock()
			k.last = time.Now()
			close(k.changed)
			k.changed = make(chan struct{})
			k.mu.Unlock()
			c.Page.ScreencastFrameAck(ctx, page.NewScreencastFrameAckArgs(f.SessionID))
		}
	})
	b.Cleanup(func() {
		c.Page.StopScreencast(context.Background())
		cancel()
		frames.Close()
		wg.Wait()
	})
	return k
}

// frameAfter waits for a frame that arrived after t, at most bound; false
// if none came.
func (k *cast) frameAfter(t time.Time, bound time.Duration) bool {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		k.mu.Lock()
		last, changed := k.last, k.changed
		k.mu.Unlock()
		if last.After(t) {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}
