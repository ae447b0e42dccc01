// Room: a session's tabs: listing, opening (the start-up tab reused once),
// resolving by id with the ownership check (P5), attaching once, the active
// tab, activating and closing. Session.mu (see session.go) guards the tab
// table, the order and the active tab; no CDP call is made with it held.

package browserpool

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/mafredri/cdp/protocol/target"

	"github.com/browserpool/browserpool/internal/cdpmux"
)

// TabInfo describes one tab.
type TabInfo struct {
	SessionID string // the tab's session
	TabID     string // the CDP target id
	Channel   string // always ChannelCDP
	URL       string // token-like query values read REDACTED, credentials are dropped
	// Title is the page's title. A page without one (a fresh about:blank
	// tab, a page with no <title>) gets its URL as above instead, as a
	// browser's tab strip shows it: Chromium itself reports either "" or the
	// raw URL for such a tab depending on timing, and a listing must neither
	// change between calls nor leak a token through the title.
	Title  string
	Active bool // the tab Session.Tab gives for an empty id: the last one opened or activated (ActivateTab)
	// Crashed: a call on the tab found its renderer crashed. The browser
	// still lists it, but it answers nothing: close it with
	// Session.CloseTab and open another.
	Crashed bool
}

// Tabs lists the session's page tabs, with which one is active.
func (s *Session) Tabs(ctx context.Context) ([]TabInfo, error) {
	const op = "Session.Tabs"
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return nil, s.wrap(op, "", err)
	}
	out := make([]TabInfo, 0, len(infos))
	s.mu.Lock()
	active := s.activeLocked(infos)
	for _, t := range infos {
		u := shownURL(t.URL)
		out = append(out, TabInfo{SessionID: s.id, TabID: string(t.TargetID), Channel: ChannelCDP,
			URL: u, Title: tabTitle(t.Title, t.URL, u), Active: string(t.TargetID) == active, Crashed: s.crashed[string(t.TargetID)]})
	}
	s.mu.Unlock()
	return out, nil
}

// tabTitle is the title a listing shows for a tab whose target reports
// title at rawURL (redacted: shown). A tab without a title of its own gets
// the redacted URL: Chromium reports "" or the raw URL (tokens and all,
// which a listing must not leak) for it, depending on timing.
func tabTitle(title, rawURL, shown string) string {
	if title == "" || title == rawURL || "http://"+title == rawURL || "https://"+title == rawURL {
		return shown
	}
	return title
}

// pageTargets returns the browser's page targets, less those CloseTab has
// closed; it forgets closed and crashed tabs the browser no longer lists.
func (s *Session) pageTargets(ctx context.Context) ([]target.Info, error) {
	// Not use: tabCount monitors with it.
	var reply target.GetTargetsReply
	if err := s.quiet.Invoke(ctx, "Target.getTargets", nil, &reply); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := make(map[string]bool, len(reply.TargetInfos))
	out := reply.TargetInfos[:0]
	for _, t := range reply.TargetInfos {
		listed[string(t.TargetID)] = true
		if _, closed := s.closing[string(t.TargetID)]; t.Type == "page" && !closed {
			out = append(out, t)
		}
	}
	for id := range s.closing {
		if !listed[id] {
			delete(s.closing, id)
		}
	}
	for id := range s.crashed {
		if !listed[id] {
			delete(s.crashed, id) // closed behind our back
		}
	}
	return out, nil
}

// activeLocked returns the active tab id given the current page targets:
// the tracked one if it still exists, else the most recently activated one
// that exists, else the first page target.
func (s *Session) activeLocked(infos []target.Info) string {
	exists := func(id string) bool {
		return slices.ContainsFunc(infos, func(t target.Info) bool { return string(t.TargetID) == id })
	}
	if s.active != "" && exists(s.active) {
		return s.active
	}
	for i := len(s.order) - 1; i >= 0; i-- {
		if exists(s.order[i]) {
			s.active = s.order[i]
			return s.active
		}
	}
	if len(infos) > 0 {
		s.active = string(infos[0].TargetID)
		return s.active
	}
	s.active = ""
	return ""
}

// OpenTab opens a new tab, makes it the active tab and, unless url is
// about:blank or empty, navigates it and waits for the load. Only http,
// https and about:blank are allowed. If the navigation fails (or ctx ends
// during it), OpenTab returns the tab, open, with the error: navigate it
// again, or close it with CloseTab.
//
// The first OpenTab on a session the pool launched uses the browser's
// start-up tab instead of opening a second one, when that tab is the only
// one, is still on about:blank and nothing has attached to it yet: Open
// followed by OpenTab(ctx, url) leaves exactly one tab.
//
// On a browser the pool launched (or leased), every tab opens in a window
// of its own, so that each is visible (document.visibilityState
// "visible"), as the page a person is looking at: a tab behind another in
// one window is hidden, and a hidden page runs no requestAnimationFrame,
// throttles its timers and loads no lazy images. Config.TabsShareWindow
// trades that for a faster open. On an attached browser, a person's, the
// tab opens where that browser puts it.
//
// OpenTab returns as soon as the tab is attached; the tab's page events
// are switched on meanwhile, and the first navigation or wait waits for
// them (no dialog or load event in between is lost). After a failed attach
// the new target is closed in the background (bounded), so OpenTab returns
// at the caller's deadline.
func (s *Session) OpenTab(ctx context.Context, url string) (*Tab, error) {
	const op = "Session.OpenTab"
	if url == "" {
		url = "about:blank"
	}
	if err := checkOpenURL(op, url); err != nil {
		err.Session = s.id
		return nil, err
	}
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	id, reused, err := s.startTab(ctx)
	if err != nil {
		return nil, s.wrap(op, "", err)
	}
	if id == "" {
		args := target.NewCreateTargetArgs("about:blank")
		if s.ours && !s.p.cfg.TabsShareWindow {
			// A window of its own, so that the tab is its window's front
			// tab: visible, as the page a person is looking at. A tab
			// opened behind another in one window is hidden, and a hidden
			// page runs no requestAnimationFrame, throttles its timers,
			// loads no lazy images and is served last. (An attached
			// browser is a person's: its tabs open where it puts them.)
			args.SetNewWindow(true)
		}
		if id, err = s.createTarget(ctx, args); err != nil {
			return nil, s.wrap(op, "", err)
		}
	}
	t, err := s.attach(ctx, id, !reused)
	if err != nil {
		if !reused {
			s.closeTarget(id)
		}
		return nil, s.wrap(op, id, err)
	}
	s.setActive(id)
	if url != "about:blank" {
		if _, err := t.navigateRecorded(ctx, op, url); err != nil {
			return t, err
		}
	}
	return t, nil
}

// startTab returns the id of the browser's start-up tab when the first
// OpenTab may use it (see OpenTab), else "". Only the first OpenTab or
// attach of a session the pool launched looks.
func (s *Session) startTab(ctx context.Context) (id string, ok bool, err error) {
	s.mu.Lock()
	first := !s.tabsTouched && s.ours
	s.tabsTouched = true
	s.mu.Unlock()
	if !first {
		return "", false, nil
	}
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return "", false, err
	}
	if len(infos) != 1 || infos[0].URL != "about:blank" || infos[0].Attached {
		return "", false, nil
	}
	return string(infos[0].TargetID), true, nil
}

// createTarget creates a target (Target.createTarget) and returns its id.
// If ctx ends before the browser answers, the call returns ctx's error at
// once, and the target the browser creates anyway is closed when its
// answer comes (closeTarget): nobody would ever see or close it.
func (s *Session) createTarget(ctx context.Context, args *target.CreateTargetArgs) (string, error) {
	params, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	type result struct {
		id  string
		err error
	}
	var (
		mu     sync.Mutex
		got    *result // guarded by mu; the answer, once it came
		gaveUp bool    // guarded by mu; the caller left first
	)
	ready := make(chan struct{})
	s.direct.Go([]cdpmux.Request{{Method: "Target.createTarget", Params: params}}, func(replies []json.RawMessage, errs []error) {
		r := result{err: errs[0]}
		if r.err == nil {
			var reply target.CreateTargetReply
			if r.err = json.Unmarshal(replies[0], &reply); r.err == nil {
				r.id = string(reply.TargetID)
			}
		}
		mu.Lock()
		left := gaveUp
		got = &r
		mu.Unlock()
		if left && r.id != "" {
			s.closeTarget(r.id)
		}
		close(ready)
	})
	select {
	case <-ready:
	case <-ctx.Done():
		mu.Lock()
		gaveUp = got == nil
		mu.Unlock()
		if gaveUp {
			return "", ctx.Err()
		}
	}
	return got.id, got.err
}

// background runs f on a goroutine of its own with the pool's context,
// joined by Pool.Close, unless the pool has closed (false).
func (s *Session) background(f func(ctx context.Context)) bool {
	p := s.p
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		f(p.ctx)
	}()
	return true
}

// closeTarget closes a target we failed to attach, in the background on
// the pool's context, bounded (2 s), ignoring errors: the caller, whose
// deadline may be what failed the attach, does not wait for it. It is not
// a use of the session.
func (s *Session) closeTarget(id string) {
	// Nothing once the pool closed: the browser goes away with it.
	s.background(func(base context.Context) {
		ctx, cancel := context.WithTimeout(base, 2*time.Second)
		defer cancel()
		s.quiet.Invoke(ctx, "Target.closeTarget", target.NewCloseTargetArgs(target.ID(id)), nil)
	})
}

// Tab returns the tab with the given id, attaching to it on first use; an
// empty id means the active tab. A tab id that is not one of this
// session's page targets does not resolve (ErrTabNotInSession when another
// session of the pool owns it, else ErrTabNotFound).
func (s *Session) Tab(ctx context.Context, id string) (*Tab, error) {
	return s.tab(ctx, "Session.Tab", id)
}

// tab is Tab for the operation op (Pool.ResolveTab names itself).
func (s *Session) tab(ctx context.Context, op, id string) (*Tab, error) {
	end, err := s.begin(op, id)
	if err != nil {
		return nil, err
	}
	defer end()
	return s.resolveTab(ctx, op, id)
}

func (s *Session) resolveTab(ctx context.Context, op, id string) (*Tab, error) {
	if id == "" && !s.ours {
		e := newError(op, ErrTabRequired, "an attached browser is shared: name the tab")
		e.Session = s.id
		e.Hint = "use Session.ForWorkflow(workflow) and name the tab by id or label; AttachedView.Tabs lists them"
		return nil, e
	}
	s.mu.Lock()
	known := s.tabs[id]
	if id == "" && s.active != "" {
		known = s.tabs[s.active]
	}
	s.mu.Unlock()
	if known != nil {
		// It may still be connecting (another caller's first use).
		select {
		case <-known.ready:
		case <-ctx.Done():
			return nil, s.wrap(op, known.id, ctx.Err())
		}
		if known.readyErr == nil {
			select {
			case <-known.direct.Done():
				// Closed (by its page, say) since: answered below as
				// the browser now lists the tabs.
				s.forget(known)
			default:
				return known, nil
			}
		}
	}

	infos, err := s.pageTargets(ctx)
	if err != nil {
		return nil, s.wrap(op, id, err)
	}
	if id == "" {
		s.mu.Lock()
		var dead []string
		infos = slices.DeleteFunc(infos, func(t target.Info) bool {
			if s.crashed[string(t.TargetID)] {
				dead = append(dead, string(t.TargetID))
				return true
			}
			return false
		})
		id = s.activeLocked(infos)
		s.mu.Unlock()
		if id == "" && len(dead) > 0 {
			return nil, s.crashedTab(op, dead[0])
		}
		if id == "" {
			e := newError(op, ErrTabNotFound, "the session has no open tab")
			e.Session, e.Hint = s.id, "open a tab with Session.OpenTab first"
			return nil, e
		}
	} else if !slices.ContainsFunc(infos, func(t target.Info) bool { return string(t.TargetID) == id }) {
		return nil, s.p.notInSession(op, s, id, infos)
	} else if s.isCrashed(id) {
		return nil, s.crashedTab(op, id)
	}
	t, err := s.attach(ctx, id, false)
	if err != nil {
		return nil, s.wrap(op, id, err)
	}
	return t, nil
}

// attach returns the Tab for target id, attaching a flattened session
// once. Concurrent first uses attach once. fresh says the target was just
// created on about:blank by us (no dialog can be open on it).
func (s *Session) attach(ctx context.Context, id string, fresh bool) (*Tab, error) {
	s.mu.Lock()
	if t := s.tabs[id]; t != nil {
		s.mu.Unlock()
		<-t.ready
		if t.readyErr != nil {
			return nil, t.readyErr
		}
		return t, nil
	}
	t := newTab(s, id, tabDeps{navigationTimeout: s.p.cfg.NavigationTimeout, log: s.p.log, events: s.p.events})
	if s.ours {
		t.deps.viewport = s.p.cfg.Viewport // never resize the tabs of a browser we attached to
	}
	s.tabs[id] = t
	s.tabsTouched = true
	s.mu.Unlock()

	err := t.connect(ctx, fresh)
	if err != nil {
		s.mu.Lock()
		if s.tabs[id] == t {
			delete(s.tabs, id)
		}
		s.mu.Unlock()
	}
	t.readyErr = err
	close(t.ready)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (s *Session) setActive(id string) {
	s.mu.Lock()
	s.active = id
	s.order = append(dropID(s.order, id), id)
	s.mu.Unlock()
}

// dropID removes id from order, in place. It is slices.DeleteFunc written
// out: the linker keeps one copy of a generic instantiation, with the
// first package in link order that uses it (net/http, for []string), so
// calling it touched a page of net/http's code. Code of our own stays
// among the pool's pages (issue 14's footprint row).
func dropID(order []string, id string) []string {
	kept := order[:0]
	for _, x := range order {
		if x != id {
			kept = append(kept, x)
		}
	}
	clear(order[len(kept):])
	return kept
}

// forget drops a tab from the tables (closed, crashed or detached).
func (s *Session) forget(t *Tab) {
	s.mu.Lock()
	if s.tabs[t.id] == t {
		delete(s.tabs, t.id)
		s.gone = append(s.gone, goneTab{id: t.id, byCall: t.closedByCall.Load() > 0})
		if len(s.gone) > goneMemory {
			s.gone = slices.Delete(s.gone, 0, len(s.gone)-goneMemory)
		}
	}
	s.order = dropID(s.order, t.id)
	if s.active == t.id {
		s.active = ""
		if n := len(s.order); n > 0 {
			s.active = s.order[n-1]
		}
	}
	s.mu.Unlock()
}

// ActivateTab makes the tab active (and brings it to the front in a
// headed browser). The tab must belong to this session.
func (s *Session) ActivateTab(ctx context.Context, id string) (*Tab, error) {
	const op = "Session.ActivateTab"
	end, err := s.begin(op, id)
	if err != nil {
		return nil, err
	}
	defer end()
	if id == "" {
		e := newError(op, ErrTabNotFound, "no tab id given")
		e.Session = s.id
		return nil, e
	}
	t, err := s.resolveTab(ctx, op, id)
	if err != nil {
		return nil, err
	}
	if err := s.browserCall(ctx, "Target.activateTarget", target.NewActivateTargetArgs(target.ID(id)), nil); err != nil {
		return nil, s.wrap(op, id, err)
	}
	s.setActive(id)
	return t, nil
}

// markClosingLocked leaves target id out of the session's tabs from now
// on (closing), and forgets the marks older than closingMemory. s.mu is
// held.
func (s *Session) markClosingLocked(id string) {
	now := time.Now()
	for old, at := range s.closing {
		if now.Sub(at) > closingMemory {
			delete(s.closing, old) // gone long since: nobody listed tabs meanwhile
		}
	}
	s.closing[id] = now
}

// closingMemory is how long Tabs leaves out a tab CloseTab closed that the
// browser still lists: it stops listing it within a moment.
const closingMemory = 10 * time.Second

// CloseTab closes the tab's target. The tab must belong to this session.
// If it was the active tab, the previously active one becomes active.
func (s *Session) CloseTab(ctx context.Context, id string) error {
	const op = "Session.CloseTab"
	end, err := s.begin(op, id)
	if err != nil {
		return err
	}
	defer end()
	if id == "" {
		e := newError(op, ErrTabNotFound, "no tab id given")
		e.Session = s.id
		return e
	}
	// A crashed tab is closed without attaching to it: it would answer
	// nothing (not even the check for an open dialog).
	var t *Tab
	if !s.isCrashed(id) {
		if t, err = s.resolveTab(ctx, op, id); err != nil {
			if !s.isCrashed(id) {
				return err
			}
			t = nil // its crash was noted meanwhile (noteCrashed, on the reader)
		}
	}
	if t != nil {
		t.closedByCall.Add(1) // before the target goes: a click in flight sees it
	}
	if err := s.browserCall(ctx, "Target.closeTarget", target.NewCloseTargetArgs(target.ID(id)), nil); err != nil {
		if t != nil {
			t.closedByCall.Add(-1) // another CloseTab's mark stays
		}
		return s.wrap(op, id, err)
	}
	// Target.closeTarget answers before the target is gone: until the
	// browser stops listing it, Tabs leaves it out (see closing).
	s.mu.Lock()
	s.markClosingLocked(id)
	delete(s.crashed, id)
	s.mu.Unlock()
	if t != nil {
		s.forget(t)
		t.direct.Close()
	}
	return nil
}
