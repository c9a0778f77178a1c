#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the unit tests of each
# layer and the end-to-end tests of the real binary against real git servers
# started on loopback. Usage: scripts/test.sh [ctest -R REGEX]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/deps.sh"
bash "$root/scripts/build.sh"
build="${KISTORE_BUILD_DIR:-$root/build}"
cd "$build"
ctest --output-on-failure -j 2 "$@"
