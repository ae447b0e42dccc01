package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

func newRegistry(t testing.TB, p *browserpool.Pool) *browserpool.Registry {
	t.Helper()
	r, err := browserpool.NewRegistry(browserpool.RegistryConfig{Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestAParentAndASharingChildActInOneBrowserEachInItsOwnTab(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{"/parent": "<title>parent</title>", "/child": "<title>child</title>"})
	var c closes
	p := newRealPool(t, browserpool.Config{Hooks: browserpool.Hooks{SessionClosed: c.hook}})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parentID := browserpool.NewIdentity("chat-1")
	parent, err := r.Attach(ctx, parentID)
	if err != nil {
		t.Fatal(err)
	}
	child, err := r.Attach(ctx, parentID.Child("researcher"))
	if err != nil {
		t.Fatal(err)
	}
	if parent.Session() != child.Session() {
		t.Fatal("a sharing child got a browser of its own")
	}
	pt, err := parent.OpenTab(ctx, base+"/parent")
	if err != nil {
		t.Fatal(err)
	}
	ct, err := child.OpenTab(ctx, base+"/child")
	if err != nil {
		t.Fatal(err)
	}
	// Each holder sees and acts on its own tabs only.
	if _, err := child.Tab(ctx, pt.ID()); !errors.Is(err, browserpool.ErrTabNotHeld) {
		t.Errorf("the child reached the parent's tab: %v", err)
	}
	tabs, err := child.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 1 || tabs[0].TabID != ct.ID() {
		t.Errorf("the child's tab list: %+v, want only its own tab", tabs)
	}
	if diff := cmp.Diff([]string{"chat-1", "chat-1/researcher"}, r.Holders("chat-1")); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	// The child ends; the parent's browser and tab survive.
	if err := child.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	var title string
	if err := pt.Evaluate(ctx, "document.title", &title); err != nil || title != "parent" {
		t.Fatalf("the parent's tab after the child ended: %q, %v", title, err)
	}
	if parent.Session().Err() != nil {
		t.Fatal("ending the child closed the shared browser")
	}
	// The last holder leaves: the browser closes, reason unpinned.
	sid := parent.Session().ID()
	if err := r.EndToolSession(ctx, "chat-1"); err != nil {
		t.Fatal(err)
	}
	<-parent.Session().Done()
	waitFor(t, "the close event", func() bool { return len(c.reasons(sid)) == 1 })
	if diff := cmp.Diff([]browserpool.CloseReason{browserpool.ReasonUnpinned}, c.reasons(sid)); diff != "" {
		t.Errorf("close reasons (-want +got):\n%s", diff)
	}
}

func TestAnIsolatedChildGetsItsOwnBrowserAndKeepsItsToolSession(t *testing.T) {
	t.Parallel()
	p := newRealPool(t, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	parentID := browserpool.NewIdentity("chat-2")
	parent, err := r.Attach(ctx, parentID)
	if err != nil {
		t.Fatal(err)
	}
	childID := parentID.IsolatedChild("scraper")
	child, err := r.Attach(ctx, childID)
	if err != nil {
		t.Fatal(err)
	}
	if child.Session() == parent.Session() || child.Session().Info().PID == parent.Session().Info().PID {
		t.Fatal("an isolated child shares its parent's browser")
	}
	if childID.ToolSessionID != parentID.ToolSessionID {
		t.Fatalf("isolation moved tool routing: %s vs %s", childID.ToolSessionID, parentID.ToolSessionID)
	}
}

func TestABuilderAttachesByGroupKeyToTheBrowserARunPublished(t *testing.T) {
	t.Parallel()
	base := serve(t, map[string]string{"/step": "<title>step 3 result</title>"})
	p := newRealPool(t, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	group, err := browserpool.GroupKey(t.TempDir(), "group_7")
	if err != nil {
		t.Fatal(err)
	}
	// The run, in its group tool session, uses a browser and publishes it.
	run, err := r.Attach(ctx, browserpool.Identity{ToolSessionID: "group-run-1", BrowserSessionID: group})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := run.OpenTab(ctx, base+"/step")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Publish(ctx, group); err != nil {
		t.Fatal(err)
	}
	// The run's tool session ends; the publication pins the browser.
	if err := r.EndToolSession(ctx, "group-run-1"); err != nil {
		t.Fatal(err)
	}
	if run.Session().Err() != nil {
		t.Fatal("ending the run closed the published browser")
	}
	if got := r.LastGroup(); got != group {
		t.Errorf("LastGroup() = %q, want %q", got, group)
	}
	// The builder, with its own tool session, attaches by group key and is
	// handed the run's page.
	builder, err := r.AttachGroup(ctx, group, browserpool.NewIdentity("builder-chat"))
	if err != nil {
		t.Fatal(err)
	}
	if builder.Identity().ToolSessionID != "builder-chat" || builder.Session() != run.Session() {
		t.Fatalf("builder attached to %s as %s", builder.Session().ID(), builder.Identity())
	}
	tabs, err := builder.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, ti := range tabs {
		if ti.TabID == tab.ID() && ti.Title == "step 3 result" {
			seen = true
		}
	}
	if !seen {
		t.Errorf("the builder does not see the run's page: %+v", tabs)
	}
	// Unpublishing with a holder left keeps the browser; the last detach
	// closes it.
	if err := r.Unpublish(ctx, group); err != nil {
		t.Fatal(err)
	}
	if builder.Session().Err() != nil {
		t.Fatal("unpublishing closed a browser the builder holds")
	}
	if err := builder.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	<-builder.Session().Done()
}

func TestAttachDetachAndCloseRaceCleanly(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	r := newRegistry(t, p)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := browserpool.Identity{ToolSessionID: fmt.Sprintf("tool-%d", i%4), BrowserSessionID: "shared", Agent: fmt.Sprintf("a%d", i)}
			for range 5 {
				h, err := r.Attach(ctx, id)
				if err != nil {
					t.Error(err)
					return
				}
				_, err = h.OpenTab(ctx, "about:blank")
				// EndToolSession("tool-1") may detach a tool-1 holder
				// between its Attach and its OpenTab.
				endedHold := id.ToolSessionID == "tool-1" && errors.Is(err, browserpool.ErrInvalidIdentity)
				if err != nil && !errors.Is(err, browserpool.ErrSessionClosed) && !errors.Is(err, browserpool.ErrBrowserExited) && !endedHold {
					t.Errorf("OpenTab: %v", err)
				}
				if err := h.Detach(ctx); err != nil && !errors.Is(err, browserpool.ErrSessionClosed) {
					t.Errorf("Detach: %v", err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.EndToolSession(ctx, "tool-1")
	}()
	wg.Wait()
	if hs := r.Holders("shared"); len(hs) != 0 {
		t.Errorf("holders left after every holder detached: %v", hs)
	}
	waitFor(t, "every browser closed", func() bool { return len(p.Sessions()) == 0 })
	_ = context.Background
}

func TestOpenForCountsAParentAndASharingChildOnce(t *testing.T) {
	l := cdptest.NewLauncher(t)
	p := newFakePool(t, l, browserpool.Config{})
	tr := newTracker(t, p, browserpool.TrackerConfig{})
	ctx := ctxT(t)
	parent := browserpool.NewIdentity("chat-9")
	a, err := tr.OpenFor(ctx, "w1", parent)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.OpenFor(ctx, "w1", parent.Child("helper"))
	if err != nil {
		t.Fatalf("a sharing child broke the workflow's limit of 1: %v", err)
	}
	if a != b || len(l.Browsers()) != 1 {
		t.Fatal("the sharing child got its own browser")
	}
	if diff := cmp.Diff([]string{"chat-9", "chat-9/helper"}, tr.HoldersOf("w1", "chat-9")); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	if _, err := tr.OpenFor(ctx, "w1", parent.IsolatedChild("solo")); !errors.Is(err, browserpool.ErrSessionLimit) {
		t.Errorf("an isolated child is a second browser and must hit the limit: %v", err)
	}
}

func TestAcquireForCountsAParentAndASharingChildOnceAgainstTheCap(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 1))
	ctx := ctxT(t)
	parent := browserpool.NewIdentity("chat-5")
	reject := browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject}
	// Concurrent first acquires of one browser key: one owns, one shares.
	var wg sync.WaitGroup
	leases := make([]*browserpool.Lease, 2)
	for i, id := range []browserpool.Identity{parent, parent.Child("helper")} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := f.a.AcquireFor(ctx, fmt.Sprintf("task-%d", i), id, reject)
			if err != nil {
				t.Errorf("AcquireFor(task-%d): %v", i, err)
			}
			leases[i] = l
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if leases[0].Session() != leases[1].Session() || len(f.launchers["c1"].Browsers()) != 1 {
		t.Fatal("a parent and its sharing child got two browsers")
	}
	if diff := cmp.Diff([]string{"task-0", "task-1"}, f.a.HoldersOf("chat-5")); diff != "" {
		t.Errorf("holders (-want +got):\n%s", diff)
	}
	// An isolated child needs a browser of its own: the cap of 1 rejects it.
	if _, err := f.a.AcquireFor(ctx, "task-2", parent.IsolatedChild("solo"), reject); !errors.Is(err, browserpool.ErrRejected) {
		t.Errorf("isolated child at the cap: error = %v, want ErrRejected", err)
	}
	// The sharing child finishes first; the owner's session lives on.
	sharer := 1
	if !leases[1].Shared() {
		sharer = 0
	}
	f.mustFinish(leases[sharer].Task(), browserpool.TaskCompleted)
	if leases[1-sharer].Session().Err() != nil {
		t.Fatal("the sharing child's Finish closed the owner's browser")
	}
	f.mustFinish(leases[1-sharer].Task(), browserpool.TaskCompleted)
	<-leases[0].Session().Done()
	if hs := f.a.HoldersOf("chat-5"); len(hs) != 0 {
		t.Errorf("holders after both finished: %v", hs)
	}
}

func TestAcquireForHandsTheBrowserToTheChildStillHoldingItWhenTheOwnerFinishes(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 1))
	ctx := ctxT(t)
	parent := browserpool.NewIdentity("chat-6")
	opts := browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject}
	owner, err := f.a.AcquireFor(ctx, "parent-task", parent, opts)
	if err != nil {
		t.Fatal(err)
	}
	child, err := f.a.AcquireFor(ctx, "child-task", parent.Child("helper"), opts)
	if err != nil {
		t.Fatal(err)
	}
	tab := mustTab(t, ctx, child.Session())
	f.mustFinish("parent-task", browserpool.TaskCompleted)
	if err := tab.Evaluate(ctx, "1", nil); err != nil {
		t.Fatalf("the child's call after its parent finished: %v; want its browser still open (I4)", err)
	}
	type view struct {
		Owner   string
		Shared  bool
		Holders []string
	}
	if diff := cmp.Diff(view{"child-task", false, []string{"child-task"}}, view{child.Owner(), child.Shared(), f.a.HoldersOf("chat-6")}); diff != "" {
		t.Errorf("the child's lease after the hand-over (-want +got):\n%s", diff)
	}
	// The slot went with the browser: the cap of 1 is still taken.
	if _, err := f.a.Acquire(ctx, "other-task", opts); !errors.Is(err, browserpool.ErrRejected) {
		t.Errorf("another task's acquire at the cap: %v, want ErrRejected", err)
	}
	f.mustFinish("child-task", browserpool.TaskCompleted)
	<-owner.Session().Done()
	if _, err := f.a.Acquire(ctx, "other-task", opts); err != nil {
		t.Errorf("an acquire once the last holder finished: %v", err)
	}
}

// A group pins the browser it published, not the key: when that browser
// ends and another opens under its key, the group does not lead to the
// new one, and unpublishing it leaves the new one's own publications be.
func TestAGroupPinsTheBrowserItPublishedNotItsKey(t *testing.T) {
	p, err := browserpool.NewPool(browserpool.Config{Root: newRoot(t), Launcher: cdptest.NewLauncher(t), IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	r := newRegistry(t, p)
	ctx := ctxT(t)
	step1, _ := browserpool.GroupKey(t.TempDir(), "step1")
	step2, _ := browserpool.GroupKey(t.TempDir(), "step2")
	run1, err := r.Attach(ctx, browserpool.Identity{ToolSessionID: "run1", BrowserSessionID: "b-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := run1.Publish(ctx, step1); err != nil {
		t.Fatal(err)
	}
	if err := run1.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if err := run1.Session().Close(ctx); err != nil { // the published browser ends (a crash, a reclaim)
		t.Fatal(err)
	}
	run2, err := r.Attach(ctx, browserpool.Identity{ToolSessionID: "run2", BrowserSessionID: "b-1"})
	if err != nil {
		t.Fatal(err)
	}
	if run2.Session() == run1.Session() {
		t.Fatal("the second run got the browser that ended")
	}
	if key, ok := r.Lookup(step1); ok {
		t.Errorf("Lookup(step1) = %q after its browser ended; want nothing: the browser open under its key now is not the one published", key)
	}
	if err := r.Unpublish(ctx, step1); err != nil {
		t.Fatal(err)
	}
	if err := run2.Publish(ctx, step2); err != nil {
		t.Fatal(err)
	}
	if err := run2.Detach(ctx); err != nil {
		t.Fatal(err)
	}
	if err := run2.Session().Err(); err != nil {
		t.Fatalf("the browser step2 published closed when its run detached: %v", err)
	}
	if _, err := r.AttachGroup(ctx, step2, browserpool.NewIdentity("builder")); err != nil {
		t.Errorf("AttachGroup(step2): %v; want the browser step2 published", err)
	}
}

func TestAcquireForGivesATaskOneBrowserAndTheBrowserOfAnOwnerThatEndedToTheNext(t *testing.T) {
	f := newAllocFixture(t, oneComputer("c1", 2))
	ctx := ctxT(t)
	parent := browserpool.NewIdentity("chat-7")
	opts := browserpool.AcquireOptions{Computer: "c1", Policy: browserpool.PolicyReject}
	owner, err := f.a.AcquireFor(ctx, "task-a", parent, opts)
	if err != nil {
		t.Fatal(err)
	}
	// The same task cannot also act in an isolated child's browser: it
	// would have been handed its parent's session under the child's key.
	if _, err := f.a.AcquireFor(ctx, "task-a", parent.IsolatedChild("solo"), opts); !errors.Is(err, browserpool.ErrTaskBusy) {
		t.Errorf("AcquireFor of an isolated child by the parent's task: %v; want ErrTaskBusy", err)
	}
	if hs := f.a.HoldersOf(parent.IsolatedChild("solo").BrowserKey()); len(hs) != 0 {
		t.Errorf("the isolated child's browser key is held by %v; want nobody", hs)
	}
	// The owner's browser ends (a crash, a reclaim); a sharing child's
	// task then owns a browser of its own under the key.
	if err := owner.Session().Close(ctx); err != nil {
		t.Fatal(err)
	}
	child, err := f.a.AcquireFor(ctx, "task-b", parent.Child("helper"), opts)
	if err != nil {
		t.Fatalf("AcquireFor after the owner's browser ended: %v; want a browser for task-b", err)
	}
	if child.Shared() || child.Session() == owner.Session() {
		t.Errorf("task-b's lease: shared %v, the ended session %v; want a live browser of its own", child.Shared(), child.Session() == owner.Session())
	}
}
