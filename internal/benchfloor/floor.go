// Package benchfloor is the floor the benchmarks measure against: a
// browser started with the same flags and environment as the launcher, and
// driven with no library at all (raw NUL-framed JSON on the pipe). It exists
// for benchmarks only.
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
	msg := map[string]any{"id": b.id, "method": method}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	if params != nil {
		msg["params"] = params
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(data, 0)); err != nil {
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
// output has exited, and removes the directory.
func (b *Bare) Stop() {
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	b.cmd.Wait()
	closeAll(b.w, b.rc)
	<-b.outDone
	os.RemoveAll(b.dir)
}
