package browserpool

// SetHookBeforeShareForTest makes f run in AcquireFor between waiting for
// the owner's acquire and the share, until the test ends. It exists only
// in tests; the test must not run in parallel with another AcquireFor.
func SetHookBeforeShareForTest(cleanup func(func()), f func()) {
	testHookBeforeShare = f
	cleanup(func() { testHookBeforeShare = nil })
}
