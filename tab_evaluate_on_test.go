package browserpool_test

import (
	"errors"
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
