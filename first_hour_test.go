package browserpool_test

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/browserpool/browserpool"
	"github.com/browserpool/browserpool/cdptest"
)

// Small surprises of a new user's first hour (issue 20 item 7).

func TestASecondOnLaunchAddsToTheFirstRatherThanReplacingIt(t *testing.T) {
	l := cdptest.NewLauncher(t)
	var mu sync.Mutex
	var got []string
	for _, name := range []string{"first", "second"} {
		l.OnLaunch(func(*cdptest.Browser) {
			mu.Lock()
			got = append(got, name)
			mu.Unlock()
		})
	}
	p := newFakePool(t, l, browserpool.Config{})
	mustOpen(t, ctxT(t), p)
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"first", "second"}, got); diff != "" {
		t.Errorf("OnLaunch hooks run for one launch (-want +got):\n%s", diff)
	}
}
