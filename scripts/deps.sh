#!/usr/bin/env bash
# Installs, with apt-get, the Debian 12 packages that are not already installed:
#   deps.sh demo   what building and running kistore needs (demo.sh): the
#                  compiler, CMake and Ninja, the libraries (Boost for its
#                  header-only Boost.Math), Catch2 (the build
#                  configures the unit tests too), git, ssh-keygen (the demo
#                  signs a rerun) and python3 (the demo writes one)
#   deps.sh test   that, and what the tests need (test.sh): the servers they
#                  start on loopback (openssh-server, nginx-light, fcgiwrap),
#                  their tools (zstd, jq, openssl, curl, iproute2), and clang
#                  with its runtime (libFuzzer, a Recommends that
#                  --no-install-recommends skips) for the fuzz targets, and
#                  chromium (test_site loads the static site in it, headless)
#                  and tidy (test_site validates every page of the site with it),
#                  time (peak memory of a command: /usr/bin/time -f %M) and
#                  strace (test_native_read: which files a command opens).
#                  A test that finds one of these missing where test.sh runs
#                  it fails (tests/e2e/lib/servers.sh, have_tool).
# apt-get's output goes to $KISTORE_APT_LOG (default: a new file in $TMPDIR
# or /tmp, named on the one line this prints); on a failure its last lines
# are shown.
#
# libgit2 must be Debian's 1.5.1+ds-1+deb12u2 or later (bookworm-security):
# before it (bookworm's own 1.5.1+ds-1+deb12u1, upstream 1.5.1) libgit2 hands
# the credential callback the configured URL even after an HTTP redirect
# (CVE-2026-53586), so kistore cannot see the redirect. kistore refuses a
# redirect to another host whatever the version (store/sync/connection.cc);
# one to another port of the same host it sees only through the callback,
# and with an older libgit2 would offer it the URL's password or token. It
# is also the library the tests expect. An older one is upgraded;
# if apt has none newer (no bookworm-security in its sources), this fails.
# `apt-get update --error-on=any` makes a source that could not be fetched
# (bookworm-security out of reach for a moment) an error, not a warning
# after which the older packages of the other sources get installed.
set -euo pipefail

LIBGIT2_MIN=1.5.1+ds-1+deb12u2
# Is an installed libgit2-1.5 older than LIBGIT2_MIN? (false when none is)
libgit2_too_old() {
  local v
  v=$(dpkg-query -W -f='${Version}' libgit2-1.5 2>/dev/null) || return 1
  [[ -n $v ]] && ! dpkg --compare-versions "$v" ge "$LIBGIT2_MIN"
}

KISTORE_DEMO_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libgit2-dev libmbedtls-dev libssl-dev rapidjson-dev libzstd-dev libcli11-dev catch2 libboost-dev
  openssh-client python3
)
# Everything the tests need: the demo's packages and theirs.
KISTORE_PACKAGES=(
  "${KISTORE_DEMO_PACKAGES[@]}"
  zstd jq openssh-server nginx-light fcgiwrap openssl curl iproute2
  clang libclang-rt-14-dev chromium tidy time strace man-db zsh
)

case "${1:-test}" in
  demo) wanted=("${KISTORE_DEMO_PACKAGES[@]}") ;;
  test) wanted=("${KISTORE_PACKAGES[@]}") ;;
  *) echo "usage: deps.sh demo|test" >&2; exit 2 ;;
esac

missing=()
for p in "${wanted[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
libgit2_too_old && missing+=(libgit2-1.5 libgit2-dev)
((${#missing[@]})) || exit 0
log="${KISTORE_APT_LOG:-$(mktemp "${TMPDIR:-/tmp}/kistore-apt-XXXXXX")}"
echo "installing ${#missing[@]} Debian packages (${missing[*]}); apt-get's output goes to $log" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# Three tries: a source out of reach for a moment is retried, not skipped.
apt_update() {
  local i
  for i in 1 2 3; do
    $SUDO apt-get update -qq --error-on=any && return 0
    ((i < 3)) && sleep 10
  done
  return 1
}
if ! { apt_update &&
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "apt-get failed; the end of $log:" >&2
  tail -n 20 "$log" >&2
  exit 1
fi
if libgit2_too_old; then
  echo "libgit2-1.5 $(dpkg-query -W -f='${Version}' libgit2-1.5) is installed, and apt offers none newer;" \
    "kistore needs $LIBGIT2_MIN or later (bookworm-security: CVE-2026-53586, credentials sent across" \
    "an HTTP redirect). Add bookworm-security to apt's sources and run this again." >&2
  exit 1
fi
