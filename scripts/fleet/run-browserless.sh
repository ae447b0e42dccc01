#!/usr/bin/env bash
# Runs browserless (installed by install.sh) in the foreground on
# 127.0.0.1:PORT with TOKEN, CONCURRENT browsers (default 2) and no queue.
# Stop it with Ctrl-C or SIGTERM (it closes its browsers).
#   scripts/fleet/run-browserless.sh [PORT=3000] [TOKEN=local-token] [CONCURRENT=2]
set -euo pipefail
DIR="${BROWSERPOOL_FLEET_DIR:-${BROWSERPOOL_CACHE:-$HOME/.cache/browserpool}/fleet}"
[ -f "$DIR/env" ] || { echo "fleet: not installed: run scripts/fleet/install.sh" >&2; exit 1; }
# shellcheck disable=SC1091
. "$DIR/env"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/bl-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$BROWSERLESS_DIR"
HOST=127.0.0.1 PORT="${1:-3000}" TOKEN="${2:-local-token}" CONCURRENT="${3:-2}" QUEUED=0 TIMEOUT=1800000 \
	ROUTES="$BROWSERLESS_ROUTES" PLAYWRIGHT_BROWSERS_PATH="$BROWSERLESS_BROWSERS" \
	DATA_DIR="$WORK" DOWNLOAD_DIR="$WORK" METRICS_JSON_PATH="$WORK/metrics.json" ENABLE_DEBUGGER=false \
	TMPDIR="$WORK" "$NODE" "$BROWSERLESS_MAIN" &
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
