// Room: what the tab learns of its main frame's documents from its events
// (docWatch, which docWatch.mu guards): each document's URL and HTTP
// status, for Navigate and the history calls to read. Events arrive on the
// mux's reader through the tab's tap (Tab.onEvent): nothing here blocks
// it.

package browserpool

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/browserpool/browserpool/internal/pagejs"
)

// loadedDoc is what the tab learned of one main-frame document.
type loadedDoc struct {
	loaderID string
	url      string // redacted, from Page.frameNavigated
	status   int    // from the status script or Network.responseReceived of its document request; 0 if neither came
	reported bool   // the status script reported (its first report counts)
}

// docWatchLimit bounds the documents a docWatch remembers (the newest
// ones; a navigation reads its own right after its load event).
const docWatchLimit = 8

// docWatch remembers the tab's latest main-frame documents.
type docWatch struct {
	mu   sync.Mutex
	docs [docWatchLimit]loadedDoc // guarded by mu; a ring
	next int                      // guarded by mu; the ring's next slot
	cur  string                   // guarded by mu; the loader of the last committed document
}

// get returns what is known of loaderID's document (zero if nothing).
func (w *docWatch) get(loaderID string) loadedDoc {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range w.docs {
		if d.loaderID == loaderID {
			return d
		}
	}
	return loadedDoc{}
}

// updateLocked applies f to loaderID's document, adding it if new.
func (w *docWatch) updateLocked(loaderID string, f func(*loadedDoc)) {
	for i := range w.docs {
		if w.docs[i].loaderID == loaderID {
			f(&w.docs[i])
			return
		}
	}
	w.docs[w.next] = loadedDoc{loaderID: loaderID}
	f(&w.docs[w.next])
	w.next = (w.next + 1) % docWatchLimit
}

// noteDoc reads the main frame's Page.frameNavigated (a document
// committed, at this URL), Page.navigatedWithinDocument (the current
// document shows another URL) and its document requests'
// Network.responseReceived (the status of the final response, after
// redirects) and the status script's Performance.metrics. On the mux's
// reader.
func (t *Tab) noteDoc(method string, params json.RawMessage) {
	switch method {
	case "Page.frameNavigated":
		var ev struct {
			Frame struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
				LoaderID string `json:"loaderId"`
				URL      string `json:"url"`
				Fragment string `json:"urlFragment"` // "#frag": the URL goes without it
				// The URL an error page stands for (its url is
				// chrome-error://chromewebdata/): the one the tab shows.
				Unreachable string `json:"unreachableUrl"`
			} `json:"frame"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.Frame.ParentID != "" || ev.Frame.LoaderID == "" {
			return
		}
		url := shownURL(cmp.Or(ev.Frame.Unreachable, ev.Frame.URL+ev.Frame.Fragment))
		t.docs.mu.Lock()
		t.docs.updateLocked(ev.Frame.LoaderID, func(d *loadedDoc) { d.url = url })
		t.docs.cur = ev.Frame.LoaderID
		t.docs.mu.Unlock()
	case "Page.navigatedWithinDocument":
		// history.pushState/replaceState or a fragment: the current
		// document now shows another URL.
		var ev struct {
			FrameID string `json:"frameId"`
			URL     string `json:"url"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.FrameID != t.id {
			return
		}
		url := shownURL(ev.URL)
		t.docs.mu.Lock()
		if t.docs.cur != "" {
			t.docs.updateLocked(t.docs.cur, func(d *loadedDoc) { d.url = url })
		}
		t.docs.mu.Unlock()
	case "Performance.metrics":
		// The status script's report of the document that committed
		// last (see statusScript). Only the first report after a commit
		// counts: a page calling console.timeStamp with our title later
		// cannot change it.
		if !bytes.Contains(params, []byte(pagejs.StatusTitle)) {
			return // another timestamp, or none: skip the decode
		}
		var ev struct {
			Title string `json:"title"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return
		}
		digits, ok := strings.CutPrefix(ev.Title, pagejs.StatusTitle)
		status, err := strconv.Atoi(digits)
		if !ok || err != nil {
			return
		}
		t.docs.mu.Lock()
		if t.docs.cur != "" {
			t.docs.updateLocked(t.docs.cur, func(d *loadedDoc) {
				if !d.reported {
					d.reported = true
					if status > 0 && d.status == 0 {
						d.status = status
					}
				}
			})
		}
		t.docs.mu.Unlock()
	case "Network.responseReceived":
		if !bytes.Contains(params, []byte(`"Document"`)) {
			return // not a document's response: skip the decode
		}
		var ev struct {
			LoaderID string `json:"loaderId"`
			FrameID  string `json:"frameId"`
			Type     string `json:"type"`
			Response struct {
				Status int `json:"status"`
			} `json:"response"`
		}
		if json.Unmarshal(params, &ev) != nil || ev.Type != "Document" || ev.FrameID != t.id || ev.LoaderID == "" {
			return
		}
		t.docs.mu.Lock()
		t.docs.updateLocked(ev.LoaderID, func(d *loadedDoc) { d.status = ev.Response.Status })
		t.docs.mu.Unlock()
	}
}
