package browserpool

import "time"

// NewTestLocalLauncher returns the local launcher, controlling its browsers
// over their websocket only when noPipe is set: such a browser survives a
// SIGKILLed host until the next pool's sweep, which is what the sweep's
// tests need. It exists only in tests.
func NewTestLocalLauncher(noPipe bool) *LocalLauncher {
	return &LocalLauncher{noPipe: noPipe}
}

// CrashedTabs returns how many crashed tabs s still remembers
// (Session.crashed). It exists only in tests.
func (s *Session) CrashedTabs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.crashed)
}

// SetFileChooserWait sets how long Tab.Upload waits for a file chooser
// (fileChooserWait) and returns the func that restores it. It exists only
// in tests.
func SetFileChooserWait(d time.Duration) (restore func()) {
	was := fileChooserWait.Swap(int64(d))
	return func() { fileChooserWait.Store(was) }
}

// TabCDPSessionID is the tab's flattened CDP session id, for a test that
// emits the tab's events from the fake browser.
func TabCDPSessionID(t *Tab) string { return t.direct.ID() }

// SetFilesRemote makes s move files over CDP, as for an attached browser
// on another machine (a test cannot bind anything but loopback).
func SetFilesRemote(s *Session) { s.filesRemote = true }

// FilesRemote reports whether s moves files over CDP.
func FilesRemote(s *Session) bool { return s.remote() }

// ClosingTabs is how many closed tabs s still leaves out of Tabs.
func ClosingTabs(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.closing)
}
