package cdptest_test

import (
	"fmt"

	"github.com/browserpool/browserpool/cdptest"
)

// A client talks to the fake browser through its transport, one JSON
// message at a time, as over --remote-debugging-pipe. (In a test, pass the
// test's t to NewBrowser so that a browser left running fails it.)
func Example() {
	b := cdptest.NewBrowser(nil, cdptest.WithPage("https://example.com/"))
	tr := b.Transport()
	defer tr.Close()

	send := func(msg string) {
		if err := tr.WriteMessage([]byte(msg)); err != nil {
			panic(err)
		}
	}
	receive := func(n int) {
		for range n {
			msg, err := tr.ReadMessage()
			if err != nil {
				panic(err)
			}
			fmt.Println(string(msg))
		}
	}

	// Attach to the page: Chrome announces the session, then answers.
	send(`{"id":1,"method":"Target.attachToTarget","params":{"targetId":"TARGET_1","flatten":true}}`)
	receive(2)

	// Calls on the session carry its id.
	send(`{"id":2,"sessionId":"SESSION_1","method":"Runtime.evaluate","params":{"expression":"6*7"}}`)
	receive(1)

	// A session the browser does not know gets an error without a sessionId.
	send(`{"id":3,"sessionId":"SESSION_9","method":"Runtime.evaluate","params":{"expression":"1"}}`)
	receive(1)

	// Output:
	// {"method":"Target.attachedToTarget","params":{"sessionId":"SESSION_1","targetInfo":{"targetId":"TARGET_1","type":"page","title":"https://example.com/","url":"https://example.com/","attached":true,"canAccessOpener":false,"browserContextId":"CONTEXT_DEFAULT"},"waitingForDebugger":false}}
	// {"id":1,"result":{"sessionId":"SESSION_1"}}
	// {"id":2,"result":{"result":{"type":"number","value":42,"description":"42"}},"sessionId":"SESSION_1"}
	// {"id":3,"error":{"code":-32001,"message":"Session with given id not found."}}
}

// A handler scripts an answer; an *Error makes it a CDP error reply.
func ExampleBrowser_Handle() {
	b := cdptest.NewBrowser(nil)
	tr := b.Transport()
	defer tr.Close()

	b.Handle("Browser.getVersion", func(c *cdptest.Call) (any, error) {
		return nil, &cdptest.Error{Code: -32000, Message: "Browser is shutting down"}
	})
	b.Handle("Storage.getUsageAndQuota", func(c *cdptest.Call) (any, error) {
		return map[string]any{"usage": 0, "quota": 1 << 30}, nil
	})

	tr.WriteMessage([]byte(`{"id":1,"method":"Browser.getVersion"}`))
	tr.WriteMessage([]byte(`{"id":2,"method":"Storage.getUsageAndQuota"}`))
	tr.WriteMessage([]byte(`{"id":3,"method":"Storage.trackCacheStorageForOrigin"}`))
	for range 3 {
		msg, _ := tr.ReadMessage()
		fmt.Println(string(msg))
	}

	// Output:
	// {"id":1,"error":{"code":-32000,"message":"Browser is shutting down"}}
	// {"id":2,"result":{"quota":1073741824,"usage":0}}
	// {"id":3,"error":{"code":-32601,"message":"'Storage.trackCacheStorageForOrigin' wasn't found","data":"cdptest does not implement Storage.trackCacheStorageForOrigin: answer it with Browser.Handle(\"Storage.trackCacheStorageForOrigin\", …)"}}
}
