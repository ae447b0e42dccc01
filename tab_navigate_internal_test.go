package browserpool

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool/internal/pagejs"
)

// The status script's report belongs to the main-frame document that
// committed last; only its first report counts (a page that repeats our
// timestamp title later cannot change it), a report of 0 (about:blank, no
// navigation entry) says nothing, other timestamps and malformed titles
// are ignored, and a status the Network domain reported stays.
func TestTheStatusReportBelongsToTheDocumentThatCommittedLastAndOnlyItsFirstCounts(t *testing.T) {
	tab := &Tab{id: "T"}
	commit := func(loader string) {
		tab.noteDoc("Page.frameNavigated", json.RawMessage(fmt.Sprintf(`{"frame":{"id":"T","loaderId":%q,"url":"http://a.test/%s"}}`, loader, loader)))
	}
	report := func(title string) {
		tab.noteDoc("Performance.metrics", json.RawMessage(fmt.Sprintf(`{"metrics":[{"name":"Timestamp","value":1.5}],"title":%q}`, title)))
	}
	status := func(loader string) int { return tab.docs.get(loader).status }

	report(pagejs.StatusTitle + "200") // before any commit: nobody's
	commit("L1")
	report("somebody else's timestamp")
	report(pagejs.StatusTitle + "x")
	report(pagejs.StatusTitle + "404")
	report(pagejs.StatusTitle + "999") // the page, later: ignored
	commit("L2")
	report(pagejs.StatusTitle + "0")   // about:blank says nothing...
	report(pagejs.StatusTitle + "500") // ...and still was the first report
	tab.noteDoc("Network.responseReceived", json.RawMessage(`{"loaderId":"L3","frameId":"T","type":"Document","response":{"status":302}}`))
	commit("L3")
	report(pagejs.StatusTitle + "200")
	commit("L4")
	report(pagejs.StatusTitle + "201")

	got := []int{status("L1"), status("L2"), status("L3"), status("L4")}
	if diff := cmp.Diff([]int{404, 0, 302, 201}, got); diff != "" {
		t.Errorf("statuses of L1..L4 (-want +got):\n%s", diff)
	}
}
