package browserpool_test

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
	"github.com/browserpool/browserpool/internal/pagejs"
)

// decoded is what a call left in its out value and the words of its
// error, for comparing Tab.Evaluate with Tab.EvaluateOn.
type decoded struct {
	Out                  any
	Class, Detail, Hint  string
	NegativeZeroReturned bool
}

// decodeResult reads out (a pointer) and err into a decoded.
func decodeResult(out any, err error) decoded {
	var d decoded
	switch p := out.(type) {
	case *float64:
		d.Out, d.NegativeZeroReturned = *p, *p == 0 && math.Signbit(*p)
	case *any:
		d.Out = *p
	case *struct{ A int }:
		d.Out = *p
	case *[]int:
		d.Out = *p
	}
	var e *browserpool.Error
	if errors.As(err, &e) {
		d.Class, d.Detail, d.Hint = e.Class.Error(), e.Detail, e.Hint
	} else if err != nil {
		d.Class = err.Error()
	}
	return d
}

func TestEvaluateOnReportsNaNInfinityBigIntAndUndefinedAsEvaluateDoes(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>values</title><input id="qty" type="number" aria-label="Qty">`)
	qty := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "spinbutton", "Qty")
	for _, c := range []struct {
		name, value string     // value: a JavaScript expression of el, the input
		out         func() any // a fresh out value, preset
		wantClass   error      // nil: no error
		undefinedOK bool       // the value is undefined or null, which leave the target nil
	}{
		{name: "NaN (an empty number input's valueAsNumber) into a *float64", value: "el.valueAsNumber",
			out: func() any { f := 42.0; return &f }, wantClass: browserpool.ErrDecode},
		{name: "Infinity into a *float64", value: "Infinity",
			out: func() any { f := 42.0; return &f }, wantClass: browserpool.ErrDecode},
		{name: "-0 into a *float64", value: "-0",
			out: func() any { f := 42.0; return &f }},
		{name: "a BigInt into a *any", value: "12n",
			out: func() any { var a any = "preset"; return &a }, wantClass: browserpool.ErrDecode},
		{name: "undefined into a *struct", value: "undefined",
			out: func() any { return &struct{ A int }{A: 5} }, wantClass: browserpool.ErrDecode},
		{name: "undefined into a *any", value: "undefined",
			out: func() any { var a any = "preset"; return &a }, undefinedOK: true},
		{name: "null into a *[]int", value: "null",
			out: func() any { s := []int{1}; return &s }, undefinedOK: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			evalOut, onOut := c.out(), c.out()
			evalErr := tab.Evaluate(ctx, "(el => "+c.value+")(document.getElementById('qty'))", evalOut)
			onErr := tab.EvaluateOn(ctx, qty, "el => "+c.value, onOut)
			if c.wantClass != nil && !errors.Is(onErr, c.wantClass) {
				t.Errorf("EvaluateOn of %s = %v; want %v, as Evaluate gives (%v)", c.value, onErr, c.wantClass, evalErr)
			}
			if c.wantClass == nil && onErr != nil {
				t.Errorf("EvaluateOn of %s: %v", c.value, onErr)
			}
			want, got := decodeResult(evalOut, evalErr), decodeResult(onOut, onErr)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("EvaluateOn of %s decodes otherwise than Evaluate (-Evaluate +EvaluateOn):\n%s", c.value, diff)
			}
			if c.value == "-0" && !got.NegativeZeroReturned {
				t.Errorf("EvaluateOn of -0 gave %v; want -0", got.Out)
			}
			if c.undefinedOK && got.Out != nil && !isNilSlice(got.Out) {
				t.Errorf("EvaluateOn of %s left %#v; want the target nil", c.value, got.Out)
			}
		})
	}
}

func isNilSlice(v any) bool { s, ok := v.([]int); return ok && s == nil }

func TestEvaluateNamesAThrownValueThatIsNoErrorAsTheConsolePrintsIt(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>throws</title><button>Go</button>`)
	for _, c := range []struct{ expr, want string }{
		{`throw {code: 42, msg: "quota"}`, `Uncaught {code: 42, msg: "quota"}`},
		{`throw [1, "two"]`, `Uncaught [1, "two"]`},
		{`throw undefined`, `Uncaught undefined`},
		{`throw null`, `Uncaught null`},
		{`Promise.reject({code: 1})`, `Uncaught (in promise) {code: 1}`},
		{`Promise.reject(undefined)`, `Uncaught (in promise) undefined`},
		{`(async () => { throw {reason: "x"} })()`, `Uncaught (in promise) {reason: "x"}`},
		{`throw new TypeError("kept as it was")`, `TypeError: kept as it was`},
		{`(async () => { throw new RangeError("async") })()`, `RangeError: async`},
	} {
		err := tab.Evaluate(ctx, c.expr, nil)
		var js *browserpool.JSError
		if !errors.Is(err, browserpool.ErrJavaScript) || !errors.As(err, &js) {
			t.Errorf("Evaluate(%s) = %v; want an ErrJavaScript error", c.expr, err)
			continue
		}
		if js.Message != c.want {
			t.Errorf("Evaluate(%s) says %q; want %q", c.expr, js.Message, c.want)
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "fix the expression") {
			t.Errorf("Evaluate(%s)'s error reads %q; want it to name %s and ask to fix the expression", c.expr, err, c.want)
		}
	}

	button := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Go")
	err := tab.EvaluateOn(ctx, button, `el => { throw {code: 9, tag: el.tagName} }`, nil)
	var js *browserpool.JSError
	if !errors.As(err, &js) || js.Message != `Uncaught {code: 9, tag: "BUTTON"}` {
		t.Errorf("EvaluateOn's thrown object reads %v; want Uncaught {code: 9, tag: \"BUTTON\"}", err)
	}
	if err != nil && !strings.Contains(err.Error(), "fix the expression") {
		t.Errorf("EvaluateOn's exception, thrown by the caller's function, reads %q; want the hint to fix it", err)
	}
}

func TestPageInfoIsUnharmedByAPageThatReplacedItsGlobals(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			w.Write([]byte(`<title>Next</title><script>Math.max = null; Math.round = null</script>`))
			return
		}
		w.Write([]byte(`<title>Real title</title><script>
Math.max = () => { throw new Error("page replaced Math.max") };
Math.round = () => NaN;
Object.defineProperty(Document.prototype, "title", {get() { return "fake title" }});
window.innerWidth = "wide";
</script><p style="height: 3000px">tall</p>`))
	})
	info, err := tab.PageInfo(ctx)
	if err != nil {
		t.Fatalf("PageInfo on a page that replaced Math.max: %v", err)
	}
	if info.Title != "Real title" || info.ViewportWidth <= 0 || info.PageHeight < 3000 {
		t.Errorf("PageInfo = %+v; want the document's own title, viewport and height, not the page's replacements", info)
	}
	// The package's world of the next document serves it too.
	if _, err := tab.Navigate(ctx, srv.URL+"/next"); err != nil {
		t.Fatal(err)
	}
	if info, err := tab.PageInfo(ctx); err != nil || info.Title != "Next" {
		t.Errorf("PageInfo after a navigation = %+v, %v; want the next page's title", info, err)
	}
}

// pageInfoCall reports whether c is the Runtime.evaluate of PageInfo's
// script, and whether it names an execution context (an isolated world).
func pageInfoCall(c *cdptest.Call) (pageInfo, inWorld bool) {
	var p struct {
		Expression string `json:"expression"`
		Context    int    `json:"contextId"`
	}
	json.Unmarshal(c.Params, &p)
	return p.Expression == pagejs.PageInfo, p.Context != 0
}

func TestPageInfosScriptFailingDoesNotAskTheCallerToFixAnExpression(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "A", cdptest.Button("Go"))
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	l.Browsers()[0].Handle("Runtime.evaluate", func(c *cdptest.Call) (any, error) {
		if ok, _ := pageInfoCall(c); !ok {
			return nil, cdptest.ErrNotHandled
		}
		return json.RawMessage(`{"result":{"type":"object","subtype":"error","description":"TypeError: Math.max is not a function"},"exceptionDetails":{"exceptionId":1,"text":"Uncaught","lineNumber":4,"columnNumber":6,"exception":{"type":"object","subtype":"error","className":"TypeError","description":"TypeError: Math.max is not a function\n    at <anonymous>:5:7"}}}`), nil
	})
	_, err := tab.PageInfo(ctx)
	var e *browserpool.Error
	if !errors.Is(err, browserpool.ErrJavaScript) || !errors.As(err, &e) {
		t.Fatalf("PageInfo whose script threw = %v; want an ErrJavaScript error", err)
	}
	if strings.Contains(e.Hint, "expression") || !strings.Contains(e.Hint, "not code of yours") {
		t.Errorf("PageInfo's own script failed, and the hint reads %q; want it to say the caller wrote no code to fix", e.Hint)
	}
}

func TestPageInfoMakesItsWorldAgainWhenTheOldOneIsGone(t *testing.T) {
	page := cdptest.NewPage("https://fake.test/", "A", cdptest.Button("Go"))
	l := cdptest.NewLauncher(t, cdptest.WithPages(page))
	ctx := ctxT(t)
	tab := mustTab(t, ctx, mustOpen(t, ctx, newFakePool(t, l, browserpool.Config{})))
	if _, err := tab.Navigate(ctx, page.URL); err != nil {
		t.Fatal(err)
	}
	snap(t, tab, browserpool.SnapshotOptions{})
	b := l.Browsers()[0]
	var refused atomic.Int32
	b.Handle("Runtime.evaluate", func(c *cdptest.Call) (any, error) {
		if ok, inWorld := pageInfoCall(c); ok && inWorld && refused.Add(1) == 1 {
			// The world's document went (as a navigation the tab has not
			// seen yet would take it): Chromium's answer.
			return nil, &cdptest.Error{Code: -32000, Message: "Cannot find context with specified id"}
		}
		return nil, cdptest.ErrNotHandled
	})
	info, err := tab.PageInfo(ctx)
	if err != nil || info.Title != "A" {
		t.Fatalf("PageInfo with its world gone = %+v, %v; want the page's info from a world made again", info, err)
	}
	made, inWorld := 0, 0
	for _, c := range b.Calls() {
		if c.Method == "Page.createIsolatedWorld" {
			made++
		}
		if ok, w := pageInfoCall(&c); ok && w {
			inWorld++
		}
	}
	if made != 2 || inWorld != 2 {
		t.Errorf("PageInfo made %d worlds and evaluated in one %d times; want the world made again once and PageInfo's script run in it", made, inWorld)
	}
}
