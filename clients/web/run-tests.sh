#!/bin/sh
# The browser table's test under meson (web_table, suite 'integration'): headless Chromium plays
# the page against the real gateways and game servers of $CROUPIER_BUILD (test/browser.test.ts,
# test/tournaments.test.ts, test/watch.test.ts).
# Installs what is missing: Debian's chromium (and nodejs/npm) with apt-get when root, the npm
# dependencies of clients/ts and clients/web from their committed lockfiles (npm ci). Exit 77
# (meson: skipped), with one line saying why, when Chromium, node or the npm packages cannot be
# had; any other failure fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CHROMIUM=${CROUPIER_CHROMIUM:-/usr/bin/chromium}
skip() { echo "web_table: SKIP: $*" >&2; exit 77; }
apt_install() {
    [ "$(id -u)" -eq 0 ] || return 1
    echo "web_table: installing $* with apt-get" >&2
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm || skip "node and npm are not installed and could not be (apt-get install nodejs npm)"
fi
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || skip "node $major found, 20 or later needed"
if [ ! -x "$CHROMIUM" ]; then
    apt_install chromium || skip "$CHROMIUM is missing and could not be installed (apt-get install chromium)"
    [ -x "$CHROMIUM" ] || skip "$CHROMIUM is missing after installing Debian's chromium"
fi
# the servers' store, and the shell the drains run k8s/prestop.sh with (as kubelet would)
command -v redis-server >/dev/null 2>&1 || skip "redis-server is not installed (the tests start their own)"
if ! command -v busybox >/dev/null 2>&1; then
    apt_install busybox || skip "busybox is missing and could not be installed (the drains run k8s/prestop.sh under it)"
fi
for dir in "$here/../ts" "$here"; do
    if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
        [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
            skip "npm ci failed in $dir: the npm packages could not be installed"
    fi
done
cd "$here"
"$here/../build-locked.sh" web >&2
exec node --test --test-concurrency=1 dist-test/test/units.test.js dist-test/test/tournaments.test.js dist-test/test/browser.test.js dist-test/test/watch.test.js
