package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/browserpool/browserpool"
)

// An allocator over two computers, each a Pool with its own cap. Each task
// is bound to one computer and gets its own browser there; at the cap it
// waits in a FIFO queue (30 s by default) or, with PolicyReject, fails at
// once. Finish reclaims the task's browser.
func ExampleAllocator() {
	laptop, err := browserpool.NewPool(browserpool.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer laptop.Close()
	server, err := browserpool.NewPool(browserpool.Config{Root: "/var/lib/agent/browsers"})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()

	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{
		Computers: []browserpool.Computer{
			{Name: "laptop", Pool: laptop, Cap: 2},
			{Name: "server", Pool: server}, // Cap zero: 4
		},
		Audit: func(ev browserpool.AuditEvent) {
			log.Printf("audit: %s task=%s computer=%s session=%s wait=%v", ev.Kind, ev.Task, ev.Computer, ev.Session, ev.Wait)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	ctx := context.Background()
	if err := a.Bind("research-42", "server"); err != nil {
		log.Fatal(err)
	}
	lease, err := a.Acquire(ctx, "research-42", browserpool.AcquireOptions{})
	switch {
	case errors.Is(err, browserpool.ErrQueueTimeout):
		log.Fatal(err) // the server stayed busy for 30 s; the text says how many were ahead
	case err != nil:
		log.Fatal(err)
	}
	tab, err := lease.Session().OpenTab(ctx, "https://example.com/")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tab.ID())

	// A helper task may use research-42's browser, but only by saying so.
	helper, err := a.Acquire(ctx, "helper-42", browserpool.AcquireOptions{ShareWith: "research-42"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(helper.Shared(), helper.Owner())

	a.Finish(ctx, "helper-42", browserpool.TaskCompleted) // the browser lives on
	if err := a.Finish(ctx, "research-42", browserpool.TaskCompleted); errors.Is(err, browserpool.ErrLeaked) {
		log.Print(err) // counted in Stats().Total.Leaked and retried
	}
}

// A task is bound to one computer; asking for a session on another fails
// with an error that names both (no browser is started).
func ExampleAllocator_Acquire_wrongComputer() {
	root, err := os.MkdirTemp("", "browserpool-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	var pools []*browserpool.Pool
	for _, dir := range []string{"laptop", "server"} {
		p, err := browserpool.NewPool(browserpool.Config{Root: filepath.Join(root, dir)})
		if err != nil {
			log.Fatal(err)
		}
		defer p.Close()
		pools = append(pools, p)
	}
	a, err := browserpool.NewAllocator(browserpool.AllocatorConfig{Computers: []browserpool.Computer{
		{Name: "laptop", Pool: pools[0]},
		{Name: "server", Pool: pools[1]},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	a.Bind("t7", "laptop")
	_, err = a.Acquire(context.Background(), "t7", browserpool.AcquireOptions{Computer: "server"})
	fmt.Println(err)
	fmt.Println(errors.Is(err, browserpool.ErrWrongComputer))
	// Output:
	// browserpool: Allocator.Acquire task=t7: task is bound to another computer: task t7 is bound to computer "laptop", not "server" (hint: acquire on computer "laptop" (leave AcquireOptions.Computer empty to use the binding), or Finish the task and start a new task on "server")
	// true
}
