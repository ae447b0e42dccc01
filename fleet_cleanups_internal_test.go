package browserpool

import (
	"sync"
	"testing"
)

// One launcher may serve several pools, each of whose Close waits for the
// launcher's cleanups while another pool's launch starts one. A
// sync.WaitGroup forbids that (an Add from zero concurrent with a Wait:
// "WaitGroup is reused before previous Wait has returned").
func TestFleetCleanupsTakeStartsWhileOthersWait(t *testing.T) {
	var c fleetCleanups
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 2000 {
				c.start(func() {})
				c.wait()
			}
		})
	}
	wg.Wait()
	c.wait()
}
