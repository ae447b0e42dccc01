// Room: tests of Config validation. No locks.

package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

func TestNewPoolRejectsBrowserFlagsThePoolOwns(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  browserpool.Config
		flag string
	}{
		{"user-data-dir in BrowserArgs", browserpool.Config{BrowserArgs: []string{"--headless", "--user-data-dir=/tmp/mine"}}, "--user-data-dir"},
		{"user-data-dir as two arguments", browserpool.Config{BrowserArgs: []string{"--user-data-dir", "/tmp/mine"}}, "--user-data-dir"},
		{"a single-dash spelling", browserpool.Config{BrowserArgs: []string{"-user-data-dir=/tmp/mine"}}, "--user-data-dir"},
		{"remote-debugging-pipe", browserpool.Config{BrowserArgs: []string{"--remote-debugging-pipe"}}, "--remote-debugging-pipe"},
		{"remote-debugging-port", browserpool.Config{BrowserArgs: []string{"--remote-debugging-port=9222"}}, "--remote-debugging-port"},
		{"remote-debugging-address", browserpool.Config{BrowserArgs: []string{"--remote-debugging-address=0.0.0.0"}}, "--remote-debugging-address"},
		{"the chromium wrapper's temp-profile", browserpool.Config{BrowserArgs: []string{"--temp-profile"}}, "--user-data-dir"},
		{"a LocalLauncher's Args", browserpool.Config{Launcher: &browserpool.LocalLauncher{Args: []string{"--remote-debugging-port=0"}}}, "--remote-debugging-port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Root = newRoot(t)
			p, err := browserpool.NewPool(tc.cfg)
			if err == nil {
				p.Close()
				t.Fatalf("NewPool accepted %s: the launch would hang until LaunchTimeout or leave a profile outside the root", tc.name)
			}
			var e *browserpool.Error
			if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidConfig) {
				t.Fatalf("NewPool error = %v, want a *browserpool.Error of class ErrInvalidConfig", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.flag) || !strings.Contains(msg, "the pool") {
				t.Errorf("error %q does not name %s and say the pool sets it", msg, tc.flag)
			}
		})
	}
}

func TestNewPoolAcceptsOtherBrowserFlags(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: unusedLauncher{},
		BrowserArgs: []string{"--lang=fr", "--window-size=800,600", "--user-data-directory-is-not-a-flag"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
