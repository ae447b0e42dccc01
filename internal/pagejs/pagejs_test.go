// Room: tests of the page JavaScript. No locks.

package pagejs

import (
	"fmt"
	"strings"
	"testing"
)

// sources are every constant of the package, by name.
var sources = map[string]string{
	"ReadyState": ReadyState, "ClickDisarm": ClickDisarm, "Describe": Describe, "Cover": Cover,
	"ClickArm": ClickArm, "ClickReport": ClickReport, "Fill": Fill, "FillDone": FillDone,
	"Select": Select, "SecretFocus": SecretFocus, "Poll": Poll, "Visible": Visible, "PageInfo": PageInfo, "Shown": Shown, "Disabled": Disabled, "TypeWatchArm": TypeWatchArm, "TypeWatchRead": TypeWatchRead, "NumberFits": NumberFits, "ScrollBox": ScrollBox,
	"LabelOf": LabelOf, "ScrollCenter": ScrollCenter,
	"Status": Status, "LoadedStatus": LoadedStatus,
	"ScriptLinkFocus": ScriptLinkFocus, "ClickDefault": ClickDefault,
	"DragWatchArm": DragWatchArm, "DragWatchRead": DragWatchRead, "NextFrames": NextFrames,
}

// balanced reports whether the brackets of src pair up, skipping string
// literals and regular expressions only as far as these sources need
// (quotes; a '/' after '(' , ',' or '.test(' opens a regular expression).
func balanced(src string) error {
	var stack []rune
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	var quote rune
	for i, r := range src {
		switch {
		case quote != 0:
			if r == quote && src[i-1] != '\\' {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '/' && i > 0 && strings.ContainsRune("(,", rune(src[i-1])):
			quote = '/'
		case r == '(' || r == '[' || r == '{':
			stack = append(stack, r)
		case r == ')' || r == ']' || r == '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[r] {
				return fmt.Errorf("unbalanced %q at %d", r, i)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 || quote != 0 {
		return fmt.Errorf("%d brackets left open, quote %q", len(stack), quote)
	}
	return nil
}

func TestEverySourceIsAFunctionOrExpressionWithBalancedBrackets(t *testing.T) {
	for name, src := range sources {
		if strings.TrimSpace(src) != src || src == "" {
			t.Errorf("%s is empty or has surrounding space", name)
		}
		if err := balanced(src); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTheDescriptionIsEmbeddedWhereCoversAndMissesAreNamed(t *testing.T) {
	for name, src := range map[string]string{"Cover": Cover, "ClickReport": ClickReport} {
		if !strings.Contains(src, Describe) {
			t.Errorf("%s does not embed Describe", name)
		}
	}
	if n := strings.Count(Visible, "%s"); n != 1 || strings.Count(Visible, "%") != 1 {
		t.Errorf("Visible has %d %%s verbs and %d %% signs, want one of each", n, strings.Count(Visible, "%"))
	}
	for name, src := range sources {
		if name != "Visible" && strings.Contains(src, "%s") {
			t.Errorf("%s contains a %%s verb but is sent as is", name)
		}
	}
}
