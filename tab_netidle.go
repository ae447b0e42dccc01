// Room: Tab.WaitNetworkIdle. netState.mu guards whether the tab's Network
// domain is on. The wait reads an event stream it opens itself and closes
// before it returns; no lock is held while waiting or calling the browser.

package browserpool

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/axtext"
	"github.com/browserpool/browserpool/internal/redact"
	"github.com/mafredri/cdp/rpcc"
)

// NetworkIdleOptions configures Tab.WaitNetworkIdle. The zero value waits
// for DefaultNetworkQuiet without any request in flight.
type NetworkIdleOptions struct {
	// Quiet is how long no counted request may be in flight. Zero means
	// DefaultNetworkQuiet.
	Quiet time.Duration
	// MaxInflight is how many counted requests may stay in flight (for
	// pages that poll). Zero means none.
	MaxInflight int
	// Action, if set, runs once tracking has started, so the requests it
	// causes are counted (for example a click that submits a form). Its
	// error ends the wait.
	Action func(ctx context.Context) error
}

// ignoredTypes are requests that may stay open for the page's whole life
// and never count against idleness.
var ignoredTypes = map[string]bool{"WebSocket": true, "EventSource": true, "Media": true}

// WaitNetworkIdle waits until the page's network has been idle for
// opts.Quiet: no request in flight, counting each request from
// Network.requestWillBeSent to loadingFinished or loadingFailed by its id,
// or until its document goes away (the page or its frame navigates to
// another document; a cross-site iframe's document, whose load
// moves to the iframe's own process, until that move). WebSockets,
// EventSource streams and media (which stream for as long as they play)
// are ignored, and so is a worker's script, which the worker loads in a
// target of its own (so are the worker's own requests). Requests already
// in flight when the call starts are not seen: pass the action that
// starts them as opts.Action. Bounded by ctx and DefaultWaitTimeout;
// running out names the requests still in flight.
func (t *Tab) WaitNetworkIdle(ctx context.Context, opts NetworkIdleOptions) error {
	const op = "Tab.WaitNetworkIdle"
	args := fmt.Sprintf("quiet=%v max=%d action=%v", opts.Quiet, opts.MaxInflight, opts.Action != nil)
	return t.waiting(ctx, op, "wait-network-idle", args, func(ctx, caller context.Context, x *tabExt) error {
		quiet := opts.Quiet
		if quiet <= 0 {
			quiet = DefaultNetworkQuiet
		}

		// A cross-site iframe's document request starts here and ends in
		// the iframe's own process (an out-of-process iframe): this session
		// sees its frame detached with reason "swap", never its end.
		// A request whose document goes away (the page or its frame
		// navigates) ends with it, with no event of its own.
		var streams [5]rpcc.Stream
		for i, m := range []string{"Network.requestWillBeSent", "Network.loadingFinished", "Network.loadingFailed", "Page.frameDetached", "Page.frameNavigated"} {
			s, err := rpcc.NewStream(ctx, m, t.rpc())
			if err != nil {
				return x.waitErr(op, caller, ctx, "", err)
			}
			defer s.Close()
			streams[i] = s
		}
		if err := rpcc.Sync(streams[:]...); err != nil {
			return x.waitErr(op, caller, ctx, "", err)
		}
		stop := t.direct.Listen() // the network's events
		defer stop()
		if err := x.net.enable(ctx, x); err != nil {
			return x.waitErr(op, caller, ctx, "", err)
		}
		if opts.Action != nil {
			if err := opts.Action(ctx); err != nil {
				return err
			}
		}

		type request struct{ url, typ, frame, loader string }
		inflight := map[string]request{}
		timer := time.NewTimer(quiet)
		defer timer.Stop()
		timerOn := true
		changed := func() {
			if len(inflight) <= opts.MaxInflight {
				timer.Reset(quiet)
				timerOn = true
			} else if timerOn {
				timer.Stop()
				timerOn = false
			}
		}
		for {
			var ev netEvent // the union the network log reads (tab_network.go)
			select {
			case <-streams[0].Ready():
				if err := streams[0].RecvMsg(&ev); err != nil {
					return x.waitErr(op, caller, ctx, "", err)
				}
				if ignoredTypes[ev.Type] || workerScript(ev.Type, ev.Request.URL, ev.Document, ev.LoaderID) {
					continue
				}
				inflight[ev.RequestID] = request{url: ev.Request.URL, typ: ev.Type, frame: ev.FrameID, loader: ev.LoaderID}
				changed()
			case <-streams[1].Ready():
				if err := streams[1].RecvMsg(&ev); err != nil {
					return x.waitErr(op, caller, ctx, "", err)
				}
				delete(inflight, ev.RequestID)
				changed()
			case <-streams[2].Ready():
				if err := streams[2].RecvMsg(&ev); err != nil {
					return x.waitErr(op, caller, ctx, "", err)
				}
				delete(inflight, ev.RequestID)
				changed()
			case <-streams[3].Ready():
				if err := streams[3].RecvMsg(&ev); err != nil {
					return x.waitErr(op, caller, ctx, "", err)
				}
				if ev.Reason != "swap" {
					continue
				}
				for id, r := range inflight {
					if r.frame == ev.FrameID && r.typ == "Document" {
						delete(inflight, id) // it goes on in the iframe's process
					}
				}
				changed()
			case <-streams[4].Ready():
				if err := streams[4].RecvMsg(&ev); err != nil {
					return x.waitErr(op, caller, ctx, "", err)
				}
				for id, r := range inflight {
					if cutByNavigation(r.frame, r.loader, r.typ, ev.Frame.ID, ev.Frame.ParentID, ev.Frame.LoaderID) {
						delete(inflight, id)
					}
				}
				changed()
			case <-timer.C:
				timerOn = false
				if len(inflight) <= opts.MaxInflight {
					return nil
				}
			case <-ctx.Done():
				pending := make([]string, 0, len(inflight))
				for _, r := range inflight {
					pending = append(pending, fmt.Sprintf("%s %s", r.typ, axtext.Cut(redact.Scrub(r.url), 120)))
				}
				slices.Sort(pending)
				if len(pending) > 10 {
					pending = append(pending[:10], fmt.Sprintf("+%d more", len(pending)-10))
				}
				what := fmt.Sprintf("the network did not stay idle for %v; %d requests in flight: [%s]", quiet, len(inflight), strings.Join(pending, "; "))
				return x.waitErr(op, caller, ctx, what, ctx.Err())
			}
		}
	})
}

// netState records whether the tab's Network domain is on. It is turned
// on by the first network wait and left on, so that later waits need no
// round trip and no enable/disable race between concurrent waits.
type netState struct {
	mu sync.Mutex
	on bool // guarded by mu
}

func (n *netState) enable(ctx context.Context, x *tabExt) error {
	n.mu.Lock()
	on := n.on
	n.mu.Unlock()
	if on {
		return nil
	}
	if err := x.t.direct.Invoke(ctx, "Network.enable", struct{}{}, nil); err != nil {
		return err
	}
	n.mu.Lock()
	n.on = true
	n.mu.Unlock()
	return nil
}
