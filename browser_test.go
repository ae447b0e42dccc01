package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/internal/proc"
)

// serve starts an HTTP server on 127.0.0.1 serving pages by path.
func serve(t testing.TB, pages map[string]string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// closes records SessionClosed events.
type closes struct {
	mu  sync.Mutex
	evs []browserpool.SessionEvent
}

func (c *closes) hook(ev browserpool.SessionEvent) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	c.mu.Unlock()
}

func (c *closes) reasons(id string) []browserpool.CloseReason {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []browserpool.CloseReason
	for _, ev := range c.evs {
		if ev.SessionID == id {
			out = append(out, ev.Reason)
		}
	}
	return out
}

func TestSessionResolutionWithZeroOneAndThreeLiveSessions(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)

	// None live: an empty id launches one.
	first, err := p.Session(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	// One live: an empty id resolves to it.
	again, err := p.Session(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Fatalf("with one live session, Session(\"\") = %s, want %s", again.ID(), first.ID())
	}
	// Three live: an empty id is an error listing them, never a guess.
	for range 2 {
		if _, err := p.Open(ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err = p.Session(ctx, "")
	if !errors.Is(err, browserpool.ErrAmbiguousSession) {
		t.Fatalf("with three live sessions, Session(\"\") error = %v, want ErrAmbiguousSession", err)
	}
	for _, s := range p.Sessions() {
		if !strings.Contains(err.Error(), s.ID()) {
			t.Errorf("the error does not list live session %s: %v", s.ID(), err)
		}
	}
	if got, err := p.Session(ctx, first.ID()); err != nil || got != first {
		t.Errorf("Session(%s) = %v, %v; want the first session", first.ID(), got, err)
	}
	if _, err := p.Session(ctx, "s-nope"); !errors.Is(err, browserpool.ErrSessionNotFound) {
		t.Errorf("Session(unknown) error = %v, want ErrSessionNotFound", err)
	}
	if st := p.Stats(); st.Launches != 3 {
		t.Errorf("Stats.Launches = %d, want 3", st.Launches)
	}
}

func TestEverySessionHasItsOwnProcessGroupProfileAndPort(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	a := mustOpen(t, ctx, p)
	b := mustOpen(t, ctx, p)
	ai, bi := a.Info(), b.Info()
	if ai.PID == bi.PID || ai.PGID == bi.PGID || ai.Port == bi.Port || ai.ProfileDir == bi.ProfileDir {
		t.Fatalf("sessions share something:\n%+v\n%+v", ai, bi)
	}
	for _, info := range []browserpool.SessionInfo{ai, bi} {
		if info.PGID != info.PID {
			t.Errorf("session %s: pgid %d, want its own group %d", info.ID, info.PGID, info.PID)
		}
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", info.PID))
		if err != nil || !strings.Contains(exe, "chrom") {
			t.Errorf("session %s: pid %d runs %q, want the real browser binary", info.ID, info.PID, exe)
		}
		fi, err := os.Stat(info.ProfileDir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("profile dir %s mode %v, want 0700", info.ProfileDir, fi.Mode().Perm())
		}
		if info.Channel != "cdp" || info.Port == 0 {
			t.Errorf("session %s: channel %q port %d", info.ID, info.Channel, info.Port)
		}
	}
	// The DevTools port answers on 127.0.0.1 only.
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ai.Port))
	if err != nil {
		t.Fatalf("DevTools port %d: %v", ai.Port, err)
	}
	conn.Close()
}

func TestNewInstanceWithATabIDIsRefusedAndLaunchesNothing(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	_, err := p.ResolveTab(ctx, browserpool.Ref{NewInstance: true, TabID: tab.ID()})
	if !errors.Is(err, browserpool.ErrTabNotInSession) {
		t.Fatalf("NewInstance with a tab id: error = %v, want ErrTabNotInSession", err)
	}
	if st := p.Stats(); st.Launches != 1 {
		t.Errorf("a refused NewInstance launched a browser: Stats.Launches = %d", st.Launches)
	}
	// NewInstance alone starts a new, independent session.
	nt, err := p.OpenTab(ctx, browserpool.Ref{NewInstance: true}, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if nt.SessionID() == s.ID() {
		t.Fatal("NewInstance reused the existing session")
	}
}

func TestATabOfSessionADoesNotResolveOnSessionB(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	a := mustOpen(t, ctx, p)
	b := mustOpen(t, ctx, p)
	tabA, err := a.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Tab":         func() error { _, err := b.Tab(ctx, tabA.ID()); return err },
		"ActivateTab": func() error { _, err := b.ActivateTab(ctx, tabA.ID()); return err },
		"CloseTab":    func() error { return b.CloseTab(ctx, tabA.ID()) },
		"ResolveTab": func() error {
			_, err := p.ResolveTab(ctx, browserpool.Ref{SessionID: b.ID(), TabID: tabA.ID()})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, browserpool.ErrTabNotInSession) {
			t.Errorf("%s on session B with a tab of A: error = %v, want ErrTabNotInSession", name, err)
			continue
		}
		want := fmt.Sprintf("tab %s belongs to session %s", tabA.ID(), a.ID())
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s error does not say %q: %v", name, want, err)
		}
	}
	// Tab A is untouched.
	var two int
	if err := tabA.Evaluate(ctx, "1+1", &two); err != nil || two != 2 {
		t.Fatalf("tab A after the refused calls: %d, %v", two, err)
	}
}

func TestRefusedURLsSayWhatIsAllowed(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	for _, tc := range []struct{ url, want string }{
		{"javascript:alert(1)", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: scheme "javascript" is not allowed (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"file:///etc/passwd", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: scheme "file" is not allowed (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"data:text/html,hi", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: scheme "data" is not allowed (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"chrome://settings", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: scheme "chrome" is not allowed (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"http://", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: the URL has no host (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"example.com", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: the URL has no scheme (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
		{"http://[::1", `browserpool: Session.OpenTab session=` + s.ID() + `: URL not allowed: the URL is malformed (hint: use an http:// or https:// URL (about:blank opens an empty tab))`},
	} {
		_, err := s.OpenTab(ctx, tc.url)
		if err == nil {
			t.Errorf("OpenTab(%q) succeeded", tc.url)
			continue
		}
		if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
			t.Errorf("OpenTab(%q) error (-want +got):\n%s", tc.url, diff)
		}
	}
	// Navigation accepts only http(s): not even about:blank.
	if _, err := tab.Navigate(ctx, "about:blank"); !errors.Is(err, browserpool.ErrInvalidURL) || !strings.Contains(err.Error(), `open a new tab with Session.OpenTab(ctx, "about:blank")`) {
		t.Errorf("Navigate(about:blank) error = %v, want ErrInvalidURL pointing to OpenTab for an empty page", err)
	}
	tabs, err := s.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 {
		t.Errorf("refused opens left tabs behind: %+v", tabs)
	}
}

func TestTabsAreListedOpenedActivatedAndClosed(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{
		"/a": `<title>Page A</title>a`,
		"/b": `<title>Page B</title>b`,
		"/c": `no title here`,
	})
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	blank := mustTab(t, ctx, s)
	ta, err := s.OpenTab(ctx, base+"/a?token=secret")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := s.OpenTab(ctx, base+"/c?token=secret")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.OpenTab(ctx, base+"/b")
	if err != nil {
		t.Fatal(err)
	}
	list := func() []browserpool.TabInfo {
		t.Helper()
		tabs, err := s.Tabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(tabs, func(x, y browserpool.TabInfo) int { return cmpStr(x.URL, y.URL) })
		return tabs
	}
	want := []browserpool.TabInfo{
		{SessionID: s.ID(), TabID: blank.ID(), Channel: "cdp", URL: "about:blank", Title: "about:blank"},
		{SessionID: s.ID(), TabID: ta.ID(), Channel: "cdp", URL: base + "/a?token=REDACTED", Title: "Page A"},
		{SessionID: s.ID(), TabID: tb.ID(), Channel: "cdp", URL: base + "/b", Title: "Page B", Active: true},
		// A page without a title is listed under its URL, its token redacted.
		{SessionID: s.ID(), TabID: tc.ID(), Channel: "cdp", URL: base + "/c?token=REDACTED", Title: base + "/c?token=REDACTED"},
	}
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Errorf("tabs after opening A, C then B (-want +got):\n%s", diff)
	}
	if _, err := s.ActivateTab(ctx, ta.ID()); err != nil {
		t.Fatal(err)
	}
	want[1].Active, want[2].Active = true, false
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Errorf("tabs after activating A (-want +got):\n%s", diff)
	}
	// Actions without a tab id use the active tab.
	active, err := s.Tab(ctx, "")
	if err != nil || active.ID() != ta.ID() {
		t.Fatalf("Tab(\"\") = %v, %v; want tab A", active, err)
	}
	if err := s.CloseTab(ctx, ta.ID()); err != nil {
		t.Fatal(err)
	}
	// The previously active tab (B) becomes active again.
	want = []browserpool.TabInfo{want[0], want[2], want[3]}
	want[1].Active = true
	if diff := cmp.Diff(want, list()); diff != "" {
		t.Errorf("tabs after closing A (-want +got):\n%s", diff)
	}
	if _, err := ta.Navigate(ctx, base+"/b"); !errors.Is(err, browserpool.ErrTabClosed) {
		t.Errorf("Navigate on a closed tab: error = %v, want ErrTabClosed", err)
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestCloseRemovesProfileDirAndProcessGroup(t *testing.T) {
	t.Parallel()
	var c closes
	p := newRealPool(t, browserpool.Config{Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	info := s.Info()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(info.ProfileDir); !os.IsNotExist(err) {
		t.Errorf("profile dir %s still exists after Close: %v", info.ProfileDir, err)
	}
	// Close returns once every process of the group is killed and has
	// closed its end of the browser's output; the kernel may still be
	// tearing the last ones down (running, not yet zombies) for a moment.
	var left []proc.Info
	waitFor(t, "the group's processes to be gone after Close", func() bool {
		left, _ = proc.List(func(i proc.Info) bool { return i.PGID == info.PGID && i.State != 'Z' })
		return len(left) == 0
	})
	if err := s.Close(ctx); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	waitFor(t, "the SessionClosed hook", func() bool { return len(c.reasons(s.ID())) > 0 })
	p.Close() // flushes hooks
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonExplicit}, c.reasons(s.ID())); diff != "" {
		t.Errorf("SessionClosed reasons (-want +got):\n%s", diff)
	}
	if _, err := s.Tab(ctx, ""); !errors.Is(err, browserpool.ErrSessionClosed) {
		t.Errorf("a call on a closed session: error = %v, want ErrSessionClosed", err)
	}
}

func TestAKilledBrowserIsDetectedAndReclaimed(t *testing.T) {
	t.Parallel()
	var c closes
	p := newRealPool(t, browserpool.Config{Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	info := s.Info()
	// A call in flight when the browser dies fails, never hangs. The tab's
	// own setup calls are done once a first call has returned, so that
	// InFlight then counts the call.
	if err := tab.Evaluate(ctx, "1", nil); err != nil {
		t.Fatal(err)
	}
	inflight := make(chan error, 1)
	go func() { inflight <- tab.Evaluate(ctx, "new Promise(() => {})", nil) }()
	waitFor(t, "the call to be in flight", func() bool { return s.Info().InFlight > 0 })
	if err := syscall.Kill(-info.PGID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-inflight; !errors.Is(err, browserpool.ErrBrowserExited) {
		t.Errorf("the call in flight: error = %v, want ErrBrowserExited", err)
	}
	<-s.Done()
	err := s.Err()
	if !errors.Is(err, browserpool.ErrBrowserExited) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Session.Err() = %v, want ErrBrowserExited naming the signal", err)
	}
	if _, err := os.Stat(info.ProfileDir); !os.IsNotExist(err) {
		t.Errorf("the crashed session's profile dir is still there: %v", err)
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{}); !errors.Is(err, browserpool.ErrBrowserExited) {
		t.Errorf("a call after the crash: error = %v, want ErrBrowserExited", err)
	}
	waitFor(t, "the SessionClosed hook", func() bool { return len(c.reasons(s.ID())) > 0 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonCrashed}, c.reasons(s.ID())); diff != "" {
		t.Errorf("SessionClosed reasons (-want +got):\n%s", diff)
	}
	if st := p.Stats(); st.Closes[browserpool.ReasonCrashed] != 1 {
		t.Errorf("Stats.Closes = %v, want one crashed", st.Closes)
	}
}

func TestACallerCancellingDuringLaunchLeavesNoHalfStartedBrowser(t *testing.T) {
	t.Parallel()
	var c closes
	p := newRealPool(t, browserpool.Config{Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := p.Open(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open with a short deadline: error = %v, want DeadlineExceeded", err)
	}
	// The launch completes on the pool's context, finds nobody waiting and
	// closes its browser.
	waitFor(t, "the abandoned launch to be closed", func() bool {
		st := p.Stats()
		return st.SessionsStarting == 0 && st.Closes[browserpool.ReasonAbandoned]+st.LaunchFailures == 1
	})
	if n := len(p.Sessions()); n != 0 {
		t.Errorf("%d sessions live after an abandoned launch", n)
	}
	root := p.Config().Root + "/sessions"
	waitFor(t, "no browser process under the root", func() bool {
		procs, _ := proc.List(func(i proc.Info) bool { return strings.Contains(i.Cmdline, root) })
		return len(procs) == 0
	})
}

func TestNavigationFailureCarriesTheBrowsersErrorText(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab := mustTab(t, ctx, s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = tab.Navigate(ctx, "http://"+addr+"/?token=hunter2&user=bob&q=x")
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "net::ERR_CONNECTION_REFUSED") {
		t.Fatalf("Navigate to a closed port: error = %v, want ErrNavigation with net::ERR_CONNECTION_REFUSED", err)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "bob") {
		t.Errorf("the error leaks the query string: %v", err)
	}
	// OpenTab whose navigation fails returns the tab it opened, which the
	// caller can close.
	other, err := s.OpenTab(ctx, "http://"+addr+"/")
	if !errors.Is(err, browserpool.ErrNavigation) || other == nil {
		t.Fatalf("OpenTab of a closed port = %v, %v; want the open tab and ErrNavigation", other, err)
	}
	if err := s.CloseTab(ctx, other.ID()); err != nil {
		t.Errorf("closing the tab a failed OpenTab returned: %v", err)
	}
	// A URL that answers with a file to save: Chromium aborts the
	// navigation, and the error says it is most likely a download.
	base := serve(t, map[string]string{"/": "<!doctype html><title>x</title>"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="r.csv"`)
		w.Header().Set("Content-Type", "text/csv")
		io.WriteString(w, "a,b\n")
	}))
	defer srv.Close()
	if _, err := tab.Navigate(ctx, base+"/"); err != nil {
		t.Fatal(err)
	}
	_, err = tab.Navigate(ctx, srv.URL+"/r.csv")
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "net::ERR_ABORTED") || !strings.Contains(err.Error(), "Tab.WaitDownload") || !strings.Contains(err.Error(), "do not fetch it again") {
		t.Errorf("Navigate to a download: error = %v, want ErrNavigation with net::ERR_ABORTED saying the browser is saving the file, pointing to Tab.WaitDownload", err)
	}
	// The browser saved it, as the hint says.
	waitFor(t, "the navigated file in Session.Downloads", func() bool {
		for _, d := range s.Downloads() {
			if d.SuggestedName == "r.csv" {
				return true
			}
		}
		return false
	})
}

func TestEvaluateReturnsValuesAndTypedExceptions(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab, err := p.ResolveTab(ctx, browserpool.Ref{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ A int }
	if err := tab.Evaluate(ctx, "new Promise(r => setTimeout(() => r({A: 42}), 10))", &got); err != nil || got.A != 42 {
		t.Fatalf("awaited promise: %+v, %v", got, err)
	}
	err = tab.Evaluate(ctx, "1;\nnoSuchThing.x", nil)
	var js *browserpool.JSError
	if !errors.Is(err, browserpool.ErrJavaScript) || !errors.As(err, &js) {
		t.Fatalf("a throwing expression: error = %v, want ErrJavaScript with a *JSError", err)
	}
	if diff := cmp.Diff(&browserpool.JSError{Message: "ReferenceError: noSuchThing is not defined", Line: 2, Column: 1}, js); diff != "" {
		t.Errorf("JSError (-want +got):\n%s", diff)
	}
}

func TestScreenshotNamesAreConfinedToTheOutputDir(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab, err := p.ResolveTab(ctx, browserpool.Ref{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../escape.png", "/tmp/abs.png", "a/../../b.png", ".."} {
		if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: name}); !errors.Is(err, browserpool.ErrPathEscapes) {
			t.Errorf("Screenshot(%q) error = %v, want ErrPathEscapes", name, err)
		}
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "x\x00.png"}); !errors.Is(err, browserpool.ErrInvalidArgument) {
		t.Errorf("Screenshot(x\\x00.png) error = %v, want ErrInvalidArgument (a control character)", err)
	}
	out := tab.Session().Info().OutputDir
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/tmp", out+"/link"); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "link/x.png"}); !errors.Is(err, browserpool.ErrPathEscapes) {
		t.Errorf("Screenshot through a symlink out of the dir: error = %v, want ErrPathEscapes", err)
	}
	for _, name := range []string{".", "./", "sub/.."} {
		if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: name}); err == nil || !strings.Contains(err.Error(), "the output dir itself") {
			t.Errorf("Screenshot(%q) error = %v, want one saying it names the output dir itself", name, err)
		}
	}
	a, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "sub/shot.png"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Path == b.Path || filepath.Dir(a.Path) != out || b.Path != out+"/sub/shot.png" {
		t.Errorf("screenshot paths %q, %q; want both inside %q", a.Path, b.Path, out)
	}
	if _, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "sub/shot.png"}); err == nil {
		t.Error("a screenshot overwrote an existing file")
	}
}

func TestAnOpenTabCostsOneGoroutine(t *testing.T) {
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	if _, err := s.Tab(ctx, ""); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	const n = 5
	for range n {
		tab, err := s.OpenTab(ctx, "about:blank")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tab.Snapshot(ctx, browserpool.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got int
	waitFor(t, "goroutines to settle", func() bool {
		got = runtime.NumGoroutine() - before
		return got <= n
	})
	t.Logf("%d tabs cost %d goroutines", n, got)
}

func TestAMissingBrowserIsACapabilityErrorThatSaysHowToInstallOne(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Executable: "/nonexistent/chromium"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Open(ctxT(t))
	if !errors.Is(err, browserpool.ErrBrowserNotFound) {
		t.Fatalf("Open with a missing executable: error = %v, want ErrBrowserNotFound", err)
	}
	for _, want := range []string{"/nonexistent/chromium", "apt-get install chromium", "Config.Executable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q: %v", want, err)
		}
	}
	if st := p.Stats(); st.LaunchFailures != 1 || len(p.Sessions()) != 0 {
		t.Errorf("after the failed launch: %+v, %d sessions", st, len(p.Sessions()))
	}
}
