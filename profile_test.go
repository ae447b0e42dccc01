package browserpool_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// profileSite serves one page that sets a persistent cookie and a
// localStorage value when asked (?set=1) and shows both.
func profileSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("set") == "1" {
			http.SetCookie(w, &http.Cookie{Name: "keep", Value: "cookie-1", Path: "/", MaxAge: 3600})
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<!doctype html><title>p</title><script>
			if (location.search === "?set=1") localStorage.setItem("keep", "local-1");
		</script>`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAProfileKeepsCookiesAndLocalStorageForTheNextSessionOnIt(t *testing.T) {
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	srv := profileSite(t)

	s1, err := p.OpenProfile(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got := s1.Info().Profile; got != "alice" {
		t.Errorf("Info().Profile = %q, want alice", got)
	}
	tab, err := s1.OpenTab(ctx, srv.URL+"/?set=1")
	if err != nil {
		t.Fatal(err)
	}
	var ls string
	if err := tab.Evaluate(ctx, `localStorage.getItem("keep")`, &ls); err != nil || ls != "local-1" {
		t.Fatalf("first session's localStorage = %q, %v", ls, err)
	}

	// A second open while the first holds it is refused, naming the holder.
	_, err = p.OpenProfile(ctx, "alice")
	if !errors.Is(err, browserpool.ErrProfileInUse) || !strings.Contains(err.Error(), s1.ID()) {
		t.Fatalf("concurrent OpenProfile: %v, want ErrProfileInUse naming %s", err, s1.ID())
	}
	// ... also from another pool on the same root.
	p2 := newRealPool(t, browserpool.Config{Root: p.Config().Root})
	if _, err := p2.OpenProfile(ctx, "alice"); !errors.Is(err, browserpool.ErrProfileInUse) {
		t.Fatalf("OpenProfile from a second pool on the root: %v, want ErrProfileInUse", err)
	}
	// ... and so is removing it.
	if err := p.RemoveProfile(ctx, "alice"); !errors.Is(err, browserpool.ErrProfileInUse) {
		t.Fatalf("RemoveProfile while held: %v, want ErrProfileInUse", err)
	}

	if err := s1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.Config().Root, "profiles", "alice", "user-data")); err != nil {
		t.Fatalf("the profile is gone after its session closed: %v", err)
	}

	s2, err := p2.OpenProfile(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	tab2, err := s2.OpenTab(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Cookie, Local string }
	if err := tab2.Evaluate(ctx, `({Cookie: document.cookie, Local: localStorage.getItem("keep") || ""})`, &got); err != nil {
		t.Fatal(err)
	}
	want := struct{ Cookie, Local string }{"keep=cookie-1", "local-1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second session on the profile (-want +got):\n%s", diff)
	}
	if err := s2.Close(ctx); err != nil {
		t.Fatal(err)
	}

	names, err := p.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alice"}, names); diff != "" {
		t.Errorf("Profiles (-want +got):\n%s", diff)
	}
	if err := p.RemoveProfile(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.Config().Root, "profiles", "alice")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after RemoveProfile the profile dir: %v, want it gone", err)
	}
	if err := p.RemoveProfile(ctx, "alice"); !errors.Is(err, browserpool.ErrProfileNotFound) {
		t.Errorf("RemoveProfile of a removed profile: %v, want ErrProfileNotFound", err)
	}
}

func TestAProfileNameWithPathCharactersIsRefusedWithAHint(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, name := range []string{"", "../x", "a/b", ".", "..", "a b", strings.Repeat("x", 65)} {
		_, err := p.OpenProfile(ctxT(t), name)
		var e *browserpool.Error
		if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidID) || e.Hint == "" {
			t.Errorf("OpenProfile(%q) = %v, want ErrInvalidID with a hint", name, err)
		}
		if err := p.RemoveProfile(ctxT(t), name); !errors.Is(err, browserpool.ErrInvalidID) {
			t.Errorf("RemoveProfile(%q) = %v, want ErrInvalidID", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(p.Config().Root, "profiles")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused name created the profiles dir: %v", err)
	}
}

func TestTheSweepLeavesProfilesAlone(t *testing.T) {
	root := newRoot(t)
	data := filepath.Join(root, "profiles", "bob", "user-data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "Cookies"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, "Cookies")); err != nil {
		t.Errorf("the sweep touched a profile: %v", err)
	}
}

// A failed OpenProfile named Pool.Open, and left a profile behind: one
// it had just created (from a launch that failed, or on a closed pool).
// A profile that existed before the failure stays.
func TestAFailedOpenProfileNamesItselfAndLeavesNoNewProfileBehind(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	good := newRealPool(t, browserpool.Config{})
	s, err := good.OpenProfile(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	bad, err := browserpool.NewPool(browserpool.Config{Root: good.Config().Root, Executable: "/nonexistent/chromium"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bad.Close() })
	for _, name := range []string{"fresh", "kept"} {
		_, err := bad.OpenProfile(ctx, name)
		if err == nil || !strings.HasPrefix(err.Error(), "browserpool: Pool.OpenProfile ") {
			t.Errorf("OpenProfile(%q) with a browser that cannot start: %v; want an error of Pool.OpenProfile", name, err)
		}
	}
	bad.Close()
	if _, err := bad.OpenProfile(ctx, "after-close"); !errors.Is(err, browserpool.ErrPoolClosed) {
		t.Errorf("OpenProfile on a closed pool: %v; want ErrPoolClosed", err)
	}
	names, err := good.Profiles()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"kept"}, names); diff != "" {
		t.Errorf("profiles after the failed opens (-want +got):\n%s", diff)
	}
}

// A profile whose lock is held by a call that has not yet recorded a
// session (an OpenProfile starting, a RemoveProfile) was said to be held
// by "another session", with a hint to close "the session named above".
func TestAProfileLockedByACallUnderWaySaysSo(t *testing.T) {
	t.Parallel()
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: unusedLauncher{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	dir := filepath.Join(p.Config().Root, "profiles", "busy")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = p.OpenProfile(ctxT(t), "busy")
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrProfileInUse) || !strings.Contains(e.Detail, "being opened or removed by another call right now") || strings.Contains(e.Hint, "named above") {
		t.Errorf("OpenProfile of a profile locked with no holder recorded: %v; want ErrProfileInUse saying a call is at work on it, without a hint about a session named above", err)
	}
}
