// Room: tests of Config validation. No locks.

package browserpool_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
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

// A Root another user owns or may write in is refused: that user could
// replace the manifest or plant links where session dirs go.
func TestNewPoolRefusesARootOtherUsersCanWriteIn(t *testing.T) {
	open := func(root string) error {
		p, err := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(t)})
		if err == nil {
			p.Close()
		}
		return err
	}
	world := newRoot(t)
	if err := os.Chmod(world, 0o777); err != nil {
		t.Fatal(err)
	}
	err := open(world)
	if !errors.Is(err, browserpool.ErrInvalidConfig) || !strings.Contains(err.Error(), "writable by other users") || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("NewPool on a 0777 Root: %v, want ErrInvalidConfig saying it is writable by others and to chmod 700 it", err)
	}
	sessions := newRoot(t)
	if err := os.Mkdir(filepath.Join(sessions, "sessions"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(sessions, "sessions"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := open(sessions); !errors.Is(err, browserpool.ErrInvalidConfig) || !strings.Contains(err.Error(), "sessions is writable") {
		t.Errorf("NewPool on a Root whose sessions dir is 0777: %v, want ErrInvalidConfig naming it", err)
	}
	if os.Getuid() == 0 { // only root can give a dir to another user
		other := newRoot(t)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := open(other); !errors.Is(err, browserpool.ErrInvalidConfig) || !strings.Contains(err.Error(), "belongs to another user (uid 65534") {
			t.Errorf("NewPool on a Root of uid 65534: %v, want ErrInvalidConfig naming the owner", err)
		}
	}
	// A Root that is a link to a private dir is fine.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(newRoot(t), link); err != nil {
		t.Fatal(err)
	}
	if err := open(link); err != nil {
		t.Errorf("NewPool on a link to a private Root: %v", err)
	}
}
