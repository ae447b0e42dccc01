// Room: the two framings a browser speaks. PipeTransport.wmu-free: the mux
// serializes writes, and reads happen on one goroutine at a time (the
// holder of the mux's read role), which owns the read state.

package cdpmux

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// PipeTransport speaks --remote-debugging-pipe framing: each message is one
// JSON object followed by a NUL byte. The browser reads from fd 3 (our w) and
// writes to fd 4 (our r).
//
// A message is copied once, into the slice ReadMessage returns (which the
// mux hands on without another copy): a small one from the read buffer, a
// big one (an AX tree, a screenshot) read straight from the pipe into a
// slice sized by the last big message, so a 2 MB reply costs one or two
// allocations, not one per 64 KiB.
type PipeTransport struct {
	r  io.Reader
	rc io.Closer
	w  io.WriteCloser

	// Used by the one goroutine reading at a time only.
	buf      []byte // read buffer: buf[off:end] is read and not yet returned
	off, end int
	bigHint  int    // the size of the last message that outgrew buf
	part     []byte // a big message an interrupted read had begun (readBig goes on with it)
	partScan int    // part[:partScan] holds no NUL

	once sync.Once
}

// pipeBuf is the read buffer's size; a message that does not fit is read
// into its own slice.
const pipeBuf = 1 << 16

// NewPipeTransport returns a transport reading from r and writing to w.
func NewPipeTransport(r io.ReadCloser, w io.WriteCloser) *PipeTransport {
	return &PipeTransport{r: r, rc: r, w: w, buf: make([]byte, pipeBuf)}
}

// ReadMessage returns the next message without its NUL terminator. A read
// interrupted by SetReadDeadline keeps what it read: the next ReadMessage
// returns the whole message.
func (p *PipeTransport) ReadMessage() ([]byte, error) {
	if p.part != nil {
		return p.readBig()
	}
	scan := p.off // buf[off:scan] holds no NUL
	for {
		if i := bytes.IndexByte(p.buf[scan:p.end], 0); i >= 0 {
			n := scan + i
			msg := make([]byte, n-p.off)
			copy(msg, p.buf[p.off:n])
			p.off = n + 1
			return msg, nil
		}
		scan = p.end
		if p.off > 0 { // make room at the end
			p.end = copy(p.buf, p.buf[p.off:p.end])
			p.off, scan = 0, p.end
		}
		if p.end == len(p.buf) {
			return p.readBig()
		}
		n, err := p.r.Read(p.buf[p.end:])
		p.end += n
		if err != nil && n == 0 {
			return nil, p.readErr(err, p.end > p.off)
		}
	}
}

// readBig reads a message that outgrew the read buffer (which is full of
// its start) straight into its own slice, sized by the last big message
// and doubled as needed, then keeps what followed it in the buffer. It
// goes on with p.part, the start an interrupted readBig kept, if any.
func (p *PipeTransport) readBig() ([]byte, error) {
	msg, scan := p.part, p.partScan
	p.part = nil
	if msg == nil {
		msg = make([]byte, p.end, max(2*len(p.buf), p.bigHint+p.bigHint/8))
		copy(msg, p.buf[:p.end])
		p.off, p.end = 0, 0
		scan = len(msg)
	}
	for {
		if len(msg) == cap(msg) {
			grown := make([]byte, len(msg), 2*cap(msg))
			copy(grown, msg)
			msg = grown
		}
		n, err := p.r.Read(msg[len(msg):cap(msg)])
		msg = msg[:len(msg)+n]
		if i := bytes.IndexByte(msg[scan:], 0); i >= 0 {
			end := scan + i
			rest := msg[end+1:]
			if len(rest) > len(p.buf) {
				p.buf = make([]byte, len(rest))
			}
			p.end = copy(p.buf, rest)
			p.bigHint = end
			if cap(msg) > 2*end { // the hint was far off: do not keep the excess alive
				return bytes.Clone(msg[:end]), nil
			}
			return msg[:end:end], nil
		}
		scan = len(msg)
		if err != nil && n == 0 {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				p.part, p.partScan = msg, scan // the next ReadMessage goes on
			}
			return nil, p.readErr(err, true)
		}
	}
}

// readErr is the error of a read that failed with err; partial says a
// message had begun (its end is lost: io.ErrUnexpectedEOF).
func (p *PipeTransport) readErr(err error, partial bool) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || (err == io.EOF && partial) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// SetReadDeadline sets the deadline of the reads under ReadMessage (see
// ReadDeadliner); the zero time removes it. It fails when the read end is
// not a pollable *os.File (a pipe from os.Pipe is one).
func (p *PipeTransport) SetReadDeadline(t time.Time) error {
	d, ok := p.r.(interface{ SetReadDeadline(time.Time) error })
	if !ok {
		return os.ErrNoDeadline
	}
	return d.SetReadDeadline(t)
}

// WriteMessage writes b and its NUL terminator. b is modified in its spare
// capacity only.
func (p *PipeTransport) WriteMessage(b []byte) error {
	_, err := p.w.Write(append(b, 0))
	return err
}

// AppendFrame appends msg and its NUL terminator to dst.
func (p *PipeTransport) AppendFrame(dst, msg []byte) []byte {
	return append(append(dst, msg...), 0)
}

// WriteFrames writes frames made by AppendFrame, in one write.
func (p *PipeTransport) WriteFrames(b []byte) error {
	_, err := p.w.Write(b)
	return err
}

// Close closes both ends. It is idempotent.
func (p *PipeTransport) Close() error {
	var err error
	p.once.Do(func() {
		err = errors.Join(p.w.Close(), p.rc.Close())
	})
	return err
}

// WSTransport carries CDP over a websocket (an attached browser or a remote
// fleet).
type WSTransport struct {
	c *websocket.Conn
}

// DialWebSocket connects to a DevTools websocket URL (ws:// or wss://).
func DialWebSocket(ctx context.Context, url string) (*WSTransport, error) {
	d := websocket.Dialer{
		NetDialContext:  (&net.Dialer{}).DialContext,
		ReadBufferSize:  1 << 16,
		WriteBufferSize: 1 << 16,
	}
	c, resp, err := d.DialContext(ctx, url, http.Header{})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(-1)
	return &WSTransport{c: c}, nil
}

// ReadMessage returns the next websocket message.
func (w *WSTransport) ReadMessage() ([]byte, error) {
	_, b, err := w.c.ReadMessage()
	return b, err
}

// WriteMessage sends b as one text message. A message larger than the
// 64 KiB write buffer goes out in continuation frames, which Chromium 156
// accepts (a 300 KB Runtime.evaluate was checked); rpcc's own websocket,
// by contrast, refuses to write a message over its buffer and is unusable
// afterwards, which is why the mux dials its own.
func (w *WSTransport) WriteMessage(b []byte) error {
	return w.c.WriteMessage(websocket.TextMessage, b)
}

// Close closes the websocket.
func (w *WSTransport) Close() error { return w.c.Close() }
