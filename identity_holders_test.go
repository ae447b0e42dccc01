package browserpool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// Holder keys (I4, I6): one agent, one key; plain ids keep their keys.

func TestHolderKeysNestChildAgentsAndEscapeSlashesAndPercents(t *testing.T) {
	root := browserpool.NewIdentity("chat-1")
	cases := []struct {
		name string
		id   browserpool.Identity
		want string
	}{
		{"the root agent", root, "chat-1"},
		{"a child", root.Child("researcher"), "chat-1/researcher"},
		{"a grandchild", root.Child("writer").Child("researcher"), "chat-1/writer/researcher"},
		{"a child named with a slash", root.Child("a/b"), "chat-1/a%2Fb"},
		{"a grandchild named like the slash's parts", root.Child("a").Child("b"), "chat-1/a/b"},
		{"a child named with a percent", root.Child("50%"), "chat-1/50%25"},
		{"a child named like the percent's escape", root.Child("50%25"), "chat-1/50%2525"},
		{"a child with an empty name", root.Child(""), "chat-1"},
		{"a tool session id with a slash", browserpool.Identity{ToolSessionID: "a/b"}, "a%2Fb"},
		{"an agent of a tool session", browserpool.Identity{ToolSessionID: "a", Agent: "b"}, "a/b"},
		{"a tool session id with a percent", browserpool.Identity{ToolSessionID: "a%2Fb"}, "a%252Fb"},
		{"a child of a tool session id with a slash", browserpool.NewIdentity("a/b").Child("c"), "a%2Fb/c"},
	}
	got := map[string]string{}
	want := map[string]string{}
	seen := map[string]string{}
	for _, c := range cases {
		got[c.name], want[c.name] = c.id.HolderKey(), c.want
		if c.name == "a child with an empty name" {
			continue // the parent's own holder, by design
		}
		if other, dup := seen[c.id.HolderKey()]; dup {
			t.Errorf("%s and %s share the holder key %q", other, c.name, c.id.HolderKey())
		}
		seen[c.id.HolderKey()] = c.name
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("holder keys (-want +got):\n%s", diff)
	}
	nested := root.Child("writer").Child("researcher")
	if diff := cmp.Diff(browserpool.Identity{ToolSessionID: "chat-1", BrowserSessionID: "chat-1", Agent: "writer/researcher"}, nested); diff != "" {
		t.Errorf("a grandchild's identity (-want +got):\n%s", diff)
	}
	if iso := root.Child("writer").IsolatedChild("scraper"); iso.Agent != "writer/scraper" {
		t.Errorf("an isolated grandchild's agent path: %q, want %q", iso.Agent, "writer/scraper")
	}
}

func TestANestedChildAgentIsAHolderApartFromItsParentsSiblingOfTheSameName(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{"/direct": "<title>direct</title>", "/nested": "<title>nested</title>"})
	p := newRealPool(t, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	root := browserpool.NewIdentity("chat-1")
	direct, err := r.Attach(ctx, root.Child("researcher"))
	if err != nil {
		t.Fatal(err)
	}
	nested, err := r.Attach(ctx, root.Child("writer").Child("researcher"))
	if err != nil {
		t.Fatal(err)
	}
	if direct == nested {
		t.Fatal("the writer's researcher and the root's researcher are one holder")
	}
	if diff := cmp.Diff([]string{"chat-1/researcher", "chat-1/writer/researcher"}, r.Holders("chat-1")); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	dt, err := direct.OpenTab(ctx, base+"/direct")
	if err != nil {
		t.Fatal(err)
	}
	nt, err := nested.OpenTab(ctx, base+"/nested")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nested.Tab(ctx, dt.ID()); !errors.Is(err, browserpool.ErrTabNotHeld) {
		t.Errorf("the nested researcher reached the direct researcher's tab: %v; want ErrTabNotHeld", err)
	}
	// The nested agent ends; the direct one keeps its tab and its hold.
	if err := nested.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := direct.Tab(ctx, dt.ID())
	if err != nil {
		t.Fatalf("the direct researcher's tab after the nested one detached: %v", err)
	}
	var title string
	if err := got.Evaluate(ctx, "document.title", &title); err != nil || title != "direct" {
		t.Errorf("the direct researcher's page after the nested one detached: %q, %v", title, err)
	}
	tabs, err := direct.Session().Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range tabs {
		if ti.TabID == nt.ID() {
			t.Errorf("the nested researcher's tab %s outlived its Detach", nt.ID())
		}
	}
	if diff := cmp.Diff([]string{"chat-1/researcher"}, r.Holders("chat-1")); diff != "" {
		t.Errorf("holders after the nested researcher detached (-want +got):\n%s", diff)
	}
}

func TestAToolSessionIdWithASlashIsAHolderApartFromAnAgentOfTheSameKey(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	agentOfA := browserpool.Identity{ToolSessionID: "a", BrowserSessionID: "shared", Agent: "b"}
	toolAB := browserpool.Identity{ToolSessionID: "a/b", BrowserSessionID: "shared"}
	h1, err := r.Attach(ctx, agentOfA)
	if err != nil {
		t.Fatal(err)
	}
	t1, err := h1.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := r.Attach(ctx, toolAB)
	if err != nil {
		t.Fatal(err)
	}
	if h1 == h2 {
		t.Fatal("tool session a/b and agent b of tool session a are one holder")
	}
	if diff := cmp.Diff([]string{"a%2Fb", "a/b"}, r.Holders("shared")); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	if _, err := h2.Tab(ctx, t1.ID()); !errors.Is(err, browserpool.ErrTabNotHeld) {
		t.Errorf("tool session a/b reached the tab of tool session a's agent: %v; want ErrTabNotHeld", err)
	}
	// Ending tool session a/b leaves tool session a's agent and its tab.
	if err := r.EndToolSession(ctx, "a/b"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/b"}, r.Holders("shared")); diff != "" {
		t.Errorf("holders after EndToolSession(a/b) (-want +got):\n%s", diff)
	}
	if _, err := h1.Tab(ctx, t1.ID()); err != nil {
		t.Errorf("tool session a's agent lost its tab when tool session a/b ended: %v", err)
	}
}

// Detached holders (I4): a hold that ended cannot act.

func TestADetachedHolderOpensNoTabAndSaysToAttachAgain(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parent, err := r.Attach(ctx, browserpool.NewIdentity("chat-1"))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := parent.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	other, err := r.Attach(ctx, browserpool.Identity{ToolSessionID: "chat-2", BrowserSessionID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	ot, err := other.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.EndToolSession(ctx, "chat-2"); err != nil {
		t.Fatal(err)
	}
	before, err := parent.Session().Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}

	tab, err := other.OpenTab(ctx, "about:blank")
	if tab != nil {
		t.Errorf("the holder of ended tool session chat-2 opened tab %s in chat-1's browser", tab.ID())
	}
	checkDetached(t, err, "Holder.OpenTab", "Registry.EndToolSession")
	_, err = other.Tab(ctx, "")
	checkDetached(t, err, "Holder.Tab", "Registry.EndToolSession")
	_, err = other.Tab(ctx, ot.ID())
	checkDetached(t, err, "Holder.Tab", "Registry.EndToolSession")
	_, err = other.Tabs(ctx)
	checkDetached(t, err, "Holder.Tabs", "Registry.EndToolSession")
	checkDetached(t, other.HandTab(ot.ID(), parent.Identity()), "Holder.HandTab", "Registry.EndToolSession")
	checkDetached(t, other.Publish(ctx, "browser::abc::g1"), "Holder.Publish", "Registry.EndToolSession")

	after, err := parent.Session().Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tabIDs(before), tabIDs(after)); diff != "" {
		t.Errorf("the browser's tabs changed under a detached holder's calls (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff([]string{pt.ID()}, tabIDs(after)); diff != "" {
		t.Errorf("the browser's tabs (-want +got):\n%s", diff)
	}
	if r.LastGroup() != "" {
		t.Errorf("a detached holder published group %q", r.LastGroup())
	}
	// Detach says so too; detaching again is still a no-op.
	child, err := r.Attach(ctx, browserpool.NewIdentity("chat-1").Child("helper"))
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = child.OpenTab(ctx, "about:blank")
	checkDetached(t, err, "Holder.OpenTab", "Holder.Detach")
	if err := child.Detach(ctx); err != nil {
		t.Errorf("a second Detach: %v; want nil", err)
	}
	// Attaching again gives a new holder that acts.
	again, err := r.Attach(ctx, browserpool.NewIdentity("chat-1").Child("helper"))
	if err != nil {
		t.Fatal(err)
	}
	if again == child {
		t.Fatal("attaching again returned the detached holder")
	}
	if _, err := again.OpenTab(ctx, "about:blank"); err != nil {
		t.Errorf("the new holder's OpenTab: %v", err)
	}
}

// checkDetached fails t unless err is op's error on a holder that by
// detached: ErrInvalidIdentity, saying so, hinting to attach again.
func checkDetached(t *testing.T, err error, op, by string) {
	t.Helper()
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrInvalidIdentity) {
		t.Errorf("%s on a holder detached by %s: %v; want an ErrInvalidIdentity *Error", op, by, err)
		return
	}
	type view struct {
		Op                         string
		SaysDetachedBy, AttachHint bool
	}
	got := view{e.Op, strings.Contains(e.Detail, "was detached") && strings.Contains(e.Detail, by), strings.Contains(e.Hint, "Registry.Attach")}
	if diff := cmp.Diff(view{op, true, true}, got); diff != "" {
		t.Errorf("%s on a holder detached by %s: %v (-want +got):\n%s", op, by, err, diff)
	}
}

func tabIDs(tabs []browserpool.TabInfo) []string {
	ids := make([]string, 0, len(tabs))
	for _, ti := range tabs {
		ids = append(ids, ti.TabID)
	}
	return ids
}

func TestATabThatOpensAfterItsHolderDetachedIsClosedAndNotReturned(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parent, err := r.Attach(ctx, browserpool.NewIdentity("chat-1"))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := parent.OpenTab(ctx, "about:blank") // takes the start-up tab
	if err != nil {
		t.Fatal(err)
	}
	child, err := r.Attach(ctx, browserpool.NewIdentity("chat-1").Child("helper"))
	if err != nil {
		t.Fatal(err)
	}
	b := l.BrowserFor(parent.Session())
	gate := b.Hold("Target.createTarget")
	type result struct {
		tab *browserpool.Tab
		err error
	}
	done := make(chan result, 1)
	go func() {
		tab, err := child.OpenTab(ctx, "about:blank")
		done <- result{tab, err}
	}()
	if err := gate.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The child detaches while its tab is being created.
	if err := child.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	gate.Release()
	res := <-done
	if res.tab != nil {
		t.Fatalf("OpenTab returned tab %s of a holder detached while it opened (error %v)", res.tab.ID(), res.err)
	}
	checkDetached(t, res.err, "Holder.OpenTab", "Holder.Detach")
	if res.err != nil && !strings.Contains(res.err.Error(), "the tab its call opened meanwhile was closed again") {
		t.Errorf("the error does not say the tab opened meanwhile was closed: %v", res.err)
	}
	waitFor(t, "only the parent's tab left in the browser", func() bool {
		ts := b.Targets()
		return len(ts) == 1 && ts[0].ID == pt.ID()
	})
}

// A holder's errors (I6): its own tabs, its own methods.

func TestAHoldersTabErrorNamesOnlyItsOwnTabsAndHolderMethods(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parent, err := r.Attach(ctx, browserpool.NewIdentity("chat-1"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := r.Attach(ctx, browserpool.NewIdentity("chat-1").Child("helper"))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := parent.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	// A holder with no tab yet says so.
	_, err = child.Tab(ctx, "")
	checkHolderTabErr(t, err, pt.ID(), "holder chat-1/helper has no tab yet", "Holder.OpenTab")

	c1, err := child.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	c2, err := child.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	// Its latest tab closes: an empty id falls back to the one before.
	if err := child.Session().CloseTab(ctx, c2.ID()); err != nil {
		t.Fatal(err)
	}
	got, err := child.Tab(ctx, "")
	if err != nil {
		t.Fatalf("child.Tab(\"\") with its latest tab closed: %v; want its other tab %s", err, c1.ID())
	}
	if got.ID() != c1.ID() {
		t.Errorf("child.Tab(\"\") = %s, want its open tab %s", got.ID(), c1.ID())
	}
	_, err = child.Tab(ctx, c2.ID())
	checkHolderTabErr(t, err, pt.ID(), "holder chat-1/helper has no tab "+c2.ID()+"; its open tabs: ["+c1.ID()+"]", "Holder.Tabs")

	// Its only tab closes: no tab, and no other holder's tab named.
	if err := child.Session().CloseTab(ctx, c1.ID()); err != nil {
		t.Fatal(err)
	}
	_, err = child.Tab(ctx, "")
	checkHolderTabErr(t, err, pt.ID(), "holder chat-1/helper has no open tab: its tabs ["+c1.ID()+"] were closed", "Holder.OpenTab")
	_, err = child.Tab(ctx, c1.ID())
	checkHolderTabErr(t, err, pt.ID(), "holder chat-1/helper has no tab "+c1.ID()+"; its open tabs: none", "Holder.OpenTab")
	tabs, err := child.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 0 {
		t.Errorf("the child's tabs after both closed: %+v, want none", tabs)
	}
}

// checkHolderTabErr fails t unless err is a Holder.Tab ErrTabNotFound error
// with detail, a hint naming hintWants and no Session method, and no
// mention of the other holder's tab otherTab.
func checkHolderTabErr(t *testing.T, err error, otherTab, detail, hintWants string) {
	t.Helper()
	var e *browserpool.Error
	if !errors.As(err, &e) || !errors.Is(err, browserpool.ErrTabNotFound) {
		t.Errorf("got %v; want an ErrTabNotFound *Error", err)
		return
	}
	type view struct {
		Op, Detail                                string
		HintNamesHolder, NamesSession, NamesOther bool
	}
	got := view{e.Op, e.Detail, strings.Contains(e.Hint, hintWants), strings.Contains(err.Error(), "Session."), strings.Contains(err.Error(), otherTab)}
	if diff := cmp.Diff(view{"Holder.Tab", detail, true, false, false}, got); diff != "" {
		t.Errorf("%v (-want +got):\n%s", err, diff)
	}
}

func TestAHoldersErrorForATabClosedBehindItsBackReadsWellVerbatim(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parent, err := r.Attach(ctx, browserpool.NewIdentity("chat-1"))
	if err != nil {
		t.Fatal(err)
	}
	child, err := r.Attach(ctx, browserpool.NewIdentity("chat-1").Child("helper"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.OpenTab(ctx, "about:blank"); err != nil {
		t.Fatal(err)
	}
	sid := child.Session().ID()
	_, err = child.Tab(ctx, "")
	want := "browserpool: Holder.Tab session=" + sid + ": tab not found: holder chat-1/helper has no tab yet (hint: open one with Holder.OpenTab first)"
	if diff := cmp.Diff(want, errText(err)); diff != "" {
		t.Errorf("Tab(\"\") of a holder with no tab (-want +got):\n%s", diff)
	}
	ct, err := child.OpenTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Session().CloseTab(ctx, ct.ID()); err != nil {
		t.Fatal(err)
	}
	_, err = child.Tab(ctx, ct.ID())
	want = "browserpool: Holder.Tab session=" + sid + " tab=" + ct.ID() + ": tab not found: tab " + ct.ID() + " of holder chat-1/helper was closed; its open tabs: none (hint: use one of the holder's open tabs (Holder.Tabs lists them), or open a new one with Holder.OpenTab)"
	if diff := cmp.Diff(want, errText(err)); diff != "" {
		t.Errorf("Tab(id) of the holder's closed tab (-want +got):\n%s", diff)
	}
	_, err = child.Tab(ctx, "")
	want = "browserpool: Holder.Tab session=" + sid + ": tab not found: holder chat-1/helper has no open tab: the tabs it held were closed or handed over (hint: open a new one with Holder.OpenTab)"
	if diff := cmp.Diff(want, errText(err)); diff != "" {
		t.Errorf("Tab(\"\") of a holder whose tab closed (-want +got):\n%s", diff)
	}
	if err := r.EndToolSession(ctx, "chat-1"); err != nil {
		t.Fatal(err)
	}
	_, err = child.OpenTab(ctx, "about:blank")
	want = "browserpool: Holder.OpenTab session=" + sid + ": invalid identity: holder chat-1/helper was detached from browser chat-1 by Registry.EndToolSession: it holds no tab and can no longer act; nothing was done (hint: attach again with Registry.Attach or Registry.AttachGroup to get a new holder, and act through it)"
	if diff := cmp.Diff(want, errText(err)); diff != "" {
		t.Errorf("OpenTab of a detached holder (-want +got):\n%s", diff)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
