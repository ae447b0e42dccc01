package browserpool_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mafredri/cdp/protocol/network"
	"github.com/mafredri/cdp/protocol/storage"

	"github.com/browserpool/browserpool"
)

// swSite is a site whose page sets a localStorage token and registers a
// service worker that claims the origin at once. The worker answers every
// navigation itself, with a page whose script writes "sw-page-ran", when
// answer is true; else it passes the navigation on to the site (whose page
// script writes "page-ran"). The site records every request it gets.
type swSite struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string // guarded by mu
}

func newSWSite(t *testing.T, answer bool) *swSite {
	t.Helper()
	respond := `e.respondWith(fetch(e.request))`
	if answer {
		respond = `e.respondWith(new Response('<!doctype html><script>localStorage.setItem("sw-page-ran", "yes")</script>', {headers: {"Content-Type": "text/html"}}))`
	}
	s := &swSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.URL.Path)
		s.mu.Unlock()
		switch r.URL.Path {
		case "/sw.js":
			w.Header().Set("Content-Type", "text/javascript")
			w.Write([]byte(`self.addEventListener("install", e => self.skipWaiting());
self.addEventListener("activate", e => e.waitUntil(self.clients.claim()));
self.addEventListener("fetch", e => { if (e.request.mode === "navigate") ` + respond + ` });`))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<!doctype html><title>app</title><script>
				if (!localStorage.getItem("token")) localStorage.setItem("token", "t1"); else localStorage.setItem("page-ran", "yes");
				navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready).then(() => document.title = "ready");
			</script>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// requests returns the paths the site was asked for since the n-th request.
func (s *swSite) requests(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs[n:])
}

func (s *swSite) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// A service worker that controls an origin would answer the helper tab's
// navigation (or pass it to the site): the site's page and scripts ran,
// and the export carried the keys they set.
func TestAStorageStateOfAnOriginAServiceWorkerControlsRunsNoPageScriptAndAsksTheSiteNothing(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	for _, answer := range []bool{true, false} {
		site := newSWSite(t, answer)
		s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
		tab, err := s.OpenTab(ctx, site.URL+"/")
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the service worker to control the page", func() bool {
			var ready bool
			if err := tab.Evaluate(ctx, `document.title === "ready" && navigator.serviceWorker.controller !== null`, &ready); err != nil {
				t.Fatal(err)
			}
			return ready
		})
		before := site.count()
		st, err := s.StorageState(ctx, site.URL)
		if err != nil {
			t.Fatal(err)
		}
		in := browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: site.URL, LocalStorage: []browserpool.StorageItem{{Name: "imported", Value: "1"}}}}}
		if err := s.SetStorageState(ctx, in); err != nil {
			t.Fatal(err)
		}
		back, err := s.StorageState(ctx, site.URL)
		if err != nil {
			t.Fatal(err)
		}
		want := []browserpool.OriginStorage{{Origin: site.URL, LocalStorage: []browserpool.StorageItem{{Name: "token", Value: "t1"}}}}
		if diff := cmp.Diff(want, st.Origins); diff != "" {
			t.Errorf("worker answers navigations %v: exported origins (-want +got):\n%s", answer, diff)
		}
		want[0].LocalStorage = append(want[0].LocalStorage, browserpool.StorageItem{Name: "imported", Value: "1"})
		if diff := cmp.Diff(want, back.Origins); diff != "" {
			t.Errorf("worker answers navigations %v: origins after the import (-want +got):\n%s", answer, diff)
		}
		if got := site.requests(before); len(got) != 0 {
			t.Errorf("worker answers navigations %v: the site got requests %q during the export and import; want none", answer, strings.Join(got, " "))
		}
	}
}

// The helper tab that reads and writes an origin's localStorage was closed
// in the background after StorageState returned: Tabs listed it, and
// Session.Tab(ctx, "") could give it, to close under the caller.
func TestAfterAStorageStateTheSessionHasNoHelperTab(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	base := serve(t, map[string]string{"/": `<!doctype html><title>mine</title>`})
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	for i := range 3 {
		mine, err := s.OpenTab(ctx, base+"/")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StorageState(ctx, base, "http://127.0.0.1:8081"); err != nil {
			t.Fatal(err)
		}
		tabs, err := s.Tabs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tb := range tabs {
			ids = append(ids, tb.TabID)
		}
		if diff := cmp.Diff([]string{mine.ID()}, ids); diff != "" {
			t.Errorf("round %d: tabs right after StorageState (-want +got):\n%s", i, diff)
		}
		if err := s.SetStorageState(ctx, browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: base, LocalStorage: []browserpool.StorageItem{{Name: "k", Value: "v"}}}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseTab(ctx, mine.ID()); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Tab(ctx, ""); err == nil {
			t.Errorf("round %d: with its one tab closed, Session.Tab(\"\") right after SetStorageState gave tab %s; want ErrTabNotFound, not the helper tab", i, got.ID())
		} else if !errors.Is(err, browserpool.ErrTabNotFound) {
			t.Errorf("round %d: with its one tab closed, Session.Tab(\"\") right after SetStorageState = %v; want ErrTabNotFound", i, err)
		}
	}
}

// An import past an origin's localStorage quota failed as a protocol error
// ("reading …: Uncaught") after setting the cookies and the entries before
// the one that did not fit.
func TestAStorageStatePastAnOriginsLocalStorageQuotaIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	const a, b = "http://127.0.0.1:8081", "http://127.0.0.1:8082"
	held := strings.Repeat("h", 3<<20)
	if err := s.SetStorageState(ctx, browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: b, LocalStorage: []browserpool.StorageItem{{Name: "held", Value: held}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		b    []browserpool.StorageItem
		says string
	}{
		{"alone", []browserpool.StorageItem{{Name: "small", Value: "1"}, {Name: "big", Value: strings.Repeat("q", 5<<20)}},
			"origins[1] (" + b + ") has localStorage entries of 5242889 characters (keys and values): the browser keeps at most 5242880 per origin"},
		{"with what the origin holds", []browserpool.StorageItem{{Name: "small", Value: "1"}, {Name: "big", Value: strings.Repeat("q", 3<<20)}},
			"origins[1] (" + b + "): the origin's localStorage holds 3145732 characters of keys and values already, and with the state's 3145737 it would pass the browser's quota of 5242880 per origin"},
	} {
		err := s.SetStorageState(ctx, browserpool.StorageState{
			Cookies: []browserpool.Cookie{{Name: "sid", Value: "v", Domain: "example.com"}},
			Origins: []browserpool.OriginStorage{
				{Origin: a, LocalStorage: []browserpool.StorageItem{{Name: "a", Value: "1"}}},
				{Origin: b, LocalStorage: c.b},
			},
		})
		var e *browserpool.Error
		if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), c.says) || !strings.Contains(e.Hint, "nothing was changed") {
			t.Errorf("SetStorageState past the quota, %s: %v; want ErrInvalidStorageState saying %q, with a hint saying nothing was changed", c.what, err, c.says)
		}
		got, err := s.StorageState(ctx, a, b)
		if err != nil {
			t.Fatal(err)
		}
		want := browserpool.StorageState{Cookies: []browserpool.Cookie{}, Origins: []browserpool.OriginStorage{
			{Origin: a, LocalStorage: []browserpool.StorageItem{}},
			{Origin: b, LocalStorage: []browserpool.StorageItem{{Name: "held", Value: held}}},
		}}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("after the refused import, %s (-want +got):\n%s", c.what, diff)
		}
	}
}

// A cookie without a name (document.cookie = "x" makes one, which the
// browser keeps and StorageState exports) and one of an IPv6 host were
// refused by SetStorageState, though the browser takes both.
func TestANamelessCookieAndOneOfAnIPv6HostRoundTripThroughAStorageState(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	base := serve(t, map[string]string{"/": `<!doctype html><title>x</title>`})
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	tab, err := s.OpenTab(ctx, base+"/")
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Evaluate(ctx, `document.cookie = "just-a-value; max-age=3600"`, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCookies(ctx, browserpool.Cookie{Name: "v6", Value: "1", Domain: "[::1]", Path: "/", Expires: -1}); err != nil {
		t.Fatalf("SetCookies of a cookie of [::1]: %v", err)
	}
	var state browserpool.StorageState
	waitFor(t, "the page's cookie in the browser's store", func() bool {
		if state, err = s.StorageState(ctx); err != nil {
			t.Fatal(err)
		}
		return len(state.Cookies) == 2
	})
	if err := s.ClearCookies(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SetStorageState(ctx, state); err != nil {
		t.Fatalf("SetStorageState of the state StorageState exported: %v", err)
	}
	got, err := s.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	less := func(a, b browserpool.Cookie) bool { return a.Name < b.Name }
	if diff := cmp.Diff(state.Cookies, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("cookies after the round trip (-exported +imported):\n%s", diff)
	}
	if i := slices.IndexFunc(got, func(c browserpool.Cookie) bool { return c.Name == "" }); i < 0 || got[i].Value != "just-a-value" {
		t.Errorf("no nameless cookie just-a-value after the round trip: %+v", got)
	}
}

// The browser refuses these cookies with nothing but "Invalid cookie
// fields" (an ErrProtocol naming none), or keeps something other than what
// was asked: each is refused up front, saying why, and none is set.
func TestACookieTheBrowserRefusesWithoutSayingWhyIsRefusedUpFrontSayingWhy(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	ok := browserpool.Cookie{Name: "kept", Value: "v", Domain: "example.com"}
	for _, c := range []struct {
		cookie  browserpool.Cookie
		says    string
		refused bool // the browser itself refuses it (else it keeps something else)
	}{
		{browserpool.Cookie{Name: "", Value: "", Domain: "example.com"}, "cookies[1] has neither a name nor a value", true},
		{browserpool.Cookie{Name: "", Value: "a=b", Domain: "example.com"}, "cookies[1] has no name and a value with '='", true},
		{browserpool.Cookie{Name: "", Value: "__Host-x", Domain: "example.com", Secure: true}, "cookies[1] has no name and a value starting with __Secure-, __Host- or __Http-", true},
		{browserpool.Cookie{Name: " id", Value: "v", Domain: "example.com"}, `cookies[1] has name " id", with a leading or trailing space`, true},
		{browserpool.Cookie{Name: "id ", Value: "v", Domain: "example.com"}, `cookies[1] has name "id ", with a leading or trailing space`, true},
		{browserpool.Cookie{Name: "lead", Value: " v", Domain: "example.com"}, "cookies[1] (lead) has a value with a leading or trailing space", true},
		{browserpool.Cookie{Name: "trail", Value: "v ", Domain: "example.com"}, "cookies[1] (trail) has a value with a leading or trailing space", true},
		{browserpool.Cookie{Name: "", Value: "v ", Domain: "example.com"}, "cookies[1] (no name) has a value with a leading or trailing space", true},
		{browserpool.Cookie{Name: "p", Value: "v", Domain: "example.com", Path: "/a;b"}, `cookies[1] (p) has path "/a;b", with ';', which the browser refuses`, true},
		{browserpool.Cookie{Name: "v6", Value: "v", Domain: "[zz]"}, `cookies[1] (v6) has domain "[zz]", not a host name`, true},
		{browserpool.Cookie{Name: "__Http-id", Value: "v", Domain: "example.com", Secure: true}, "cookies[1] (__Http-id) has the __Http- prefix, which needs httpOnly true", true},
		{browserpool.Cookie{Name: "__http-id", Value: "v", Domain: "example.com", HTTPOnly: true}, "cookies[1] (__http-id) has the __http- prefix, which needs secure true", true},
		{browserpool.Cookie{Name: "__Host-Http-id", Value: "v", Domain: "example.com", Secure: true}, "cookies[1] (__Host-Http-id) has the __Host-Http- prefix, which needs httpOnly true", true},
		{browserpool.Cookie{Name: "pk", Value: "v", Domain: "example.com", PartitionKey: "https://example.com"}, "cookies[1] (pk) is partitioned (it has a partitionKey) without secure true", true},
		{browserpool.Cookie{Name: "pk", Value: "v", Domain: "example.com", Secure: true, PartitionKey: "example.com"}, `cookies[1] (pk) has partitionKey "example.com", not a site`, true},
		{browserpool.Cookie{Name: "pk", Value: "v", Domain: "example.com", Secure: true, PartitionKey: "https://"}, `cookies[1] (pk) has partitionKey "https://", not a site`, true},
		{browserpool.Cookie{Name: "pk", Value: "v", Domain: "example.com", Secure: true, PartitionKey: "https://example.com:8443/app"}, `cookies[1] (pk) has partitionKey "https://example.com:8443/app", not a site`, false},
		{browserpool.Cookie{Name: "pk", Value: "v", Domain: "example.com", Secure: true, PartitionCrossSite: true}, "cookies[1] (pk) has partitionCrossSite without a partitionKey", false},
	} {
		err := s.SetCookies(ctx, ok, c.cookie)
		if !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("SetCookies(%+v) = %v; want ErrInvalidStorageState saying %q", c.cookie, err, c.says)
		}
		if err := s.SetStorageState(ctx, browserpool.StorageState{Cookies: []browserpool.Cookie{ok, c.cookie}}); !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("SetStorageState with cookie %+v = %v; want ErrInvalidStorageState saying %q", c.cookie, err, c.says)
		}
		if c.refused {
			// The rule is the browser's: asked directly, it refuses.
			if err := s.Browser().Storage.SetCookies(ctx, storage.NewSetCookiesArgs([]network.CookieParam{cookieParam(c.cookie)})); err == nil || !strings.Contains(err.Error(), "Invalid cookie fields") {
				t.Errorf("the browser itself, asked to set %+v: %v; want Invalid cookie fields", c.cookie, err)
			}
		}
	}
	if got, err := s.Cookies(ctx); err != nil || len(got) != 0 {
		t.Errorf("after the refusals the browser has cookies %+v (%v); want none", got, err)
	}
}

// cookieParam is c as Storage.setCookies takes it.
func cookieParam(c browserpool.Cookie) network.CookieParam {
	path := c.Path
	if path == "" {
		path = "/"
	}
	p := network.CookieParam{Name: c.Name, Value: c.Value, Domain: &c.Domain, Path: &path, Secure: &c.Secure, HTTPOnly: &c.HTTPOnly}
	if c.PartitionKey != "" {
		p.PartitionKey = &network.CookiePartitionKey{TopLevelSite: c.PartitionKey, HasCrossSiteAncestor: c.PartitionCrossSite}
	}
	return p
}

// ParseStorageState took null for an empty state, and dropped keys it does
// not know: a misspelt "cookie" imported nothing, and Playwright's
// indexedDB was lost without a word.
func TestAStorageStateThatIsNullOrHasAnUnknownKeyIsRefusedSayingWhich(t *testing.T) {
	for _, c := range []struct{ in, says string }{
		{`null`, "the JSON is null, not a storage state object"},
		{` null `, "the JSON is null, not a storage state object"},
		{`{"cookie": [{"name": "sid", "value": "v", "domain": "example.com"}]}`, `the JSON has key "cookie", which a storage state does not have`},
		{`{"cookies": [{"name": "sid", "value": "v", "domain": "example.com", "expiry": 1767225600}]}`, `the JSON has key "expiry", which a storage state does not have`},
		{`{"origins": [{"origin": "https://example.com", "localStorage": [], "indexedDB": []}]}`, `the JSON has key "indexedDB", which a storage state does not have`},
		{`{"origins": [{"origin": "https://example.com", "localStorage": [{"name": "a", "value": "b", "x": 1}]}]}`, `the JSON has key "x", which a storage state does not have`},
	} {
		_, err := browserpool.ParseStorageState([]byte(c.in))
		var e *browserpool.Error
		if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), c.says) || e.Hint == "" {
			t.Errorf("ParseStorageState(%s) = %v; want ErrInvalidStorageState saying %q, with a hint", c.in, err, c.says)
		}
	}
	// The keys match whatever their case, as encoding/json matches them.
	st, err := browserpool.ParseStorageState([]byte(`{"Cookies": [{"Name": "sid", "value": "v", "domain": "example.com", "httponly": true}], "origins": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(browserpool.StorageState{Cookies: []browserpool.Cookie{{Name: "sid", Value: "v", Domain: "example.com", HTTPOnly: true}}}, st); diff != "" {
		t.Errorf("ParseStorageState (-want +got):\n%s", diff)
	}
}

// An origin without localStorage entries (no "localStorage" key, or an
// empty list) made SetStorageState fail with a script error: it wrote
// `for (const it of null)`.
func TestAStorageStateWithAnOriginWithoutEntriesImports(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	st, err := browserpool.ParseStorageState([]byte(`{"cookies": [{"name": "sid", "value": "v", "domain": "example.com"}], "origins": [{"origin": "http://127.0.0.1:8081"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetStorageState(ctx, st); err != nil {
		t.Fatalf("SetStorageState(%+v): %v", st, err)
	}
	got, err := s.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "sid" {
		t.Errorf("cookies after the import: %+v; want sid", got)
	}
}

// A write of megabytes was lost now and then (2 runs in 5 under -race):
// the helper tab closed before the browser had the entries.
func TestAStorageStateOfMegabytesIsKeptOnceSetStorageStateReturns(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	big := strings.Repeat("m", 3<<20)
	for i := range 4 {
		o := fmt.Sprintf("http://127.0.0.1:%d", 8090+i)
		if err := s.SetStorageState(ctx, browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: o, LocalStorage: []browserpool.StorageItem{{Name: "big", Value: big}}}}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.StorageState(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if items := got.Origins[0].LocalStorage; len(items) != 1 || items[0].Value != big {
			t.Fatalf("round %d: %s's localStorage holds %d entries after SetStorageState of one of 3 MiB returned", i, o, len(items))
		}
	}
}
