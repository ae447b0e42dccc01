package browserpool

import "context"

// LifecycleSeen reports whether the tab has recorded the lifecycle event
// name for loaderID. It exists only in tests.
func LifecycleSeen(t *Tab, loaderID, name string) bool {
	ok, _ := t.lifecycle.has(loaderID + "/" + name)
	return ok
}

// WaitPageEvents waits until the tab's page events are on (its Page.enable
// and lifecycle replies have arrived). It exists only in tests.
func WaitPageEvents(ctx context.Context, t *Tab) error { return t.pageEvents(ctx) }
