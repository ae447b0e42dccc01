package browserpool_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/browserpool/browserpool"
)

// loginSite is a page that logs in with a cookie plus a localStorage token
// and an app page that says whether both are there.
func loginSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "alice-1", Path: "/", MaxAge: 3600, HttpOnly: true})
			w.Write([]byte(`<!doctype html><script>localStorage.setItem("token", "t-alice")</script><p>welcome</p>`))
		case "/app":
			who := "nobody"
			if c, err := r.Cookie("sid"); err == nil && c.Value == "alice-1" {
				who = "alice"
			}
			w.Write([]byte(`<!doctype html><p id=out></p><script>
				document.getElementById("out").textContent =
					localStorage.getItem("token") === "t-alice" ? "logged in as ` + who + `" : "logged out";
			</script>`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestStorageStateExportedFromOnePoolLogsInAnotherPool(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	srv := loginSite(t)

	a := newRealPool(t, browserpool.Config{})
	sa, err := a.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sa.OpenTab(ctx, srv.URL+"/login"); err != nil {
		t.Fatal(err)
	}
	state, err := sa.StorageState(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}

	b := newRealPool(t, browserpool.Config{})
	sb, err := b.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := sb.OpenTab(ctx, srv.URL+"/app")
	if err != nil {
		t.Fatal(err)
	}
	var before string
	if err := tab.Evaluate(ctx, `document.getElementById("out").textContent`, &before); err != nil || before != "logged out" {
		t.Fatalf("before the import the app shows %q (%v), want logged out", before, err)
	}
	parsed, err := browserpool.ParseStorageState(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.SetStorageState(ctx, parsed); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.Navigate(ctx, srv.URL+"/app"); err != nil {
		t.Fatal(err)
	}
	var after string
	if err := tab.Evaluate(ctx, `document.getElementById("out").textContent`, &after); err != nil {
		t.Fatal(err)
	}
	if after != "logged in as alice" {
		t.Errorf("after the import the app shows %q, want logged in as alice (state %s)", after, data)
	}
	back, err := sb.StorageState(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := []browserpool.OriginStorage{{Origin: srv.URL, LocalStorage: []browserpool.StorageItem{{Name: "token", Value: "t-alice"}}}}
	if diff := cmp.Diff(want, back.Origins); diff != "" {
		t.Errorf("re-exported origins (-want +got):\n%s", diff)
	}
}

func TestCookiesCanBeSetReadAndClearedForASession(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	p := newRealPool(t, browserpool.Config{})
	s, err := p.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := browserpool.Cookie{Name: "k", Value: "v", Domain: "127.0.0.1", Path: "/", Expires: float64(time.Now().Add(24 * time.Hour).Unix()), HTTPOnly: true, SameSite: "Lax"}
	if err := s.SetCookies(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]browserpool.Cookie{c}, got); diff != "" {
		t.Errorf("Cookies after SetCookies (-want +got):\n%s", diff)
	}
	if err := s.ClearCookies(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Cookies(ctx); err != nil || len(got) != 0 {
		t.Errorf("Cookies after ClearCookies = %v, %v; want none", got, err)
	}
	if err := s.SetCookies(ctx, browserpool.Cookie{Name: "nodomain"}); !errors.Is(err, browserpool.ErrInvalidStorageState) {
		t.Errorf("SetCookies without a domain: %v, want ErrInvalidStorageState", err)
	}
}

func TestACookieTheBrowserWouldRefuseIsRefusedSayingWhy(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	p := newRealPool(t, browserpool.Config{})
	s := mustOpen(t, ctx, p)
	ok := browserpool.Cookie{Name: "kept", Value: "v", Domain: "example.com"}
	for _, c := range []struct {
		cookie browserpool.Cookie
		says   string
	}{
		{browserpool.Cookie{Name: "__Secure-id", Value: "v", Domain: "example.com"}, "has the __Secure- prefix, which needs secure true"},
		{browserpool.Cookie{Name: "__host-id", Value: "v", Domain: "example.com"}, "has the __host- prefix, which needs secure true"},
		{browserpool.Cookie{Name: "__Host-id", Value: "v", Domain: ".example.com", Secure: true}, "has the __Host- prefix, which needs path / and a domain without a leading dot"},
		{browserpool.Cookie{Name: "__Host-id", Value: "v", Domain: "example.com", Secure: true, Path: "/app"}, "has the __Host- prefix, which needs path /"},
		{browserpool.Cookie{Name: "ab", Value: strings.Repeat("v", 4095), Domain: "example.com"}, "is 4097 bytes, name and value together: the browser keeps at most 4096"},
		{browserpool.Cookie{Name: "p", Value: "v", Domain: "example.com", Path: "app"}, `has path "app": a cookie's path starts with /`},
		{browserpool.Cookie{Name: "p", Value: "v", Domain: "example.com", Path: "/" + strings.Repeat("p", 1024)}, "has a path of 1025 bytes: the browser keeps at most 1024"},
	} {
		err := s.SetCookies(ctx, ok, c.cookie)
		if !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), "cookies[1] ("+c.cookie.Name+") "+c.says) {
			t.Errorf("SetCookies(%s) = %v, want ErrInvalidStorageState saying %q", c.cookie.Name, err, c.says)
		}
	}
	if got, err := s.Cookies(ctx); err != nil || len(got) != 0 {
		t.Errorf("after the refusals the browser has cookies %v (%v), want none: a refusal sets none", got, err)
	}
	// At the bounds, and with the prefixes' attributes, the browser keeps them.
	fine := []browserpool.Cookie{
		{Name: "ab", Value: strings.Repeat("v", 4094), Domain: "example.com", Path: "/", Expires: -1},
		{Name: "__Host-id", Value: "v", Domain: "example.com", Path: "/", Secure: true, Expires: -1},
		{Name: "__Secure-id", Value: "v", Domain: ".example.com", Path: "/" + strings.Repeat("p", 1023), Secure: true, Expires: -1},
	}
	if err := s.SetCookies(ctx, fine...); err != nil {
		t.Fatal(err)
	}
	got, err := s.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	less := func(a, b browserpool.Cookie) bool { return a.Name < b.Name }
	if diff := cmp.Diff(fine, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("cookies at the bounds (-want +got):\n%s", diff)
	}
}

func TestAMalformedStorageStateIsATypedErrorWithAHint(t *testing.T) {
	for _, in := range []string{
		``,
		`{`,
		`[]`,
		`{"cookies": "x"}`,
		`{"cookies": [{"value": "", "domain": "a"}]}`,
		`{"cookies": [{"name": "n", "value": "v"}]}`,
		`{"cookies": [{"name": "n", "domain": "a", "sameSite": "Sometimes"}]}`,
		`{"cookies": [{"name": "n", "domain": "a", "sameSite": "None"}]}`,
		`{"cookies": [{"name": "n", "domain": "https://example.com"}]}`,
		`{"cookies": [{"name": "n", "domain": "example.com:8080"}]}`,
		`{"cookies": [{"name": "n;x", "domain": "example.com"}]}`,
		`{"cookies": [{"name": "n", "value": "a;b", "domain": "example.com"}]}`,
		`{"origins": [{"origin": "example.com"}]}`,
		`{"origins": [{"origin": "https://example.com/path"}]}`,
		`{"origins": [{"origin": "file:///etc"}]}`,
		`{"origins": [{"origin": "http://127.0.0.1:99999"}]}`,
		`{"origins": [{"origin": "http://127.0.0.1:0"}]}`,
		`{"origins": [{"origin": "http://:80"}]}`,
		`{"origins": [{"origin": "http://example.com:"}]}`,
		`{"origins": [{"origin": "https://a", "localStorage": [{"value": "x"}]}]}`,
		`{} {}`,
	} {
		_, err := browserpool.ParseStorageState([]byte(in))
		var e *browserpool.Error
		if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidStorageState) || e.Hint == "" || !strings.HasPrefix(err.Error(), "browserpool: ") {
			t.Errorf("ParseStorageState(%q) = %v, want ErrInvalidStorageState with a hint", in, err)
		}
	}
	st, err := browserpool.ParseStorageState([]byte(`{"cookies": [], "origins": [{"origin": "http://127.0.0.1:8080", "localStorage": [{"name": "a", "value": "b"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(browserpool.StorageState{Cookies: []browserpool.Cookie{}, Origins: []browserpool.OriginStorage{{Origin: "http://127.0.0.1:8080", LocalStorage: []browserpool.StorageItem{{Name: "a", Value: "b"}}}}}, st); diff != "" {
		t.Errorf("ParseStorageState (-want +got):\n%s", diff)
	}
}

// An origin with its default port or an internationalised host is one the
// browser writes otherwise (no port; punycode): the export and the import
// waited for the helper page to become it for ever.
func TestStorageStateOfAnOriginTheBrowserWritesOtherwiseRoundTrips(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxWithin(t, time.Minute)
	s := mustOpen(t, ctx, p)
	for _, origin := range []string{"https://example.com:443", "http://bücher.example"} {
		in := browserpool.StorageState{Origins: []browserpool.OriginStorage{{Origin: origin, LocalStorage: []browserpool.StorageItem{{Name: "k", Value: "v"}}}}}
		if err := s.SetStorageState(ctx, in); err != nil {
			t.Fatalf("SetStorageState(%s): %v", origin, err)
		}
		out, err := s.StorageState(ctx, origin)
		if err != nil {
			t.Fatalf("StorageState(%s): %v", origin, err)
		}
		if len(out.Origins) != 1 || len(out.Origins[0].LocalStorage) != 1 || out.Origins[0].LocalStorage[0].Value != "v" {
			t.Errorf("StorageState(%s) = %+v; want k=v back", origin, out.Origins)
		}
	}
}

// A partitioned cookie (CHIPS) keeps its partition through a storage
// state: imported without it, it would be sent in every third-party
// context.
func TestAPartitionedCookieKeepsItsPartitionThroughAStorageState(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	base := serve(t, map[string]string{"/": `<!doctype html><title>Shop</title>shop`})
	host := strings.Replace(base, "127.0.0.1", "localhost", 1) // a secure context over http
	ctx := ctxWithin(t, time.Minute)
	a := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	tab, err := a.OpenTab(ctx, host+"/")
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Evaluate(ctx, `document.cookie = "p=1; Secure; Partitioned; SameSite=None; Path=/"`, nil); err != nil {
		t.Fatal(err)
	}
	partitioned := func(cs []browserpool.Cookie) string {
		for _, c := range cs {
			if c.Name == "p" {
				return c.PartitionKey
			}
		}
		return "(no cookie p)"
	}
	// The page's cookie reaches the browser's store a moment after the
	// script set it.
	var state browserpool.StorageState
	waitFor(t, "the page's cookie in the browser's store", func() bool {
		var err error
		if state, err = a.StorageState(ctx); err != nil {
			t.Fatal(err)
		}
		return partitioned(state.Cookies) != "(no cookie p)"
	})
	key := partitioned(state.Cookies)
	if key == "" || key == "(no cookie p)" {
		t.Fatalf("the exported cookie p has partition key %q; want the top-level site", key)
	}
	b := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	if err := b.SetStorageState(ctx, state); err != nil {
		t.Fatal(err)
	}
	got, err := b.Cookies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k := partitioned(got); k != key {
		t.Errorf("after the import cookie p has partition key %q; want %q", k, key)
	}
}

// An origin the browser cannot load (a port past 65535, no host) is
// refused before anything is set: the state used to set its cookies and
// the origins before it, then fail on the browser's "invalid URL".
func TestAStorageStateWithAnUnusableOriginChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	for _, bad := range []string{"http://127.0.0.1:99999", "http://:80", "http://example.com:"} {
		state := browserpool.StorageState{
			Cookies: []browserpool.Cookie{{Name: "sid", Value: "v", Domain: "example.com"}},
			Origins: []browserpool.OriginStorage{
				{Origin: "http://127.0.0.1:8081", LocalStorage: []browserpool.StorageItem{{Name: "a", Value: "1"}}},
				{Origin: bad, LocalStorage: []browserpool.StorageItem{{Name: "b", Value: "2"}}},
			},
		}
		if err := s.SetStorageState(ctx, state); !errors.Is(err, browserpool.ErrInvalidStorageState) || !strings.Contains(err.Error(), "origins[1]") {
			t.Errorf("SetStorageState with origin %q: %v; want ErrInvalidStorageState naming origins[1]", bad, err)
		}
		if _, err := s.StorageState(ctx, bad); err == nil || errors.Is(err, browserpool.ErrProtocol) || errors.Is(err, browserpool.ErrTimeout) {
			t.Errorf("StorageState(%q): %v; want it refused up front", bad, err)
		}
	}
	got, err := s.StorageState(ctx, "http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Cookies) != 0 || len(got.Origins) != 1 || len(got.Origins[0].LocalStorage) != 0 {
		t.Errorf("after the refused states the browser holds %+v; want nothing set", got)
	}
}
