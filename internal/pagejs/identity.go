// Room: page JavaScript by identity: the names of the constants, and the
// few expressions the tab builds from them (a poll, a condition, a
// visibility check), with their inverses, so that a fake browser
// (cdptest) reads the library's calls by what they are, never by
// matching their text. No locks: constants and pure functions only.

package pagejs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Names maps every constant's source to its name ("ClickArm", …), for a
// fake browser that answers the library's page calls by identity.
var Names = map[string]string{
	ReadyState: "ReadyState", ClickDisarm: "ClickDisarm", Describe: "Describe", Cover: "Cover",
	ClickArm: "ClickArm", ClickReport: "ClickReport", Fill: "Fill", FillDone: "FillDone",
	Select: "Select", SecretFocus: "SecretFocus", ScriptLinkFocus: "ScriptLinkFocus", ClickDefault: "ClickDefault", DragWatchArm: "DragWatchArm", DragWatchRead: "DragWatchRead", NextFrames: "NextFrames", Poll: "Poll", Visible: "Visible", PageInfo: "PageInfo", Shown: "Shown", Disabled: "Disabled", TypeWatchArm: "TypeWatchArm", TypeWatchRead: "TypeWatchRead", NumberFits: "NumberFits", ScrollBox: "ScrollBox",
	LabelOf: "LabelOf", ScrollCenter: "ScrollCenter",
	Status: "Status", LoadedStatus: "LoadedStatus",
}

// PollCall is the expression that runs Poll with check (a function
// expression) for up to ms milliseconds.
func PollCall(check string, ms int64) string {
	return fmt.Sprintf("(%s)(%s, %d)", Poll, check, ms)
}

// ParsePollCall is the inverse of PollCall.
func ParsePollCall(expr string) (check string, ms int64, ok bool) {
	rest, ok := strings.CutPrefix(expr, "("+Poll+")(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return "", 0, false
	}
	rest = rest[:len(rest)-1]
	i := strings.LastIndex(rest, ", ")
	if i < 0 {
		return "", 0, false
	}
	ms, err := strconv.ParseInt(rest[i+2:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return rest[:i], ms, true
}

// Condition is the check of WaitCondition: a function returning the
// value of the caller's expression. Semicolons and white space ending the
// expression are dropped: "x > 0;" is a statement that Evaluate takes,
// and inside the function's parentheses a SyntaxError.
func Condition(expr string) string {
	return "() => (\n" + strings.TrimRight(expr, "; \t\r\n") + "\n)"
}

// ConditionLine is how many lines of PollCall(Condition(expr), ms) come
// before the caller's expr: an exception's line less this is the line in
// expr.
var ConditionLine = strings.Count(PollCall(Condition(""), 0), "\n") - 1

// ParseCondition is the inverse of Condition.
func ParseCondition(check string) (expr string, ok bool) {
	rest, ok := strings.CutPrefix(check, "() => (\n")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "\n)")
}

// VisibleCheck is the check of WaitVisible for a CSS selector.
func VisibleCheck(selector string) string {
	sel, _ := json.Marshal(selector) // a string always encodes
	return fmt.Sprintf(Visible, sel)
}

// ParseVisibleCheck is the inverse of VisibleCheck.
func ParseVisibleCheck(check string) (selector string, ok bool) {
	i := strings.Index(Visible, "%s")
	pre, post := Visible[:i], Visible[i+2:]
	if !strings.HasPrefix(check, pre) || !strings.HasSuffix(check, post) || len(check) < len(pre)+len(post) {
		return "", false
	}
	if json.Unmarshal([]byte(check[len(pre):len(check)-len(post)]), &selector) != nil {
		return "", false
	}
	return selector, true
}
