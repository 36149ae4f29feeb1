#!/usr/bin/env bash
# tests/k8s/run.sh SOURCE_ROOT BUILD_ROOT -- renders every environment under k8s/overlays with
# `kubectl kustomize` and validates it (tests/k8s/validate.mjs): every object against its
# Kubernetes schema (npm kubernetes-models, @kubernetes-models/prometheus-operator), then the
# deploy invariants, then a self-test proving each invariant catches a violation.
#
# Tools: kubectl (its kustomize must be v5+: components, replacements, --load-restrictor); if
# missing it installs Debian's kubernetes-client with apt-get (as root). node and npm: if missing,
# Debian's nodejs and npm. The npm modules are installed with `npm ci` from the committed
# tests/k8s/package-lock.json into BUILD_ROOT/k8s-validate, never into the source tree.
# Exit 0 = valid, 1 = a problem (printed), 77 = skipped (only when no usable kubectl can be had).
set -euo pipefail
SRC=$(cd "${1:?usage: run.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
BUILD=$(cd "${2:?usage: run.sh SOURCE_ROOT BUILD_ROOT}" && pwd)
CACHE=$BUILD/k8s-validate
mkdir -p "$CACHE/render"

say() { echo "k8s: $*" >&2; }

apt_install() {
    if [ "$(id -u)" -ne 0 ]; then
        say "$* missing and not root: install it (apt-get install $*)"
        return 1
    fi
    say "installing $* with apt-get"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

if ! command -v kubectl >/dev/null 2>&1; then
    apt_install kubernetes-client || exit 1
fi
KV=$(kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\{0,1\}\([0-9][0-9]*\).*/\1/p')
if [ -z "$KV" ] || [ "$KV" -lt 5 ]; then
    say "SKIP: $(command -v kubectl) embeds kustomize '${KV:-unknown}', older than v5 (components," \
        "replacements, --load-restrictor are needed); Debian 12's kubernetes-client 1.20 is too" \
        "old: install kubectl >= 1.27"
    exit 77
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm || exit 1
fi

# npm ci only when the lock file changed since the last install.
LOCK=$SRC/tests/k8s/package-lock.json
STAMP=$CACHE/lock.sha256
if [ ! -d "$CACHE/node_modules" ] || ! sha256sum --status -c "$STAMP" 2>/dev/null; then
    cp "$SRC/tests/k8s/package.json" "$LOCK" "$CACHE/"
    say "npm ci into $CACHE"
    (cd "$CACHE" && npm ci --no-audit --no-fund --loglevel=error >"$CACHE/npm.log" 2>&1) || {
        cat "$CACHE/npm.log" >&2
        exit 1
    }
    (cd "$CACHE" && sha256sum package-lock.json) | sed "s|package-lock.json|$LOCK|" >"$STAMP"
fi

args=()
for dir in "$SRC"/k8s/overlays/*/; do
    env=$(basename "$dir")
    out=$CACHE/render/$env.yaml
    if ! KUBECTL=kubectl sh "$SRC/k8s/render.sh" "$env" >"$out" 2>"$out.err"; then
        say "kubectl kustomize failed for overlay $env:"
        cat "$out.err" >&2
        exit 1
    fi
    args+=("$env=$out")
done
[ ${#args[@]} -gt 0 ] || { say "no overlay under $SRC/k8s/overlays"; exit 1; }

exec node "$SRC/tests/k8s/validate.mjs" --modules "$CACHE" --prestop "$SRC/k8s/prestop.sh" "${args[@]}"
