// Room: a client's browser sessions and tabs: which are alive, opening
// one (the tracker refuses to evict another client's recently used
// browser: Config.EvictGrace), resolving the session and tab a tool names. Server.mu and client.mu as
// in server.go; no CDP I/O runs under either.

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/browserpool/browserpool"
)

// liveNames returns the client's sessions that are still open, with their
// sessions, dropping the names of sessions that ended (idle reclaim, LRU,
// crash). It reads the pool's list, which touches no session: only the
// session a tool acts on counts as used (session and tab touch it), so one
// the client leaves idle is reclaimed while it works in another.
func (s *Server) liveNames(c *client) ([]string, []*browserpool.Session) {
	open := map[string]*browserpool.Session{}
	for _, se := range s.pool.Sessions() {
		if se.Err() == nil {
			open[se.ID()] = se
		}
	}
	c.mu.Lock()
	names := slices.Clone(c.names)
	byName := make(map[string]*browserpool.Session, len(c.ids))
	for id, n := range c.ids {
		if se := open[id]; se != nil {
			byName[n] = se
		}
	}
	c.mu.Unlock()
	var live []string
	var sess []*browserpool.Session
	for _, n := range names {
		if se := byName[n]; se != nil {
			live = append(live, n)
			sess = append(sess, se)
		}
	}
	if len(live) != len(names) {
		c.mu.Lock()
		c.names = slices.DeleteFunc(c.names, func(n string) bool { return !slices.Contains(live, n) })
		for id, n := range c.ids {
			if !slices.Contains(c.names, n) {
				delete(c.ids, id)
				// The pool's hooks come after its list: the close's
				// reason may still be on its way.
				if len(c.former) >= 16 {
					clear(c.former)
				}
				if c.former == nil {
					c.former = map[string]string{}
				}
				c.former[id] = n
			}
		}
		c.mu.Unlock()
	}
	return live, sess
}

// openSession opens (or reuses) the client's session called name and
// records it as the client's. The open runs on a goroutine of its own,
// bounded by the client's life rather than by this call: a call that ends
// while the browser starts (the client cancelled it, or its bound passed)
// returns at once, and the browser, once up, is still recorded as the
// client's. browser_session_list shows it, browser_session_close closes it
// and the next call reuses it; it never counts against the client's limit
// out of the client's sight.
func (s *Server) openSession(ctx context.Context, c *client, name string) (*browserpool.Session, error) {
	type opened struct {
		se  *browserpool.Session
		err error
	}
	done := make(chan opened, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, toolErrorf("the server is shutting down", "reconnect to a running browserpool-mcp server")
	}
	s.opens.Add(1) // under mu: Close waits for opens only once closed is set
	s.mu.Unlock()
	octx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(c.ctx, cancel)
	go func() {
		defer s.opens.Done()
		defer cancel()
		defer stop()
		se, err := s.tracker.Open(octx, c.id, name)
		if err == nil {
			se, err = s.adopt(octx, c, name, se)
		}
		done <- opened{se, err}
	}()
	select {
	case o := <-done:
		return o.se, o.err
	case <-ctx.Done():
		select {
		case o := <-done:
			return o.se, o.err
		default:
		}
		return nil, toolErrorf(fmt.Sprintf("the call ended (%v) while the browser of your session %q was starting; it keeps starting and stays yours", context.Cause(ctx), name),
			"call the tool again: it reuses that session once its browser is up (browser_session_list shows it then)")
	}
}

// adopt records se, just opened as the client's session name, as the
// client's; or closes it when the client left while it started.
func (s *Server) adopt(ctx context.Context, c *client, name string, se *browserpool.Session) (*browserpool.Session, error) {
	c.mu.Lock()
	ended := c.ended
	if !ended && !slices.Contains(c.names, name) {
		c.names = append(c.names, name)
	}
	if !ended {
		c.ids[se.ID()] = name
	}
	c.mu.Unlock()
	if ended {
		// The client left while its browser started: EndWorkflow may have
		// run before the tracker knew the session, so close it here.
		s.tracker.CloseSession(context.WithoutCancel(ctx), c.id, name)
		return nil, toolErrorf("the client disconnected while its browser started", "reconnect and call the tool again")
	}
	return se, nil
}

// session resolves the client's session named (by name or session id) want,
// by the library's rule applied to the client's own sessions only: an empty
// name means the only one, a new one when there is none, and an error
// listing them when there are several.
func (s *Server) session(ctx context.Context, c *client, want string) (*browserpool.Session, string, error) {
	names, sess := s.liveNames(c)
	if want != "" {
		for i, n := range names {
			if n == want || sess[i].ID() == want {
				s.tracker.Touch(c.id, n)
				return sess[i], n, nil
			}
		}
		return nil, "", toolErrorf(fmt.Sprintf("you have no browser session %q; your sessions: [%s]", want, strings.Join(names, ", ")),
			"call browser_session_list to see your sessions, or browser_session_open to open one")
	}
	switch len(names) {
	case 0:
		se, err := s.openSession(ctx, c, DefaultSessionName)
		return se, DefaultSessionName, err
	case 1:
		s.tracker.Touch(c.id, names[0])
		return sess[0], names[0], nil
	}
	return nil, "", toolErrorf(fmt.Sprintf("you have several browser sessions and named none: [%s]", strings.Join(names, ", ")),
		"pass session set to one of them (browser_session_list shows their tabs)")
}

// tab resolves the client's tab: the session (see session), then the tab by
// id, or the session's active tab. A tab id given without a session is
// looked for in each of the client's sessions.
func (s *Server) tab(ctx context.Context, c *client, tg Target) (*browserpool.Tab, string, error) {
	if tg.Session == "" && tg.Tab != "" {
		names, sess := s.liveNames(c)
		if len(names) == 0 {
			// No session, so no tab of the client's: opening one would
			// only launch a browser without the tab.
			return nil, "", toolErrorf(fmt.Sprintf("you have no browser session yet, so no tab %q", tg.Tab),
				"call the tool without tab (a page tool opens your browser), or browser_tabs with action new to open a tab")
		}
		if len(names) > 1 {
			for i, se := range sess {
				if t, err := se.Tab(ctx, tg.Tab); err == nil {
					s.tracker.Touch(c.id, names[i])
					s.prepare(c, t)
					s.watchNetwork(ctx, c, t)
					return t, names[i], nil
				}
			}
			return nil, "", tabNotFound(tg.Tab)
		}
	}
	se, name, err := s.session(ctx, c, tg.Session)
	if err != nil {
		return nil, "", err
	}
	t, err := se.Tab(ctx, tg.Tab)
	if err != nil {
		if errors.Is(err, browserpool.ErrTabNotInSession) || errors.Is(err, browserpool.ErrTabNotFound) && tg.Tab != "" {
			// Another client's tab must not resolve, nor say whose it is;
			// one of the client's own other sessions may say so.
			if other := s.sessionWithTab(ctx, c, se, tg.Tab); other != "" {
				return nil, "", toolErrorf(fmt.Sprintf("your session %q has no tab %q: it is a tab of your session %q", name, tg.Tab, other),
					fmt.Sprintf("pass session %q with that tab, or leave session empty (a tab id alone finds its session)", other))
			}
			return nil, "", tabNotFound(tg.Tab)
		}
		return nil, "", err
	}
	s.prepare(c, t)
	s.watchNetwork(ctx, c, t)
	return t, name, nil
}

// sessionWithTab returns the name of the client's session other than not
// that lists tab id, or "". Listing touches no page.
func (s *Server) sessionWithTab(ctx context.Context, c *client, not *browserpool.Session, id string) string {
	names, sess := s.liveNames(c)
	for i, se := range sess {
		if se == not {
			continue
		}
		tabs, err := se.Tabs(ctx)
		if err != nil {
			continue
		}
		for _, t := range tabs {
			if t.TabID == id {
				return names[i]
			}
		}
	}
	return ""
}

func tabNotFound(id string) error {
	return toolErrorf(fmt.Sprintf("none of your sessions has a tab %q", id),
		"call browser_tabs with action list to see your tabs' ids, or action new to open one")
}

// view returns the client's view of the attached browser, attaching on
// first use. Connectivity errors (Chrome not started with remote debugging,
// the "Allow remote debugging?" prompt pending) are returned as they are:
// their text says what the user must do.
func (s *Server) view(ctx context.Context, c *client) (*browserpool.AttachedView, error) {
	c.mu.Lock()
	v := c.view
	c.mu.Unlock()
	if v != nil && v.Session().Err() == nil {
		return v, nil
	}
	v, err := s.pool.AttachFor(ctx, s.cfg.CDPEndpoint, c.id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.view = v
	c.mu.Unlock()
	return v, nil
}

// withTab runs fn on the client's tab: in launch mode the tab tg names
// (see tab); in attach mode the named tab of the shared browser, holding its
// port lock. fn's context is bounded by the tool's page bound (see
// pageCtx), which starts once the client's browser is open: a launch has
// its own bound.
func (s *Server) withTab(ctx context.Context, c *toolCall, tg Target, fn func(ctx context.Context, t *browserpool.Tab) error) error {
	if s.cfg.CDPEndpoint == "" {
		if err := s.ensureSession(ctx, c.client, tg); err != nil {
			return err
		}
		pctx, cancel := s.pageCtx(ctx, c)
		defer cancel()
		t, _, err := s.tab(pctx, c.client, tg)
		if err != nil {
			return err
		}
		return fn(pctx, t)
	}
	v, err := s.view(ctx, c.client)
	if err != nil {
		return err
	}
	if tg.Tab == "" {
		next := "pass tab set to an id from browser_tabs action list, or open one with browser_tabs action new"
		if sel, ok := v.Selected(); ok {
			next = fmt.Sprintf("pass tab %q (your selected tab, %q %s), or another id from browser_tabs action list", sel.ID, sel.Title, sel.URL)
		}
		return toolErrorf("the browser is the user's and shared, so page tools must name their tab", next)
	}
	pctx, cancel := s.pageCtx(ctx, c)
	defer cancel()
	return v.Do(pctx, tg.Tab, func(t *browserpool.Tab) error {
		s.prepare(c.client, t)
		return fn(pctx, t)
	})
}

// ensureSession opens the client's default session when a page tool names
// no session and no tab, and the client has none, so that the launch is
// not counted against the tool's page bound. A tab named without a
// session is looked for among the client's sessions (tab): it never
// launches a browser.
func (s *Server) ensureSession(ctx context.Context, c *client, tg Target) error {
	if tg.Session != "" || tg.Tab != "" {
		return nil
	}
	if names, _ := s.liveNames(c); len(names) > 0 {
		return nil
	}
	_, _, err := s.session(ctx, c, "")
	return err
}
