package browserpool_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Type that stops part way (its context ended) says how much of the
// text reached the page: typing the whole text again, as a plain timeout's
// "retry" invites, would add that part a second time.
func TestATypeStoppedPartWaySaysHowMuchReachedThePage(t *testing.T) {
	ctx, tab, _ := htmlTab(t, `<title>slow keys</title><input id=f>
<script>f.addEventListener('keydown', () => { const end = Date.now() + 20; while (Date.now() < end); })</script>`)
	if err := tab.Evaluate(ctx, "f.focus()", nil); err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("abcdefghij", 20)
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // cancel once the field holds five characters
		defer cancel()
		for tctx.Err() == nil {
			var n int
			if err := tab.Evaluate(tctx, "f.value.length", &n); err == nil && n >= 5 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	err := tab.Type(tctx, text)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Type cancelled part way: %v, want context.Canceled", err)
	}
	m := regexp.MustCompile(`it stopped at character (\d+) of 200: the first (\d+) reached the page, and that one may have\).*hint: read the field before typing again: typing the whole text again adds what was typed a second time`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("Type's error does not say how much was typed:\n%v", err)
	}
	typed, _ := strconv.Atoi(m[2])
	if at, _ := strconv.Atoi(m[1]); at != typed+1 || typed < 4 {
		t.Errorf("stopped at character %d after %d typed; want one after the typed, and at least 4 typed", at, typed)
	}
	var value string
	if err := tab.Evaluate(ctx, "f.value", &value); err != nil {
		t.Fatal(err)
	}
	if n := len(value); n != typed && n != typed+1 || value != text[:n] {
		t.Errorf("the field holds %q after %d characters were said typed; want the first %d or %d of the text", value, typed, typed, typed+1)
	}
}
