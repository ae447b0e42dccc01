package browserpool

// StatusReadsAfterLoad returns how many of t's navigations had to ask the
// page for their HTTP status after the load event (an extra round trip).
func StatusReadsAfterLoad(t *Tab) int64 { return t.statusFallbacks.Load() }
