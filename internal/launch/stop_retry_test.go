// Room: tests of a later Stop retrying what the first left behind. No locks.

package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/browserpool/browserpool/internal/proc"
)

// leftBehind makes p look as its first Stop would leave it when it gave up:
// stopped, with se as its result.
func leftBehind(p *Process, se *StopError) {
	p.stopping = true
	p.stopErr = se
	close(p.stopDone)
}

func TestALaterStopKillsAStrayTheFirstGaveUpOnAndThenReportsNothingLeft(t *testing.T) {
	// A stray proven ours (its command line names the session dir and it
	// carries the session marker), blocked in the open of a FIFO nobody
	// writes; the first Stop gave up on it.
	p, pid := stray(t, `mkfifo "$XDG_CONFIG_HOME/never" && read x < "$XDG_CONFIG_HOME/never"`, `"$XDG_CONFIG_HOME/stray"`)
	p.giveUpOutput()
	<-p.outDone
	leftBehind(p, &StopError{SessionDir: p.sessionDir, Lingering: []int{pid}})

	if err := p.Stop(context.Background()); err != nil {
		t.Fatalf("the later Stop = %v, want nil: the stray can be killed now", err)
	}
	eventually(t, "the stray is gone", func() bool { return !proc.Alive(pid) })
	// Nothing is left, so the next Stop has nothing to try.
	if err := p.Stop(context.Background()); err != nil {
		t.Errorf("a third Stop = %v, want nil", err)
	}
}

func TestALaterStopRemovesTheDirectoryTheFirstCouldNotRemove(t *testing.T) {
	p := spawnFake(t, "exit 0")
	<-p.Exited()
	p.teardown()
	if _, err := os.Stat(p.sessionDir); err != nil {
		t.Fatalf("the session dir is not there to remove: %v", err)
	}
	leftBehind(p, &StopError{SessionDir: p.sessionDir, RemoveErr: errors.New("directory not empty")})

	if err := p.Stop(context.Background()); err != nil {
		t.Fatalf("the later Stop = %v, want nil: the dir can be removed now", err)
	}
	if _, err := os.Stat(p.sessionDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the session dir %s is still there (%v)", filepath.Base(p.sessionDir), err)
	}
}

func TestALaterStopAfterACleanFirstTouchesNothing(t *testing.T) {
	// The first Stop left nothing; a directory of the same name made since
	// (a new session's, say) is not the later Stop's to remove.
	p := spawnFake(t, "exit 0")
	<-p.Exited()
	p.teardown()
	leftBehind(p, nil)
	if err := os.MkdirAll(p.sessionDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatalf("a later Stop after a clean first = %v, want nil", err)
	}
	if _, err := os.Stat(p.sessionDir); err != nil {
		t.Errorf("a later Stop after a clean first touched the session dir: %v", err)
	}
}
