package browserpool

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/browser"
	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
)

func TestZZScratch(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/dl":
			w.Header().Set("Content-Disposition", `attachment; filename="../../evil.txt"`)
			fmt.Fprint(w, "hello download")
			return
		}
		fmt.Fprint(w, `<html><body><input id=i value="hello world"><a href="/dl" id=dl>dl</a><script>setTimeout(()=>{window.r = confirm("sure?")}, 300)</script></body></html>`)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	root, _ := os.MkdirTemp("", "scratch")
	defer os.RemoveAll(root)
	p, err := NewPool(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tab, err := p.ResolveTab(ctx, Ref{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := tab.Navigate(ctx, "http://"+ln.Addr().String()+"/"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond) // dialog opened, nobody listening
	st, _ := tab.client.Page.JavascriptDialogOpening(ctx)
	if err := tab.client.Page.Enable(ctx); err != nil {
		t.Log("enable", err)
	}
	select {
	case <-st.Ready():
		ev, _ := st.Recv()
		t.Logf("replayed dialog after enable: %+v (%v)", ev, time.Since(start))
		tab.client.Page.HandleJavaScriptDialog(ctx, page.NewHandleJavaScriptDialogArgs(true))
	case <-time.After(2 * time.Second):
		t.Log("no replay")
	}
	var r any
	tab.Evaluate(ctx, "window.r", &r)
	t.Log("r =", r)
	// ctrl+A
	tab.Evaluate(ctx, "document.getElementById('i').focus()", nil)
	c := tab.client
	c.Input.DispatchKeyEvent(ctx, input.NewDispatchKeyEventArgs("rawKeyDown").SetModifiers(2).SetKey("a").SetCode("KeyA").SetWindowsVirtualKeyCode(65))
	c.Input.DispatchKeyEvent(ctx, input.NewDispatchKeyEventArgs("keyUp").SetModifiers(2).SetKey("a").SetCode("KeyA").SetWindowsVirtualKeyCode(65))
	var sel []int
	tab.Evaluate(ctx, "[document.getElementById('i').selectionStart, document.getElementById('i').selectionEnd]", &sel)
	t.Log("selection after ctrl+A", sel)
	// downloads
	dir := root + "/dls"
	os.MkdirAll(dir, 0o700)
	err = tab.s.browser.Browser.SetDownloadBehavior(ctx, browser.NewSetDownloadBehaviorArgs("allowAndName").SetDownloadPath(dir).SetEventsEnabled(true))
	t.Log("setdl", err)
	wb, _ := tab.s.browser.Browser.DownloadWillBegin(ctx)
	pr, _ := tab.s.browser.Browser.DownloadProgress(ctx)
	tab.client.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("document.getElementById('dl').click()"))
	ev, err := wb.Recv()
	t.Logf("willBegin %+v %v tab=%s", ev, err, tab.id)
	for {
		pe, err := pr.Recv()
		t.Logf("progress %+v %v", pe, err)
		if err != nil || pe.State != "inProgress" {
			break
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Log("file", e.Name())
	}
}
