// Room: the network log (Tab.Network, Tab.ClearNetwork). netLog.mu guards
// the log and whether it records. Events arrive on the mux's reader
// goroutine through the tab's tap (Tab.onEvent -> tabExt.onToolEvent): no
// goroutine of ours reads them, and nothing under the lock blocks. The
// Network domain is turned on by netState (tab_netidle.go), shared with
// Tab.WaitNetworkIdle.

package browserpool

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/browserpool/browserpool/internal/redact"
)

// NetworkLogLimit is how many requests a tab's network log keeps; older
// ones are dropped first.
const NetworkLogLimit = 500

// NetworkRequest is one request in a tab's network log. A redirect ends
// one request (Status is the redirect's 3xx) and the request to the new
// URL follows as its own entry.
type NetworkRequest struct {
	Time     time.Time     // when the request was sent
	Method   string        // "GET", "POST", ...
	URL      string        // token-like query values redacted, credentials dropped
	Type     string        // the resource type: "Document", "Script", "Image", "Fetch", "XHR", "Stylesheet", ...
	Status   int           // the HTTP status; zero without a response (failed, or in flight)
	MIMEType string        // the response's MIME type, if any
	Failure  string        // the browser's error text for a failed request, e.g. net::ERR_NAME_NOT_RESOLVED; through the network-policy proxy (Config.Network) an origin that refuses the connection shows as net::ERR_EMPTY_RESPONSE
	Duration time.Duration // from sending to the end of loading (or the failure); zero while in flight
	Done     bool          // finished, failed, redirected, or cut off by its document going away (Failure says so): no more changes to come; a worker's script is done as it is sent (see workerScript)
}

// cutOff is the Failure of a request whose document went away while it was
// in flight (its frame, or the page, navigated to another document): the
// browser drops such a request without an event of its own.
const cutOff = "cut off: its page navigated away before it ended"

// workerScript reports whether a Network.requestWillBeSent is a worker's
// script (new Worker(url), from a blob: or an http URL): the request is
// its own document (documentURL is its URL) and no document's loader
// sent it (a page's fetch of its own URL has its page's loader), and the
// worker loads it in a target of its own, so the page's session sees it
// sent and nothing after. The log shows it done at once, without a
// status, and WaitNetworkIdle does not wait for it: it would be in flight
// forever.
func workerScript(typ, url, documentURL, loaderID string) bool {
	// Type Script: a CORS preflight has no loader and is its own document
	// too, and its end does come here.
	return typ == "Script" && url != "" && url == documentURL && loaderID == ""
}

// cutByNavigation reports whether a request in flight, sent by the
// document of loader in frame, ends as frame navFrame (a subframe of
// parent navParent, or the tab's main frame when that is "") commits the
// document of newLoader: the browser drops the old document's requests
// without an event, and when the main frame navigates, those of its
// iframes too (measured: neither loadingFailed nor frameDetached comes).
// A beacon (type Ping) outlives its page, and a CORS preflight (no
// loader) ends on its own.
func cutByNavigation(frame, loader, typ, navFrame, navParent, newLoader string) bool {
	gone := frame == navFrame || navParent == ""
	return gone && loader != "" && newLoader != "" && loader != newLoader && typ != "Ping"
}

// netEntry is a log entry and the browser's monotonic time of its start.
type netEntry struct {
	r      NetworkRequest
	start  float64 // seconds, the browser's monotonic clock
	frame  string  // the frame it loads for
	loader string  // the loader of the document that sent it ("" for a CORS preflight)
}

// netLog is a tab's network log.
type netLog struct {
	mu        sync.Mutex
	recording bool                 // guarded by mu; set by the first Network call
	entries   []*netEntry          // guarded by mu; oldest first, at most NetworkLogLimit
	inflight  map[string]*netEntry // guarded by mu; not Done yet, by request id
}

// Network returns the tab's network log: the requests of its page (and
// its same-process frames) from the first Network or ClearNetwork call on,
// oldest first, at most NetworkLogLimit. The log is lazy: until the first
// call the tab does not follow the network at all, so tabs that never ask
// pay nothing; requests made before the first call are not in it. Call
// Network once right after opening a tab to log everything from then on.
// Entries of requests still in flight have Done false. A request whose
// document went away while it was in flight (the page or its frame
// navigated), which the browser drops without a word, is Done with
// Failure "cut off: …". The requests of a worker (beyond its script) are not in
// the log: they come to the worker's own target.
func (t *Tab) Network(ctx context.Context) (out []NetworkRequest, err error) {
	const op = "Tab.Network"
	err = t.act(ctx, op, "read-network", "", nil, func(ctx context.Context, x *tabExt, args *string) error {
		if err := x.netlogOn(ctx, op); err != nil {
			return err
		}
		l := &x.netlog
		l.mu.Lock()
		out = make([]NetworkRequest, len(l.entries))
		for i, e := range l.entries {
			out[i] = e.r
		}
		l.mu.Unlock()
		*args = strconv.Itoa(len(out)) + " requests"
		return nil
	})
	return out, err
}

// ClearNetwork empties the tab's network log (and starts it, as Network
// does). Requests in flight are forgotten: their ends are not logged.
func (t *Tab) ClearNetwork(ctx context.Context) error {
	const op = "Tab.ClearNetwork"
	return t.act(ctx, op, "clear-network", "", nil, func(ctx context.Context, x *tabExt, _ *string) error {
		if err := x.netlogOn(ctx, op); err != nil {
			return err
		}
		l := &x.netlog
		l.mu.Lock()
		l.entries, l.inflight = nil, map[string]*netEntry{}
		l.mu.Unlock()
		return nil
	})
}

// netlogOn starts recording, then turns the Network domain on (once per
// tab; a no-op if a network wait already did).
func (x *tabExt) netlogOn(ctx context.Context, op string) error {
	l := &x.netlog
	l.mu.Lock()
	if !l.recording {
		l.recording, l.inflight = true, map[string]*netEntry{}
	}
	l.mu.Unlock()
	if err := x.net.enable(ctx, x); err != nil {
		return x.fail(op, ctx, "", err)
	}
	return nil
}

// netEvent is the union of the Network events the log reads.
type netEvent struct {
	RequestID string  `json:"requestId"`
	Timestamp float64 `json:"timestamp"` // seconds, monotonic
	WallTime  float64 `json:"wallTime"`  // seconds since the epoch
	Type      string  `json:"type"`
	FrameID   string  `json:"frameId"`
	Document  string  `json:"documentURL"`
	LoaderID  string  `json:"loaderId"`
	Reason    string  `json:"reason"` // Page.frameDetached
	Frame     struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
		LoaderID string `json:"loaderId"`
	} `json:"frame"` // Page.frameNavigated
	Request struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"request"`
	Response         *netResponse `json:"response"`
	RedirectResponse *netResponse `json:"redirectResponse"`
	ErrorText        string       `json:"errorText"`
	Canceled         bool         `json:"canceled"`
	BlockedReason    string       `json:"blockedReason"`
}

type netResponse struct {
	Status   int    `json:"status"`
	MIMEType string `json:"mimeType"`
}

// note records one Network event (on the mux's reader).
func (l *netLog) note(method string, params json.RawMessage) {
	l.mu.Lock()
	recording := l.recording
	l.mu.Unlock()
	if !recording {
		return
	}
	var ev netEvent
	if json.Unmarshal(params, &ev) != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.inflight[ev.RequestID]
	switch method {
	case "Network.requestWillBeSent":
		if e != nil && ev.RedirectResponse != nil {
			e.r.Status, e.r.MIMEType = ev.RedirectResponse.Status, ev.RedirectResponse.MIMEType
			l.endLocked(ev.RequestID, e, ev.Timestamp)
		}
		sec, frac := math.Modf(ev.WallTime)
		n := &netEntry{start: ev.Timestamp, frame: ev.FrameID, loader: ev.LoaderID, r: NetworkRequest{
			Time:   time.Unix(int64(sec), int64(frac*1e9)),
			Method: ev.Request.Method, URL: redact.Scrub(ev.Request.URL), Type: ev.Type,
		}}
		if ev.WallTime == 0 {
			n.r.Time = time.Now()
		}
		if len(l.entries) >= NetworkLogLimit {
			old := l.entries[0]
			l.entries = append(l.entries[:0], l.entries[1:]...)
			for id, f := range l.inflight {
				if f == old {
					delete(l.inflight, id)
					break
				}
			}
		}
		l.entries = append(l.entries, n)
		if workerScript(ev.Type, ev.Request.URL, ev.Document, ev.LoaderID) {
			n.r.Done = true // its end comes to the worker's target, never here
			return
		}
		l.inflight[ev.RequestID] = n
	case "Network.responseReceived":
		if e != nil && ev.Response != nil {
			e.r.Status, e.r.MIMEType = ev.Response.Status, ev.Response.MIMEType
			if e.r.Type == "" {
				e.r.Type = ev.Type
			}
		}
	case "Network.loadingFinished":
		if e != nil {
			l.endLocked(ev.RequestID, e, ev.Timestamp)
		}
	case "Page.frameDetached":
		// A cross-site iframe's document goes on loading in the iframe's
		// own process (reason "swap"): its end never comes here. Its
		// response did; it counts as done, with no duration.
		if ev.Reason != "swap" {
			return
		}
		for id, f := range l.inflight {
			if f.frame == ev.FrameID && f.r.Type == "Document" {
				l.endLocked(id, f, 0)
			}
		}
	case "Page.frameNavigated":
		for id, f := range l.inflight {
			if cutByNavigation(f.frame, f.loader, f.r.Type, ev.Frame.ID, ev.Frame.ParentID, ev.Frame.LoaderID) {
				f.r.Failure = cutOff
				l.endLocked(id, f, 0)
			}
		}
	case "Network.loadingFailed":
		if e != nil {
			e.r.Failure = ev.ErrorText
			if ev.BlockedReason != "" {
				e.r.Failure += " (blocked: " + ev.BlockedReason + ")"
			}
			if e.r.Failure == "" && ev.Canceled {
				e.r.Failure = "canceled"
			}
			l.endLocked(ev.RequestID, e, ev.Timestamp)
		}
	}
}

// endLocked marks e done at the browser's time ts.
func (l *netLog) endLocked(id string, e *netEntry, ts float64) {
	e.r.Done = true
	if ts > e.start && e.start > 0 {
		e.r.Duration = time.Duration((ts - e.start) * float64(time.Second))
	}
	delete(l.inflight, id)
}
