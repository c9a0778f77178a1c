#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages kistore needs to build and test
# that are not already installed. Sourced by demo.sh and test.sh. clang and
# its runtime (libFuzzer, a Recommends that --no-install-recommends skips) build
# the fuzz targets that test.sh runs.
set -euo pipefail

KISTORE_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libgit2-dev libssl-dev rapidjson-dev libzstd-dev libcli11-dev catch2
  zstd jq openssh-client openssh-server nginx-light fcgiwrap openssl curl iproute2 python3
  clang libclang-rt-14-dev
)
# Test only: tests/e2e/test_site.sh loads the static site in Debian's chromium, headless.
KISTORE_PACKAGES+=(chromium)

missing=()
for p in "${KISTORE_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
