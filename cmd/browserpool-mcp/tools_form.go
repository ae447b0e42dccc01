// Room: browser_fill_form's fields: the action each kind needs, and the
// state of a checkbox or radio read from its element. No state and no
// locks.

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/browserpool/browserpool"
)

// fillForm fills each field with the action its kind needs.
func fillForm(ctx context.Context, t *browserpool.Tab, fields []FormField) error {
	for _, f := range fields {
		r := ref(f.Ref)
		var err error
		kind := strings.ToLower(f.Type)
		switch kind {
		case "combobox":
			_, err = t.Select(ctx, r, f.Value)
		case "checkbox", "radio":
			if f.Value != "true" && f.Value != "false" {
				return toolErrorf(fmt.Sprintf("field %s is a %s with value %q", r, kind, f.Value), `give a checkbox or radio button the value "true" (checked) or "false" (unchecked)`)
			}
			want := f.Value == "true"
			var on bool
			on, err = checked(ctx, t, r, kind)
			if err == nil && on != want {
				if !want && kind == "radio" {
					return toolErrorf(fmt.Sprintf("field %s: a radio button cannot be unchecked", r), "check another radio button of its group instead")
				}
				err = t.Click(ctx, r)
			}
		default:
			// textbox and slider (the schema allows no other): Fill says
			// if the element takes no value.
			err = fieldKind(t.Fill(ctx, r, f.Value), r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fieldKinds are the kinds of field Tab.Fill refuses, by the end of its
// refusal's detail, with the type browser_fill_form takes them as.
var fieldKinds = []struct{ is, kind, value string }{
	{"is a checkbox", "checkbox", `"true" (checked) or "false"`},
	{"is a radio", "radio", `"true"`},
	{"is a select box", "combobox", "the option's value or label"},
}

// fieldKind turns Tab.Fill's refusal of a field browser_fill_form fills
// by another type (a checkbox given as a textbox) into what to give
// instead: the library's hint names a tool for the field, which this tool
// need not call.
func fieldKind(err error, r string) error {
	var be *browserpool.Error
	if !errors.As(err, &be) || !errors.Is(err, browserpool.ErrInvalidArgument) {
		return err
	}
	for _, k := range fieldKinds {
		if strings.HasSuffix(be.Detail, k.is) {
			e := *be
			e.Hint = fmt.Sprintf("give field %s the type %q and the value %s", r, k.kind, k.value)
			return &e
		}
	}
	return err
}

// checkable are the roles browser_fill_form's checkbox and radio fields
// take: a click toggles them.
var checkable = map[string]bool{"checkbox": true, "radio": true, "switch": true, "menuitemcheckbox": true, "menuitemradio": true}

// checkedState is page code, a function of an element: its role (its
// role attribute's, or the one its tag and type give; roughly, for an
// error's sake, past the checkable ones) and whether it is checked (a
// checkbox's or radio button's own state, else aria-checked). A label
// stands for its control: a snapshot gives the label of a hidden checkbox
// the ref ("the label of a hidden checkbox"), and a click on it toggles
// the checkbox.
const checkedState = `el => {
	if (el.localName === "label" && el.control) el = el.control;
	const tag = el.localName, type = (el.type || "").toLowerCase();
	let role = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
	if (!role) {
		if (tag === "input") {
			role = type === "checkbox" || type === "radio" ? type : type === "range" ? "slider" : ["button", "submit", "reset", "image"].includes(type) ? "button" : type === "file" ? "file input" : "textbox";
		} else {
			role = tag === "select" ? (el.multiple || el.size > 1 ? "listbox" : "combobox") : tag === "textarea" ? "textbox" : tag === "button" ? "button" : tag === "a" && el.hasAttribute("href") ? "link" : tag;
		}
	}
	const native = tag === "input" && (type === "checkbox" || type === "radio");
	return {role, checked: native ? el.checked : el.getAttribute("aria-checked") === "true"};
}`

// checked reports whether the element of a ref is checked, read from the
// element itself: a snapshot per field would read the whole page.
func checked(ctx context.Context, t *browserpool.Tab, r, kind string) (bool, error) {
	var st struct {
		Role    string `json:"role"`
		Checked bool   `json:"checked"`
	}
	if err := t.EvaluateOn(ctx, r, checkedState, &st); err != nil {
		return false, err
	}
	if !checkable[st.Role] {
		return false, toolErrorf(fmt.Sprintf("field %s is a %s, not a %s", r, st.Role, kind), "give the field the type its snapshot line shows: textbox, checkbox, radio, combobox or slider")
	}
	return st.Checked, nil
}
