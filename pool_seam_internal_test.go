package browserpool

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAHolderSetsZeroValueIsEmptyAndReadyToUse(t *testing.T) {
	var h holderSet[struct{}]
	if h.len() != 0 {
		t.Errorf("len = %d, want 0", h.len())
	}
	if got := h.keys(); got == nil || len(got) != 0 {
		t.Errorf("keys = %#v, want an empty, non-nil slice", got)
	}
	if _, ok := h.get("chat-1"); ok {
		t.Error("get on an empty set found a holder")
	}
	h.remove("chat-1") // a no-op, not a panic
	h.add("chat-1", struct{}{})
	if diff := cmp.Diff([]string{"chat-1"}, h.keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func TestAHolderSetKeepsOneRecordPerKeyAndListsKeysSorted(t *testing.T) {
	var h holderSet[*Holder]
	a, b, c := &Holder{id: NewIdentity("a")}, &Holder{id: NewIdentity("b")}, &Holder{id: NewIdentity("c")}
	h.add("chat-2", a)
	h.add("chat-1/researcher", b)
	h.add("chat-1", c)
	h.add("chat-2", b) // replaces a
	if diff := cmp.Diff([]string{"chat-1", "chat-1/researcher", "chat-2"}, h.keys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if got, ok := h.get("chat-2"); !ok || got != b {
		t.Errorf("get(chat-2) = %v, %v; want the holder added last", got, ok)
	}
	h.remove("chat-1")
	if h.len() != 2 {
		t.Errorf("len after remove = %d, want 2", h.len())
	}
	seen := map[string]*Holder{}
	for k, v := range h.all() {
		seen[k] = v
	}
	if diff := cmp.Diff(map[string]*Holder{"chat-1/researcher": b, "chat-2": b}, seen, cmp.Comparer(func(x, y *Holder) bool { return x == y })); diff != "" {
		t.Errorf("all (-want +got):\n%s", diff)
	}
}

func TestUsageOfABareSessionCountsCallsAndSaysWhyItEnded(t *testing.T) {
	s := &Session{id: "s-1", state: StateLive, done: make(chan struct{}), tabs: map[string]*Tab{}}
	s.Touch()
	u := s.usage()
	if u.busy() || u.inFlight != 0 || u.ended != "" || u.lastUse.IsZero() {
		t.Fatalf("an idle live session: %+v", u)
	}
	end, err := s.begin("Test", "")
	if err != nil {
		t.Fatal(err)
	}
	if u := s.usage(); !u.busy() || u.inFlight != 1 {
		t.Errorf("with a call in flight: %+v", u)
	}
	end()
	if u := s.usage(); u.busy() || u.inFlight != 0 {
		t.Errorf("after the call: %+v", u)
	}
	s.beginClose(ReasonIdle, nil, nil)
	if got := s.usage().ended; got != ReasonIdle {
		t.Errorf("ended = %q, want idle", got)
	}
}

// TestThePolicyLayersReachThePoolOnlyThroughTheSeam parses the Tracker,
// Allocator and Registry files and fails on any use of a pool or session
// internal that is not part of the seam (pool_seam.go).
func TestThePolicyLayersReachThePoolOnlyThroughTheSeam(t *testing.T) {
	seam := map[string]bool{"closeWith": true, "retryCleanup": true, "claimIdle": true, "closeClaimed": true, "usage": true, "tabCount": true, "logger": true, "closeTimeout": true, "shutting": true}
	// Internals of Pool and Session whose names no policy layer uses for
	// anything of its own.
	internals := map[string]bool{
		"closeSession": true, "retryClose": true, "retryPendingRemovals": true, "idleSince": true,
		"closeReason": true, "pageTargets": true, "inflight": true, "lastUsed": true, "beginClose": true,
		"finishClose": true, "endErrLocked": true, "resolveTab": true, "manifest": true, "launcher": true,
		"sessions": true, "attached": true, "pendingRm": true,
	}
	var files []string
	for _, pat := range []string{"allocator*.go", "tracker*.go", "identity*.go"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	if len(files) < 4 {
		t.Fatalf("found only %v", files)
	}
	fset := token.NewFileSet()
	var bad []string
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || ast.IsExported(sel.Sel.Name) || seam[sel.Sel.Name] {
				return true
			}
			// What the selector is applied to: a pool (x.pool, cfg.Pool,
			// s.p) or a session (x.s), by the names the layers use.
			var on string
			switch x := sel.X.(type) {
			case *ast.SelectorExpr:
				on = x.Sel.Name
			case *ast.Ident:
				on = x.Name
			}
			if internals[sel.Sel.Name] || on == "pool" || on == "Pool" || on == "p" || on == "s" {
				bad = append(bad, fset.Position(sel.Pos()).String()+": ."+sel.Sel.Name)
			}
			return true
		})
	}
	if len(bad) > 0 {
		t.Errorf("policy layers reach pool internals outside the seam:\n%s", strings.Join(bad, "\n"))
	}
}
