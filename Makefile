# browserpool: `make demo` runs the quickstart, `make test` the whole suite.
# Both install Chromium (Debian package chromium) first when no browser is found.

GO      ?= go
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BROWSER := $(shell command -v chromium || command -v chromium-browser || command -v google-chrome || command -v google-chrome-stable || true)
# make test runs the real-browser tests and fails, never skips, without a browser.
export BROWSERPOOL_REQUIRE_BROWSER ?= 1

FFMPEG  := $(shell command -v ffmpeg || true)

.PHONY: demo test browser ffmpeg fleet vet fmt bench bench-floor bench-anchors mcp

browser:
ifeq ($(BROWSER),)
	@echo "browserpool: no Chromium found; installing the Debian package chromium with apt-get"
	$(SUDO) apt-get update
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y chromium
	@command -v chromium >/dev/null || { echo "browserpool: chromium is still missing after apt-get install"; exit 1; }
else
	@echo "browserpool: using $(BROWSER)"
endif

# The recording tests export a video and check it with ffprobe (Debian package ffmpeg).
ffmpeg:
ifeq ($(FFMPEG),)
	@echo "browserpool: no ffmpeg found; installing the Debian package ffmpeg with apt-get"
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y ffmpeg || { $(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y ffmpeg; }
	@command -v ffmpeg >/dev/null || { echo "browserpool: ffmpeg is still missing after apt-get install"; exit 1; }
else
	@echo "browserpool: using $(FFMPEG)"
endif

# The real fleets the fleet tests run against (browserless, Selenium Grid),
# installed once under ~/.cache/browserpool/fleet; the tests start them.
fleet: browser
	scripts/fleet/install.sh

demo: browser
	$(GO) run ./examples/quickstart

fmt:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# Independent real-browser tests call t.Parallel (go test runs GOMAXPROCS of
# them at once: two on a 2-core machine, where more only trades time for
# launch timeouts).
test: browser ffmpeg fleet fmt vet
	$(GO) test -race -count=1 -timeout 30m ./...
	cd cmd/browserpool-mcp && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 30m ./...
	cd bench/anchors && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 30m ./...

# The MCP server (its own module): bin/browserpool-mcp.
mcp:
	cd cmd/browserpool-mcp && $(GO) build -o ../../bin/browserpool-mcp .

# bench prints issue 14's table first (bench-floor), then the same rows with
# chromedp and rod beside the floor and browserpool (bench-anchors), then the
# rest.
bench: bench-floor bench-anchors fleet
	$(GO) test -run '^$$' -bench . -skip 'BenchmarkFloor|BenchmarkAcquireWarmVsCold' -benchmem -timeout 60m ./...

# bench-floor prints issue 14's table: every BenchmarkFloor* row as x-bare
# (ours ÷ internal/benchfloor, timed in the same run, once both browsers
# are idle, the two sides taking turns of about 50 ms) and x-bare-median
# (the median of the per-iteration ratios, steadier on a shared machine),
# with each side's CPU per operation (x-go-cpu: this process's, the
# client's; x-browser-cpu: the browser's process group's), then warm
# acquire against a cold launch. Each row gets a fixed iteration count:
# the default -benchtime gives the slow rows 1 to 6 iterations. The counts
# give every timed row at least 2 s a side (40 turns or more), so that a
# burst of one browser's background work moves a row less: at 3,000
# sequential calls and 200 concurrent rounds (under 1 s a side) those rows
# ranged over 5 and 30 per cent across runs on one machine, at 20,000 and
# 1,000 over 3 and 21 per cent. A navigation or a screenshot ends on one of
# the compositor's frames (every 16.7 ms: a 1280×600 shot takes two or
# three, 33 or 50 ms, by the phase it starts in), so those rows' times
# spread by a fifth either way: at 100 iterations a side their ratio's
# 95 % confidence half-width (x-bare-ci95, printed as ± in the table) was
# 4 to 8 per cent, wider than the goal's margin (a row as fast as the
# floor missed ×1.02 about one run in four); they run 1,000 (about ±2 per
# cent). navigate-60-images (not in the issue: a page of 60 images, which
# our browser fetches through the pool's policy proxy) runs 200, about
# 200 ms a load. The rows that time two browsers side by
# side run twice, once with our browser started first and once with the
# floor's (ours-first: 1 or 0): the start order moves a row by a few per
# cent on a loaded machine, not always the same way. FLOOR_COUNT repeats every row
# (go test -count). The output is kept in FLOOR_OUT, and
# internal/benchfloor/floortable ends with the issue's table from it: each
# row by start order, both orders together (their geometric mean), the
# goal and whether it is met.
FLOOR_COUNT ?= 1
FLOOR_OUT   ?= $(or $(TMPDIR),/tmp)/browserpool-bench-floor.out
FLOOR_BENCH  = $(GO) test -run '^$$' -count $(FLOOR_COUNT) -timeout 60m . -bench
bench-floor: SHELL := /bin/bash
bench-floor: .SHELLFLAGS := -o pipefail -c
bench-floor: browser
	: > $(FLOOR_OUT)
	for first in ours floor; do \
	  export BROWSERPOOL_BENCH_FIRST=$$first; \
	  $(FLOOR_BENCH) 'BenchmarkFloor$$/evaluate-sequential' -benchtime 20000x | tee -a $(FLOOR_OUT) && \
	  $(FLOOR_BENCH) 'BenchmarkFloorConcurrent' -benchtime 1000x | tee -a $(FLOOR_OUT) && \
	  $(FLOOR_BENCH) 'BenchmarkFloor$$/(tab-open-close|ax-tree)' -benchtime 100x | tee -a $(FLOOR_OUT) && \
	  $(FLOOR_BENCH) 'BenchmarkFloor$$/(navigate$$|screenshot)' -benchtime 1000x | tee -a $(FLOOR_OUT) && \
	  $(FLOOR_BENCH) 'BenchmarkFloor$$/navigate-60-images' -benchtime 200x | tee -a $(FLOOR_OUT) || exit 1; \
	done
	$(FLOOR_BENCH) 'BenchmarkFloorColdStart' -benchtime 10x | tee -a $(FLOOR_OUT)
	$(FLOOR_BENCH) 'BenchmarkFloorFootprint' -benchtime 1x | tee -a $(FLOOR_OUT)
	$(FLOOR_BENCH) 'BenchmarkAcquireWarmVsCold' -benchtime 30x | tee -a $(FLOOR_OUT)
	@echo; echo "issue 14's table (from $(FLOOR_OUT)):"
	$(GO) run ./internal/benchfloor/floortable < $(FLOOR_OUT)

# bench-anchors prints issue 14's table with chromedp and rod measured beside
# the floor and browserpool in the same run (bench/anchors, its own module):
# per row x-bare-<side> and x-bare-median-<side> for browserpool, chromedp
# and rod; the footprint row's RSS, anonymous memory and goroutines per side.
# The rows that time the four browsers side by side run once per side in
# ANCHORS_FIRST, that side's browser started first (BROWSERPOOL_BENCH_FIRST;
# each row reports first-<side>): the browser started first tends to be
# faster on a loaded machine. Add rod to ANCHORS_FIRST for all four orders.
# The evaluate and concurrent rows take bench-floor's counts (see there):
# at 3,000 and 200 they ran about a second a side, and the 1-tab row's
# browserpool and chromedp figures crossed from one start order to the
# next. Navigate and screenshot run 400 (bench-floor's 1,000 at four sides
# would add about 25 minutes): about ±3 per cent (x-bare-ci95-<side>).
ANCHORS_FIRST ?= bare chromedp ours
ANCHORS_BENCH = cd bench/anchors && $(GO) test -run '^$$' -count $(FLOOR_COUNT) -timeout 60m . -bench
bench-anchors: browser
	for first in $(ANCHORS_FIRST); do \
	  export BROWSERPOOL_BENCH_FIRST=$$first; \
	  ( $(ANCHORS_BENCH) 'BenchmarkAnchors$$/evaluate-sequential' -benchtime 20000x ) && \
	  ( $(ANCHORS_BENCH) 'BenchmarkAnchorsConcurrent' -benchtime 1000x ) && \
	  ( $(ANCHORS_BENCH) 'BenchmarkAnchors$$/(tab-open-close|ax-tree)' -benchtime 100x ) && \
	  ( $(ANCHORS_BENCH) 'BenchmarkAnchors$$/(navigate|screenshot)' -benchtime 400x ) || exit 1; \
	done
	$(ANCHORS_BENCH) 'BenchmarkAnchorsColdStart' -benchtime 10x
	$(ANCHORS_BENCH) 'BenchmarkAnchorsFootprint' -benchtime 1x
