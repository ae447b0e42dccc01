#!/usr/bin/env bash
# Runs a Selenium Grid standalone (installed by install.sh) in the foreground
# on 127.0.0.1:PORT with MAX local Chromium sessions (default 2).
# Stop it with Ctrl-C or SIGTERM.
#   scripts/fleet/run-grid.sh [PORT=4444] [MAX=2]
set -euo pipefail
DIR="${BROWSERPOOL_FLEET_DIR:-${BROWSERPOOL_CACHE:-$HOME/.cache/browserpool}/fleet}"
[ -f "$DIR/env" ] || { echo "fleet: not installed: run scripts/fleet/install.sh" >&2; exit 1; }
# shellcheck disable=SC1091
. "$DIR/env"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/grid-XXXXXX")"
MAX="${2:-2}"
cat >"$WORK/grid.toml" <<TOML
[server]
host = "127.0.0.1"
port = ${1:-4444}

[node]
detect-drivers = false
selenium-manager = false
max-sessions = $MAX
override-max-sessions = true
session-timeout = 900

[[node.driver-configuration]]
display-name = "chromium"
webdriver-executable = "$CHROMEDRIVER"
max-sessions = $MAX
stereotype = '{"browserName":"chrome","platformName":"linux","goog:chromeOptions":{"binary":"$CHROMIUM"}}'

[sessionqueue]
session-request-timeout = 300
session-request-timeout-period = 1
TOML
TMPDIR="$WORK" "$JAVA" -XX:-UsePerfData -Djava.io.tmpdir="$WORK" -jar "$GRID_JAR" standalone --config "$WORK/grid.toml" &
pid=$!
# On exit: stop the server, then remove its dir (its browsers may still be
# writing there for a moment after it exits, so retry).
cleanup() {
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		rm -rf "$WORK" 2>/dev/null && [ ! -e "$WORK" ] && break
		sleep 0.5
	done
}
trap cleanup EXIT
trap 'exit 143' INT TERM
wait $pid
