package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/browserpool/browserpool"
)

// Refs were numbered per tab, so every tab's first snapshot began at @e1:
// a ref an agent took from one tab's snapshot and passed to another tab
// clicked whatever that tab had numbered so ("Delete all"), without an
// error (found by helper 87's audit). Numbers are unique across a
// session's tabs now: the other tab refuses it, saying why.
func TestARefFromAnotherTabOfTheSessionIsRefusedNotClickedThere(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{
		"/i": `<title>I</title><button>Save draft</button><button>Send</button>`,
		"/j": `<title>J</title><button onclick="document.title='J-first'">First on J</button><button onclick="document.title='J-delete-all'">Delete all</button>`,
	})
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	open := func(path string) *browserpool.Tab {
		tab, err := s.OpenTab(ctx, base+path)
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	tabI, tabJ := open("/i"), open("/j")
	sendRef := ref(t, snap(t, tabI, browserpool.SnapshotOptions{}), "button", "Send")
	sj := snap(t, tabJ, browserpool.SnapshotOptions{})
	for _, r := range sj.Refs {
		if r.Ref == sendRef {
			t.Errorf("tab J's snapshot gives %s to %s %q; it is tab I's ref of \"Send\"", r.Ref, r.Role, r.Name)
		}
	}
	err := tabJ.Click(ctx, sendRef)
	if !errors.Is(err, browserpool.ErrStaleRef) || !strings.Contains(err.Error(), "may be a ref of another tab") {
		t.Errorf("tab J clicking tab I's %s: %v, want ErrStaleRef saying it may be another tab's", sendRef, err)
	}
	if title := eval[string](t, tabJ, "document.title"); title != "J" {
		t.Errorf("tab J's title is %q after the refused click, want J (nothing clicked)", title)
	}
}

// A cross-site iframe that went same-site, then cross-site again, kept its
// target id while its new renderer numbered its nodes afresh: the refs of
// its old buttons were given to its new ones, and an agent's old ref of
// "Cancel order" hovered "Keep account" (found by helper 87's audit). An
// out-of-process frame's refs are keyed by its session now.
func TestAnOldRefOfAFrameThatMovedRendererNamesNothingNew(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"/p":   `<title>P</title><button>Top</button><iframe id="f" title="F"></iframe>`,
		"/f1":  `<button>Pay 10 dollars</button><button>Cancel order</button>`,
		"/mid": `<p>same site now</p>`,
		"/f2":  `<button>Delete account</button><button>Keep account</button><button>Third</button>`,
	}
	base := serve(t, pages)
	cross := strings.Replace(base, "127.0.0.1", "localhost", 1)
	ctx := ctxT(t)
	s := mustOpen(t, ctx, newRealPool(t, browserpool.Config{}))
	tab, err := s.OpenTab(ctx, base+"/p")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // ref -> the name it was shown with
	show := func(src, want string) browserpool.Snapshot {
		t.Helper()
		if src != "" {
			if err := tab.Evaluate(ctx, `document.getElementById('f').src = `+jsString(src), nil); err != nil {
				t.Fatal(err)
			}
		}
		var sn browserpool.Snapshot
		waitFor(t, "the frame to show "+want, func() bool {
			sn = snap(t, tab, browserpool.SnapshotOptions{})
			return strings.Contains(sn.Text, want)
		})
		for _, r := range sn.Refs {
			if old, ok := seen[r.Ref]; ok && old != r.Name {
				t.Errorf("%s named %q and now names %q: a ref is never reused for another element", r.Ref, old, r.Name)
			}
			seen[r.Ref] = r.Name
		}
		return sn
	}
	s1 := show(cross+"/f1", "Cancel order")
	show(base+"/mid", "same site now")
	show(cross+"/f2", "Keep account")
	cancel := ref(t, s1, "button", "Cancel order")
	if err := tab.Hover(ctx, cancel); !errors.Is(err, browserpool.ErrStaleRef) {
		t.Errorf("hovering the old ref %s of \"Cancel order\", gone with its frame's document: %v, want ErrStaleRef", cancel, err)
	}
}

// jsString is s as a JavaScript string literal (no quotes or backslashes
// in the test's URLs).
func jsString(s string) string { return "'" + s + "'" }
