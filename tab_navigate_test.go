package browserpool_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// Navigate takes the HTTP status of the document it loaded without asking
// the page after the load event: from the page's own answer read at commit,
// or, once the tab follows the network, from the main frame's document
// response (the final one after redirects). Same-document navigations have
// no status, HTTP error pages have theirs, and a page the browser cannot
// load is an ErrNavigation error (issue 14).
func TestNavigateTakesTheStatusOfTheFinalResponseWithoutAReadAfterTheLoad(t *testing.T) {
	requireBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r1":
			http.Redirect(w, r, "/r2?code=abc", http.StatusMovedPermanently)
		case "/r2":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/ok":
			fmt.Fprint(w, "<title>ok</title><iframe src='/framed'></iframe>")
		case "/framed":
			w.WriteHeader(http.StatusTeapot) // a subframe's status is not the page's
			fmt.Fprint(w, "framed")
		case "/replace":
			fmt.Fprint(w, `<title>r</title><script>history.replaceState(null, "", "/replaced?session=s3cr3t")</script>`)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "<title>oops</title>the site's own error page")
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<title>not here</title>no such page")
		}
	}))
	defer srv.Close()
	p := newRealPool(t, browserpool.Config{})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, p)
	tab, err := s.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Status   int
		FinalURL string
		SameDoc  bool
	}
	cases := []struct {
		path string
		want got
	}{
		{"/ok", got{200, srv.URL + "/ok", false}},
		{"/ok#part", got{0, "", true}},
		{"/missing", got{404, srv.URL + "/missing", false}},
		{"/r1", got{200, srv.URL + "/ok", false}},
		{"/broken", got{500, srv.URL + "/broken", false}},
		{"/replace", got{200, srv.URL + "/replaced", false}}, // the URL the page shows once loaded
	}
	run := func(mode string) {
		for _, tc := range cases {
			res, err := tab.Navigate(ctx, srv.URL+tc.path)
			if err != nil {
				t.Fatalf("%s: Navigate %s: %v", mode, tc.path, err)
			}
			if diff := cmp.Diff(tc.want, got{res.Status, res.FinalURL, res.LoaderID == ""}); diff != "" {
				t.Errorf("%s: Navigate %s (-want +got):\n%s", mode, tc.path, diff)
			}
		}
	}
	run("without the Network domain")
	if _, err := tab.Network(ctx); err != nil { // turns the Network domain on
		t.Fatal(err)
	}
	run("with the Network domain")
	if n := browserpool.StatusReadsAfterLoad(tab); n != 0 {
		t.Errorf("%d navigations read their status after the load event, want 0", n)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	_, err = tab.Navigate(ctx, closed)
	if !errors.Is(err, browserpool.ErrNavigation) || !strings.Contains(err.Error(), "net::ERR_") {
		t.Errorf("Navigate to a closed port: %v, want ErrNavigation with the browser's net:: error", err)
	}
}
