package browserpool

// NewTestLocalLauncher returns the local launcher, controlling its browsers
// over their websocket only when noPipe is set: such a browser survives a
// SIGKILLed host until the next pool's sweep, which is what the sweep's
// tests need. It exists only in tests.
func NewTestLocalLauncher(noPipe bool) *LocalLauncher {
	return &LocalLauncher{noPipe: noPipe}
}
