#!/bin/sh
# The SDK's tests under meson (suite 'integration'): installs the npm dependencies from the
# committed lockfile when they are missing or older than it (npm ci), builds (protobuf code
# generated from proto/client.proto, then tsc) and runs node's test runner against the real
# gateway and game servers of $CROUPIER_BUILD (and, first, the keepalive against fake gateways).
# Fails with one line when node or npm is missing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null 2>&1 || { echo "sdk_ts: node (>= 20) is not installed" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "sdk_ts: npm is not installed" >&2; exit 1; }
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || { echo "sdk_ts: node $major found, 20 or later needed" >&2; exit 1; }
cd "$here"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund >&2 || { echo "sdk_ts: npm ci failed" >&2; exit 1; }
fi
"$here/../build-locked.sh" ts >&2
exec node --test --test-concurrency=1 --test-reporter=tap dist/test/cards.test.js dist/test/int64.test.js dist/test/fairness.test.js dist/test/keepalive.test.js dist/test/gateway.test.js dist/test/tournament.test.js dist/test/tournament_play.test.js dist/test/tournament_match.test.js dist/test/replay.test.js dist/test/watch.test.js dist/test/quickstart.test.js
