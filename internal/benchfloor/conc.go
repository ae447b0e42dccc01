// Room: the floor's concurrent client. Conc.mu guards the waiting calls;
// Conc.wmu serializes writes to the pipe.

package benchfloor

import (
	"encoding/json"
	"fmt"
	"sync"
)

// Conc drives a Bare from many goroutines: the least any concurrent client
// must do (one writer lock, one reader goroutine routing replies by id to
// their callers, events dropped). It takes over the Bare's pipe: use the
// Bare only for Stop after Concurrent.
type Conc struct {
	b   *Bare
	wmu sync.Mutex

	mu      sync.Mutex
	next    int                // guarded by mu
	waiting map[int]chan reply // guarded by mu
	err     error              // guarded by mu; set when the reader ends
	done    chan struct{}      // closed when the reader ends
}

type reply struct {
	result json.RawMessage
	err    error
}

// Concurrent starts the reader goroutine; it ends when the browser's pipe
// closes (Bare.Stop).
func (b *Bare) Concurrent() *Conc {
	c := &Conc{b: b, next: b.id, waiting: make(map[int]chan reply), done: make(chan struct{})}
	go c.read()
	return c
}

func (c *Conc) read() {
	defer close(c.done)
	for {
		frame, err := c.b.r.ReadBytes(0)
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.waiting {
				ch <- reply{err: err}
				delete(c.waiting, id)
			}
			c.mu.Unlock()
			return
		}
		var r struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(frame[:len(frame)-1], &r) != nil || r.ID == 0 {
			continue
		}
		c.mu.Lock()
		ch := c.waiting[r.ID]
		delete(c.waiting, r.ID)
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if r.Error != nil {
			ch <- reply{err: fmt.Errorf("%s", r.Error)}
			continue
		}
		ch <- reply{result: r.Result}
	}
}

// Call sends one command and waits for its reply; safe for concurrent use.
func (c *Conc) Call(sessionID, method string, params, result any) error {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	id := c.next
	c.waiting[id] = ch
	c.mu.Unlock()
	data, err := encode(id, sessionID, method, params)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	_, err = c.b.w.Write(data)
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	r := <-ch
	if r.err != nil {
		return r.err
	}
	if result != nil {
		return json.Unmarshal(r.result, result)
	}
	return nil
}
