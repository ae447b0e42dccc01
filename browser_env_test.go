// Room: tests of Config.BrowserEnv and LocalLauncher.Env. No locks.

package browserpool_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

func TestNewPoolRejectsBrowserEnvThePoolOwnsOrThatIsNotKeyValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  browserpool.Config
		want []string // in the message
	}{
		{"XDG_CONFIG_HOME", browserpool.Config{BrowserEnv: []string{"TZ=UTC", "XDG_CONFIG_HOME=/tmp/x"}}, []string{"BrowserEnv[1]", "XDG_CONFIG_HOME", "the pool owns"}},
		{"XDG_CACHE_HOME", browserpool.Config{BrowserEnv: []string{"XDG_CACHE_HOME=/tmp/x"}}, []string{"BrowserEnv[0]", "XDG_CACHE_HOME", "the pool owns"}},
		{"TMPDIR", browserpool.Config{BrowserEnv: []string{"TMPDIR=/tmp"}}, []string{"TMPDIR", "the pool owns"}},
		{"the session marker", browserpool.Config{BrowserEnv: []string{"BROWSERPOOL_SESSION=s-1"}}, []string{"BROWSERPOOL_SESSION", "the pool owns"}},
		{"any BROWSERPOOL_ name", browserpool.Config{BrowserEnv: []string{"BROWSERPOOL_OWNER=1:2"}}, []string{"BROWSERPOOL_OWNER", "the pool owns"}},
		{"no equals sign", browserpool.Config{BrowserEnv: []string{"TZ"}}, []string{`"TZ" is not KEY=VALUE`}},
		{"an empty name", browserpool.Config{BrowserEnv: []string{"=x"}}, []string{"is not KEY=VALUE"}},
		{"a LocalLauncher's Env", browserpool.Config{Launcher: &browserpool.LocalLauncher{Env: []string{"TMPDIR=/var/tmp"}}}, []string{"LocalLauncher.Env[0]", "TMPDIR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Root = newRoot(t)
			p, err := browserpool.NewPool(tc.cfg)
			if err == nil {
				p.Close()
				t.Fatalf("NewPool accepted %s", tc.name)
			}
			var e *browserpool.Error
			if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidConfig) {
				t.Fatalf("NewPool error = %v, want a *browserpool.Error of class ErrInvalidConfig", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestBrowserEnvReachesTheLocalBrowserProcess(t *testing.T) {
	t.Parallel()
	marker := fmt.Sprintf("BROWSERPOOL_TEST_ENV_MARKER_%d", os.Getpid())
	p := newRealPool(t, browserpool.Config{BrowserEnv: []string{"TZ=Asia/Tokyo", "BP_ENV_TEST=" + marker}})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	pid := s.Info().PID
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]bool{}
	for _, kv := range bytes.Split(raw, []byte{0}) {
		env[string(kv)] = true
	}
	for _, want := range []string{"TZ=Asia/Tokyo", "BP_ENV_TEST=" + marker} {
		if !env[want] {
			t.Errorf("/proc/%d/environ of the browser lacks %s", pid, want)
		}
	}
	// The browser sees it too: TZ sets the page's time zone.
	var tz string
	if err := mustTab(t, ctx, s).Evaluate(ctx, "Intl.DateTimeFormat().resolvedOptions().timeZone", &tz); err != nil {
		t.Fatal(err)
	}
	if tz != "Asia/Tokyo" {
		t.Errorf("the page's time zone is %q, want Asia/Tokyo from BrowserEnv", tz)
	}
}
