package browserpool_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
)

// A snapshot is read as well as acted on: a paragraph of a few hundred
// characters is a text line whole (it was cut at 100, leaving an agent
// unable to read an article), a page-long one is cut at 500, and a long
// label next to its field is still said once.
func TestASnapshotKeepsAParagraphWholeAndCutsOnlyAPageLongText(t *testing.T) {
	para := strings.TrimSpace(strings.Repeat("The city council voted on Tuesday to approve the new budget. ", 6)) // 365 characters
	long := strings.Repeat("abcdefghij", 80)                                                                      // 800
	label := strings.Repeat("Tell us how you heard of us ", 5)                                                    // 140, a label longer than a name keeps
	_, tab, _ := htmlTab(t, `<title>news</title><p>`+para+`</p><p>`+long+`</p><label for=f>`+label+`</label><input id=f>`)
	s := snap(t, tab, browserpool.SnapshotOptions{})
	var texts []string
	for _, l := range strings.Split(s.Text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "- text "); ok {
			texts = append(texts, rest)
		}
	}
	want := []string{`"` + para + `"`, `"` + long[:499] + `…"`}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("the snapshot's text lines (-want +got):\n%s\nsnapshot:\n%s", diff, s.Text)
	}
	var said []string
	for _, l := range strings.Split(s.Text, "\n") {
		if strings.Contains(l, "Tell us how") {
			said = append(said, strings.Fields(l)[1])
		}
	}
	if diff := cmp.Diff([]string{"textbox"}, said); diff != "" {
		t.Errorf("the lines saying the long label, by role (-want +got): want only the field's:\n%s\nsnapshot:\n%s", diff, s.Text)
	}
}
