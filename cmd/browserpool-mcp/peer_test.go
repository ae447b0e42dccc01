package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// serveOwner serves "hello" on a loopback address through ownerListener.
func serveOwner(t *testing.T, network, addr string) string {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })}
	go hs.Serve(ownerListener{Listener: ln, uid: os.Getuid()})
	t.Cleanup(func() { hs.Close() })
	return ln.Addr().String()
}

// Without a token, a loopback server answers its own user, over IPv4 and
// IPv6, and refuses another user's process with a 403 that says how to
// serve it.
func TestALoopbackServerWithoutATokenAnswersOnlyItsOwnUser(t *testing.T) {
	for _, addr := range []string{serveOwner(t, "tcp4", "127.0.0.1:0"), serveOwner(t, "tcp6", "[::1]:0")} {
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("GET from this user at %s: %v", addr, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "hello" {
			t.Errorf("GET from this user at %s: %s %q, want 200 hello", addr, resp.Status, b)
		}
	}
	if os.Getuid() != 0 {
		t.Log("not root: cannot start a process of another user here; the refusal is checked where tests run as root (make test in CI)")
		return
	}
	ap := netip.MustParseAddrPort(serveOwner(t, "tcp4", "127.0.0.1:0"))
	// bash's /dev/tcp, as uid 65534.
	cmd := exec.Command("bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/`+strconv.Itoa(int(ap.Port()))+`; printf 'GET / HTTP/1.0\r\n\r\n' >&3; cat <&3`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the other user's client: %v\n%s", err, out)
	}
	got := string(out)
	if !strings.HasPrefix(got, "HTTP/1.1 403 Forbidden") || !strings.Contains(got, "not from uid 65534") || !strings.Contains(got, "-token-file") || strings.Contains(got, "hello") {
		t.Errorf("another user's request got:\n%s\nwant a 403 naming its uid and -token-file", got)
	}
}

func TestProcNetAddressesParse(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:0050": "[::1]:80",
		"0000000000000000FFFF00000100007F:A1B2": "[::ffff:127.0.0.1]:41394",
	} {
		got, ok := parseProcAddr(in)
		if !ok || got.String() != want {
			t.Errorf("parseProcAddr(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
}

// The command, serving HTTP on loopback without a token, refuses another
// user's connections.
func TestTheCommandOnLoopbackWithoutATokenRefusesOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Log("not root: cannot start a process of another user here; checked where tests run as root (make test in CI)")
		return
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-http", addr, "-root", newRoot(t)}, strings.NewReader(""), io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	waitFor(t, "the server to answer this user", func() bool {
		resp, err := http.Get("http://" + addr + "/mcp")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode != http.StatusForbidden
	})
	port := strings.TrimPrefix(addr, "127.0.0.1:")
	cmd := exec.Command("bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/`+port+`; printf 'GET /mcp HTTP/1.0\r\n\r\n' >&3; cat <&3`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "HTTP/1.1 403 Forbidden") {
		t.Errorf("another user's request: %v\n%s\nwant a 403", err, out)
	}
}
