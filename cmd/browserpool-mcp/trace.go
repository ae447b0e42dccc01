// Room: the action trace file. traceWriter.mu guards the writer; one line
// is written per entry under it (the recorder runs on the pool's hook
// goroutine, never on a tool call's path).

package main

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/browserpool/browserpool"
)

// traceLine is one line of the -trace file. Args and Err come from the
// library's trace, which has already redacted token-like URL values and
// typed passwords.
type traceLine struct {
	Time       time.Time `json:"time"`
	Client     string    `json:"client"`
	Session    string    `json:"session"`
	Tab        string    `json:"tab"`
	Action     string    `json:"action"`
	Args       string    `json:"args,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	Err        string    `json:"err,omitempty"`
}

type traceWriter struct {
	mu  sync.Mutex
	w   io.Writer // guarded by mu
	err error     // guarded by mu: the first write error; later lines are dropped
}

func (tw *traceWriter) write(client, session, tab string, e browserpool.TraceEntry) {
	b, err := json.Marshal(traceLine{
		Time: e.Time.UTC(), Client: client, Session: session, Tab: tab, Action: e.Action, Args: e.Args,
		DurationMS: float64(e.Duration.Microseconds()) / 1000, Err: e.Err,
	})
	if err != nil {
		return
	}
	b = append(b, '\n')
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.err == nil {
		_, tw.err = tw.w.Write(b)
	}
}
