// Room: a session's cookies and storage state (cookies plus each origin's
// localStorage) as JSON, so a login moves between sessions, pools and
// fleets. No lock of its own: each call is a few CDP calls on the
// browser's connection, and reading or writing an origin's localStorage
// uses a short-lived helper target of its own.

package browserpool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mafredri/cdp"
	"github.com/mafredri/cdp/protocol/fetch"
	"github.com/mafredri/cdp/protocol/network"
	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/protocol/storage"
	"github.com/mafredri/cdp/protocol/target"
)

// ErrInvalidStorageState: a storage state (ParseStorageState,
// Session.SetStorageState) is not valid JSON of the documented shape, or a
// cookie or origin in it is unusable. The detail says which; nothing was
// changed.
var ErrInvalidStorageState = errors.New("invalid storage state")

// Cookie is one browser cookie, in the JSON shape of Playwright's
// storageState cookies.
type Cookie struct {
	Name   string `json:"name"`   // the cookie's name
	Value  string `json:"value"`  // its value
	Domain string `json:"domain"` // a leading dot matches subdomains
	Path   string `json:"path"`   // the path prefix it is sent for, "/" for all
	// Expires is the expiry in Unix seconds; -1 (or 0 when setting) is a
	// session cookie, which ends with the browser.
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`           // hidden from the page's scripts
	Secure   bool    `json:"secure"`             // sent over https only
	SameSite string  `json:"sameSite,omitempty"` // "Strict", "Lax", "None" or "" (the browser's default)
	// PartitionKey is a partitioned cookie's (CHIPS) top-level site, e.g.
	// "https://shop.example"; "" for an ordinary cookie, sent in every
	// context. PartitionCrossSite is the rest of its key: whether it was
	// set under a cross-site ancestor.
	PartitionKey       string `json:"partitionKey,omitempty"`
	PartitionCrossSite bool   `json:"partitionCrossSite,omitempty"`
}

// StorageItem is one localStorage entry.
type StorageItem struct {
	Name  string `json:"name"`  // the key
	Value string `json:"value"` // its value
}

// OriginStorage is the localStorage of one origin.
type OriginStorage struct {
	Origin       string        `json:"origin"`       // scheme://host[:port], no path
	LocalStorage []StorageItem `json:"localStorage"` // its entries
}

// StorageState is what a login consists of: cookies plus localStorage of
// given origins. Its JSON is Playwright's storageState shape:
//
//	{"cookies": [{"name": "sid", "value": "...", "domain": "example.com",
//	              "path": "/", "expires": 1767225600, "httpOnly": true,
//	              "secure": true, "sameSite": "Lax"}],
//	 "origins": [{"origin": "https://example.com",
//	              "localStorage": [{"name": "token", "value": "..."}]}]}
//
// Marshal it with encoding/json; read it back with ParseStorageState,
// which checks it.
type StorageState struct {
	Cookies []Cookie        `json:"cookies"` // every cookie of the browser context
	Origins []OriginStorage `json:"origins"` // localStorage, for the origins asked for
}

// ParseStorageState decodes and checks a storage state in the JSON shape
// documented at StorageState. Anything else is an ErrInvalidStorageState
// error saying what is wrong.
func ParseStorageState(data []byte) (StorageState, error) {
	var st StorageState
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&st); err != nil {
		e := newError("ParseStorageState", ErrInvalidStorageState, "not a storage state JSON object")
		e.Err = err
		return StorageState{}, e
	}
	if dec.More() {
		return StorageState{}, newError("ParseStorageState", ErrInvalidStorageState, "trailing data after the JSON object")
	}
	if err := st.check("ParseStorageState"); err != nil {
		return StorageState{}, err
	}
	return st, nil
}

func (st StorageState) check(op string) *Error {
	for i, c := range st.Cookies {
		switch {
		case c.Name == "":
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] has no name", i))
		case c.Domain == "":
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has no domain", i, c.Name))
		case c.SameSite != "" && c.SameSite != "Strict" && c.SameSite != "Lax" && c.SameSite != "None":
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has sameSite %q", i, c.Name, c.SameSite))
		case c.SameSite == "None" && !c.Secure:
			// Chromium drops such a cookie without an error.
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has sameSite None without secure: the browser would drop it", i, c.Name))
		case strings.ContainsAny(c.Domain, "/:@ ") || strings.Contains(c.Domain, ".."):
			// A scheme, port or path: the browser stores something else.
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has domain %q, not a host name (no scheme, port or path)", i, c.Name, echo(c.Domain)))
		case strings.ContainsFunc(c.Name, badCookieRune) || strings.ContainsRune(c.Name, '='):
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] has name %q, with a character a cookie name cannot hold", i, echo(c.Name)))
		case strings.ContainsFunc(c.Value, badCookieRune):
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has a value with a character a cookie value cannot hold (';' or a control character)", i, c.Name))
		case len(c.Name)+len(c.Value) > maxCookieBytes:
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) is %d bytes, name and value together: the browser keeps at most %d", i, c.Name, len(c.Name)+len(c.Value), maxCookieBytes))
		case c.Path != "" && !strings.HasPrefix(c.Path, "/"):
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has path %q: a cookie's path starts with /", i, c.Name, echo(c.Path)))
		case len(c.Path) > maxCookieAttr:
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has a path of %d bytes: the browser keeps at most %d", i, c.Name, len(c.Path), maxCookieAttr))
		}
		// The name's prefixes bind the cookie's attributes (RFC 6265bis),
		// whatever their case; the browser refuses it otherwise.
		lower := strings.ToLower(c.Name)
		switch {
		case (strings.HasPrefix(lower, "__secure-") || strings.HasPrefix(lower, "__host-")) && !c.Secure:
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has the %s prefix, which needs secure true", i, c.Name, c.Name[:strings.IndexByte(c.Name[2:], '-')+3]))
		case strings.HasPrefix(lower, "__host-") && (c.Path != "" && c.Path != "/" || strings.HasPrefix(c.Domain, ".")):
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] (%s) has the __Host- prefix, which needs path / and a domain without a leading dot (the host's own cookie)", i, c.Name))
		}
	}
	for i, o := range st.Origins {
		if _, err := checkOrigin(o.Origin); err != nil {
			e := newError(op, ErrInvalidStorageState, fmt.Sprintf("origins[%d]: %v", i, err))
			return e
		}
		for j, it := range o.LocalStorage {
			if it.Name == "" {
				return newError(op, ErrInvalidStorageState, fmt.Sprintf("origins[%d].localStorage[%d] has no name", i, j))
			}
		}
	}
	return nil
}

// The browser's bounds of a cookie: its name and value together, and an
// attribute (its path).
const (
	maxCookieBytes = 4096
	maxCookieAttr  = 1024
)

// badCookieRune reports a character no cookie name or value may hold.
func badCookieRune(r rune) bool { return r == ';' || r < ' ' || r == 0x7f }

// checkOrigin returns the origin in canonical form (scheme://host[:port]).
func checkOrigin(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("origin %q is not scheme://host[:port] with scheme http or https", o)
	}
	if u.Hostname() == "" || strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("origin %q has no host, or an empty port", o)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("origin %q has port %s, not one from 1 to 65535", o, p)
		}
	}
	host := strings.ToLower(u.Host)
	// The browser's form: no default port (http://a:80 is http://a).
	if p := u.Port(); p == "80" && u.Scheme == "http" || p == "443" && u.Scheme == "https" {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return u.Scheme + "://" + host, nil
}

// Cookies returns every cookie of the session's browser.
func (s *Session) Cookies(ctx context.Context) ([]Cookie, error) {
	const op = "Session.Cookies"
	end, err := s.begin(op, "")
	if err != nil {
		return nil, err
	}
	defer end()
	var r storage.GetCookiesReply
	if err := s.browserCall(ctx, "Storage.getCookies", storage.NewGetCookiesArgs(), &r); err != nil {
		return nil, s.wrap(op, "", err)
	}
	out := make([]Cookie, 0, len(r.Cookies))
	for _, c := range r.Cookies {
		exp := c.Expires
		if c.Session {
			exp = -1
		}
		ck := Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
			Expires: exp, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)}
		if k := c.PartitionKey; k != nil {
			ck.PartitionKey, ck.PartitionCrossSite = k.TopLevelSite, k.HasCrossSiteAncestor
		}
		out = append(out, ck)
	}
	return out, nil
}

// SetCookies sets cookies in the session's browser, replacing cookies of
// the same name, domain and path. Each needs a name and a domain; a
// missing path means "/". An unusable cookie is an ErrInvalidStorageState
// error and none is set.
func (s *Session) SetCookies(ctx context.Context, cookies ...Cookie) error {
	const op = "Session.SetCookies"
	if err := (StorageState{Cookies: cookies}).check(op); err != nil {
		err.Session = s.id
		return err
	}
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	return s.setCookies(ctx, op, cookies)
}

func (s *Session) setCookies(ctx context.Context, op string, cookies []Cookie) error {
	if len(cookies) == 0 {
		return nil
	}
	params := make([]network.CookieParam, 0, len(cookies))
	for _, c := range cookies {
		path := c.Path
		if path == "" {
			path = "/"
		}
		p := network.CookieParam{Name: c.Name, Value: c.Value, Domain: &c.Domain, Path: &path,
			Secure: &c.Secure, HTTPOnly: &c.HTTPOnly, SameSite: network.CookieSameSite(c.SameSite)}
		if c.Expires > 0 {
			p.Expires = network.TimeSinceEpoch(c.Expires)
		}
		if c.PartitionKey != "" {
			p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: c.PartitionKey, HasCrossSiteAncestor: c.PartitionCrossSite}
		}
		params = append(params, p)
	}
	if err := s.browserCall(ctx, "Storage.setCookies", storage.NewSetCookiesArgs(params), nil); err != nil {
		e := s.wrap(op, "", err)
		if be, ok := e.(*Error); ok && be.Class == ErrProtocol {
			be.Hint = "the browser refused a cookie: check its domain (no scheme, no port), path and sameSite (\"None\" needs secure)"
		}
		return e
	}
	return nil
}

// ClearCookies deletes every cookie of the session's browser.
func (s *Session) ClearCookies(ctx context.Context) error {
	const op = "Session.ClearCookies"
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	return s.wrap(op, "", s.browserCall(ctx, "Storage.clearCookies", storage.NewClearCookiesArgs(), nil))
}

// StorageState exports the session's cookies (all of them) and the
// localStorage of each given origin (scheme://host[:port]). Reading an
// origin's localStorage loads an empty document of that origin in a
// short-lived helper tab, answered by the session itself (no request
// reaches the site and no page script runs); the helper tab may show in
// Tabs for that moment.
func (s *Session) StorageState(ctx context.Context, origins ...string) (StorageState, error) {
	const op = "Session.StorageState"
	canon := make([]string, len(origins))
	for i, o := range origins {
		c, err := checkOrigin(o)
		if err != nil {
			e := newError(op, ErrInvalidArgument, err.Error())
			e.Session = s.id
			return StorageState{}, e
		}
		canon[i] = c
	}
	cookies, err := s.Cookies(ctx)
	if err != nil {
		return StorageState{}, retag(err, func(e *Error) { e.Op = op })
	}
	st := StorageState{Cookies: cookies, Origins: []OriginStorage{}}
	if len(canon) == 0 {
		return st, nil
	}
	end, err := s.begin(op, "")
	if err != nil {
		return StorageState{}, err
	}
	defer end()
	err = s.withOriginPages(ctx, canon, func(c *cdp.Client, origin string) error {
		var items []StorageItem
		if err := s.evalInOrigin(ctx, op, c, origin, `Array.from({length: localStorage.length}, (_, i) => ({name: localStorage.key(i), value: localStorage.getItem(localStorage.key(i))}))`, &items); err != nil {
			return err
		}
		st.Origins = append(st.Origins, OriginStorage{Origin: origin, LocalStorage: items})
		return nil
	})
	if err != nil {
		return StorageState{}, s.wrap(op, "", err)
	}
	return st, nil
}

// SetStorageState imports a storage state: it sets its cookies and writes
// each origin's localStorage entries (keeping other entries). The state is
// checked first: an unusable one is an ErrInvalidStorageState error and
// nothing is changed.
func (s *Session) SetStorageState(ctx context.Context, state StorageState) error {
	const op = "Session.SetStorageState"
	if err := state.check(op); err != nil {
		err.Session = s.id
		return err
	}
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	if err := s.setCookies(ctx, op, state.Cookies); err != nil {
		return err
	}
	var origins []string
	items := map[string][]StorageItem{}
	for _, o := range state.Origins {
		c, _ := checkOrigin(o.Origin)
		if _, seen := items[c]; !seen {
			origins = append(origins, c)
		}
		items[c] = append(items[c], o.LocalStorage...)
	}
	if len(origins) == 0 {
		return nil
	}
	err = s.withOriginPages(ctx, origins, func(c *cdp.Client, origin string) error {
		data, _ := json.Marshal(items[origin])
		return s.evalInOrigin(ctx, op, c, origin, `(() => { for (const it of `+string(data)+`) localStorage.setItem(it.name, it.value); return true })()`, nil)
	})
	return s.wrap(op, "", err)
}

// withOriginPages opens a helper target whose every request is answered
// with an empty HTML page, navigates it to each origin in turn and calls f
// there. The target is closed before it returns.
func (s *Session) withOriginPages(ctx context.Context, origins []string, f func(*cdp.Client, string) error) error {
	id, err := s.createTarget(ctx, target.NewCreateTargetArgs("about:blank").SetBackground(true))
	if err != nil {
		return err
	}
	defer s.closeTarget(id)
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
	if err := c.Fetch.Enable(ctx, fetch.NewEnableArgs().SetPatterns([]fetch.RequestPattern{{}})); err != nil {
		return err
	}
	empty := []byte("<!doctype html><title></title>")
	headers := []fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html"}, {Name: "Cache-Control", Value: "no-store"}}
	for _, origin := range origins {
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
	return nil
}

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
		if r.ExceptionDetails != nil {
			return fmt.Errorf("reading %s's localStorage: %s", origin, r.ExceptionDetails.Text)
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
