package browserpool_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// The everyday flow: a pool, a session, a tab, an evaluate and a
// screenshot. (Compile-only: it needs a browser.)
func ExamplePool() {
	ctx := context.Background()
	pool, err := browserpool.NewPool(browserpool.Config{}) // zero value: local Chromium, 10 min idle reclaim
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	sess, err := pool.Open(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	tab, err := sess.OpenTab(ctx, "https://example.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	var title string
	if err := tab.Evaluate(ctx, "document.title", &title); err != nil {
		fmt.Println(err)
		return
	}
	shot, err := tab.Screenshot(ctx, browserpool.ScreenshotOptions{Name: "home.png"})
	fmt.Println(title, shot.Path, err)
}

// A URL an agent must not open is refused before anything starts, with an
// error that says what is allowed.
func ExamplePool_OpenTab_refusedURL() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(nil)})
	defer pool.Close()
	_, err := pool.OpenTab(context.Background(), browserpool.Ref{}, "file:///etc/passwd")
	fmt.Println(errors.Is(err, browserpool.ErrInvalidURL))
	fmt.Println(err)
	// Output:
	// true
	// browserpool: Pool.OpenTab: URL not allowed: scheme "file" is not allowed (hint: use an http:// or https:// URL (about:blank opens an empty tab))
}

// With several sessions live, an empty session id is an error listing them
// rather than a guess.
func ExamplePool_Session_ambiguous() {
	ctx := context.Background()
	root := exampleRoot()
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(nil)})
	defer pool.Close()
	a, _ := pool.Open(ctx)
	b, _ := pool.Open(ctx)
	_, err := pool.Session(ctx, "")
	var e *browserpool.Error
	if errors.As(err, &e) && errors.Is(err, browserpool.ErrAmbiguousSession) {
		fmt.Println(e.Op, "names both:", strings.Contains(e.Error(), a.ID()) && strings.Contains(e.Error(), b.ID()))
	}
	// Output: Pool.Session names both: true
}

// A tab id given together with NewInstance can never name a tab of the
// session that call starts.
func ExamplePool_ResolveTab_newInstance() {
	root := exampleRoot()
	defer os.RemoveAll(root)
	pool, _ := browserpool.NewPool(browserpool.Config{Root: root, Launcher: cdptest.NewLauncher(nil)})
	defer pool.Close()
	_, err := pool.ResolveTab(context.Background(), browserpool.Ref{NewInstance: true, TabID: "ABC123"})
	fmt.Println(err)
	// Output: browserpool: Pool.ResolveTab tab=ABC123: tab does not belong to this session: tab ABC123 cannot belong to the new session this call starts (hint: drop the tab id to act on the new session's first tab, or drop NewInstance to use the tab's own session)
}

// Ids that become path parts are checked.
func ExampleValidateID() {
	fmt.Println(browserpool.ValidateID("session", "../../etc"))
	// Output: browserpool: ValidateID: invalid id: session "../../etc" (hint: use 1 to 64 letters, digits, '-' or '_')
}

func exampleRoot() string {
	dir, _ := os.MkdirTemp(testRoot, "example-")
	return dir
}
