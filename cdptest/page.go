// Room: fake pages described as data (Page, Element), their constructors
// and URLs. A page given to WithPages is a template, never changed once
// given; a loaded copy of it belongs to its target and is guarded by
// Browser.mu like every other piece of the browser's state. The Go funcs
// of a page (Element.Does, Page.Script, Page.After, dialog answers) run
// with Browser.mu held (on a goroutine of their own, see gofunc.go): they
// get the loaded *Page and must not call methods of the Browser; a
// loaded copy's Page.After schedules its timer under that same lock.

package cdptest

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Page is a fake web page, described as data: its URL, its title and a
// tree of elements, with what happens when they are acted on. Give pages
// to a browser with [WithPages]: navigating to a page's URL (Page.navigate,
// a link, a button that navigates) loads a fresh copy of it, which the
// library's Tab actions then read and change as they would a page in
// Chromium. A URL without a page loads an empty page with no title,
// served with status 404. A URL matches the page given at it without its
// #fragment, else (for a URL with a query string) the page given at it
// without the query: a page at /form serves /form?q=1 unless a page is
// given at /form?q=1.
//
// Build one with [NewPage] and the element constructors ([Heading],
// [Text], [TextBox], [SearchBox], [Password], [Button], [Link],
// [Checkbox], [Radio], [Select], [FileInput], [Table], [Group]):
//
//	login := cdptest.NewPage("https://app.test/login", "Sign in",
//		cdptest.Heading(1, "Sign in"),
//		cdptest.TextBox("Email"),
//		cdptest.Password("Password"),
//		cdptest.Button("Sign in").Navigates("/home"),
//	)
//
// Inside a Go func of the page (Element.Does, Page.Script, Page.After, a
// dialog's answer) the *Page is the loaded copy: change it with Find, Add,
// Remove, Navigate and After, and by setting an element's fields.
type Page struct {
	URL   string     // the absolute URL it is at: navigating there (with any #fragment, or a query no other page has) loads it; compared as Chromium writes it (lower-case scheme and host, no default port)
	Title string     // the document's title; read back as document.title is, its whitespace stripped and collapsed ("  Hello\n  World " is "Hello World")
	Body  []*Element // the page's elements, in document order
	// Status is the HTTP status the page is served with, as
	// NavigateResult.Status reports it: 0 means 200. Set it to serve the
	// page as a server's error page (404, 500, …); a URL no page matches
	// is served with 404.
	Status int

	scripts map[string]func(*Page) (any, error) // by expression
	afters  []afterSpec                         // After on a page given to WithPages: run on each load

	// State of a loaded copy.
	focus   *Element
	typing  *typeWatch // pagejs.TypeWatchArm's watch, until TypeWatchRead
	scrollY float64
	vw, vh  float64  // the viewport (Emulation.setDeviceMetricsOverride); zero means 780x493
	nextID  *int     // the target's backend node counter
	goTo    string   // set by Navigate during a Go func: where to go after it
	b       *Browser // the browser and target the copy is loaded in (Page.After);
	t       *target  // nil for a page given to WithPages
}

// afterSpec is one Page.After: f runs d after the page loads.
type afterSpec struct {
	d time.Duration
	f func(*Page)
}

// Element is one element of a [Page]: a role (as the accessibility tree
// names it: "button", "link", "textbox", "heading", …), an accessible name,
// a value, states, children, and what happens when it is clicked. Make
// one with a constructor and chain the methods that set its behaviour.
// Fields may be changed directly by a page's Go funcs.
//
// An Element written as a struct literal acts as the constructor of its
// Role makes it: Role "textbox" is a text field (a password field when
// Secret), "searchbox" a search field, "checkbox" a checkbox, "radio" a
// radio button, "combobox" a select box (its first option chosen when
// Value is empty) and "button" a button. A file input or a submit button
// needs its constructor ([FileInput]) or method ([Element.Submits]).
type Element struct {
	Role       string     // the accessibility role: "button", "link", "textbox", …
	Name       string     // the accessible name (a button's label, a field's label)
	Value      string     // a text field's text; a select's chosen option
	Options    []string   // a select's options (value and label alike)
	Files      []string   // a file input's chosen files (base names)
	ID         string     // the element's id attribute, for Tab.WaitVisible("#id")
	Level      int        // a heading's level
	Href       string     // a link's URL, relative to the page's
	Checked    bool       // a checkbox or radio button is checked
	RadioGroup string     // a radio button's group (its HTML name attribute): of a form's radios with one RadioGroup one at most is checked, and a submit sends RadioGroup=Name of it; "" is a group of its own
	Disabled   bool       // it takes no input and no click
	Required   bool       // a form field that must be filled: its form's submit does nothing while it is empty (see Submits)
	ReadOnly   bool       // a text field whose text cannot be changed
	Hidden     bool       // not rendered (display: none): no box, not in snapshots
	Multiple   bool       // a select or file input that takes several
	Secret     bool       // a password field: its value never reaches a trace
	Children   []*Element // the elements inside it, in document order

	input    string        // the HTML input type: "text", "password", "checkbox", "file", …; "" derives it from Role (see kind)
	onClick  func(*Page)   // Does
	goTo     string        // Navigates
	dialog   *dialogSpec   // Alerts, Confirms, Prompts
	download *downloadSpec // Downloads
	onChange func(*Page)   // OnChange
	backend  int           // backend DOM node id in its loaded page; 0 until numbered
	parent   *Element      // nil at the top of the body
	watches  []*clickWatch // armed click watches (see Runtime.callFunctionOn)
}

type dialogSpec struct {
	typ, message, defaultPrompt string
	then                        func(p *Page, accepted bool, text string)
}

type downloadSpec struct {
	name string
	data []byte
}

// docTitle is the title as document.title reads it: ASCII whitespace
// stripped from both ends and each run of it inside made one space.
func (p *Page) docTitle() string {
	return strings.Join(strings.FieldsFunc(p.Title, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
	}), " ")
}

// NewPage returns a page at url with a title and a body.
func NewPage(url, title string, body ...*Element) *Page {
	return &Page{URL: url, Title: title, Body: body}
}

// Script makes Runtime.evaluate of exactly expr (surrounding space
// ignored) answer f's value on this page, as JSON, or throw f's error as a
// JavaScript exception. Tab.Evaluate and Tab.WaitCondition of expr then
// work on the fake page. Called from a Go func of a loaded page, it
// changes that loaded copy only: the next load of the URL starts from the
// page given to WithPages again. It returns p.
func (p *Page) Script(expr string, f func(p *Page) (any, error)) *Page {
	if p.scripts == nil {
		p.scripts = make(map[string]func(*Page) (any, error))
	}
	p.scripts[trimExpr(expr)] = f
	return p
}

// Find returns the first element (in document order) with this role and
// name, or nil.
func (p *Page) Find(role, name string) *Element {
	var found *Element
	walkElements(p.Body, func(e *Element) bool {
		if found == nil && e.Role == role && e.Name == name {
			found = e
		}
		return found == nil
	})
	return found
}

// Add appends elements to the page's body.
func (p *Page) Add(els ...*Element) {
	for _, e := range els {
		e.parent = nil
	}
	p.Body = append(p.Body, els...)
}

// Remove takes el (and its children) out of the page.
func (p *Page) Remove(el *Element) {
	if el.parent != nil {
		el.parent.Children = slices.DeleteFunc(el.parent.Children, func(x *Element) bool { return x == el })
	} else {
		p.Body = slices.DeleteFunc(p.Body, func(x *Element) bool { return x == el })
	}
	if p.focus != nil && (p.focus == el || el.contains(p.focus)) {
		p.focus = nil
	}
	el.parent = nil
}

// Navigate, called from a page's Go func, makes the page navigate to u
// (relative to its URL) once the func returns, as a script setting
// location.href would.
func (p *Page) Navigate(u string) { p.goTo = u }

// Values returns the values of the page's text fields and selects by name
// (a checkbox's is "on" when checked, "" otherwise; a radio group's, by
// its RadioGroup, is the Name of its checked radio), as a form would
// submit them.
func (p *Page) Values() map[string]string {
	v := make(map[string]string)
	walkElements(p.Body, func(e *Element) bool {
		switch {
		case e.kind() == "checkbox":
			if e.Checked {
				v[e.Name] = "on"
			} else {
				v[e.Name] = ""
			}
		case e.kind() == "radio":
			if e.Checked && e.RadioGroup != "" {
				v[e.RadioGroup] = e.Name
			}
		case e.Role == "textbox" || e.Role == "searchbox" || e.Role == "combobox":
			v[e.Name] = e.Value
		}
		return true
	})
	return v
}

// After makes f run on the page d after it loads, as a page's timer
// (setTimeout) would: to show a result a while after an action, or to
// make a condition come true with no action at all. Called on a page
// given to [WithPages], f runs d after each load of it; called from a Go
// func of a loaded page (Element.Does, Page.Script, another After), f
// runs d from then on that loaded copy only. f runs, as every Go func of
// the page, with the browser locked, and only while the page is still
// the one its tab shows: a navigation away, a crash or the browser's end
// drop it. While a dialog is open it waits, as page timers do. After f,
// waits of the tab see the change at once, and a [Page.Navigate] from f
// loads its URL. Time is the time package's: inside testing/synctest
// the bubble's fake clock runs it. It returns p.
func (p *Page) After(d time.Duration, f func(p *Page)) *Page {
	if p.t != nil {
		p.b.afterLocked(p.t, p, afterSpec{d, f})
		return p
	}
	p.afters = append(p.afters, afterSpec{d, f})
	return p
}

// Add appends children to e and returns e.
func (e *Element) Add(children ...*Element) *Element {
	for _, c := range children {
		c.parent = e
	}
	e.Children = append(e.Children, children...)
	return e
}

// Does makes a click on e run f on the page (after a checkbox toggles, and
// before a dialog, a download or a navigation e also starts). It returns e.
func (e *Element) Does(f func(p *Page)) *Element { e.onClick = f; return e }

// Navigates makes a click on e load u (relative to the page's URL), as a
// link or a form's submit button does. It returns e.
func (e *Element) Navigates(u string) *Element { e.goTo = u; return e }

// Submits makes e a form's submit button, submitting with the GET method
// to u (relative to the page's URL; "" is the page's own URL). Its form
// is its nearest [Group] of role "form", else the page's elements in no
// form. A click on it, or Enter in a text field, checkbox or radio button
// of its form (the form's first submit button is the one Enter clicks),
// loads u with the form's fields as its query string, in place of u's own
// query, as Chromium submits a form: each enabled field with a Name sends
// Name=value (a text field's and a select's value, a checked checkbox's
// "on", a checked radio's RadioGroup=Name), in document order. As
// Chromium's constraint validation, the submit does nothing while a
// Required field of the form that is not disabled or read-only is empty
// (an unchecked checkbox, a radio group with none checked, a file input
// with no file); it focuses the first such field that is rendered. It
// returns e.
func (e *Element) Submits(u string) *Element { e.input = "submit"; e.goTo = u; return e }

// Alerts makes a click on e open an alert with message. It returns e.
func (e *Element) Alerts(message string) *Element {
	e.dialog = &dialogSpec{typ: "alert", message: message}
	return e
}

// Confirms makes a click on e open a confirm dialog with message; then
// (nil: nothing) runs on the page with the answer once it is answered. It
// returns e.
func (e *Element) Confirms(message string, then func(p *Page, accepted bool)) *Element {
	e.dialog = &dialogSpec{typ: "confirm", message: message}
	if then != nil {
		e.dialog.then = func(p *Page, ok bool, _ string) { then(p, ok) }
	}
	return e
}

// Prompts makes a click on e open a prompt with message and a default
// answer; then (nil: nothing) runs on the page with the answer. It
// returns e.
func (e *Element) Prompts(message, defaultPrompt string, then func(p *Page, accepted bool, text string)) *Element {
	e.dialog = &dialogSpec{typ: "prompt", message: message, defaultPrompt: defaultPrompt, then: then}
	return e
}

// Downloads makes a click on e start a download of data suggested as name
// (a link's URL is the download's; a button's is the page's). Once a
// client has routed downloads (Browser.setDownloadBehavior), the file
// lands in its download path and Browser.downloadWillBegin and
// Browser.downloadProgress tell it so. It returns e.
func (e *Element) Downloads(name string, data []byte) *Element {
	e.download = &downloadSpec{name: name, data: slices.Clone(data)}
	return e
}

// OnChange makes f run on the page whenever e's value, choice or files
// change by an action, as a change event would: Fill, Select, Upload, a
// click or Space that toggles a checkbox or checks a radio button, and the
// keys that move a select's or a radio group's choice. (Typing key by key
// is not a change, as in Chromium, where the event waits for the field to
// lose the focus.) It returns e.
func (e *Element) OnChange(f func(p *Page)) *Element { e.onChange = f; return e }

// WithID sets e's id attribute (for Tab.WaitVisible("#id")) and returns e.
func (e *Element) WithID(id string) *Element { e.ID = id; return e }

// Disable disables e and returns it.
func (e *Element) Disable() *Element { e.Disabled = true; return e }

// Require marks e as required and returns it.
func (e *Element) Require() *Element { e.Required = true; return e }

// Hide makes e not rendered (display: none) and returns it.
func (e *Element) Hide() *Element { e.Hidden = true; return e }

// WithValue sets e's value and returns e.
func (e *Element) WithValue(v string) *Element { e.Value = v; return e }

// Heading is a heading of level 1 to 6.
func Heading(level int, text string) *Element {
	return &Element{Role: "heading", Name: text, Level: level}
}

// Text is a paragraph of text.
func Text(s string) *Element { return &Element{Role: "paragraph", Name: s} }

// TextBox is a text input labelled name.
func TextBox(name string) *Element { return &Element{Role: "textbox", Name: name, input: "text"} }

// SearchBox is a search input labelled name.
func SearchBox(name string) *Element {
	return &Element{Role: "searchbox", Name: name, input: "search"}
}

// Password is a password input labelled name.
func Password(name string) *Element {
	return &Element{Role: "textbox", Name: name, input: "password", Secret: true}
}

// Button is a button. Chain Does, Navigates, Submits, Confirms, Downloads
// … to say what a click does.
func Button(name string) *Element { return &Element{Role: "button", Name: name, input: "button"} }

// Link is a link to href (relative to the page's URL); a click follows it
// unless Downloads says it downloads.
func Link(name, href string) *Element {
	return &Element{Role: "link", Name: name, Href: href}
}

// Checkbox is a checkbox labelled name; a click toggles it.
func Checkbox(name string, checked bool) *Element {
	return &Element{Role: "checkbox", Name: name, Checked: checked, input: "checkbox"}
}

// Radio is a radio button labelled name in the radio group group (its
// HTML name attribute; see [Element.RadioGroup]). A click checks it and
// unchecks the other radios of its group in its form; so do ArrowDown,
// ArrowUp, ArrowLeft and ArrowRight on a focused radio, which move the
// choice through the group, round from end to start.
func Radio(group, name string, checked bool) *Element {
	return &Element{Role: "radio", Name: name, Checked: checked, RadioGroup: group, input: "radio"}
}

// Select is a select box labelled name with these options (each the
// option's value and label); the first is chosen.
func Select(name string, options ...string) *Element {
	e := &Element{Role: "combobox", Name: name, Options: options, input: "select"}
	if len(options) > 0 {
		e.Value = options[0]
	}
	return e
}

// ListBox is a select box labelled name that takes several options (a
// <select multiple>): it shows them all, and none is selected until
// Tab.Select chooses some. Unlike Chromium's, its options have no refs in
// a snapshot: choose them with Tab.Select.
func ListBox(name string, options ...string) *Element {
	return &Element{Role: "listbox", Name: name, Options: options, Multiple: true, input: "select"}
}

// FileInput is a file input labelled name.
func FileInput(name string) *Element {
	return &Element{Role: "button", Name: name, input: "file"}
}

// Table is a table with a header row and rows of cells.
func Table(header []string, rows ...[]string) *Element {
	t := &Element{Role: "table"}
	row := func(role string, cells []string) *Element {
		r := &Element{Role: "row"}
		for _, c := range cells {
			r.Add(&Element{Role: role, Name: c})
		}
		return r
	}
	if header != nil {
		t.Add(row("columnheader", header))
	}
	for _, r := range rows {
		t.Add(row("cell", r))
	}
	return t
}

// Group is an element of a role (such as "main", "navigation", "form"
// or "generic") holding children; name may be empty.
func Group(role, name string, children ...*Element) *Element {
	return (&Element{Role: role, Name: name}).Add(children...)
}

// contains reports whether d is a descendant of e.
func (e *Element) contains(d *Element) bool {
	for p := d.parent; p != nil; p = p.parent {
		if p == e {
			return true
		}
	}
	return false
}

// walkElements visits els and their descendants in document order while f
// returns true.
func walkElements(els []*Element, f func(*Element) bool) bool {
	for _, e := range els {
		if !f(e) || !walkElements(e.Children, f) {
			return false
		}
	}
	return true
}

// clone copies a page template for loading, with fresh elements.
func (p *Page) clone() *Page {
	// The scripts are copied too: Page.Script on a loaded copy (from its
	// own Go func) changes that copy only, never the template other
	// loads, and other browsers, read.
	c := &Page{URL: p.URL, Title: p.Title, Status: p.Status, scripts: maps.Clone(p.scripts), afters: slices.Clone(p.afters)}
	for _, e := range p.Body {
		c.Body = append(c.Body, e.clone(nil))
	}
	return c
}

func (e *Element) clone(parent *Element) *Element {
	c := *e
	c.parent, c.backend, c.watches = parent, 0, nil
	c.Options, c.Files = slices.Clone(e.Options), slices.Clone(e.Files)
	if c.kind() == "select" && !c.Multiple && c.Value == "" && len(c.Options) > 0 {
		c.Value = c.Options[0] // a select shows its first option chosen
	}
	c.Children = nil
	for _, k := range e.Children {
		c.Children = append(c.Children, k.clone(&c))
	}
	return &c
}

// kind is e's HTML input type: the one its constructor set, else the one
// its Role implies, so that an Element written as a struct literal acts
// as the constructor's does. "" for an element that takes no input.
func (e *Element) kind() string {
	if e.input != "" {
		return e.input
	}
	switch e.Role {
	case "textbox":
		if e.Secret {
			return "password"
		}
		return "text"
	case "searchbox":
		return "search"
	case "checkbox", "radio", "button":
		return e.Role
	case "combobox":
		return "select"
	}
	return ""
}

// defaultPorts are the ports a browser drops from a URL of their scheme.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443", "ftp": "21"}

// normURL is u as a browser shows it: the scheme and host in lower case,
// without the scheme's default port, and an empty path is "/".
func normURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.Opaque != "" {
		return u
	}
	host := strings.ToLower(p.Host)
	if port := p.Port(); port == defaultPorts[p.Scheme] || port == "" {
		host = strings.TrimSuffix(strings.TrimSuffix(host, port), ":")
	}
	if host == p.Host && p.Path != "" && strings.HasPrefix(u, p.Scheme+":") {
		return u // as it is, escapes included
	}
	p.Host = host
	if p.Path == "" {
		p.Path = "/"
	}
	return p.String()
}

// resolveURL resolves ref against base, normalised as a browser does.
func resolveURL(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return normURL(b.ResolveReference(r).String())
}

// viewport returns the page's viewport size in CSS pixels: what the tab set
// with Emulation.setDeviceMetricsOverride, else headless Chromium's own
// 780x493.
func (p *Page) viewport() (w, h float64) {
	if p.vw > 0 && p.vh > 0 {
		return p.vw, p.vh
	}
	return viewportW, viewportH
}
