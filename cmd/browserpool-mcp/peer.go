// Room: who is on the other end of a loopback connection (Linux). No locks.

package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// ownerListener serves a loopback address without a token to this
// process's own user only: every other local user could otherwise reach
// the browsers, and through them every file this user may read. It looks
// up the user of each connection's other end in /proc/net/tcp and tcp6
// and answers any other user (root aside) with a 403 saying how to serve
// them.
type ownerListener struct {
	net.Listener
	uid int
}

// Accept returns the next connection from this user (or root), refusing
// the others.
func (l ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && (uid == l.uid || uid == 0) {
			return c, nil
		}
		who := "an unknown user (" + fmt.Sprint(err) + ")"
		if err == nil {
			who = "uid " + strconv.Itoa(uid)
		}
		go refuse(c, fmt.Sprintf("browserpool-mcp: without a token this server takes connections only from its own user (uid %d), not from %s; start it with -token-file to serve other users\n", l.uid, who))
	}
}

// refuse answers c's request with a 403 carrying body and closes c. It
// reads the request's head first (for two seconds at most): a client
// whose request is still unread when the connection closes gets a reset,
// not the answer.
func refuse(c net.Conn, body string) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	head := make([]byte, 0, 1024)
	buf := make([]byte, 1024)
	for len(head) < 8<<10 && !strings.Contains(string(head), "\r\n\r\n") {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			break
		}
	}
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// peerUID returns the user owning the other end of c, a TCP connection
// between two local sockets: the /proc/net entry whose local address is
// c's remote one and whose remote address is c's local one.
func peerUID(c net.Conn) (int, error) {
	local, err1 := netip.ParseAddrPort(c.LocalAddr().String())
	remote, err2 := netip.ParseAddrPort(c.RemoteAddr().String())
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("addresses %s and %s", c.LocalAddr(), c.RemoteAddr())
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := findUID(table, remote, local)
		if err != nil && !os.IsNotExist(err) {
			return 0, err
		}
		if found {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("no socket %s -> %s in /proc/net/tcp", remote, local)
}

// findUID reads table for the socket from local to remote and returns its
// user.
func findUID(table string, local, remote netip.AddrPort) (int, bool, error) {
	f, err := os.Open(table)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 {
			continue
		}
		l, okL := parseProcAddr(fs[1])
		r, okR := parseProcAddr(fs[2])
		if !okL || !okR || !sameEnd(l, local) || !sameEnd(r, remote) {
			continue
		}
		uid, err := strconv.Atoi(fs[7])
		if err != nil {
			return 0, false, fmt.Errorf("%s: uid %q", table, fs[7])
		}
		return uid, true, nil
	}
	return 0, false, sc.Err()
}

// sameEnd compares two socket ends, an IPv4 address and its IPv6-mapped
// form alike.
func sameEnd(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// parseProcAddr parses a /proc/net/tcp address: hex words of the address
// in this machine's byte order (little-endian here), a colon, the port in
// hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(host)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	var b [16]byte
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	if len(raw) == 4 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), uint16(p)), true
	}
	return netip.AddrPortFrom(netip.AddrFrom16(b), uint16(p)), true
}
