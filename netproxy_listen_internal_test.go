// Room: tests of the policy proxy's listening socket (netproxy_listen.go),
// driven by Go clients. No locks of their own.

package browserpool

import (
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newTestListener opens a loopback listener, closed at cleanup.
func newTestListener(t *testing.T) *loopbackListener {
	t.Helper()
	l, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.close() })
	return l
}

// connect dials l and returns both ends, closed at cleanup; server is nil
// when accept failed.
func connect(t *testing.T, l *loopbackListener) (client, server net.Conn) {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.accept()
		if err != nil {
			c = nil
		}
		got <- c
	}()
	client, err := net.Dial("tcp", l.addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	if server = <-got; server != nil {
		t.Cleanup(func() { server.Close() })
	}
	return client, server
}

func TestTheListenerListensOnLoopbackAndHandsOverTCPConnections(t *testing.T) {
	l := newTestListener(t)
	if !strings.HasPrefix(l.addr(), "127.0.0.1:") || l.port == 0 {
		t.Fatalf("addr = %q, want 127.0.0.1 and the port the kernel chose", l.addr())
	}
	client, server := connect(t, l)
	if server == nil {
		t.Fatal("accept failed")
	}
	if _, ok := server.(*net.TCPConn); !ok {
		t.Errorf("accepted a %T, want *net.TCPConn (the tunnel half-closes it)", server)
	}
	if diff := cmp.Diff(client.LocalAddr().String(), server.RemoteAddr().String()); diff != "" {
		t.Errorf("the accepted connection's peer (-client +accepted):\n%s", diff)
	}
	if _, err := client.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(server, buf); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("ping", string(buf)); diff != "" {
		t.Errorf("bytes through the connection (-sent +read):\n%s", diff)
	}
}

func TestAWaitingAcceptReturnsWhenTheListenerCloses(t *testing.T) {
	l := newTestListener(t)
	done := make(chan error, 1)
	go func() {
		_, err := l.accept()
		done <- err
	}()
	l.close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("accept on a closed listener returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("accept still waits 10s after the listener closed")
	}
	if _, err := net.Dial("tcp", l.addr()); err == nil {
		t.Error("a closed listener still takes connections")
	}
}

func TestRunningOutOfDescriptorsPausesAcceptInsteadOfEndingIt(t *testing.T) {
	l := newTestListener(t)
	l.pause = time.Millisecond
	var fails atomic.Int32
	l.accept4 = func(fd, flags int) (int, syscall.Sockaddr, error) {
		if fails.Add(1) <= 3 {
			return -1, nil, syscall.EMFILE
		}
		return syscall.Accept4(fd, flags)
	}
	if _, server := connect(t, l); server == nil {
		t.Fatal("accept gave up after running out of descriptors; the proxy would serve no browser again")
	}
	if n := fails.Load(); n != 4 {
		t.Errorf("accept4 ran %d times, want 3 failures and a success", n)
	}
}
