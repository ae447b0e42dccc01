package browserpool

// WarmIDsForTest returns the ids of the warm browsers ready to be claimed.
// It exists only in tests.
func (p *Pool) WarmIDsForTest() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, 0, len(p.warm.ready))
	for _, s := range p.warm.ready {
		ids = append(ids, s.id)
	}
	return ids
}

// WarmPIDForTest returns the browser pid of the warm browser id, or 0. It
// exists only in tests.
func (p *Pool) WarmPIDForTest(id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.warm.ready {
		if s.id == id {
			return s.info.PID
		}
	}
	return 0
}
