// Room: the forms of a fake page: which form an element is in, the
// form's radio groups, its constraint validation and the URL a GET submit
// loads. Pure functions of the page, called with Browser.mu held; no lock
// of their own.

package cdptest

import (
	"net/url"
	"strings"
)

// formOf returns the nearest element of role "form" holding el, or nil
// when el is in no form (it then belongs to the page's formless part).
func formOf(el *Element) *Element {
	for a := el.parent; a != nil; a = a.parent {
		if a.Role == "form" {
			return a
		}
	}
	return nil
}

// formElements visits the elements of form in document order while f
// returns true; a nil form is the page's elements that are in no form.
func (p *Page) formElements(form *Element, f func(*Element) bool) {
	if form != nil {
		walkElements(form.Children, f)
		return
	}
	var walk func(els []*Element) bool
	walk = func(els []*Element) bool {
		for _, e := range els {
			if e.Role == "form" {
				continue
			}
			if !f(e) || !walk(e.Children) {
				return false
			}
		}
		return true
	}
	walk(p.Body)
}

// defaultButton is the submit button Enter in a field of form clicks: the
// form's first.
func (p *Page) defaultButton(form *Element) *Element {
	var submit *Element
	p.formElements(form, func(e *Element) bool {
		if e.kind() == "submit" {
			submit = e
		}
		return submit == nil
	})
	return submit
}

// radioGroup returns the radios of r's group, in document order: those of
// r's form with r's RadioGroup, or r alone when it has none.
func (p *Page) radioGroup(r *Element) []*Element {
	if r.RadioGroup == "" {
		return []*Element{r}
	}
	var group []*Element
	p.formElements(formOf(r), func(e *Element) bool {
		if e.kind() == "radio" && e.RadioGroup == r.RadioGroup {
			group = append(group, e)
		}
		return true
	})
	if len(group) == 0 { // r is not in the page
		group = []*Element{r}
	}
	return group
}

// checkRadio checks r and unchecks the other radios of its group.
func (p *Page) checkRadio(r *Element) {
	for _, e := range p.radioGroup(r) {
		e.Checked = e == r
	}
}

// rendered reports whether e is rendered: neither it nor an element
// holding it is hidden.
func rendered(e *Element) bool {
	for a := e; a != nil; a = a.parent {
		if a.Hidden {
			return false
		}
	}
	return true
}

// missing reports whether e is a required field left empty, as
// Chromium's constraint validation judges it: disabled fields, and
// read-only text fields, are barred from it.
func (p *Page) missing(e *Element) bool {
	if !e.Required || e.Disabled {
		return false
	}
	switch e.kind() {
	case "text", "search", "password", "email":
		return !e.ReadOnly && e.Value == ""
	case "select":
		return e.Value == ""
	case "checkbox":
		return !e.Checked
	case "radio":
		for _, r := range p.radioGroup(e) {
			if r.Checked {
				return false
			}
		}
		return true
	case "file":
		return len(e.Files) == 0
	}
	return false
}

// invalid reports whether form (nil: the page's formless part) has a
// required field left empty, and returns the first such field that can
// take the focus (nil if none can), which Chromium focuses when it stops
// the submit.
func (p *Page) invalid(form *Element) (focus *Element, blocked bool) {
	p.formElements(form, func(e *Element) bool {
		if p.missing(e) {
			blocked = true
			if rendered(e) && e.focusable() {
				focus = e
			}
		}
		return focus == nil
	})
	return focus, blocked
}

// submitURL is the URL a GET submit of form to action loads: action
// resolved against the page's URL ("" is the page's own), its query
// replaced by the form's fields.
func (p *Page) submitURL(action string, form *Element) string {
	if action == "" {
		action = p.URL
	}
	u, err := url.Parse(resolveURL(p.URL, action))
	if err != nil {
		return action
	}
	u.RawQuery = p.formQuery(form)
	u.ForceQuery = true // Chromium keeps the "?" of an empty form's query
	return u.String()
}

// formQuery is form's data as a GET submit sends it
// (application/x-www-form-urlencoded): each enabled field with a name, in
// document order.
func (p *Page) formQuery(form *Element) string {
	var parts []string
	add := func(name, value string) {
		parts = append(parts, formEncode(name)+"="+formEncode(value))
	}
	p.formElements(form, func(e *Element) bool {
		if e.Disabled {
			return true
		}
		switch e.kind() {
		case "text", "search", "password", "email":
			if e.Name != "" {
				add(e.Name, e.Value)
			}
		case "select":
			if e.Name == "" {
				break
			}
			if !e.Multiple {
				add(e.Name, e.Value)
				break
			}
			for _, v := range strings.Split(e.Value, ",") {
				if v != "" {
					add(e.Name, v)
				}
			}
		case "checkbox":
			if e.Checked && e.Name != "" {
				add(e.Name, "on")
			}
		case "radio":
			if e.Checked && e.RadioGroup != "" {
				add(e.RadioGroup, e.Name)
			}
		case "file":
			if e.Name == "" {
				break
			}
			if len(e.Files) == 0 {
				add(e.Name, "")
			}
			for _, f := range e.Files {
				add(e.Name, f)
			}
		}
		return true
	})
	return strings.Join(parts, "&")
}

// formEncode is the URL Standard's application/x-www-form-urlencoded
// byte serializer, as Chromium encodes a form's names and values: a space
// is "+", and every byte but ASCII letters, digits and *-._ is escaped.
func formEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		default:
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
