// Room: hooks the external tests use to look inside the mux. No locks of
// their own: they read under Mux.mu.

package cdpmux

// ReadRole says who holds the mux's read role: "free", "reader" or
// "caller".
func (m *Mux) ReadRole() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return [...]string{roleFree: "free", roleReader: "reader", roleCaller: "caller"}[m.role]
}

// IdleFires returns how many times the idle timer fired.
func (m *Mux) IdleFires() int64 { return m.idleFires.Load() }

// IdleArmed reports whether the idle timer is set to fire.
func (m *Mux) IdleArmed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.idleArmed
}

// Coalesced reports how many requests were queued for another caller's
// write, and how many writes of queued requests there were.
func (m *Mux) Coalesced() (queued, batches uint64) { return m.queued.Load(), m.batches.Load() }
