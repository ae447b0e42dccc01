// Room: one websocket connection to a browser, with its read pump. No
// locks: the pump hands messages over a channel.

package devtools

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mafredri/cdp/protocol/browser"
	"github.com/mafredri/cdp/rpcc"
)

// Transport carries whole CDP messages, one JSON object each (the shape of
// browserpool.Transport and cdpmux.Transport).
type Transport interface {
	ReadMessage() ([]byte, error)
	WriteMessage([]byte) error
	Close() error
}

// Conn is a websocket connection to a browser. A goroutine reads it ahead
// into a small buffer, so Done tells as soon as the browser drops the
// connection, even while nobody reads (a parked connection). It is a
// Transport: ReadMessage from one goroutine, WriteMessage from one at a time.
// Close ends the reader goroutine before it returns.
type Conn struct {
	ws      *websocket.Conn
	msgs    chan []byte
	done    chan struct{} // closed when the reader has ended
	err     error         // why the reader ended; written before done is closed
	closing chan struct{}
	once    sync.Once
}

// Dial connects to a DevTools websocket URL (ws:// or wss://); ctx bounds
// the handshake only, its cancellation as well as its deadline (the
// websocket package honours only a deadline once connected, and a browser
// holding the handshake for its prompt would keep the dial waiting).
func Dial(ctx context.Context, url string) (*Conn, error) {
	var mu sync.Mutex
	var raw net.Conn // guarded by mu; the TCP connection, once made
	d := websocket.Dialer{
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			mu.Lock()
			raw = c
			mu.Unlock()
			return c, err
		},
		ReadBufferSize:  1 << 16,
		WriteBufferSize: 1 << 16,
	}
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		if raw != nil {
			raw.SetDeadline(time.Unix(1, 0)) // unblocks the handshake now
		}
		mu.Unlock()
	})
	ws, resp, err := d.DialContext(ctx, url, http.Header{})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if !stop() {
		if err == nil {
			ws.Close()
		}
		return nil, context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(-1)
	c := &Conn{ws: ws, msgs: make(chan []byte, 16), done: make(chan struct{}), closing: make(chan struct{})}
	go c.pump()
	return c, nil
}

func (c *Conn) pump() {
	for {
		_, b, err := c.ws.ReadMessage()
		if err != nil {
			c.err = err
			close(c.done)
			return
		}
		select {
		case c.msgs <- b:
		case <-c.closing:
			c.err = net.ErrClosed
			close(c.done)
			return
		}
	}
}

// ReadMessage returns the next message, then the error that ended the
// connection.
func (c *Conn) ReadMessage() ([]byte, error) {
	select {
	case b := <-c.msgs:
		return b, nil
	case <-c.done:
		select {
		case b := <-c.msgs:
			return b, nil
		default:
			return nil, c.err
		}
	}
}

// WriteMessage sends b as one text message (continuation frames past 64
// KiB, which Chromium accepts).
func (c *Conn) WriteMessage(b []byte) error {
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// Close closes the connection and waits for its reader to end. It is
// idempotent.
func (c *Conn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closing)
		err = c.ws.Close()
	})
	<-c.done
	return err
}

// Done is closed once the connection has ended (the browser dropped it, or
// Close).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the connection ended, or nil while it is up.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// versionCallID is the id of the one call BrowserVersion makes; a mux built
// on the transport afterwards numbers its own calls independently.
const versionCallID = 1

// BrowserVersion asks Browser.getVersion over t, before anything else uses
// it: the readiness check of a fresh connection, one round trip. Messages
// other than the reply (there are none before a domain is enabled) are
// dropped. If ctx ends first, t is closed to unblock the read, and the
// error is ctx's cause. An error reply is an *rpcc.ResponseError.
func BrowserVersion(ctx context.Context, t Transport) (*browser.GetVersionReply, error) {
	stop := context.AfterFunc(ctx, func() { t.Close() })
	v, err := exchangeVersion(t)
	if !stop() {
		return nil, context.Cause(ctx)
	}
	return v, err
}

func exchangeVersion(t Transport) (*browser.GetVersionReply, error) {
	if err := t.WriteMessage([]byte(`{"id":1,"method":"Browser.getVersion"}`)); err != nil {
		return nil, err
	}
	for {
		b, err := t.ReadMessage()
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     int64               `json:"id"`
			Result json.RawMessage     `json:"result"`
			Error  *rpcc.ResponseError `json:"error"`
		}
		if json.Unmarshal(b, &msg) != nil || msg.ID != versionCallID {
			continue
		}
		if msg.Error != nil {
			return nil, msg.Error
		}
		v := new(browser.GetVersionReply)
		if err := json.Unmarshal(msg.Result, v); err != nil {
			return nil, errors.Join(errors.New("devtools: Browser.getVersion: malformed reply"), err)
		}
		return v, nil
	}
}
