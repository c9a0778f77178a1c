#!/usr/bin/env bash
# Configures and builds kistore into build/ (or $KISTORE_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KISTORE_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKISTORE_WERROR=ON >/dev/null
ninja -C "$build" -j "$(nproc)" "$@"
