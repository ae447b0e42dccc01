package record

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool/internal/cdpmux"
	"github.com/browserpool/browserpool/internal/launch"
)

// browserPage starts a headless Chromium (internal/launch, not the root
// package, which will import this one) with one blank page, stopped when
// the test ends.
func browserPage(t *testing.T) *cdp.Client {
	t.Helper()
	exe, err := launch.Find("")
	need(t, "a Chromium-family browser", err)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	p, err := launch.Start(ctx, launch.Options{Executable: exe, SessionDir: filepath.Join(testRoot, "replay-"+fmt.Sprint(time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := cdpmux.New(p.Transport(), cdpmux.Options{Cause: p.Cause})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
		m.Close()
	})
	tgt, err := cdp.NewClient(m.Browser()).Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := m.Attach(ctx, string(tgt.TargetID))
	if err != nil {
		t.Fatal(err)
	}
	return cdp.NewClient(conn)
}

// evalJSON evaluates expr in the page and decodes its value into v.
func evalJSON(t *testing.T, c *cdp.Client, expr string, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(expr).SetReturnByValue(true).SetAwaitPromise(true))
	if err != nil {
		t.Fatal(err)
	}
	if r.ExceptionDetails != nil {
		t.Fatalf("%s: %v", expr, r.ExceptionDetails)
	}
	if err := json.Unmarshal(r.Result.Value, v); err != nil {
		t.Fatalf("%s: %v: %s", expr, err, r.Result.Value)
	}
}

// eventually polls cond every 20 ms until it holds, failing after 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// shown is what the replay page shows of the current step, once its frame
// has loaded.
type shown struct {
	Step, Count, Action, Args, Title, URL, Duration, Error string
	Frame                                                  string // the frame's file name; "" when hidden
	FrameWidth                                             int    // its natural width: proves it loaded
	NoFrame                                                string
	Current                                                string // the id of the highlighted timeline item
	CurrentIsError                                         bool
}

const readShown = `(async () => {
  const $ = id => document.getElementById(id).textContent;
  const img = document.getElementById("frame");
  if (!img.hidden && !img.complete) await new Promise(r => { img.onload = img.onerror = r; });
  const cur = document.querySelector("#timeline li.current");
  return {Step: $("step"), Count: $("count"), Action: $("action"), Args: $("args"), Title: $("title"), URL: $("url"),
    Duration: $("duration"), Error: $("error"), NoFrame: $("noframe"),
    Frame: img.hidden ? "" : decodeURIComponent(img.getAttribute("src") || ""), FrameWidth: img.hidden ? 0 : img.naturalWidth,
    Current: cur ? cur.id : "", CurrentIsError: !!cur && cur.classList.contains("err")};
})()`

func TestReplayPageStepsThroughTheRecordingWithTheKeyboard(t *testing.T) {
	r := newRecorder(t, Options{MaxFrames: 5})
	videoFlow(t, r) // six actions; the budget drops the sixth frame
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(r.Dir(), IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "<script src") || strings.Contains(string(html), "<link") || strings.Contains(string(html), "</script><b>") {
		t.Errorf("index.html loads an external file or lets a title end its script element")
	}

	srv := httptest.NewServer(http.FileServer(http.Dir(r.Dir())))
	defer srv.Close()
	c := browserPage(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := c.Page.Navigate(ctx, page.NewNavigateArgs(srv.URL+"/"+IndexFile)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the replay page is ready", func() bool {
		var ready string
		evalJSON(t, c, `document.body && document.body.dataset.ready || ""`, &ready)
		return ready == "1"
	})

	press := func(key string, code int) {
		t.Helper()
		for _, typ := range []string{"rawKeyDown", "keyUp"} {
			if err := c.Input.DispatchKeyEvent(ctx, input.NewDispatchKeyEventArgs(typ).SetKey(key).SetCode(key).SetWindowsVirtualKeyCode(code)); err != nil {
				t.Fatal(err)
			}
		}
	}
	const right, left, home, end = 39, 37, 36, 35
	step := func(n int, action, args, title, url, dur, errText, frame string, width int, isErr bool) shown {
		s := shown{Step: fmt.Sprint(n), Count: "6", Action: action, Args: args, Title: title, URL: url, Duration: dur, Error: errText,
			Frame: frame, FrameWidth: width, Current: fmt.Sprintf("s%d", n), CurrentIsError: isErr}
		if frame == "" {
			s.NoFrame = "Frame dropped: the frame budget was spent."
		}
		return s
	}
	steps := []shown{
		step(1, "navigate", "https://shop.test/?token=REDACTED", "Shop", "https://shop.test/?token=REDACTED", "300 ms", "", "0001.jpg", 320, false),
		step(2, "fill", `#password "***"`, "Shop", "https://shop.test/", "10 ms", "", "0002.jpg", 640, false),
		step(3, "click", `"Buy"`, "Cart </script><b>x</b>", "https://shop.test/cart", "40 ms", "", "0003.png", 200, false),
		step(4, "click", `"Pay"`, "Cart", "https://shop.test/cart", "2.00 s", `browserpool: Tab.Click: no element matches "Pay"`, "0004.jpg", 640, true),
		step(5, "press", "Escape", "Cart", "https://shop.test/cart", "5 ms", "", "0005.jpg", 320, false),
		step(6, "navigate", "https://shop.test/done", "Done", "https://shop.test/done", "200 ms", "", "", 0, false),
	}
	check := func(what string, want shown) {
		t.Helper()
		var got shown
		evalJSON(t, c, readShown, &got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: shown (-want +got):\n%s", what, diff)
		}
	}
	check("opened", steps[0])
	for i := 1; i < len(steps); i++ {
		press("ArrowRight", right)
		check(fmt.Sprintf("ArrowRight to step %d", i+1), steps[i])
	}
	press("ArrowRight", right)
	check("ArrowRight past the end", steps[5])
	press("ArrowLeft", left)
	press("ArrowLeft", left)
	check("ArrowLeft twice from the end", steps[3])
	press("Home", home)
	check("Home", steps[0])
	press("ArrowLeft", left)
	check("ArrowLeft before the start", steps[0])
	press("End", end)
	check("End", steps[5])

	var got struct {
		Errors    []string
		Notes     string
		Resources []string
	}
	evalJSON(t, c, `({Errors: [...document.querySelectorAll("#timeline li.err")].map(li => li.id),
		Notes: document.getElementById("notes").textContent,
		Resources: performance.getEntriesByType("resource").map(e => e.name).filter(n => !n.startsWith(location.origin + "/"))})`, &got)
	want := struct {
		Errors    []string
		Notes     string
		Resources []string
	}{
		Errors:    []string{"s4"},
		Notes:     "frame budget of 5 frames reached: frames of later actions are dropped, their events are still recorded\n1 frame dropped over the frame budget of 5 frames",
		Resources: []string{},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline errors, notes and resources from elsewhere (-want +got):\n%s", diff)
	}

	// Opened from the disk, as a person would, the frames load too.
	if _, err := c.Page.Navigate(ctx, page.NewNavigateArgs("file://"+filepath.Join(r.Dir(), IndexFile))); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the replay page opened from a file is ready", func() bool {
		var ready string
		evalJSON(t, c, `location.protocol === "file:" && document.body && document.body.dataset.ready || ""`, &ready)
		return ready == "1"
	})
	check("opened from a file", steps[0])
	press("ArrowRight", right)
	check("ArrowRight in the page opened from a file", steps[1])
}
