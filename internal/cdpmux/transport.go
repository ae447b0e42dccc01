// Room: the two framings a browser speaks. PipeTransport.wmu-free: the mux
// serializes writes; reads happen on the mux's reader only.

package cdpmux

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"
)

// PipeTransport speaks --remote-debugging-pipe framing: each message is one
// JSON object followed by a NUL byte. The browser reads from fd 3 (our w) and
// writes to fd 4 (our r).
type PipeTransport struct {
	r  *bufio.Reader
	rc io.Closer
	w  io.WriteCloser

	once sync.Once
}

// NewPipeTransport returns a transport reading from r and writing to w.
func NewPipeTransport(r io.ReadCloser, w io.WriteCloser) *PipeTransport {
	return &PipeTransport{r: bufio.NewReaderSize(r, 1<<16), rc: r, w: w}
}

// ReadMessage returns the next message without its NUL terminator.
func (p *PipeTransport) ReadMessage() ([]byte, error) {
	b, err := p.r.ReadBytes(0)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || (err == io.EOF && len(b) > 0) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b[:len(b)-1], nil
}

// WriteMessage writes b and its NUL terminator. b is modified in its spare
// capacity only.
func (p *PipeTransport) WriteMessage(b []byte) error {
	_, err := p.w.Write(append(b, 0))
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
