package browserpool_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// cookieSteps sets, replaces, expires, exports, imports and clears
// cookies on s, and returns what each step read back.
func cookieSteps(t *testing.T, ctx context.Context, s *browserpool.Session) []string {
	t.Helper()
	var seen []string
	read := func(step string) {
		cs, err := s.Cookies(ctx)
		if err != nil {
			t.Fatalf("%s: Cookies: %v", step, err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, fmt.Sprintf("%s=%s domain=%s path=%s session=%v secure=%v httpOnly=%v sameSite=%q", c.Name, c.Value, c.Domain, c.Path, c.Expires < 0, c.Secure, c.HTTPOnly, c.SameSite))
		}
		slices.Sort(got)
		seen = append(seen, fmt.Sprintf("%s: %q", step, got))
	}
	must := func(step string, err error) {
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	later := float64(time.Now().Add(48 * time.Hour).Unix())
	must("set", s.SetCookies(ctx,
		browserpool.Cookie{Name: "sid", Value: "1", Domain: "example.com"},
		browserpool.Cookie{Name: "sid", Value: "in-x", Domain: "example.com", Path: "/x", Secure: true, HTTPOnly: true, SameSite: "Lax"},
		browserpool.Cookie{Name: "pref", Value: "dark", Domain: ".example.com", Expires: later}))
	read("set")
	must("replace and expire", s.SetCookies(ctx,
		browserpool.Cookie{Name: "sid", Value: "2", Domain: "example.com"},
		browserpool.Cookie{Name: "pref", Value: "gone", Domain: ".example.com", Expires: 1000}))
	read("replaced and expired")
	st, err := s.StorageState(ctx)
	must("export", err)
	must("clear", s.ClearCookies(ctx))
	read("cleared")
	must("import", s.SetStorageState(ctx, st))
	read("imported")
	return seen
}

// Code that keeps a login in cookies can be tested against the fake: its
// cookie jar answers Cookies, SetCookies, ClearCookies and a storage state
// of cookies as Chromium does.
func TestTheFakesCookieJarKeepsCookiesAsChromiumDoes(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	ctx := ctxT(t)
	real := cookieSteps(t, ctx, mustOpen(t, ctx, newRealPool(t, browserpool.Config{})))
	fake := cookieSteps(t, ctx, mustOpen(t, ctx, newFakePool(t, cdptest.NewLauncher(t), browserpool.Config{})))
	if diff := cmp.Diff(real, fake); diff != "" {
		t.Errorf("the fake's cookies differ from Chromium's (-chromium +fake):\n%s", diff)
	}
	want := []string{
		`set: ["pref=dark domain=.example.com path=/ session=false secure=false httpOnly=false sameSite=\"\"" "sid=1 domain=example.com path=/ session=true secure=false httpOnly=false sameSite=\"\"" "sid=in-x domain=example.com path=/x session=true secure=true httpOnly=true sameSite=\"Lax\""]`,
		`replaced and expired: ["sid=2 domain=example.com path=/ session=true secure=false httpOnly=false sameSite=\"\"" "sid=in-x domain=example.com path=/x session=true secure=true httpOnly=true sameSite=\"Lax\""]`,
		`cleared: []`,
		`imported: ["sid=2 domain=example.com path=/ session=true secure=false httpOnly=false sameSite=\"\"" "sid=in-x domain=example.com path=/x session=true secure=true httpOnly=true sameSite=\"Lax\""]`,
	}
	if diff := cmp.Diff(want, real); diff != "" {
		t.Errorf("Chromium's cookies, step by step (-want +got):\n%s", diff)
	}
}
