#!/bin/sh
# Renders one environment of the croupier manifests to stdout:
#   k8s/render.sh dev|staging|prod | kubectl apply -f -
# It is `kubectl kustomize` with the load restrictor relaxed, because the base generates the
# preStop ConfigMap from k8s/prestop.sh, the one copy of the script, which sits outside
# k8s/base (kustomize refuses such files, symlinks included, by default). KUBECTL overrides the
# kubectl binary.
set -eu
if [ $# -ne 1 ] || [ ! -f "$(dirname "$0")/overlays/$1/kustomization.yaml" ]; then
    echo "usage: $0 ENV   (ENV: one of $(ls "$(dirname "$0")/overlays" | tr '\n' ' '))" >&2
    exit 2
fi
exec "${KUBECTL:-kubectl}" kustomize --load-restrictor LoadRestrictionsNone \
    "$(dirname "$0")/overlays/$1"
