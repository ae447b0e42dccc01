package browserpool_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browserpool/browserpool"
)

// followSite answers a POST form, a GET form and a link whose answers
// take 700 ms, a download, an answer without content and a fragment link.
func followSite(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/done":
		time.Sleep(700 * time.Millisecond)
		w.Write([]byte(`<title>done ` + r.Method + `</title><p>thanks</p>`))
	case "/file":
		w.Header().Set("Content-Disposition", `attachment; filename="a.txt"`)
		w.Write([]byte("a"))
	case "/empty":
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Write([]byte(`<title>start</title>
<form method="post" action="/done"><input name="q" value="1"><button>Place order</button></form>
<form method="get" action="/done"><button>Search</button></form>
<form method="post" action="/done" name="pb"></form><a href="javascript:document.forms.pb.submit()">Post back</a>
<a href="javascript:location.href='/done'">Script link</a> <a href="javascript:void(0)" onclick="document.title='start'">Nothing</a>
<button type="button" onclick="location.href='/done'">Go on</button>
<a href="/done">Next page</a> <a href="/file">Get file</a> <a href="/empty">Ping</a> <a href="#part">Part</a>
<p id="part" style="margin-top:2000px">part</p>`))
	}
}

func TestAClickThatSubmitsAFormReturnsWithTheAnswersPageInTheTab(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, followSite)
	for _, tc := range []struct{ role, name, title string }{
		{"button", "Place order", "done POST"},
		{"button", "Search", "done GET"},
		{"link", "Next page", "done GET"},
		{"link", "Post back", "done POST"}, // javascript: links run their script a moment after the click
		{"link", "Script link", "done GET"},
	} {
		for i := range 2 {
			if _, err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
				t.Fatal(err)
			}
			if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), tc.role, tc.name)); err != nil {
				t.Fatalf("Click(%s %q): %v", tc.role, tc.name, err)
			}
			// No wait between: the click returned with the new page.
			if s := snap(t, tab, browserpool.SnapshotOptions{}); s.Title != tc.title {
				t.Errorf("round %d: the snapshot right after clicking %s %q reads %q; want the answer's page %q", i+1, tc.role, tc.name, s.Title, tc.title)
			}
		}
	}
}

func TestAKeyThatFollowsALinkOrPressesAButtonReturnsWithTheAnswersPageInTheTab(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, followSite)
	for _, tc := range []struct{ key, focus, title string }{
		{"Enter", "Post back", "done POST"}, // javascript: links run their script a moment after the key
		{"Enter", "Script link", "done GET"},
		{"Enter", "Next page", "done GET"},
		{" ", "Go on", "done GET"}, // a button's click handler that sets location
		{"Enter", "Go on", "done GET"},
	} {
		for i := range 3 {
			if _, err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
				t.Fatal(err)
			}
			focus := `[...document.querySelectorAll("a, button")].find(e => e.textContent === ` + strconv.Quote(tc.focus) + `).focus()`
			if err := tab.Evaluate(ctx, focus, nil); err != nil {
				t.Fatal(err)
			}
			if err := tab.Press(ctx, tc.key); err != nil {
				t.Fatalf("Press(%q) on %q: %v", tc.key, tc.focus, err)
			}
			// No wait between: the key returned with the new page.
			if s := snap(t, tab, browserpool.SnapshotOptions{}); s.Title != tc.title {
				t.Errorf("round %d: the snapshot right after pressing %q on %q reads %q; want the answer's page %q", i+1, tc.key, tc.focus, s.Title, tc.title)
			}
		}
	}
}

// slowLinkTab returns a tab at a page whose link "Slow" leads to a server
// that answers only when the test ends: the browser holds the old page's
// commands meanwhile.
func slowLinkTab(t *testing.T, ctx context.Context) *browserpool.Tab {
	t.Helper()
	answer := make(chan struct{})
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-answer:
			case <-r.Context().Done():
			}
			w.Write([]byte(`<title>slow</title>`))
			return
		}
		w.Write([]byte(`<title>start</title><a href="/slow">Slow</a>`))
	})
	t.Cleanup(func() { close(answer) })
	return tab
}

func TestAClickOnALinkWhoseServerDoesNotAnswerReturnsAfterTheFollowsBound(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab := slowLinkTab(t, ctx)
	if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Slow")); err != nil {
		t.Fatal(err)
	}
	clicks := traced(tab, "click")
	if got := clicks[len(clicks)-1]; !strings.Contains(got, "had no new page after 10s") {
		t.Errorf("the click's trace %q; want it to say the navigation had no new page after the follow's 10 s", got)
	}
	// Mouse input needs no answer of the page, which gives none meanwhile.
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := tab.HoverAt(hctx, 10, 10); err != nil {
		t.Errorf("HoverAt while the tab waits for the link's server: %v; want it sent", err)
	}
}

// A click whose caller's deadline ends while the link's server has not
// answered is done (nil: the click landed), and its trace says the tab
// may still be loading.
func TestAClickWhoseDeadlineEndsBeforeTheNewPageSaysTheTabMayStillBeLoading(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab := slowLinkTab(t, ctx)
	slow := ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", "Slow")
	// The click itself takes far less, even on a loaded machine; the
	// deadline stays under followWait (10 s), so it ends the click's wait.
	cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	if err := tab.Click(cctx, slow); err != nil {
		t.Fatal(err)
	}
	clicks := traced(tab, "click")
	if got := clicks[len(clicks)-1]; !strings.Contains(got, "the caller's context ended before the navigation it started had a new page") {
		t.Errorf("the click's trace %q; want it to say the caller's context ended before the new page came", got)
	}
}

func TestAClickWhoseNavigationMakesNoNewPageReturnsWithoutWaiting(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, srv := servedTab(t, ctx, followSite)
	for _, name := range []string{"Get file", "Ping", "Part", "Nothing"} {
		if _, err := tab.Navigate(ctx, srv.URL+"/"); err != nil {
			t.Fatal(err)
		}
		if err := tab.Click(ctx, ref(t, snap(t, tab, browserpool.SnapshotOptions{}), "link", name)); err != nil {
			t.Fatalf("Click(%q): %v", name, err)
		}
		clicks := traced(tab, "click")
		if got := clicks[len(clicks)-1]; strings.Contains(got, "had no new page") {
			t.Errorf("clicking %q (a download, no content, a fragment, a javascript:void(0) link) waited for a new page: %s", name, got)
		}
		if s := snap(t, tab, browserpool.SnapshotOptions{}); s.Title != "start" {
			t.Errorf("after clicking %q the tab reads %q; want it still on the start page", name, s.Title)
		}
	}
}

func TestAClickLeavingAPageThatAsksBeforeUnloadReturnsOnceTheDialogKeptIt(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	tab, _ := servedTab(t, ctx, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			w.Write([]byte(`<title>next</title>`))
			return
		}
		w.Write([]byte(`<title>draft</title><input aria-label="Note"> <a href="/next">Leave</a>
<script>addEventListener("beforeunload", e => { e.preventDefault(); e.returnValue = "" })</script>`))
	})
	s := snap(t, tab, browserpool.SnapshotOptions{})
	if err := tab.Click(ctx, ref(t, s, "textbox", "Note")); err != nil { // the page asks only once a person used it
		t.Fatal(err)
	}
	// The default handler dismisses the "Leave site?" dialog: the page
	// stays, and the click returns without waiting for a new page.
	if err := tab.Click(ctx, ref(t, s, "link", "Leave")); err != nil {
		t.Fatal(err)
	}
	clicks := traced(tab, "click")
	if got := clicks[len(clicks)-1]; strings.Contains(got, "had no new page") {
		t.Errorf("the click waited out the follow bound for a navigation the dialog cancelled: %s", got)
	}
	ds := tab.Dialogs()
	if len(ds) != 1 || ds[0].Type != "beforeunload" || ds[0].Accepted {
		t.Errorf("dialogs %+v; want one beforeunload, dismissed", ds)
	}
	if got := snap(t, tab, browserpool.SnapshotOptions{}).Title; got != "draft" {
		t.Errorf("the tab reads %q; want it still on the draft", got)
	}
}
