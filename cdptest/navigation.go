// Room: page loads and the tab's history: Page.navigate, Page.reload,
// Page.navigateToHistoryEntry and Page.getNavigationHistory, links and
// buttons that navigate, same-document (#fragment) navigations, the page a
// URL loads, its HTTP status, and the error page of a URL that cannot
// load. Built-in methods: they run with Browser.mu held.

package cdptest

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/browserpool/browserpool/internal/pagejs"
)

// historyEntry is one entry of a target's session history.
type historyEntry struct {
	id    int
	url   string // as navigated to (a failed load's entry keeps the URL asked for)
	title string // the document's title when the entry was last shown
}

// errorPageURL is where Chromium shows the error page of a failed load.
const errorPageURL = "chrome-error://chromewebdata/"

// statusReport is how the library's status script (pagejs.Status)
// reports a document's HTTP status: a console.timeStamp titled with this
// prefix and the status, which the Performance domain sends as
// Performance.metrics. The fake cannot run JavaScript; it sends that event
// itself, with the page's Status, for a session that enabled Performance
// and added pagejs.Status to run in new documents.
const statusReport = pagejs.StatusTitle

// navigate answers Page.navigate: a new history entry (the entries
// forward of the current one are dropped), loaded as a new document, or
// a same-document navigation when only the #fragment changes (no
// loaderId in the reply, as Chromium).
func (b *Browser) navigate(s *session, params json.RawMessage) outcome {
	var p struct {
		URL string `json:"url"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if p.URL == "" {
		return outcome{err: errInvalidParams}
	}
	t := s.target
	post, sameDoc, errText := b.followLocked(t, p.URL)
	res := navigateResult{FrameID: t.id, ErrorText: errText}
	if !sameDoc {
		res.LoaderID = t.loaderID
	}
	return outcome{result: res, post: post}
}

// followLocked navigates t to u (resolved already) as Page.navigate, a
// link or Page.Navigate do: a new history entry, in the same document if
// only the #fragment changes, else loaded. A load of the URL the tab is on
// replaces its entry instead, forward entries kept, as Chromium does with
// a navigation to the same URL. It returns the events, whether it stayed
// in the document, and Chromium's error text for a load that failed.
func (b *Browser) followLocked(t *target, u string) (post []event, sameDoc bool, errText string) {
	u = normURL(u)
	entry := historyEntry{id: b.nextLocked("entry"), url: u}
	t.history[t.current].title = t.page.docTitle()
	sameDoc = sameDocument(t.url, u)
	if !sameDoc && u == t.history[t.current].url {
		t.history[t.current] = entry
	} else {
		t.history = append(t.history[:t.current+1], entry)
		t.current = len(t.history) - 1
	}
	if sameDoc {
		return b.withinDocumentLocked(t, u), true, ""
	}
	post, errText = b.openLocked(t, u)
	return post, false, errText
}

// sameDocument reports whether navigating from cur to u stays in the
// document: u has a #fragment and differs from cur only there.
func sameDocument(cur, u string) bool {
	base, _, ok := strings.Cut(u, "#")
	curBase, _, _ := strings.Cut(cur, "#")
	return ok && base == curBase && !strings.HasPrefix(cur, "about:")
}

// withinDocumentLocked moves t's document to u (same document) and
// returns Page.navigatedWithinDocument for the sessions that enabled Page.
func (b *Browser) withinDocumentLocked(t *target, u string) []event {
	t.url, t.page.URL = u, u
	var post []event
	for _, ts := range t.sessions {
		if ts.page {
			post = append(post, event{ts, "Page.navigatedWithinDocument", map[string]any{
				"frameId": t.id, "url": u, "navigationType": "fragment",
			}})
		}
	}
	return append(post, b.infoChangedLocked(t)...)
}

// openLocked loads u in t as a new document: the page defined for it, or
// the error page of a URL that cannot load (host fail.invalid), with
// Chromium's error text.
func (b *Browser) openLocked(t *target, u string) (post []event, errText string) {
	if pu, err := url.Parse(u); err == nil && pu.Hostname() == "fail.invalid" {
		// Chromium commits its error page, titled with the host.
		pg := &Page{URL: errorPageURL, Title: pu.Hostname()}
		return b.loadLocked(t, pg, "Navigation"), "net::ERR_NAME_NOT_RESOLVED"
	}
	return b.loadLocked(t, b.pageForLocked(u), "Navigation"), ""
}

// reload answers Page.reload: the current entry's URL loads again, as a
// new document; the history stays as it is.
func (b *Browser) reload(s *session, params json.RawMessage) outcome {
	var p struct {
		IgnoreCache bool `json:"ignoreCache"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	post, _ := b.openLocked(t, t.history[t.current].url)
	return outcome{post: post}
}

// navigateToHistoryEntry answers Page.navigateToHistoryEntry: t goes to
// that entry, in the same document if only the #fragment differs, else
// loading it again; the entries stay as they are.
func (b *Browser) navigateToHistoryEntry(s *session, params json.RawMessage) outcome {
	var p struct {
		EntryID int `json:"entryId"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	t := s.target
	to := -1
	for i, e := range t.history {
		if e.id == p.EntryID {
			to = i
		}
	}
	if to < 0 {
		return outcome{err: &Error{Code: -32000, Message: "No entry with passed id"}}
	}
	t.history[t.current].title = t.page.docTitle()
	t.current = to
	u := t.history[to].url
	curBase, _, _ := strings.Cut(t.url, "#")
	base, _, _ := strings.Cut(u, "#")
	if base == curBase && u != t.url {
		return outcome{post: b.withinDocumentLocked(t, u)}
	}
	post, _ := b.openLocked(t, u)
	return outcome{post: post}
}

// getNavigationHistory answers Page.getNavigationHistory.
func (b *Browser) getNavigationHistory(s *session, _ json.RawMessage) outcome {
	t := s.target
	type entry struct {
		ID             int    `json:"id"`
		URL            string `json:"url"`
		UserTypedURL   string `json:"userTypedURL"`
		Title          string `json:"title"`
		TransitionType string `json:"transitionType"`
	}
	entries := make([]entry, len(t.history))
	for i, h := range t.history {
		entries[i] = entry{ID: h.id, URL: h.url, UserTypedURL: h.url, Title: h.title, TransitionType: "typed"}
	}
	entries[t.current].Title = t.page.docTitle()
	return outcome{result: struct {
		CurrentIndex int     `json:"currentIndex"`
		Entries      []entry `json:"entries"`
	}{t.current, entries}}
}

// templateLocked returns the page defined for u: the one given at u
// (without its #fragment, which never matters), else, for a URL with a
// query string, the one given at the URL without it. Nil if none.
func (b *Browser) templateLocked(u string) *Page {
	key := pageKey(u)
	if p := b.pages[key]; p != nil {
		return p
	}
	if i := strings.IndexByte(key, '?'); i >= 0 {
		return b.pages[key[:i]]
	}
	return nil
}

// pageKey is the key of a page's URL in Browser.pages: normalised, without
// its #fragment.
func pageKey(u string) string {
	base, _, _ := strings.Cut(normURL(u), "#")
	return base
}

// pageForLocked returns a fresh copy of the page defined for u (served with its
// Status, 200 by default), or an empty page with no title: an http(s) URL
// no page matches is served with 404, about:blank with no status.
func (b *Browser) pageForLocked(u string) *Page {
	if tmpl := b.templateLocked(u); tmpl != nil {
		pg := tmpl.clone()
		pg.URL = u
		if pg.Status == 0 {
			pg.Status = 200
		}
		return pg
	}
	pg := &Page{URL: u}
	if strings.HasPrefix(u, "http:") || strings.HasPrefix(u, "https:") {
		pg.Status = 404
	}
	return pg
}

// adopt makes pg t's page: it numbers its nodes from the target's
// counter and takes the target's viewport.
func (t *target) adopt(pg *Page) {
	pg.nextID = &t.nodeIDs
	pg.vw, pg.vh = t.vw, t.vh
	t.page = pg
	t.url = pg.URL
}

// title is the target's title as Target.getTargets reports it: the
// document's, else its URL, as Chromium shows a page without a title.
func (t *target) title() string {
	if title := t.page.docTitle(); title != "" {
		return title
	}
	return t.url
}

// loadLocked loads pg in t as a new document (typ is frameNavigated's
// type) and returns the events of the load, for the sessions that enabled
// them. Polls in flight fail as the old document's context is destroyed.
func (b *Browser) loadLocked(t *target, pg *Page, typ string) []event {
	for _, pp := range append([]*pendingPoll(nil), t.polls...) {
		b.endPollLocked(t, pp, encodeReply(pp.id, pp.s.id, nil, &Error{Code: -32000, Message: "Execution context was destroyed."}))
	}
	b.adoptLocked(t, pg)
	t.loaderID = b.nextIDLocked("LOADER")
	t.context = b.nextLocked("context")
	t.objects = make(map[string]*object)
	t.worlds = nil // gone with the document, as in Chromium
	t.pressed, t.spaceDown, t.selectAll = nil, nil, false

	var post []event
	each := func(enabled func(*session) bool, method string, params any) {
		for _, ts := range t.sessions {
			if enabled(ts) {
				post = append(post, event{ts, method, params})
			}
		}
	}
	page := func(x *session) bool { return x.page }
	lifecycle := func(x *session) bool { return x.page && x.lifecycle }
	runtime := func(x *session) bool { return x.runtime }
	// The library's status script runs first thing in the new document.
	reports := func(x *session) bool { return x.performance && x.reportsStatus() }
	phase := func(name string) { each(lifecycle, "Page.lifecycleEvent", b.lifecycleLocked(t, name)) }
	frameID := frameIDParams{FrameID: t.id}
	each(page, "Page.frameStartedLoading", frameID)
	phase("init")
	each(runtime, "Runtime.executionContextsCleared", struct{}{})
	each(page, "Page.frameNavigated", frameNavigated{Frame: b.frameLocked(t), Type: typ})
	each(reports, "Performance.metrics", map[string]any{
		"metrics": []map[string]any{{"name": "Timestamp", "value": b.sinceStart()}},
		"title":   statusReport + strconv.Itoa(pg.Status),
	})
	phase("commit")
	each(runtime, "Runtime.executionContextCreated", contextEvent{Context: b.contextLocked(t)})
	ts := timestamp{Timestamp: b.sinceStart()}
	each(page, "Page.domContentEventFired", ts)
	phase("DOMContentLoaded")
	each(page, "Page.loadEventFired", ts)
	phase("load")
	each(page, "Page.frameStoppedLoading", frameID)
	phase("networkAlmostIdle")
	phase("networkIdle")
	return append(post, b.infoChangedLocked(t)...)
}

// infoChangedLocked is Target.targetInfoChanged of t for the sessions
// that discover targets.
func (b *Browser) infoChangedLocked(t *target) []event {
	var post []event
	for _, ds := range b.liveSessionsLocked() {
		if ds.discover {
			post = append(post, event{ds, "Target.targetInfoChanged", targetEvent{TargetInfo: b.infoLocked(t)}})
		}
	}
	return post
}

// reportsStatus reports whether the session added the library's status
// script to run in new documents (Page.addScriptToEvaluateOnNewDocument).
func (s *session) reportsStatus() bool {
	for _, src := range s.newDocScripts {
		if pagejs.Names[src] == "Status" {
			return true
		}
	}
	return false
}

// addScriptOnNewDocument answers Page.addScriptToEvaluateOnNewDocument.
// The fake runs no JavaScript: it records the script, and makes the report
// of the library's status script itself (see statusReport).
func (b *Browser) addScriptOnNewDocument(s *session, params json.RawMessage) outcome {
	var p struct {
		Source string `json:"source"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	if s.newDocScripts == nil {
		s.newDocScripts = make(map[string]string)
	}
	id := strconv.Itoa(b.nextLocked("newDocScript"))
	s.newDocScripts[id] = p.Source
	return outcome{result: map[string]any{"identifier": id}}
}

// removeScriptOnNewDocument answers Page.removeScriptToEvaluateOnNewDocument.
func (b *Browser) removeScriptOnNewDocument(s *session, params json.RawMessage) outcome {
	var p struct {
		Identifier string `json:"identifier"`
	}
	if e := decode(params, &p); e != nil {
		return outcome{err: e}
	}
	delete(s.newDocScripts, p.Identifier)
	return outcome{}
}
