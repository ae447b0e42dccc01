// Room: the policy proxy's connections to sites (siteConns), each kept by
// the browser connection that opened it for its next request to the same
// host, and used by that connection's goroutine only: no locks, no
// goroutines of their own.

package browserpool

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"syscall"
)

// siteConnsKept bounds the site connections one browser connection keeps:
// past it, opening another closes one kept.
const siteConnsKept = 8

// maxResponseHead bounds a site's response head (status line and
// headers), as net/http's Transport does by default.
const maxResponseHead = 10 << 20

// siteConns are the connections to sites one browser connection keeps,
// by host and port.
type siteConns struct {
	x *netProxy
	m map[string]*siteConn
}

// siteConn is one connection to a site.
type siteConn struct {
	key string
	c   net.Conn
	lim *io.LimitedReader // under br: bounds a response head
	br  *bufio.Reader
	bw  *bufio.Writer
}

var errProxyClosed = errors.New("the policy proxy is closed")

// get returns the kept connection for key, checked to be still open when
// check is set, or a new one to the first of addrs that answers; kept
// says which.
func (s *siteConns) get(key string, addrs []netip.Addr, port string, check bool) (_ *siteConn, kept bool, _ error) {
	if sc := s.m[key]; sc != nil {
		if !check || sc.open() {
			return sc, true, nil
		}
		s.drop(sc)
	}
	c, err := s.x.dialAddrs(addrs, port)
	if err != nil {
		return nil, false, err
	}
	if !s.x.track(c, true) {
		c.Close()
		return nil, false, errProxyClosed
	}
	if s.m == nil {
		s.m = make(map[string]*siteConn)
	}
	if len(s.m) >= siteConnsKept {
		for _, old := range s.m {
			s.drop(old)
			break
		}
	}
	lim := &io.LimitedReader{R: c, N: math.MaxInt64}
	sc := &siteConn{key: key, c: c, lim: lim, br: bufio.NewReader(lim), bw: bufio.NewWriter(c)}
	s.m[key] = sc
	return sc, false, nil
}

// drop closes sc and forgets it.
func (s *siteConns) drop(sc *siteConn) {
	if s.m[sc.key] == sc {
		delete(s.m, sc.key)
	}
	s.x.track(sc.c, false)
	sc.c.Close()
}

// closeAll closes every kept connection (the browser connection ended).
func (s *siteConns) closeAll() {
	for _, sc := range s.m {
		s.drop(sc)
	}
}

// open reports whether a kept connection is still usable: the site has
// neither closed it nor sent anything unasked. It peeks without waiting
// (a read deadline in the past would fail before reading).
func (sc *siteConn) open() bool {
	if sc.br.Buffered() > 0 {
		return false
	}
	sys, ok := sc.c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sys.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var b [1]byte
	rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		alive = errors.Is(err, syscall.EAGAIN) // nothing to read: open; EOF or data: not
		return true
	})
	return alive
}

// roundTrip sends req to the site and reads its response's head; an
// interim (1xx) response goes on to the browser through w first. The
// body is left to the caller, which must read it to its end before the
// connection's next request.
func (sc *siteConn) roundTrip(req *http.Request, w *relayOut) (*http.Response, error) {
	if err := req.Write(sc.bw); err != nil {
		return nil, err
	}
	if err := sc.bw.Flush(); err != nil {
		return nil, err
	}
	for {
		sc.lim.N = maxResponseHead
		resp, err := http.ReadResponse(sc.br, req)
		sc.lim.N = math.MaxInt64
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			resp.Body.Close()
			return nil, errors.New("the site switched protocols, which the policy proxy does not relay for plain http")
		case resp.StatusCode >= 100 && resp.StatusCode < 200:
			if err := resp.Write(w); err != nil {
				return nil, err
			}
			if err := w.flush(); err != nil {
				return nil, err
			}
			continue
		}
		return resp, nil
	}
}
