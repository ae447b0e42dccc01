// Room: the policy proxy's listening socket on 127.0.0.1, made with the
// socket calls themselves and waited on through the runtime's poller (an
// os.File), not with net.Listen: a pool whose browsers have not yet
// opened a connection to the proxy keeps none of the net package's
// listener code resident and pays none of its first-use probes (IPv6
// support, multipath TCP, the kernel's backlog limit). An accepted
// connection becomes an ordinary *net.TCPConn (net.FileConn). No locks:
// the accept loop is the only caller of accept; close may race it.

package browserpool

import (
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// listenBacklog is the listening socket's queue; the kernel caps it to
// net.core.somaxconn (4096 on current kernels), as net.Listen does.
const listenBacklog = 4096

// loopbackListener is a TCP listener on 127.0.0.1 on a port the kernel
// chose.
type loopbackListener struct {
	f    *os.File        // the listening socket, non-blocking, in the poller
	rc   syscall.RawConn // f's, for accept4
	port int
	// pause is how long accept waits after running out of descriptors or
	// memory before it tries again (tests shorten it).
	pause time.Duration
	// accept4 is syscall.Accept4 (tests make it fail).
	accept4 func(fd, flags int) (int, syscall.Sockaddr, error)
}

// listenLoopback opens a listening socket on 127.0.0.1:0.
func listenLoopback() (*loopbackListener, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	fail := func(call string, err error) (*loopbackListener, error) {
		syscall.Close(fd)
		return nil, os.NewSyscallError(call, err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	if err := syscall.Listen(fd, listenBacklog); err != nil {
		return fail("listen", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		return fail("getsockname", syscall.EAFNOSUPPORT)
	}
	// The descriptor is non-blocking, so os.NewFile puts it in the poller.
	f := os.NewFile(uintptr(fd), "policy proxy listener")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &loopbackListener{f: f, rc: rc, port: in4.Port, pause: 50 * time.Millisecond, accept4: syscall.Accept4}, nil
}

// addr is the listener's host:port.
func (l *loopbackListener) addr() string { return "127.0.0.1:" + strconv.Itoa(l.port) }

// accept waits for the next connection. It returns an error only once the
// listener is closed (or on a failure no wait can mend): a connection the
// client gave up before it was accepted is skipped, and running out of
// descriptors or memory waits a moment and tries again, as net/http's
// server does, rather than ending the proxy for the pool's life.
func (l *loopbackListener) accept() (net.Conn, error) {
	for {
		var nfd int
		var aerr error
		if err := l.rc.Read(func(fd uintptr) bool {
			nfd, _, aerr = l.accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
			return !errors.Is(aerr, syscall.EAGAIN)
		}); err != nil {
			return nil, err // closed
		}
		switch {
		case aerr == nil:
		case errors.Is(aerr, syscall.ECONNABORTED), errors.Is(aerr, syscall.EINTR):
			continue
		case errors.Is(aerr, syscall.EMFILE), errors.Is(aerr, syscall.ENFILE), errors.Is(aerr, syscall.ENOBUFS), errors.Is(aerr, syscall.ENOMEM):
			time.Sleep(l.pause)
			continue
		default:
			return nil, os.NewSyscallError("accept4", aerr)
		}
		f := os.NewFile(uintptr(nfd), "policy proxy connection")
		c, err := net.FileConn(f) // a *net.TCPConn on a duplicate of nfd
		f.Close()
		if err != nil {
			// Out of descriptors for the duplicate: the browser sees the
			// connection close and retries it.
			time.Sleep(l.pause)
			continue
		}
		return c, nil
	}
}

// close closes the listening socket; a waiting accept returns an error.
func (l *loopbackListener) close() error { return l.f.Close() }
