#!/bin/bash
# blocks.sh [test|program]: which 64 KiB blocks of the footprint row's
# binary our child touches and the floor's does not, each with the Go stack
# that touched it first (blocks.py). "test" (the default) is the root
# package's test binary, which BenchmarkFloorFootprint's MiB-rss-over-bare
# row re-executes; "program" is internal/benchfloor/footprint/child, the
# -program row. Needs perf (Debian package linux-perf, installed here when
# missing), readelf and python3; run it from anywhere in the repository.
set -euo pipefail
kind=${1:-test}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
command -v perf >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y linux-perf; }
work=$(mktemp -d "${TMPDIR:-/tmp}/footprint-blocks.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$repo"
case $kind in
test) go test -c -o "$work/bp.test" . ; bin=$work/bp.test ;;
program) go build -o "$work/child" ./internal/benchfloor/footprint/child ; bin=$work/child ;;
*) echo "usage: $0 [test|program]" >&2; exit 2 ;;
esac
for side in ours bare; do
	root=$(mktemp -d "$work/root.XXXXXX")
	if [ "$kind" = test ]; then
		run=(env BROWSERPOOL_TEST_HOST=footprint-$side BROWSERPOOL_TEST_HOST_ROOT=$root "$bin" -test.run='^$')
	else
		run=("$bin" "$side" "$root")
	fi
	# The child's last line is its measurement (footprint.Result).
	echo "$side: $(cd "$work" && perf record -q -e page-faults -c 1 -d -g -o "$work/$side.data" "${run[@]}" 2>&1 | tail -1)"
	perf script -i "$work/$side.data" -F comm,pid,tid,time,addr,ip,sym --no-demangle > "$work/$side.txt" 2>/dev/null
done
python3 "$here/blocks.py" "$bin" "$work/ours.txt" "$work/bare.txt"
