// Room: reading and writing an origin's localStorage for a storage state,
// in a short-lived helper target that loads an empty document of the
// origin (answered by the session itself, service workers bypassed) and
// is never among the session's tabs. No lock of its own; the helper's
// hiding goes through the session's mu.

package browserpool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf16"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/fetch"
	"github.com/mafredri/cdp/protocol/network"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/target"
)

// localStorageQuota is how much an origin's localStorage holds in
// Chromium: 5 Mi characters (10 MiB of UTF-16) of keys and values, as
// measured on Chromium 156.
const localStorageQuota = 5 << 20

// storageChars returns the characters (UTF-16 code units, as the browser
// counts them) items take in localStorage; a later entry of the same name
// replaces an earlier one.
func storageChars(items []StorageItem) int {
	last := make(map[string]string, len(items))
	for _, it := range items {
		last[it.Name] = it.Value
	}
	n := 0
	for k, v := range last {
		for _, r := range k + v {
			n += utf16.RuneLen(r) // -1 cannot be: a range yields no surrogate
		}
	}
	return n
}

// undoItem is a localStorage entry as it was before a write: Old is nil
// when there was none.
type undoItem struct {
	Name string  `json:"name"`
	Old  *string `json:"old"`
}

type originUndo struct {
	origin string
	items  []undoItem
}

// writeScript returns the helper page's script that writes the entries in
// the JSON array data. If a write throws, it puts back what it wrote and
// says why, with the characters the origin holds; else it returns the
// entries as they were, for undoWrites.
func writeScript(data string) string {
	return `(() => {
	const old = [];
	try {
		for (const it of ` + data + `) {
			old.push({name: it.name, old: localStorage.getItem(it.name)});
			localStorage.setItem(it.name, it.value);
		}
	} catch (e) {
		` + undoScript("old.reverse()") + `
		let held = 0;
		for (let i = 0; i < localStorage.length; i++) held += localStorage.key(i).length + localStorage.getItem(localStorage.key(i)).length;
		return {failed: String(e && e.name || e), held};
	}
	return {old};
})()`
}

// undoScript puts back the entries of the array expression list, in order.
func undoScript(list string) string {
	return `for (const o of ` + list + `) { if (o.old === null) localStorage.removeItem(o.name); else localStorage.setItem(o.name, o.old) }`
}

// undoWrites puts back the entries of the origins written before a
// failure, latest write undone first; best effort, on a context of its own
// when ctx has ended (bounded by originWait).
func (s *Session) undoWrites(ctx context.Context, done []originUndo) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), originWait)
	defer cancel()
	origins := make([]string, len(done))
	undo := make(map[string][]undoItem, len(done))
	for i, d := range done {
		origins[i] = d.origin
		undo[d.origin] = d.items
	}
	s.withOriginPages(ctx, origins, func(c *cdp.Client, origin string) error {
		items := slices.Clone(undo[origin])
		slices.Reverse(items)
		data, _ := json.Marshal(items)
		return s.evalInOrigin(ctx, "Session.SetStorageState", c, origin, `(() => { `+undoScript(string(data))+`; return true })()`, nil)
	})
}

// withOriginPages opens a helper target whose every request is answered
// with an empty HTML page, navigates it to each origin in turn and calls f
// there. Service workers are bypassed: one controlling the origin would
// answer the navigation itself (running its page's scripts) or pass it to
// the site; Network.setBypassServiceWorker holds only with the Network
// domain enabled (without, the worker still answered now and then). The
// target is left out of the session's tabs and closed before it returns.
func (s *Session) withOriginPages(ctx context.Context, origins []string, f func(*cdp.Client, string) error) error {
	id, err := s.createTarget(ctx, target.NewCreateTargetArgs("about:blank").SetBackground(true))
	if err != nil {
		return err
	}
	s.hideHelper(id)
	defer s.closeHelper(ctx, id)
	conn, sid, err := s.mux.Attach(ctx, id)
	if err != nil {
		return err
	}
	defer conn.Close()
	paused := make(chan fetch.RequestID, 64)
	err = s.mux.Tap(sid, func(method string, params json.RawMessage) {
		if method != "Fetch.requestPaused" {
			return
		}
		var ev struct {
			RequestID fetch.RequestID `json:"requestId"`
		}
		if json.Unmarshal(params, &ev) == nil {
			select {
			case paused <- ev.RequestID:
			default: // cannot happen with one navigation at a time
			}
		}
	})
	if err != nil {
		return err
	}
	c := cdp.NewClient(conn)
	if err := c.Network.Enable(ctx, network.NewEnableArgs()); err != nil {
		return err
	}
	if err := c.Network.SetBypassServiceWorker(ctx, network.NewSetBypassServiceWorkerArgs(true)); err != nil {
		return err
	}
	if err := c.Fetch.Enable(ctx, fetch.NewEnableArgs().SetPatterns([]fetch.RequestPattern{{}})); err != nil {
		return err
	}
	empty := []byte("<!doctype html><title></title>")
	headers := []fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html"}, {Name: "Cache-Control", Value: "no-store"}}
	for _, origin := range origins {
		s.hideHelper(id) // anew: CloseTab forgets what it hides after closingMemory
		navDone := make(chan error, 1)
		go func() {
			r, err := c.Page.Navigate(ctx, page.NewNavigateArgs(origin+"/"))
			if err == nil && r.ErrorText != nil {
				err = fmt.Errorf("cannot open %s: %s", origin, *r.ErrorText)
			}
			navDone <- err
		}()
	serve:
		for {
			select {
			case rid := <-paused:
				args := fetch.NewFulfillRequestArgs(rid, 200).SetResponseHeaders(headers).SetBody(empty)
				if err := c.Fetch.FulfillRequest(ctx, args); err != nil {
					<-navDone
					return err
				}
			case err := <-navDone:
				if err != nil {
					return err
				}
				break serve
			}
		}
		if err := f(c, origin); err != nil {
			return err
		}
	}
	// Closing the helper right after a write of megabytes lost the
	// write now and then (2 runs in 5 with a 3 MiB value, under load):
	// the page is closed before the browser has the entries. Leaving
	// the origin's document first, and hearing from the next one,
	// lost none in 10.
	if _, err := c.Page.Navigate(ctx, page.NewNavigateArgs("about:blank")); err != nil {
		return err
	}
	_, err = c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs("1"))
	return err
}

// hideHelper leaves the helper target id out of the session's tabs (Tabs,
// Session.Tab, the start-up tab OpenTab reuses) as CloseTab does for a tab
// it closed: the helper is never a tab of the caller's.
func (s *Session) hideHelper(id string) {
	s.mu.Lock()
	s.markClosingLocked(id)
	s.mu.Unlock()
}

// closeHelper closes the helper target id and waits, within helperClose,
// until the browser no longer lists it, so that a call made after
// StorageState or SetStorageState returns never meets it. When ctx has
// ended, or the browser is slow, the close goes on in the background
// (closeTarget).
func (s *Session) closeHelper(ctx context.Context, id string) {
	if ctx.Err() != nil {
		s.closeTarget(id)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, helperClose)
	defer cancel()
	if err := s.quiet.Invoke(ctx, "Target.closeTarget", target.NewCloseTargetArgs(target.ID(id)), nil); err != nil {
		s.closeTarget(id)
		return
	}
	for {
		var r target.GetTargetsReply
		if err := s.quiet.Invoke(ctx, "Target.getTargets", nil, &r); err != nil {
			return // hidden meanwhile (hideHelper); the browser drops it soon
		}
		if !slices.ContainsFunc(r.TargetInfos, func(t target.Info) bool { return string(t.TargetID) == id }) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// helperClose bounds closeHelper's wait for the browser to drop the helper.
const helperClose = 2 * time.Second

// evalInOrigin evaluates expr once the helper page's document is the
// origin's (Page.navigate answers at commit; the old document may still
// answer a moment), decoding the value into out. The page compares the
// origins in its own form (an internationalised host in punycode), and
// gives up after originWait.
func (s *Session) evalInOrigin(ctx context.Context, op string, c *cdp.Client, origin, expr string, out any) error {
	guarded := `(location.origin === new URL(` + jsString(origin) + `).origin) ? {v: (` + expr + `)} : null`
	caller := ctx
	ctx, cancel := context.WithTimeout(ctx, originWait)
	defer cancel()
	// The bound ran out, not the caller's context: a typed error, not
	// "the caller's context ended" (Session.wrap).
	gaveUp := func(err error) error {
		if ctx.Err() == nil || caller.Err() != nil {
			return err
		}
		e := newError(op, ErrTimeout, fmt.Sprintf("the helper page that reads and writes localStorage for %s did not show that origin within %v", origin, originWait))
		e.Session, e.Hint = s.id, "check that the origin is the scheme://host[:port] of a site the browser can open, then retry"
		return e
	}
	for {
		r, err := c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(guarded).SetReturnByValue(true))
		if err != nil {
			return gaveUp(err)
		}
		if d := r.ExceptionDetails; d != nil {
			what := d.Text
			if d.Exception != nil && d.Exception.Description != nil {
				what = *d.Exception.Description
			}
			return fmt.Errorf("the helper page's script for %s's localStorage threw: %s", origin, what)
		}
		if string(r.Result.Value) != "null" && len(r.Result.Value) > 0 {
			var v struct{ V json.RawMessage }
			if err := json.Unmarshal(r.Result.Value, &v); err != nil {
				return err
			}
			if out == nil {
				return nil
			}
			return json.Unmarshal(v.V, out)
		}
		select {
		case <-ctx.Done():
			return gaveUp(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// originWait bounds evalInOrigin's wait for the helper page's origin.
const originWait = 10 * time.Second

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
