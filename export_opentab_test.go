package browserpool

// LifecycleSeen reports whether the tab has recorded the lifecycle event
// name for loaderID. It exists only in tests.
func LifecycleSeen(t *Tab, loaderID, name string) bool {
	ok, _ := t.lifecycle.has(loaderID + "/" + name)
	return ok
}
