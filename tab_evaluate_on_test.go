package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

func TestEvaluateOnSeesTheElementOnRealChromium(t *testing.T) {
	e := newAgentEnv(t)
	ctx := ctxT(t)
	tab := e.tab(t, "/form.html")
	s := snap(t, tab, browserpool.SnapshotOptions{})
	name := ref(t, s, "textbox", "Name")

	t.Run("the element is this and the first argument, with the args after it", func(t *testing.T) {
		var got struct {
			ID, Same, Arg string
			N             int
			Null          bool
		}
		fn := `function (el, prefix, n, none) { return {ID: el.id, Same: String(this === el), Arg: prefix + el.tagName, N: n + 1, Null: none === null} }`
		if err := tab.EvaluateOn(ctx, name, fn, &got, "tag:", 41, nil); err != nil {
			t.Fatal(err)
		}
		want := struct {
			ID, Same, Arg string
			N             int
			Null          bool
		}{"name", "true", "tag:INPUT", 42, true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("EvaluateOn result (-want +got):\n%s", diff)
		}
	})

	t.Run("an arrow function gets the element and a promise is awaited", func(t *testing.T) {
		var got string
		if err := tab.EvaluateOn(ctx, name, `async el => { el.value = 'Ada'; await new Promise(r => setTimeout(r, 10)); return el.value + '!' }`, &got); err != nil {
			t.Fatal(err)
		}
		if got != "Ada!" {
			t.Errorf("EvaluateOn = %q, want %q", got, "Ada!")
		}
		if err := tab.EvaluateOn(ctx, name, `el => { el.focus() }`, nil); err != nil {
			t.Errorf("EvaluateOn returning undefined with out nil: %v", err)
		}
	})

	t.Run("bad input is a typed error", func(t *testing.T) {
		for _, c := range []struct {
			name, ref, fn string
			args          []any
			class         error
		}{
			{"unknown ref", "@e999", "el => 1", nil, browserpool.ErrStaleRef},
			{"not a ref", "button", "el => 1", nil, browserpool.ErrInvalidArgument},
			{"empty function", name, " ", nil, browserpool.ErrInvalidArgument},
			{"argument JSON cannot encode", name, "el => 1", []any{func() {}}, browserpool.ErrInvalidArgument},
			{"throwing function", name, "el => { throw new Error('boom') }", nil, browserpool.ErrJavaScript},
		} {
			err := tab.EvaluateOn(ctx, c.ref, c.fn, nil, c.args...)
			var be *browserpool.Error
			if !errors.Is(err, c.class) || !errors.As(err, &be) || be.Hint == "" {
				t.Errorf("%s: EvaluateOn = %v, want %v with a hint", c.name, err, c.class)
			}
		}
		var js *browserpool.JSError
		if err := tab.EvaluateOn(ctx, name, "el => { throw new Error('boom') }", nil); !errors.As(err, &js) || js.Message != "Error: boom" {
			t.Errorf("throwing function: JSError = %+v, want message %q", js, "Error: boom")
		}
	})
}

func TestValuesWithoutAJSONFormAndBadCodeAreReportedInTheCallersTerms(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>terms</title><button>Press</button><script>
function boom() {
	throw new Error("deep")
}
</script>`)
	cyclic := `(() => { const o = {name: "loop"}; o.self = o; return o })()`
	for _, expr := range []string{cyclic, `Symbol("s")`} {
		var v any
		if err := tab.Evaluate(ctx, expr, &v); !errors.Is(err, browserpool.ErrDecode) || errors.Is(err, browserpool.ErrProtocol) {
			t.Errorf("Evaluate(%s): %v; want ErrDecode (the browser raised nothing)", expr, err)
		}
	}
	var v any
	if err := tab.WaitCondition(ctx, cyclic, &v); !errors.Is(err, browserpool.ErrDecode) {
		t.Errorf("WaitCondition of a cyclic value: %v; want ErrDecode", err)
	}
	var js *browserpool.JSError
	if err := tab.WaitCondition(ctx, "1 +", nil); !errors.As(err, &js) || js.Line != 1 {
		t.Errorf("WaitCondition(\"1 +\"): %v; want a JSError on line 1 of the expression", err)
	}
	if err := tab.WaitCondition(ctx, "(() => {\n\tconst a = 1\n\treturn a + nope.x\n})()", nil); !errors.As(err, &js) || js.Line != 3 || js.URL != "" {
		t.Errorf("WaitCondition throwing on its third line as it runs: %v (%+v); want a JSError on line 3 of the expression", err, js)
	}
	button := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "button", "Press")
	if err := tab.EvaluateOn(ctx, button, "42", nil); !errors.Is(err, browserpool.ErrJavaScript) || !strings.Contains(err.Error(), "EvaluateOn takes a function") {
		t.Errorf("EvaluateOn with a number for a function: %v; want ErrJavaScript saying it takes a function", err)
	}
	if err := tab.EvaluateOn(ctx, button, "el => {\n\tthrow new Error(\"boom\")\n}", nil); !errors.As(err, &js) || js.Line != 2 {
		t.Errorf("EvaluateOn throwing on its second line: %v; want a JSError on line 2 of the function", err)
	}
	if err := tab.EvaluateOn(ctx, button, "el => boom()", nil); !errors.As(err, &js) || js.Line != 3 || js.URL == "" {
		t.Errorf("EvaluateOn calling a page function that throws on the page's line 3: %v (%+v); want that line and the page's script", err, js)
	}
	var n int
	if err := tab.EvaluateOn(ctx, button, "el => el.textContent", &n); !errors.Is(err, browserpool.ErrDecode) {
		t.Errorf("EvaluateOn of a string into an int: %v; want ErrDecode", err)
	}
	if err := tab.EvaluateOn(ctx, button, "el => { const o = {}; o.o = o; return o }", &v); !errors.Is(err, browserpool.ErrDecode) {
		t.Errorf("EvaluateOn of a cyclic value: %v; want ErrDecode", err)
	}
}
