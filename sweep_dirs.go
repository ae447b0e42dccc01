// Room: the sweep's removal of session dirs: which paths are session dirs
// of this root, and their removal, with the browser's private TMPDIR,
// through an os.Root that no symlink leads out of. No locks.

package browserpool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/browserpool/browserpool/internal/launch"
	"github.com/browserpool/browserpool/internal/manifest"
)

// sweepDirs removes every session dir no live owner keeps and no surviving
// process uses, refusing (and counting) any path that is not a session dir.
func (sw *sweeper) sweepDirs(inUse map[string]bool) {
	var cands []string
	for _, e := range sw.dropped {
		cands = append(cands, e.Dir)
	}
	des, err := os.ReadDir(sw.sessions)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		sw.p.log.Warn("browserpool: sweep cannot list the sessions dir", "err", err)
	}
	for _, de := range des {
		cands = append(cands, filepath.Join(sw.sessions, de.Name()))
	}
	// Read the entries again after the listing: a pool sharing the root
	// reserves its entry before it makes the dir, so a dir listed above
	// whose launch is under way is named here.
	if es, err := sw.p.manifest.Entries(); err == nil {
		for _, e := range es {
			if _, dropped := sw.dropped[e.Session]; !dropped {
				sw.kept[e.Session] = true
				inUse[e.Dir] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, dir := range cands {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if name, ok := sw.leftDir(dir, inUse); ok {
			sw.removeLeft(dir, name)
		}
	}
}

// leftDir returns the session id of dir when dir is a session dir of this
// root that no live owner keeps and no running process uses: one the
// sweep may remove. A path that is not a session dir is counted as
// skipped and logged.
func (sw *sweeper) leftDir(dir string, inUse map[string]bool) (string, bool) {
	name, err := sw.checkDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		sw.ev.Skipped++
		sw.p.log.Warn("browserpool: sweep refused to remove a path: not a session dir of this root", "path", dir, "why", err)
		return "", false
	}
	if sw.kept[name] || inUse[dir] {
		return "", false // a live owner's, or a process not proven ours uses it: counted already
	}
	return name, true
}

// removeLeft removes the session dir dir (session name) the sweep found
// left behind, and counts it.
func (sw *sweeper) removeLeft(dir, name string) {
	// A browser killed without its Stop (its host died) left its private
	// TMPDIR when its session dir was too deep to hold one; one started by
	// an earlier version left its singleton dir in the host's TMPDIR,
	// which its profile may still name.
	launch.RemoveSingletonDir(filepath.Join(dir, launch.UserDataDirName), dir, 0)
	if err := removeSessionDir(sw.sessions, name); err != nil {
		sw.p.log.Warn("browserpool: sweep could not remove a session dir", "dir", dir, "err", err)
		return
	}
	sw.ev.DirsRemoved++
}

// checkDir returns the session id of dir when dir is a real directory
// directly under <Root>/sessions named by a valid session id, with
// <Root>/sessions inside the root. The error wraps os.ErrNotExist when dir
// is a session dir that does not exist.
func (sw *sweeper) checkDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return "", errors.New("not a clean absolute path")
	}
	if filepath.Dir(dir) != sw.sessions {
		return "", errors.New("not directly under <Root>/sessions")
	}
	name := filepath.Base(dir)
	if !manifest.ValidID(name) {
		return "", errors.New("its name is not a valid session id")
	}
	if err := sessionsInsideRoot(sw.p.cfg.Root); err != nil {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("not a directory (%v)", fi.Mode().Type())
	}
	return name, nil
}

// sessionsInsideRoot checks that <root>/sessions, symlinks resolved, is the
// directory sessions of root.
func sessionsInsideRoot(root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	realSessions, err := filepath.EvalSymlinks(filepath.Join(root, "sessions"))
	if err != nil {
		return err
	}
	if realSessions != filepath.Join(realRoot, "sessions") {
		return fmt.Errorf("<Root>/sessions resolves to %s, outside the root", realSessions)
	}
	return nil
}

// removeDir removes a session dir (<Root>/sessions/<id>), retrying
// briefly: a browser's last child may still be writing when the group dies.
// It refuses any other path, and never follows a symlink out of
// <Root>/sessions: the pool only ever removes its own session dirs.
func removeDir(dir string) error {
	sessions, name := filepath.Dir(dir), filepath.Base(dir)
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || filepath.Base(sessions) != "sessions" || !manifest.ValidID(name) {
		return fmt.Errorf("browserpool: refusing to remove %s: not a session dir (<Root>/sessions/<id>)", dir)
	}
	if err := sessionsInsideRoot(filepath.Dir(sessions)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("browserpool: refusing to remove %s: %w", dir, err)
	}
	return removeSessionDir(sessions, name)
}

// removeSessionDir removes the private TMPDIR of the browser of
// sessions/name, if it had one (launch.RemovePrivateTmp), then
// sessions/name through an os.Root of sessions, so no symlink leads the
// removal outside it. A symlink named name is refused.
func removeSessionDir(sessions, name string) error {
	// The TMPDIR first: while it exists, so does the session dir that
	// leads a later sweep to it.
	if err := launch.RemovePrivateTmp(filepath.Join(sessions, name)); err != nil {
		return fmt.Errorf("browserpool: removing the private TMPDIR of %s: %w", filepath.Join(sessions, name), err)
	}
	r, err := os.OpenRoot(sessions)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer r.Close()
	fi, err := r.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("browserpool: refusing to remove %s: not a directory (%v)", filepath.Join(sessions, name), fi.Mode().Type())
	}
	for i := range 5 {
		if err = r.RemoveAll(name); err == nil {
			return nil
		}
		time.Sleep(time.Duration(10<<i) * time.Millisecond)
	}
	return err
}
