// Room: tests of ref numbering and the text of lines. No locks.

package axtext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/mafredri/cdp/protocol/dom"
)

func TestPrintNeverPassesTheLimitAndGivesRefsOnlyToShownLines(t *testing.T) {
	var lines []Line[dom.BackendNodeID]
	for i := range 50 {
		l := Line[dom.BackendNodeID]{Depth: i % 3, Role: "button", Name: fmt.Sprintf("Button number %d", i), Interactive: true}
		l.Key = NodeKey{"T", dom.BackendNodeID(i + 1)}
		l.Target = l.Key.Node
		lines = append(lines, l, Line[dom.BackendNodeID]{Depth: 1, Role: "text", Name: "some text"})
	}
	for _, limit := range []int{1, 40, 120, 200, 1000, 5000} {
		var r Refs[dom.BackendNodeID]
		text, refs, shown, omitted := r.Print("L", lines, false, limit)
		if len(text) > limit {
			t.Errorf("limit %d: %d characters", limit, len(text))
		}
		if shown+omitted != len(lines) {
			t.Errorf("limit %d: %d shown + %d omitted != %d lines", limit, shown, omitted, len(lines))
		}
		if len(r.live) != len(refs) || strings.Count(text, "@e") != len(refs) {
			t.Errorf("limit %d: %d live refs, %d listed, %d in the text", limit, len(r.live), len(refs), strings.Count(text, "@e"))
		}
		if omitted > 0 && limit >= 200 && !strings.Contains(text, "[truncated: ") {
			t.Errorf("limit %d: no truncation line in\n%s", limit, text)
		}
	}
}

func TestRefsKeepTheirNumbersAndNumbersAreNeverReused(t *testing.T) {
	line := func(node int, name string) Line[int] {
		return Line[int]{Role: "button", Name: name, Interactive: true, Key: NodeKey{"T", dom.BackendNodeID(node)}}
	}
	var r Refs[int]
	_, refs1, _, _ := r.Print("L1", []Line[int]{line(1, "a"), line(2, "b")}, false, -1)
	_, refs2, _, _ := r.Print("L1", []Line[int]{line(3, "new"), line(2, "b")}, false, -1)
	_, refs3, _, _ := r.Print("L2", []Line[int]{line(1, "other doc")}, false, -1)
	got := [][]Ref{refs1, refs2, refs3}
	want := [][]Ref{
		{{"@e1", "button", "a"}, {"@e2", "button", "b"}},
		{{"@e3", "button", "new"}, {"@e2", "button", "b"}},
		{{"@e4", "button", "other doc"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refs of three snapshots (-want +got):\n%s", diff)
	}
	if _, ok := r.live[1]; ok {
		t.Error("@e1 of the old document is still live")
	}
}

func TestCutKeepsAtMostNCharactersEndingInAnEllipsis(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven char", 10, "eleven ch…"},
		{"ééééééé", 3, "éé…"},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestATextThatFitsItsLimitIsPrintedWholeCountingCharactersNotBytes(t *testing.T) {
	lines := []Line[dom.BackendNodeID]{
		{Role: "heading", Name: "你好世界，欢迎"},
		{Depth: 1, Role: "text", Name: "Ünïcödé ✓ 🎉"},
		{Depth: 1, Role: "button", Name: "按钮", Interactive: true, Key: NodeKey{"T", 7}, Target: 7},
	}
	var whole Refs[dom.BackendNodeID]
	full, _, _, _ := whole.Print("L", lines, false, 0)
	n := utf8.RuneCountInString(full)
	if n == len(full) {
		t.Fatalf("the test's text is all ASCII (%d bytes): it cannot tell characters from bytes", n)
	}
	for _, limit := range []int{n, n + 1, n + 60} {
		var r Refs[dom.BackendNodeID]
		text, refs, shown, omitted := r.Print("L", lines, false, limit)
		if diff := cmp.Diff(full, text); diff != "" {
			t.Errorf("limit %d (the text is %d characters, %d bytes): not printed whole (-want +got):\n%s", limit, n, len(full), diff)
		}
		if shown != len(lines) || omitted != 0 || len(refs) != 1 {
			t.Errorf("limit %d: %d shown, %d omitted, %d refs; want 3, 0, 1", limit, shown, omitted, len(refs))
		}
	}
	var r Refs[dom.BackendNodeID]
	if text, _, _, omitted := r.Print("L", lines, false, n-1); omitted == 0 || utf8.RuneCountInString(text) > n-1 {
		t.Errorf("limit %d: %d characters, %d omitted; want at most %d characters and a line left out:\n%s", n-1, utf8.RuneCountInString(text), omitted, n-1, text)
	}
}

func TestRefsSharingACounterNeverShowTheSameNumberAndEachKnowsItsOwn(t *testing.T) {
	line := func(node int, name string) Line[int] {
		return Line[int]{Role: "button", Name: name, Interactive: true, Key: NodeKey{"T", dom.BackendNodeID(node)}}
	}
	var c Counter
	tab1, tab2 := Refs[int]{Shared: &c}, Refs[int]{Shared: &c}
	_, a, _, _ := tab1.Print("L", []Line[int]{line(1, "a"), line(2, "b")}, false, -1)
	_, b, _, _ := tab2.Print("L", []Line[int]{line(1, "x"), line(2, "y")}, false, -1)
	_, a2, _, _ := tab1.Print("L", []Line[int]{line(2, "b"), line(3, "c")}, false, -1)
	want := [][]Ref{
		{{"@e1", "button", "a"}, {"@e2", "button", "b"}},
		{{"@e3", "button", "x"}, {"@e4", "button", "y"}},
		{{"@e2", "button", "b"}, {"@e5", "button", "c"}},
	}
	if diff := cmp.Diff(want, [][]Ref{a, b, a2}); diff != "" {
		t.Errorf("refs of two tabs sharing a counter (-want +got):\n%s", diff)
	}
	var got1, got2 []int
	for n := 1; n <= 6; n++ {
		if tab1.Issued(n) {
			got1 = append(got1, n)
		}
		if tab2.Issued(n) {
			got2 = append(got2, n)
		}
	}
	if diff := cmp.Diff([][]int{{1, 2, 5}, {3, 4}}, [][]int{got1, got2}); diff != "" {
		t.Errorf("numbers each tab issued (-want +got):\n%s", diff)
	}
}

func TestAnInteractiveSnapshotCutByItsLimitSaysOnlyALargerLimitShowsMore(t *testing.T) {
	var lines []Line[int]
	for i := range 40 {
		lines = append(lines, Line[int]{Role: "button", Name: fmt.Sprintf("Button %d", i), Interactive: true, Key: NodeKey{"T", dom.BackendNodeID(i + 1)}})
	}
	var r Refs[int]
	text, _, _, _ := r.Print("L", lines, true, 300)
	if !strings.Contains(text, "use a larger MaxChars (negative: no bound)]") || strings.Contains(text, "use Interactive") {
		t.Errorf("the interactive snapshot's truncation line:\n%s", text)
	}
}
