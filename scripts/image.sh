#!/usr/bin/env bash
# scripts/image.sh -- builds the croupier container image from the repository's Containerfile
# with podman, from Debian packages only (docs/deploy.md "The image"). `./dev image` runs
# `scripts/image.sh build`; the image suite (tests/image/) sources this file for the same
# podman settings.
#
#   scripts/image.sh build [--refresh]   base image if missing, then the image; --refresh
#                                        debootstraps the base again and builds without cache
#                                        (the way to pick up Debian security updates)
#   scripts/image.sh podman ARGS...      podman with the settings below (inspect, run, rmi...)
#
# No registry image can be pulled here, so the base is a Debian 12 root file system made by
# `debootstrap --variant=minbase bookworm` from Debian's mirror (CROUPIER_DEBIAN_MIRROR, default
# http://deb.debian.org/debian) and imported as localhost/croupier-debian:bookworm, once: it
# stays in the image store and every later build starts from it (and from podman's layer cache:
# only the steps after a changed file run again).
#
# podman settings that work on this kind of machine (../shared/LIBNOTES.md "Containers"): root,
# storage driver vfs, runtime runc, cgroup manager cgroupfs, host network, and no default
# ulimits (a container may not raise RLIMIT_NOFILE/NPROC without CAP_SYS_RESOURCE). They live in
# a containers.conf and a storage.conf of croupier's own image store (CROUPIER_IMAGE_STORE,
# default /var/lib/croupier-image), so nothing else on the machine is touched.
#
# Images: localhost/croupier:<version> (git describe --always --dirty, what every binary in it
# prints for --version) and localhost/croupier:dev (the dev overlay's tag, k8s/overlays/dev).
# Sourced, it only defines the functions (and sets no shell options).

IMAGE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE_STORE=${CROUPIER_IMAGE_STORE:-/var/lib/croupier-image}
IMAGE_BASE=localhost/croupier-debian:bookworm
IMAGE_NAME=localhost/croupier
IMAGE_DEPS=localhost/croupier-build-deps:bookworm
IMAGE_MIRROR=${CROUPIER_DEBIAN_MIRROR:-http://deb.debian.org/debian}

image_log() {
    printf '\033[1m==> %s\033[0m\n' "$*" >&2
}

# Writes the configuration files once and points podman at them.
image_env() {
    mkdir -p "$IMAGE_STORE/storage" "$IMAGE_STORE/tmp"
    if [ ! -f "$IMAGE_STORE/containers.conf" ]; then
        cat >"$IMAGE_STORE/containers.conf" <<'EOF'
# croupier's image store (scripts/image.sh); ../shared/LIBNOTES.md "Containers"
[containers]
default_ulimits = []
netns = "host"
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
events_logger = "file"
EOF
    fi
    if [ ! -f "$IMAGE_STORE/storage.conf" ]; then
        cat >"$IMAGE_STORE/storage.conf" <<EOF
# croupier's image store (scripts/image.sh)
[storage]
driver = "vfs"
graphroot = "$IMAGE_STORE/storage"
runroot = "/run/croupier-image"
EOF
    fi
    export CONTAINERS_CONF=$IMAGE_STORE/containers.conf
    export CONTAINERS_STORAGE_CONF=$IMAGE_STORE/storage.conf
    export TMPDIR=$IMAGE_STORE/tmp # podman build's scratch space (the context copy, layers)
}

image_podman() {
    image_env
    podman "$@"
}

# The build's version, as the binaries will print it.
image_version() {
    git -C "$IMAGE_SRC" describe --always --dirty 2>/dev/null || echo unknown
}

# A hash of the build context's files (those git tracks or would track): the build step mounts
# the context instead of copying it, so podman's layer cache cannot see a changed file by
# itself; this build argument makes it.
image_source_hash() {
    (
        cd "$IMAGE_SRC"
        if git rev-parse --git-dir >/dev/null 2>&1; then
            git ls-files -z -co --exclude-standard
        else
            find . -path ./.git -prune -o -path './build*' -prune -o -type f -print0
        fi | sort -z | xargs -0 -r sha256sum 2>/dev/null | sha256sum | cut -c1-16
    )
}

# The debootstrapped base, made once (or again with --refresh).
image_base() {
    local refresh=${1:-0} dir
    if [ "$refresh" = 0 ] && image_podman image exists "$IMAGE_BASE"; then
        return 0
    fi
    command -v debootstrap >/dev/null || {
        echo "image: debootstrap is missing (apt-get install debootstrap)" >&2
        return 1
    }
    dir=$IMAGE_STORE/rootfs
    rm -rf "$dir"
    image_log "debootstrap --variant=minbase bookworm from $IMAGE_MIRROR (once; a minute or so)"
    debootstrap --variant=minbase bookworm "$dir" "$IMAGE_MIRROR" >"$IMAGE_STORE/debootstrap.log" 2>&1 || {
        tail -n 20 "$IMAGE_STORE/debootstrap.log" >&2
        return 1
    }
    # bookworm, its updates and the security archive: the build stage's packages (and so the
    # libraries the image ships) are current when the base is made
    rm -f "$dir/etc/apt/sources.list"
    local sec=${CROUPIER_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
    cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $IMAGE_MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/*
    image_log "importing the root file system as $IMAGE_BASE"
    tar -C "$dir" -c . | image_podman import - "$IMAGE_BASE" >"$IMAGE_STORE/import.log" 2>&1 || {
        cat "$IMAGE_STORE/import.log" >&2
        return 1
    }
    rm -rf "$dir"
}

image_build() {
    local refresh=0
    for a in "$@"; do
        case $a in
        --refresh) refresh=1 ;;
        *)
            echo "usage: scripts/image.sh build [--refresh]" >&2
            return 2
            ;;
        esac
    done
    [ "$(id -u)" -eq 0 ] || {
        echo "image: podman runs as root here (vfs storage, runc); run as root or with sudo" >&2
        return 1
    }
    local t0=$SECONDS version
    image_env
    image_base "$refresh"
    version=$(image_version)
    local nocache=()
    [ "$refresh" = 1 ] && nocache=(--no-cache)
    image_log "podman build $IMAGE_NAME:$version (log: $IMAGE_STORE/build.log)"
    # The build stage's packages first, as an image of its own: named, it survives the prune
    # below, and every later build finds it in the layer cache.
    if ! image_podman build "${nocache[@]}" --layers --network host --pull=never \
        --build-arg "BASE=$IMAGE_BASE" --target deps -t "$IMAGE_DEPS" \
        -f "$IMAGE_SRC/Containerfile" "$IMAGE_SRC" >"$IMAGE_STORE/build.log" 2>&1; then
        tail -n 40 "$IMAGE_STORE/build.log" >&2
        return 1
    fi
    if ! image_podman build --layers --network host --pull=never \
        --build-arg "BASE=$IMAGE_BASE" --build-arg "CROUPIER_VERSION=$version" \
        --build-arg "CROUPIER_SOURCE_HASH=$(image_source_hash)" \
        -f "$IMAGE_SRC/Containerfile" -t "$IMAGE_NAME:$version" -t "$IMAGE_NAME:dev" \
        "$IMAGE_SRC" >>"$IMAGE_STORE/build.log" 2>&1; then
        tail -n 40 "$IMAGE_STORE/build.log" >&2
        return 1
    fi
    # the build stages of this and earlier trees go (with vfs each is a full copy of a Debian
    # with a compiler); the deps image and the base stay
    image_podman image prune -f >/dev/null 2>&1 || true
    local size
    size=$(image_podman image inspect -f '{{.Size}}' "$IMAGE_NAME:$version")
    echo "image: $IMAGE_NAME:$version (also :dev), $((size / 1024 / 1024)) MiB, built in $((SECONDS - t0)) s"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    case "${1:-}" in
    build) shift; image_build "$@" ;;
    podman) shift; image_podman "$@" ;;
    *) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
    esac
fi
