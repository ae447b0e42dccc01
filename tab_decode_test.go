package browserpool_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// A value that does not fit the Go target is ErrDecode, never ErrProtocol
// (the browser raised nothing), and its hint names both types (issue 20
// item 6).
func TestEvaluateDecodeErrorsHaveTheirOwnClassAndNameBothTypes(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	// The fake refuses expressions it does not know; this one is scripted
	// to answer JavaScript's undefined, as Chromium does for a missing
	// property.
	l.Browsers()[0].Handle("Runtime.evaluate", func(c *cdptest.Call) (any, error) {
		var args struct {
			Expression string `json:"expression"`
		}
		if err := json.Unmarshal(c.Params, &args); err != nil || args.Expression != "undefinedThing" {
			return nil, cdptest.ErrNotHandled
		}
		return map[string]any{"result": map[string]any{"type": "undefined"}}, nil
	})

	t.Run("a string into an int", func(t *testing.T) {
		var n int
		err := tab.Evaluate(ctx, "'abc'", &n)
		checkDecodeErr(t, err, "JavaScript string", "*int")
		var e *browserpool.Error
		if errors.As(err, &e) && (!strings.Contains(e.Hint, "*string") || e.Session == "" || e.Tab != tab.ID()) {
			t.Errorf("hint %q should suggest *string; session %q tab %q", e.Hint, e.Session, e.Tab)
		}
	})
	t.Run("undefined into an int says so", func(t *testing.T) {
		n := 7
		err := tab.Evaluate(ctx, "undefinedThing", &n)
		checkDecodeErr(t, err, "undefined", "*int")
		var e *browserpool.Error
		if !errors.As(err, &e) || !strings.Contains(e.Hint, "pass a **int") {
			t.Errorf("hint %q; want it to say pass a **int (a pointer to what was passed)", e.Hint)
		}
		if n != 7 {
			t.Errorf("n = %d after a failed decode, want it unchanged (7)", n)
		}
	})
	t.Run("undefined into a pointer or any leaves it nil", func(t *testing.T) {
		s := "x"
		ps, a := &s, any(1)
		if err := tab.Evaluate(ctx, "undefinedThing", &ps); err != nil || ps != nil {
			t.Errorf("into **string: %v, %v; want nil, nil", err, ps)
		}
		if err := tab.Evaluate(ctx, "undefinedThing", &a); err != nil || a != nil {
			t.Errorf("into *any: %v, %v; want nil, nil", err, a)
		}
	})
	t.Run("NaN has no JSON form", func(t *testing.T) {
		var f float64
		checkDecodeErr(t, tab.Evaluate(ctx, "0/0", &f), "NaN", "*float64")
	})
	t.Run("a value that fits still decodes", func(t *testing.T) {
		var n int
		var s string
		if err := tab.Evaluate(ctx, "6*7", &n); err != nil || n != 42 {
			t.Errorf("6*7 into *int: %v, %d", err, n)
		}
		if err := tab.Evaluate(ctx, "'a'+'b'", &s); err != nil || s != "ab" {
			t.Errorf("'a'+'b' into *string: %v, %q", err, s)
		}
	})
	t.Run("a non-pointer target is an invalid argument", func(t *testing.T) {
		var n int
		err := tab.Evaluate(ctx, "1", n)
		if !errors.Is(err, browserpool.ErrInvalidArgument) || !strings.Contains(err.Error(), "non-nil pointer") {
			t.Errorf("Evaluate into an int (not a pointer): %v, want ErrInvalidArgument naming the pointer", err)
		}
	})
}

func checkDecodeErr(t *testing.T, err error, js, goType string) {
	t.Helper()
	if !errors.Is(err, browserpool.ErrDecode) {
		t.Fatalf("error = %v, want ErrDecode", err)
	}
	if errors.Is(err, browserpool.ErrProtocol) {
		t.Errorf("errors.Is(err, ErrProtocol) is true for a decode error: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, js) || !strings.Contains(msg, goType) {
		t.Errorf("error %q should name the JavaScript value (%s) and the Go type (%s)", msg, js, goType)
	}
}

func TestEvaluateDecodeErrorsOnRealChromium(t *testing.T) {
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	var n int
	checkDecodeErr(t, tab.Evaluate(ctx, "'abc'", &n), "JavaScript string", "*int")
	var st struct{ A int }
	checkDecodeErr(t, tab.Evaluate(ctx, "void 0", &st), "undefined", "*struct")
	var list []int
	checkDecodeErr(t, tab.Evaluate(ctx, "({a: 1})", &list), "JavaScript object", "*[]int")
	checkDecodeErr(t, tab.Evaluate(ctx, "Promise.resolve(12n)", &n), "12n", "*int")
	var m map[string]int
	if err := tab.Evaluate(ctx, "({a: 1})", &m); err != nil || m["a"] != 1 {
		t.Errorf("({a: 1}) into a map: %v, %v", err, m)
	}
	if err := tab.Evaluate(ctx, "null", &list); err != nil || list != nil {
		t.Errorf("null into a slice: %v, %v", err, list)
	}
}

// Evaluate decodes the commonest values without encoding/json's reflection
// (the reply scan and decodeScalar); on real Chromium's replies the result
// is what json.Unmarshal gives for the same value, which the test reads
// raw (into a json.RawMessage) and decodes itself.
func TestEvaluateDecodesTheCommonestValuesAsJSONUnmarshalDoesOnRealChromium(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, p))
	for _, c := range []struct {
		expr string
		out  func() any
	}{
		{"6*7", func() any { return new(int) }},
		{"-(2**53)", func() any { return new(int64) }},
		{"0.1+0.2", func() any { return new(float64) }},
		{"-0", func() any { return new(float64) }},
		{"1e300", func() any { return new(float64) }},
		{"'plain text'", func() any { return new(string) }},
		{`'a "quoted" \\ back\\slash, é, \n\t and \u2028'`, func() any { return new(string) }},
		{`'\ud800 alone'`, func() any { return new(string) }},
		{"''", func() any { return new(string) }},
		{"1 < 2", func() any { return new(bool) }},
		{"1 > 2", func() any { return new(bool) }},
		{`({n: 1.5, s: "x\"y", b: true, l: [1, "two"], z: null})`, func() any { return new(any) }},
	} {
		got := c.out()
		if err := tab.Evaluate(ctx, c.expr, got); err != nil {
			t.Errorf("Evaluate(%s, %T): %v", c.expr, got, err)
			continue
		}
		var raw json.RawMessage
		if err := tab.Evaluate(ctx, c.expr, &raw); err != nil {
			t.Errorf("Evaluate(%s, *json.RawMessage): %v", c.expr, err)
			continue
		}
		want := c.out()
		if err := json.Unmarshal(raw, want); err != nil {
			t.Errorf("json.Unmarshal(%s) of %s: %v", raw, c.expr, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Evaluate(%s, %T) (-json.Unmarshal of %s +Evaluate):\n%s", c.expr, got, raw, diff)
		}
		if c.expr == "-0" && !math.Signbit(*got.(*float64)) {
			t.Errorf("Evaluate(-0, *float64) = %v, want negative zero", *got.(*float64))
		}
	}
}
