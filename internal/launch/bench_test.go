// Room: benchmarks of launch and of evaluate round trips against a bare
// floor. No locks.

package launch

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/rpcc"
)

// BenchmarkLaunchToFirstEvaluate measures a cold browser up to its first
// page evaluate and back down, through this package ("ours": Start, create a
// target, attach through the mux, Runtime.evaluate, Stop) and with no library
// at all ("bare": exec with the same flags and environment, raw NUL-framed
// JSON on the pipe, kill the group, wait for the output's EOF, remove the
// directory). ms-to-eval/op is the part up to the evaluate's reply.
func BenchmarkLaunchToFirstEvaluate(b *testing.B) {
	exe := browser(b)
	ctx := context.Background()
	b.Run("ours", func(b *testing.B) {
		var toEval time.Duration
		for range b.N {
			t0 := time.Now()
			p, err := Start(ctx, Options{Executable: exe, SessionDir: sessionDir(b)})
			if err != nil {
				b.Fatal(err)
			}
			tgt, err := cdp.NewClient(p.Mux().Browser()).Target.CreateTarget(ctx, target.NewCreateTargetArgs("about:blank"))
			if err != nil {
				b.Fatal(err)
			}
			conn, _, err := p.Mux().Attach(ctx, string(tgt.TargetID))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := cdp.NewClient(conn).Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1+1")); err != nil {
				b.Fatal(err)
			}
			toEval += time.Since(t0)
			if err := p.Stop(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(toEval.Seconds()*1e3/float64(b.N), "ms-to-eval/op")
	})
	b.Run("bare", func(b *testing.B) {
		var toEval time.Duration
		for range b.N {
			t0 := time.Now()
			bb, err := bareStart(exe, sessionDir(b))
			if err != nil {
				b.Fatal(err)
			}
			err = bb.firstEvaluate()
			toEval += time.Since(t0)
			bb.stop()
			if err != nil {
				b.Fatalf("%v\n%s", err, bb.output)
			}
		}
		b.ReportMetric(toEval.Seconds()*1e3/float64(b.N), "ms-to-eval/op")
	})
}

// bare is a browser driven with no library: the floor.
type bare struct {
	cmd     *exec.Cmd
	dir     string
	w       *os.File
	r       *bufio.Reader
	rc      *os.File
	id      int
	outDone chan struct{}
	output  []byte // written by the output goroutine before outDone closes
}

func bareStart(exe, dir string) (*bare, error) {
	for _, d := range []string{UserDataDirName, XDGConfigName, XDGCacheName} {
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
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args(filepath.Join(dir, UserDataDirName), true, nil)...)
	cmd.Env = environ(dir, filepath.Base(dir), nil)
	cmd.ExtraFiles = []*os.File{cmdR, replyW}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	closeFiles(cmdR, replyW, outW)
	if err != nil {
		closeFiles(cmdW, replyR, outR)
		return nil, err
	}
	bb := &bare{cmd: cmd, dir: dir, w: cmdW, r: bufio.NewReaderSize(replyR, 1<<16), rc: replyR, outDone: make(chan struct{})}
	go func() {
		defer close(bb.outDone)
		bb.output, _ = io.ReadAll(outR)
		outR.Close()
	}()
	return bb, nil
}

// call sends one command and reads until its reply, skipping events.
func (bb *bare) call(sessionID, method string, params any, result any) error {
	bb.id++
	msg := map[string]any{"id": bb.id, "method": method}
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
	if _, err := bb.w.Write(append(data, 0)); err != nil {
		return err
	}
	for {
		frame, err := bb.r.ReadBytes(0)
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
		if reply.ID != bb.id {
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

func (bb *bare) firstEvaluate() error {
	if err := bb.call("", "Browser.getVersion", nil, nil); err != nil {
		return err
	}
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := bb.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt); err != nil {
		return err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := bb.call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att); err != nil {
		return err
	}
	var ev struct {
		Result struct {
			Value int `json:"value"`
		} `json:"result"`
	}
	if err := bb.call(att.SessionID, "Runtime.evaluate", map[string]any{"expression": "1+1"}, &ev); err != nil {
		return err
	}
	if ev.Result.Value != 2 {
		return fmt.Errorf("1+1 = %d", ev.Result.Value)
	}
	return nil
}

// stop kills the group, reaps, waits until every process that held the
// output has exited, and removes the directory.
func (bb *bare) stop() {
	syscall.Kill(-bb.cmd.Process.Pid, syscall.SIGKILL)
	bb.cmd.Wait()
	closeFiles(bb.w, bb.rc)
	<-bb.outDone
	os.RemoveAll(bb.dir)
}

// BenchmarkEvaluate measures Runtime.evaluate("1+1") round trips on one page,
// through the mux over the pipe and through mafredri/cdp's own websocket to
// the page (rpcc.Dial on the page's webSocketDebuggerUrl), sequentially and
// from 8 goroutines.
func BenchmarkEvaluate(b *testing.B) {
	p := start(b, Options{})
	pg := openPage(b, p)
	var list []struct {
		ID string `json:"id"`
		WS string `json:"webSocketDebuggerUrl"`
	}
	jsonGet(b, p, "/json/list", &list)
	wsURL := ""
	for _, t := range list {
		if t.ID == string(pg.id) {
			wsURL = t.WS
		}
	}
	if wsURL == "" {
		b.Fatalf("page %s not in /json/list", pg.id)
	}
	conn, err := rpcc.DialContext(context.Background(), wsURL, rpcc.WithWriteBufferSize(1<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	clients := []struct {
		name string
		c    *cdp.Client
	}{{"mux-pipe", pg.client}, {"rpcc-websocket", cdp.NewClient(conn)}}
	ctx := context.Background()
	args := runtime.NewEvaluateArgs("1+1")
	for _, mode := range []struct {
		name       string
		goroutines int
	}{{"sequential", 1}, {"8-goroutines", 8}} {
		for _, cl := range clients {
			b.Run(cl.name+"/"+mode.name, func(b *testing.B) {
				var next atomic.Int64
				var wg sync.WaitGroup
				for range mode.goroutines {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if _, err := cl.c.Runtime.Evaluate(ctx, args); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
			})
		}
	}
}
