// Package benchfloor is the floor the benchmarks measure against: a
// browser started with the same flags and environment as the launcher, and
// driven with no library at all (raw NUL-framed JSON on the pipe). It exists
// for benchmarks only.
//
// What the floor includes, so that a ratio to it is honest: the process
// start with the launcher's flags (including the TCP DevTools port) and
// environment; JSON encoding of each command with encoding/json and one
// decode of each reply (envelope and result in one Unmarshal); for a tab,
// Target.createTarget + Target.attachToTarget (flattened) and nothing else
// (no Page.enable, no lifecycle events, no dialog handling), in the
// browser's window (NewTab) or a window of its own (NewWindowTab); for a
// navigation, Page.enable once per tab and Page.navigate followed by
// reading up to Page.loadEventFired. It excludes everything a library adds:
// no per-call context, no error classes, no tracing, no idle accounting, no
// waiting for the DevTools port file, no manifest. Sequential calls read
// the pipe on the caller's goroutine (no hand-off); Conc adds the one
// reader goroutine and writer lock any concurrent client needs.
//
// Room: the floor. No locks: a Bare is used by one goroutine.
package benchfloor

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/browserpool/browserpool/internal/launch"
)

// Bare is one browser driven with no library.
type Bare struct {
	cmd     *exec.Cmd
	dir     string
	w       *os.File
	r       *bufio.Reader
	rc      *os.File
	id      int
	outDone chan struct{}
	output  []byte // written by the output goroutine before outDone closes
}

// Start execs exe with the launcher's flags over --remote-debugging-pipe,
// its profile and caches inside dir.
func Start(exe, dir string) (*Bare, error) {
	for _, d := range []string{launch.UserDataDirName, launch.XDGConfigName, launch.XDGCacheName, launch.TmpName} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	replyR, replyW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(cmdR, cmdW, replyR, replyW)
		return nil, err
	}
	cmd := exec.Command(exe, launch.Args(filepath.Join(dir, launch.UserDataDirName), true, nil)...)
	cmd.Env = launch.Environ(dir, filepath.Base(dir), nil)
	cmd.ExtraFiles = []*os.File{cmdR, replyW}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeAll(cmdR, replyW, outW)
	if err != nil {
		closeAll(cmdW, replyR, outR)
		return nil, err
	}
	b := &Bare{cmd: cmd, dir: dir, w: cmdW, r: bufio.NewReaderSize(replyR, 1<<16), rc: replyR, outDone: make(chan struct{})}
	go func() {
		defer close(b.outDone)
		b.output, _ = io.ReadAll(outR)
		outR.Close()
	}()
	return b, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// Call sends one command and reads until its reply, skipping events.
func (b *Bare) Call(sessionID, method string, params, result any) error {
	b.id++
	data, err := encode(b.id, sessionID, method, params)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(data); err != nil {
		return err
	}
	for {
		frame, err := b.r.ReadBytes(0)
		if err != nil {
			return err
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(frame[:len(frame)-1], &reply); err != nil {
			return err
		}
		if reply.ID != b.id {
			continue
		}
		if reply.Error != nil {
			return fmt.Errorf("%s: %s", method, reply.Error)
		}
		if result != nil {
			return json.Unmarshal(reply.Result, result)
		}
		return nil
	}
}

// FirstEvaluate does what a cold start needs before its first page
// evaluate: Browser.getVersion, a target, a flattened attach, and
// Runtime.evaluate("1+1").
func (b *Bare) FirstEvaluate() error {
	if err := b.Call("", "Browser.getVersion", nil, nil); err != nil {
		return err
	}
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
		return err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att); err != nil {
		return err
	}
	var ev struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	if err := b.Call(att.SessionID, "Runtime.evaluate", map[string]any{"expression": "1+1"}, &ev); err != nil {
		return err
	}
	if ev.Result.Value != 2 {
		return fmt.Errorf("1+1 = %d", ev.Result.Value)
	}
	return nil
}

// Output returns what the browser printed; complete only after Stop.
func (b *Bare) Output() []byte { return b.output }

// Stop kills the group, reaps, waits until every process that held the
// output has exited, and removes the directory and the browser's singleton
// dir (in the host's TMPDIR when dir is too deep for one of its own).
func (b *Bare) Stop() {
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
	closeAll(b.w, b.rc)
	<-b.outDone
	launch.RemoveSingletonDir(filepath.Join(b.dir, launch.UserDataDirName), b.dir, b.cmd.Process.Pid)
	os.RemoveAll(b.dir)
}

// encode frames one command (NUL-terminated).
func encode(id int, sessionID, method string, params any) ([]byte, error) {
	msg := struct {
		ID        int    `json:"id"`
		SessionID string `json:"sessionId,omitempty"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
	}{id, sessionID, method, params}
	data, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return append(data, 0), nil
}

// Until reads messages until an event named method arrives on sessionID
// (after a Call that triggers it, e.g. Page.navigate then
// Page.loadEventFired).
func (b *Bare) Until(sessionID, method string) error {
	for {
		frame, err := b.r.ReadBytes(0)
		if err != nil {
			return err
		}
		var ev struct {
			Method    string `json:"method"`
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(frame[:len(frame)-1], &ev) == nil && ev.Method == method && ev.SessionID == sessionID {
			return nil
		}
	}
}

// NewTab creates an about:blank target in the browser's window and
// attaches to it (flattened), returning its target and session ids: what a
// tab open costs at least. The new tab hides the window's others.
func (b *Bare) NewTab() (targetID, sessionID string, err error) {
	return b.newTab(map[string]any{"url": "about:blank"})
}

// NewWindowTab is NewTab with the target in a window of its own
// (Target.createTarget's newWindow): what opening a tab that stays visible
// costs at least.
func (b *Bare) NewWindowTab() (targetID, sessionID string, err error) {
	return b.newTab(map[string]any{"url": "about:blank", "newWindow": true})
}

func (b *Bare) newTab(params map[string]any) (targetID, sessionID string, err error) {
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call("", "Target.createTarget", params, &tgt); err != nil {
		return "", "", err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att); err != nil {
		return "", "", err
	}
	return tgt.TargetID, att.SessionID, nil
}

// CloseTab closes a target.
func (b *Bare) CloseTab(targetID string) error {
	return b.Call("", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}
