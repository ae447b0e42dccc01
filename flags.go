// Room: the browser flags the pool owns, checked when a Pool is made. No
// locks.

package browserpool

import (
	"fmt"
	"slices"
	"strings"
)

// ownedFlags are the browser flags the pool sets itself: the session's
// profile and the pool's control connection.
var ownedFlags = []string{"user-data-dir", "remote-debugging-pipe", "remote-debugging-port", "remote-debugging-address"}

// checkOwnedFlags rejects a flag the pool owns in args (Config.BrowserArgs or
// LocalLauncher.Args): a second --user-data-dir puts the profile outside the
// root, and a debugging flag takes the pool's connection away, so the launch
// would hang until LaunchTimeout.
func checkOwnedFlags(field string, args []string) error {
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		shown := a
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		if strings.HasPrefix(a, "-") && strings.EqualFold(name, "temp-profile") {
			// Debian's /usr/bin/chromium wrapper turns it into a
			// --user-data-dir of its own, in a temporary dir nobody removes.
			return &Error{Op: "NewPool", Class: ErrInvalidConfig,
				Detail: fmt.Sprintf("%s: %q makes the chromium wrapper script set --user-data-dir, which the pool owns", field, shown),
				Hint:   "drop it: every session already gets a new profile of its own under Config.Root/sessions, removed when the session ends"}
		}
		if !strings.HasPrefix(a, "-") || !slices.Contains(ownedFlags, strings.ToLower(name)) {
			continue
		}
		return &Error{Op: "NewPool", Class: ErrInvalidConfig,
			Detail: fmt.Sprintf("%s: %q sets --%s, which the pool owns", field, shown, strings.ToLower(name)),
			Hint: "drop it: the pool sets --user-data-dir (each session's profile lives under Config.Root/sessions) and " +
				"--remote-debugging-pipe/-port/-address (its own connection to the browser); set Config.Root to move the profiles"}
	}
	return nil
}
