#!/usr/bin/env bash
# make container-check: build the CPU image and run the reproduction inside it, offline, with the
# registry mirror mounted read-only. Where podman (or a Debian base for it) cannot be had it
# prints "SKIP container-check: <why>" as its last line and exits 77 (SKIP_STATUS: skipped, not
# passed; so a gate can tell the three apart); exits 1 when a build or a check inside fails and 0
# only when everything ran and passed.
#
# The base image is a local debootstrap of Debian bookworm (python3 3.11, python3-venv, make,
# ca-certificates) imported into podman: no registry pull. Python packages come from files
# downloaded on the host, each pinned by sha256 in containers/requirements.lock (installed with
# pip --require-hashes), bind-mounted into the build.
#
# Usage: containers/check.sh [full|quick]
#   full  (default) the image's default command, `make reproduce` (dvc repro + verify), then the
#         quick checks too
#   quick build, then `kit --version`, `kit registry fetch` from the mounted mirror and
#         `kit reproduce run board_check` + `kit verify board board_check` inside the container
# Environment: KIT_CT_WORK (podman storage, rootfs, wheels, build context; default
# /tmp/litaudit-ct), KIT_MIRROR (registry mirror; default ../shared/registry beside the repo),
# KIT_CT_PYTHON (host Python whose pip downloads the wheels; default .venv/bin/python).
set -euo pipefail

# The whole script is one function, so bash has parsed all of it before it runs a line.
main() {
    MODE=${1:-full}
    REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    WORK=${KIT_CT_WORK:-/tmp/litaudit-ct}
    MIRROR=${KIT_MIRROR:-$REPO/../shared/registry}
    BASE=localhost/litaudit-base:bookworm
    IMAGE=localhost/litaudit-kit:cpu
    PY=${KIT_CT_PYTHON:-$REPO/.venv/bin/python}

    SKIP_STATUS=77 # automake's "skipped" status: neither a pass (0) nor a failure (1)
    skip() {
        echo "SKIP container-check: $* (exit $SKIP_STATUS: skipped, NOT passed)"
        exit "$SKIP_STATUS"
    }
    fail() { echo "FAIL container-check: $*" >&2; exit 1; }
    t0=$(date +%s)
    step() { echo "== [$(($(date +%s) - t0))s] $*"; }

    case "$MODE" in full | quick) ;; *) fail "unknown mode '$MODE' (full|quick)" ;; esac
    [ -d "$MIRROR" ] || skip "no registry mirror at $MIRROR (set KIT_MIRROR)"
    MIRROR=$(cd "$MIRROR" && pwd)

    # 1. podman (+ runc, debootstrap): install with apt where we may, else skip.
    if ! command -v podman >/dev/null || ! command -v runc >/dev/null \
        || ! command -v debootstrap >/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            step "installing podman runc debootstrap (apt-get)"
            { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq podman runc debootstrap >/dev/null; } \
                || skip "podman cannot be installed here (apt-get failed)"
        else
            skip "podman is not installed and cannot be installed here (needs root and apt-get)"
        fi
    fi
    mkdir -p "$WORK"
    # Storage flags, not a storage config file: the config variable made every run take ~20 s.
    PODMAN=(podman --root "$WORK/storage" --runroot "$WORK/run")
    RUN=("${PODMAN[@]}" run --rm --runtime runc --network none
        --ulimit nofile=1024:1024 --ulimit nproc=4096:4096
        -v "$MIRROR:/mirror:ro")

    # 2. base image: debootstrap'ed bookworm, imported (once; reused while it exists).
    if ! "${PODMAN[@]}" image exists "$BASE"; then
        if [ ! -x "$WORK/rootfs/usr/bin/python3" ]; then
            step "debootstrap bookworm (minbase + python3 python3-venv make ca-certificates)"
            rm -rf "$WORK/rootfs"
            debootstrap --variant=minbase --include=python3,python3-venv,make,ca-certificates \
                bookworm "$WORK/rootfs" >"$WORK/debootstrap.log" 2>&1 \
                || skip "debootstrap failed (no Debian mirror reachable?); see $WORK/debootstrap.log"
        fi
        step "importing the base image $BASE"
        tar -C "$WORK/rootfs" -c . | "${PODMAN[@]}" import - "$BASE" >/dev/null
    fi

    # 3. the locked files (containers/requirements.lock: every package pinned by sha256),
    # downloaded on the host (pip cannot reach PyPI in a build); pip checks every hash here and
    # again in the image. Re-downloaded only when the lock changes (a stamp holds its sha256).
    LOCK="$REPO/containers/requirements.lock"
    stamp="$WORK/wheels/.lock.sha256"
    want=$(sha256sum "$LOCK" | cut -d' ' -f1)
    if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        step "wheels: pip download --require-hashes -r containers/requirements.lock (log: $WORK/wheels.log)"
        rm -rf "$WORK/wheels"
        mkdir -p "$WORK/wheels"
        "$PY" -m pip download -q --no-deps --require-hashes -r "$LOCK" \
            -d "$WORK/wheels" >"$WORK/wheels.log" 2>&1 \
            || skip "cannot download the locked files on the host (see $WORK/wheels.log)"
        echo "$want" >"$stamp"
    fi

    # 4. build context: the repository files git would commit (never data/raw: data rules) + wheels.
    step "staging the build context in $WORK/context"
    rm -rf "$WORK/context"
    mkdir -p "$WORK/context/app"
    (cd "$REPO" && git ls-files -z -co --exclude-standard | tar --null -T - -c) \
        | tar -C "$WORK/context/app" -x
    [ ! -e "$WORK/context/app/data/raw" ] || fail "data/raw would be baked into the image"
    cp -al "$WORK/wheels" "$WORK/context/wheels" 2>/dev/null || cp -r "$WORK/wheels" "$WORK/context/wheels"

    step "podman build -f containers/Dockerfile.cpu --build-arg BASE_IMAGE=$BASE"
    "${PODMAN[@]}" build --format docker --runtime runc --network none --build-arg "BASE_IMAGE=$BASE" \
        -f "$WORK/context/app/containers/Dockerfile.cpu" -t "$IMAGE" "$WORK/context" \
        >"$WORK/build.log" 2>&1 || { tail -40 "$WORK/build.log"; fail "image build failed"; }
    "${PODMAN[@]}" image prune -f >/dev/null || true # earlier builds' untagged images

    # 5. checks inside the container: non-root, no data baked in, offline, mirror read-only.
    step "inside: identity, python, no data/raw in the image"
    "${RUN[@]}" --entrypoint bash "$IMAGE" -c \
        'set -e; test "$(id -u)" != 0; python3 --version; kit --version; test ! -e data/raw' \
        || fail "image sanity checks failed"

    if [ "$MODE" = full ]; then
        # The DVC cache lives on the host ($WORK/dvc-cache, owned by the image's user through :U), so
        # a second check restores the trained card from DVC's run cache instead of training again.
        mkdir -p "$WORK/dvc-cache"
        step "inside: make reproduce (the image's default command; DVC cache: $WORK/dvc-cache)"
        "${RUN[@]}" -v "$WORK/dvc-cache:/home/kit/app/.dvc/cache:U" --entrypoint bash "$IMAGE" -c \
            'set -e; make reproduce; echo "container card fp32 sha256: $(sha256sum data/verifier-nli/cross-fp32.onnx | cut -d" " -f1)"' \
            2>&1 | tee "$WORK/reproduce.log" || fail "make reproduce failed inside the container (log: $WORK/reproduce.log)"
        inside=$(sed -n 's/^container card fp32 sha256: //p' "$WORK/reproduce.log" | tail -1)
        host_card="$REPO/data/verifier-nli/cross-fp32.onnx"
        if [ -f "$host_card" ]; then
            host=$(sha256sum "$host_card" | cut -d' ' -f1)
            if [ "$host" = "$inside" ]; then same="byte-identical"; else
                same="differ: CPU float kernels differ between machines; the board above was verified within its tolerances"; fi
            step "card fp32 sha256: container $inside, host $host ($same)"
        else
            step "card fp32 sha256: container $inside, host: no trained card in $REPO/data/verifier-nli (run make reproduce on the host to compare)"
        fi
    fi

    step "inside: kit registry fetch (mirror) + kit reproduce run board_check + kit verify board"
    "${RUN[@]}" --entrypoint bash "$IMAGE" -c 'set -e
        kit registry fetch --mirror /mirror --offline
        kit reproduce run board_check --raw data/raw --tables /tmp/tables
        kit verify board board_check --tables /tmp/tables' \
        || fail "reproduction inside the container failed"

    step "PASS container-check ($MODE): CPU image built from $BASE and the reproduction verified; total $(($(date +%s) - t0))s"
}

main "$@"
exit
