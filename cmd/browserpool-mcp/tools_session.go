// Room: the session and tab tools. A client sees and touches only its own
// sessions (launch mode) or its own view of the shared browser (attach
// mode). No locks of its own.

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/browserpool/browserpool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TabsArgs are browser_tabs' arguments.
type TabsArgs struct {
	Session string `json:"session,omitempty" jsonschema:"Your browser session: a name or id from browser_session_list. Empty means your only session."`
	Action  string `json:"action" jsonschema:"list shows the tabs; new opens one (at url, else blank) and makes it active; select makes tab the active tab; close closes tab."`
	Tab     string `json:"tab,omitempty" jsonschema:"The tab id, for select and close (ids come from action list)."`
	URL     string `json:"url,omitempty" jsonschema:"For new: the http:// or https:// URL to open. Empty opens a blank tab."`
	Label   string `json:"label,omitempty" jsonschema:"For new in attach mode (-cdp-endpoint): a label you can pass as tab later, 1 to 64 letters, digits, '-' or '_'. Empty means a generated one."`
}

// SessionOpenArgs are browser_session_open's arguments.
type SessionOpenArgs struct {
	Name string `json:"name" jsonschema:"A name for the session, 1 to 64 letters, digits, '-' or '_'. Opening a name you already have reuses that session."`
	URL  string `json:"url,omitempty" jsonschema:"An http:// or https:// URL to load in the session's active tab."`
}

// SessionListArgs are browser_session_list's arguments (none).
type SessionListArgs struct{}

// SessionCloseArgs are browser_session_close's arguments.
type SessionCloseArgs struct {
	Session string `json:"session" jsonschema:"The session's name or id, from browser_session_list."`
}

func (s *Server) addSessionTools() {
	add(s, &mcp.Tool{
		Name:        "browser_tabs",
		Description: "List, open, select or close the tabs of your browser session, by tab id.",
		Annotations: annotations("Manage tabs", false, true, false, true),
	}, map[string][]any{"action": {"list", "new", "select", "close"}}, s.tabs)

	add(s, &mcp.Tool{
		Name:        "browser_session_open",
		Description: "Open a browser session of your own under a name: a separate browser with its own cookies and storage. Page tools open one called \"default\" on first use; call this only for a second, separate browser, which the server allows only when started with -max-sessions-per-client 2 or more (one per client by default: close yours first with browser_session_close). Opening a name you already have reuses it.",
		Annotations: annotations("Open a browser session", false, false, true, true),
	}, nil, func(ctx context.Context, c *toolCall, in SessionOpenArgs) (*mcp.CallToolResult, error) {
		if s.cfg.CDPEndpoint != "" {
			return nil, toolErrorf("the server is attached to a browser the user runs (-cdp-endpoint): there is one shared session and no other can be opened",
				"open a tab instead with browser_tabs action new")
		}
		if err := browserpool.ValidateID("session name", in.Name); err != nil {
			return nil, err
		}
		se, err := s.openSession(ctx, c.client, in.Name)
		if err != nil {
			return nil, err
		}
		ctx, cancel := s.pageCtx(ctx, c) // the browser is open: its page's bound
		defer cancel()
		if in.URL != "" {
			t, err := se.Tab(ctx, "")
			if err != nil {
				return nil, err
			}
			s.prepare(c.client, t)
			if _, err := t.Navigate(ctx, in.URL); err != nil {
				return nil, &doneThenError{fmt.Sprintf("session %q is open (id %s)", in.Name, se.ID()), err}
			}
		}
		list, err := s.tabList(ctx, se)
		if err != nil {
			return nil, err
		}
		return text("Session %q is open (id %s). Its tabs:\n%s", in.Name, se.ID(), list), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_session_list",
		Description: "List your browser sessions and their tabs. Other clients' sessions are never shown.",
		Annotations: annotations("List browser sessions", true, false, true, false),
	}, nil, func(ctx context.Context, c *toolCall, _ SessionListArgs) (*mcp.CallToolResult, error) {
		if s.cfg.CDPEndpoint != "" {
			v, err := s.view(ctx, c.client)
			if err != nil {
				return nil, err
			}
			list, err := s.attachedList(ctx, v)
			if err != nil {
				return nil, err
			}
			return text("One shared session %s (the user's browser at %s). Its tabs:\n%s", v.Session().ID(), s.cfg.CDPEndpoint, list), nil
		}
		names, sess := s.liveNames(c.client)
		if len(names) == 0 {
			return text("You have no browser session. Any page tool (browser_navigate) opens one, or call browser_session_open."), nil
		}
		var b strings.Builder
		for i, se := range sess {
			list, err := s.tabList(ctx, se)
			if err != nil {
				list = "  (tabs unavailable: " + describe(err) + ")"
			}
			where := ""
			if in := se.Info(); in.Fleet != "" {
				where = fmt.Sprintf(", leased from the %s fleet at %s", in.Fleet, in.Endpoint)
			}
			fmt.Fprintf(&b, "Session %q (id %s%s):\n%s\n", names[i], se.ID(), where, list)
		}
		return text("%s", strings.TrimSpace(b.String())), nil
	})

	add(s, &mcp.Tool{
		Name:        "browser_session_close",
		Description: "Close one of your browser sessions: its browser exits and its profile (cookies, storage) is deleted. In attach mode it only forgets your tab labels; the user's browser stays.",
		Annotations: annotations("Close a browser session", false, true, true, false),
	}, nil, func(ctx context.Context, c *toolCall, in SessionCloseArgs) (*mcp.CallToolResult, error) {
		if s.cfg.CDPEndpoint != "" {
			c.mu.Lock()
			v := c.view
			c.mu.Unlock()
			if v != nil {
				v.Forget()
			}
			return text("Forgot your tab labels and selected tab. The user's browser and its tabs stay open."), nil
		}
		if in.Session == "" {
			// session opens one when the client has none: a close has
			// nothing to close then.
			if names, _ := s.liveNames(c.client); len(names) == 0 {
				return nil, toolErrorf("you have no browser session to close", "nothing to do; a page tool such as browser_navigate opens one when you need it")
			}
		}
		_, name, err := s.session(ctx, c.client, in.Session)
		if err != nil {
			return nil, err
		}
		if err := s.tracker.CloseSession(ctx, c.id, name); err != nil {
			return nil, err
		}
		s.liveNames(c.client) // drop the name
		return text("Closed session %q: its browser exited and its profile was deleted.", name), nil
	})
}

// tabList lists a session's tabs, one per line.
func (s *Server) tabList(ctx context.Context, se *browserpool.Session) (string, error) {
	tabs, err := se.Tabs(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range tabs {
		mark := " "
		if t.Active {
			mark = "*"
		}
		if t.URL == "" && t.Title == "" {
			// A tab a page just opened, before its first page commits.
			fmt.Fprintf(&b, "%s tab %s: (no page yet: it is loading one)", mark, t.TabID)
		} else {
			fmt.Fprintf(&b, "%s tab %s: %q %s", mark, t.TabID, t.Title, t.URL)
		}
		if t.Crashed {
			b.WriteString(" (its page crashed and answers nothing: close it with browser_tabs action close, or call browser_navigate without tab, which replaces a crashed active tab by a new one)")
		}
		b.WriteString("\n")
	}
	if len(tabs) == 0 {
		b.WriteString("  (no tabs)\n")
	}
	b.WriteString("(* marks the active tab)")
	return b.String(), nil
}

// attachedList lists the tabs of the shared browser as the client sees them.
func (s *Server) attachedList(ctx context.Context, v *browserpool.AttachedView) (string, error) {
	tabs, err := v.Tabs(ctx)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range tabs {
		mark := " "
		if t.Selected {
			mark = "*"
		}
		label := ""
		if t.Label != "" {
			label = " label " + t.Label
		}
		fmt.Fprintf(&b, "%s tab %s%s: %q %s\n", mark, t.ID, label, t.Title, t.URL)
	}
	b.WriteString("(* marks your selected tab; page tools must pass tab)")
	return b.String(), nil
}

func (s *Server) tabs(ctx context.Context, c *toolCall, in TabsArgs) (*mcp.CallToolResult, error) {
	if s.cfg.CDPEndpoint != "" {
		return s.attachedTabs(ctx, c, in)
	}
	var tab string // the tab an action names: resolving it launches nothing
	switch in.Action {
	case "select", "close":
		if in.Tab == "" {
			return nil, toolErrorf("action "+in.Action+" needs a tab", "pass tab set to an id from browser_tabs action list")
		}
		tab = in.Tab
	case "list", "new":
	default:
		return nil, toolErrorf(fmt.Sprintf("unknown action %q", in.Action), "pass action list, new, select or close")
	}
	if err := s.ensureSession(ctx, c.client, Target{Session: in.Session, Tab: tab}); err != nil {
		return nil, err
	}
	ctx, cancel := s.pageCtx(ctx, c) // the browser is open: its page's bound
	defer cancel()
	var se *browserpool.Session
	if in.Tab != "" && (in.Action == "select" || in.Action == "close") {
		// Resolving the tab checks that it is one of the client's.
		t, _, err := s.tab(ctx, c.client, Target{Session: in.Session, Tab: in.Tab})
		if err != nil {
			return nil, err
		}
		se = t.Session()
	} else {
		var err error
		if se, _, err = s.session(ctx, c.client, in.Session); err != nil {
			return nil, err
		}
	}
	var done string
	switch in.Action {
	case "list":
	case "new":
		t, err := se.OpenTab(ctx, in.URL)
		if t != nil {
			s.prepare(c.client, t)
		}
		if err != nil {
			if t != nil {
				err = &doneThenError{fmt.Sprintf("opened a new tab %s, the active one now", t.ID()), err}
			}
			return nil, err
		}
		done = "Opened a new tab; it is the active one (marked *). "
	case "select", "close":
		var err error
		if in.Action == "select" {
			_, err = se.ActivateTab(ctx, in.Tab)
			done = "Selected: it is the active tab now (marked *). "
		} else {
			err = se.CloseTab(ctx, in.Tab)
			done = fmt.Sprintf("Closed tab %s. ", in.Tab)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, toolErrorf(fmt.Sprintf("unknown action %q", in.Action), "pass action list, new, select or close")
	}
	list, err := s.tabList(ctx, se)
	if err != nil {
		return nil, err
	}
	return text("%sTabs of session %s:\n%s", done, se.ID(), list), nil
}

func (s *Server) attachedTabs(ctx context.Context, c *toolCall, in TabsArgs) (*mcp.CallToolResult, error) {
	v, err := s.view(ctx, c.client)
	if err != nil {
		return nil, err
	}
	var done string
	switch in.Action {
	case "list":
	case "new":
		label := in.Label
		if label == "" {
			c.mu.Lock()
			c.labels++
			label = fmt.Sprintf("tab-%d", c.labels)
			c.mu.Unlock()
		}
		t, err := v.NewTab(ctx, label, in.URL)
		if err != nil {
			return nil, err
		}
		done = fmt.Sprintf("Opened a new tab with label %s and selected it (marked *). ", t.Label)
	case "select":
		if _, err := v.SelectTab(ctx, in.Tab); err != nil {
			return nil, err
		}
		done = "Selected: it is your selected tab now (marked *). "
	case "close":
		if err := v.CloseTab(ctx, in.Tab); err != nil {
			return nil, err
		}
		done = fmt.Sprintf("Closed tab %s. ", in.Tab)
	default:
		return nil, toolErrorf(fmt.Sprintf("unknown action %q", in.Action), "pass action list, new, select or close")
	}
	list, err := s.attachedList(ctx, v)
	if err != nil {
		return nil, err
	}
	return text("%sTabs of the shared browser:\n%s", done, list), nil
}
