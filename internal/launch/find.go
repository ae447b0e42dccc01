// Room: finding a browser executable. No locks.

package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotFound is the class of every error Find returns: no usable browser
// executable. errors.Is(err, ErrNotFound) holds for a *NotFoundError.
var ErrNotFound = errors.New("browser executable not found")

// searchNames are the executable names Find looks up on PATH, in order.
var searchNames = []string{
	"chromium",
	"chromium-browser",
	"google-chrome",
	"google-chrome-stable",
	"microsoft-edge",
	"brave-browser",
}

// searchPaths are the install locations Find tries after PATH, in order.
var searchPaths = []string{
	"/usr/bin/chromium",
	"/usr/bin/chromium-browser",
	"/usr/bin/google-chrome",
	"/usr/bin/google-chrome-stable",
	"/usr/bin/microsoft-edge",
	"/usr/bin/brave-browser",
	"/usr/lib/chromium/chromium",
	"/opt/google/chrome/chrome",
	"/opt/microsoft/msedge/msedge",
	"/opt/brave.com/brave/brave",
	"/snap/bin/chromium",
}

// InstallHint says how to get a browser on the machines we know.
const InstallHint = "install one (Debian/Ubuntu: apt-get install chromium)"

// NotFoundError is returned by Find (and so by Start) when no usable browser
// executable was found. It says what was looked for and how to fix it.
type NotFoundError struct {
	// Explicit is the executable the caller named, or "" when Find
	// searched.
	Explicit string
	// Reason says why Explicit is unusable ("does not exist", "is not
	// executable (mode -rw-r--r--)", ...). Empty when Find searched.
	Reason string
	// Names were looked up on PATH and Paths tried, when Find searched.
	Names []string
	Paths []string
}

// Error says what was looked for and how to install a browser.
func (e *NotFoundError) Error() string {
	if e.Explicit != "" {
		return fmt.Sprintf("launch: browser executable %q %s; fix the path, or leave it empty to search PATH and the usual install locations, or %s",
			e.Explicit, e.Reason, InstallHint)
	}
	return fmt.Sprintf("launch: no Chromium-family browser found: looked for %s on PATH and at %s; %s, or give the executable's path explicitly",
		strings.Join(e.Names, ", "), strings.Join(e.Paths, ", "), InstallHint)
}

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// Find returns the browser executable to run. With explicit set, that one:
// a path must name an existing executable file, a bare name is looked up on
// PATH. Otherwise the first of chromium, chromium-browser, google-chrome,
// google-chrome-stable, microsoft-edge and brave-browser found on PATH, then
// the first usual install location (/usr/bin/..., /usr/lib/chromium/chromium,
// /opt/google/chrome/chrome, /snap/bin/chromium, ...) that is an executable
// file. When none is usable it returns a *NotFoundError.
func Find(explicit string) (string, error) {
	return finder{names: searchNames, paths: searchPaths, lookPath: exec.LookPath, check: checkExecutable}.find(explicit)
}

// finder is Find with its environment injected, for tests.
type finder struct {
	names    []string
	paths    []string
	lookPath func(string) (string, error)
	check    func(string) error // nil error: an executable regular file
}

func (f finder) find(explicit string) (string, error) {
	if explicit != "" {
		if !strings.Contains(explicit, "/") {
			p, err := f.lookPath(explicit)
			if err != nil {
				return "", &NotFoundError{Explicit: explicit, Reason: "is not on PATH"}
			}
			return p, nil
		}
		if err := f.check(explicit); err != nil {
			return "", &NotFoundError{Explicit: explicit, Reason: err.Error()}
		}
		abs, err := filepath.Abs(explicit)
		if err != nil {
			return "", &NotFoundError{Explicit: explicit, Reason: err.Error()}
		}
		return abs, nil
	}
	for _, n := range f.names {
		if p, err := f.lookPath(n); err == nil {
			return p, nil
		}
	}
	for _, p := range f.paths {
		if f.check(p) == nil {
			return p, nil
		}
	}
	return "", &NotFoundError{Names: f.names, Paths: f.paths}
}

// checkExecutable returns why path is not an executable regular file, or nil.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return fmt.Errorf("cannot be read: %v", err)
	case fi.IsDir():
		return errors.New("is a directory")
	case !fi.Mode().IsRegular():
		return fmt.Errorf("is not a regular file (mode %v)", fi.Mode())
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("is not executable (mode %v)", fi.Mode().Perm())
	}
	return nil
}
