#!/bin/sh
# clients/build-locked.sh ts|web: builds the TypeScript SDK (clients/ts: protobuf code generated
# from proto/client.proto and the games' .proto files, then tsc) or the browser table
# (clients/web: tsc and the page's bundle, on the SDK built first), under one lock for both, and
# only when an input is newer than the package's stamp (.built, written after a successful build).
#
# sdk_ts and web_table (gateway/meson.build) run side by side, and `./dev setup` builds both
# before the suite: a test never rewrites the other's dist/ while that one runs from it, and two
# builds never write the same files at once. The npm dependencies are installed by the callers
# (npm ci from the committed lockfiles) before this runs.
set -eu
clients=$(cd "$(dirname "$0")" && pwd)
pkg=${1:?usage: build-locked.sh ts|web}
case $pkg in
ts) inputs="src scripts test tsconfig.json package.json package-lock.json ../../proto/client.proto
    ../../games/zhajinhua/zhajinhua.proto ../../games/niuniu/niuniu.proto" ;;
web) inputs="src test build.mjs tsconfig.json package.json package-lock.json ../ts/.built" ;;
*) echo "build-locked.sh: ts or web, not '$pkg'" >&2; exit 2 ;;
esac
[ "$pkg" = web ] && "$0" ts
cd "$clients/$pkg"
exec 9>"$clients/.build.lock"
flock 9
# shellcheck disable=SC2086 # the inputs are words
if [ -f .built ] && [ -z "$(find $inputs -newer .built -print -quit)" ]; then
    exit 0
fi
rm -f .built
case $pkg in
ts) npm run --silent build ;;
web) ./node_modules/.bin/tsc -p tsconfig.json && node build.mjs ;;
esac
touch .built
