// Room: the environment variables the pool owns in a local browser's
// process, checked when a Pool is made. No locks.

package browserpool

import (
	"fmt"
	"strings"

	"github.com/browserpool/browserpool/internal/launch"
)

// ownedEnv are the environment variables the pool sets in every local
// browser itself: the session's XDG dirs and temp dir live inside its
// session dir so they go with the profile, and the BROWSERPOOL_* markers
// are how a later sweep proves a process is ours.
var ownedEnv = []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMPDIR"}

// checkBrowserEnv rejects an entry of env (Config.BrowserEnv or
// LocalLauncher.Env) that is not KEY=VALUE, or that names a variable the
// pool owns.
func checkBrowserEnv(field string, env []string) error {
	for i, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		shown := kv
		if len(shown) > 80 {
			shown = shown[:80] + "..."
		}
		var why, hint string
		switch {
		case !ok || name == "" || strings.ContainsRune(kv, 0):
			why = "is not KEY=VALUE"
			hint = "write each entry as KEY=VALUE, for example TZ=Europe/Paris"
		case strings.HasPrefix(name, "BROWSERPOOL_") || name == launch.SessionEnv:
			why = "sets " + name + ", a marker the pool owns"
			hint = "drop it: the pool sets the BROWSERPOOL_* variables itself (the orphan sweep relies on them)"
		default:
			for _, owned := range ownedEnv {
				if name == owned {
					why = "sets " + name + ", which the pool owns"
					hint = "drop it: the pool points XDG_CONFIG_HOME, XDG_CACHE_HOME and TMPDIR into each session's dir so they are removed with the profile; set Config.Root to move them"
				}
			}
		}
		if why != "" {
			return &Error{Op: "NewPool", Class: ErrInvalidConfig,
				Detail: fmt.Sprintf("%s[%d]: %q %s", field, i, shown, why), Hint: hint}
		}
	}
	return nil
}
