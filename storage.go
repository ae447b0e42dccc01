// Room: a session's cookies and storage state (cookies plus each origin's
// localStorage) as JSON, so a login moves between sessions, pools and
// fleets. No lock of its own: each call is a few CDP calls on the
// browser's connection, and reading or writing an origin's localStorage
// uses a short-lived helper target of its own.

package browserpool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mafredri/cdp"
)

// ErrInvalidStorageState: a storage state (ParseStorageState,
// Session.SetStorageState, Session.SetCookies) is not valid JSON of the
// documented shape, a cookie or origin in it is unusable (one the browser
// would refuse or keep otherwise), or an origin's entries would not fit in
// its localStorage. The detail says which; nothing was changed.
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
// documented at StorageState. Anything else (null, a key the shape does
// not have, such as Playwright's indexedDB) is an ErrInvalidStorageState
// error saying what is wrong.
func ParseStorageState(data []byte) (StorageState, error) {
	const op = "ParseStorageState"
	var st StorageState
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			e := newError(op, ErrInvalidStorageState, fmt.Sprintf("the JSON has key %s, which a storage state does not have", echo(key)))
			e.Hint = "drop that key (IndexedDB, for one, is not imported); " + hints[ErrInvalidStorageState]
			return StorageState{}, e
		}
		e := newError(op, ErrInvalidStorageState, "not a storage state JSON object")
		e.Err = err
		return StorageState{}, e
	}
	if string(bytes.TrimSpace(data)) == "null" {
		return StorageState{}, newError(op, ErrInvalidStorageState, "the JSON is null, not a storage state object")
	}
	if dec.More() {
		return StorageState{}, newError(op, ErrInvalidStorageState, "trailing data after the JSON object")
	}
	if err := st.check(op); err != nil {
		return StorageState{}, err
	}
	return st, nil
}

func (st StorageState) check(op string) *Error {
	for i, c := range st.Cookies {
		if why := cookieProblem(c); why != "" {
			return newError(op, ErrInvalidStorageState, fmt.Sprintf("cookies[%d] %s", i, why))
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

// StorageState exports the session's cookies (all of them) and the
// localStorage of each given origin (scheme://host[:port]). Reading an
// origin's localStorage loads an empty document of that origin in a
// short-lived helper tab, answered by the session itself: no request
// reaches the site, and no page script runs, not even a service worker
// that controls the origin. The helper tab is never among the session's
// tabs (Tabs, Session.Tab), and is closed before StorageState returns.
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

// SetStorageState imports a storage state: it writes each origin's
// localStorage entries (keeping other entries), then sets its cookies.
// The state is checked first: an unusable one, or one whose entries would
// not fit in an origin's localStorage (the browser keeps at most
// 5,242,880 characters, 10 MiB, of keys and values per origin, counting
// what the origin holds already), is an ErrInvalidStorageState error, and
// nothing is changed: entries written before a failure are put back as
// they were. Writing an origin's entries loads an empty document of that
// origin in a short-lived helper tab, as StorageState does.
func (s *Session) SetStorageState(ctx context.Context, state StorageState) error {
	const op = "Session.SetStorageState"
	if err := state.check(op); err != nil {
		err.Session = s.id
		return err
	}
	var origins []string
	items := map[string][]StorageItem{}
	index := map[string]int{} // an origin's first index in state.Origins
	for i, o := range state.Origins {
		c, _ := checkOrigin(o.Origin)
		if _, seen := index[c]; !seen {
			index[c] = i
		}
		if len(o.LocalStorage) > 0 && items[c] == nil {
			origins = append(origins, c)
		}
		items[c] = append(items[c], o.LocalStorage...)
	}
	for _, o := range origins {
		if n := storageChars(items[o]); n > localStorageQuota {
			e := newError(op, ErrInvalidStorageState, fmt.Sprintf("origins[%d] (%s) has localStorage entries of %d characters (keys and values): the browser keeps at most %d per origin", index[o], o, n, localStorageQuota))
			e.Session, e.Hint = s.id, "shorten or drop that origin's entries; nothing was changed"
			return e
		}
	}
	end, err := s.begin(op, "")
	if err != nil {
		return err
	}
	defer end()
	if len(origins) == 0 { // cookies only: no helper tab
		return s.setCookies(ctx, op, state.Cookies)
	}
	var done []originUndo // the origins written, with what to put back
	err = s.withOriginPages(ctx, origins, func(c *cdp.Client, origin string) error {
		data, _ := json.Marshal(items[origin])
		var r struct {
			Old    []undoItem
			Failed string // the exception's name when a write threw
			Held   int    // then: the characters the origin holds
		}
		if err := s.evalInOrigin(ctx, op, c, origin, writeScript(string(data)), &r); err != nil {
			return err
		}
		if r.Failed == "QuotaExceededError" {
			e := newError(op, ErrInvalidStorageState, fmt.Sprintf("origins[%d] (%s): the origin's localStorage holds %d characters of keys and values already, and with the state's %d it would pass the browser's quota of %d per origin", index[origin], origin, r.Held, storageChars(items[origin]), localStorageQuota))
			e.Session, e.Hint = s.id, "drop or shorten that origin's entries in the state, or remove entries the origin holds (localStorage.removeItem in a tab on it), then retry; nothing was changed"
			return e
		}
		if r.Failed != "" {
			return fmt.Errorf("writing %s's localStorage: the page refused it (%s)", origin, r.Failed)
		}
		done = append(done, originUndo{origin, r.Old})
		return nil
	})
	if err == nil {
		err = s.setCookies(ctx, op, state.Cookies)
	}
	if err != nil && len(done) > 0 {
		s.undoWrites(ctx, done)
	}
	return s.wrap(op, "", err)
}
