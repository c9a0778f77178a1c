#!/usr/bin/env bash
# Runs the README's test command on a new user's machine: a fresh Debian 12
# root (debootstrap --variant=minbase bookworm) that holds nothing but a clone
# of this checkout's HEAD and a copy of ../shared, with no git identity, no
# ccache, an empty HOME and a PATH of what minbase and scripts/deps.sh install.
# scripts/test.sh installs its packages with apt-get from the machine's own
# Debian sources, builds and runs every test there; then the Release builds a
# user or packager types are built with GCC 12 and clang 14, warnings as
# errors. Any failure fails the run.
#
# Only the minbase root is cached (a tarball under $KISTORE_CI_CACHE, default
# /var/tmp/kistore-ci, keyed by the Debian release): installing the packages
# is what the run proves, so it is never cached. Each run unpacks a fresh copy.
#
# Needs root (debootstrap, chroot, mounts). The root's mounts live in a mount
# namespace of their own and its processes in a PID namespace of their own:
# whatever a test leaves running, and every mount, ends with the run.
#
# Usage: .ci/fresh_root.sh [ctest -R REGEX]   (passed on to scripts/test.sh)
# Env:   KISTORE_CI_CACHE   where the base tarball and the run's root go
#        KISTORE_CI_KEEP=1  keep the run's root afterwards (to look inside)
#        KISTORE_CI_RELEASE=0  skip the Release builds
#        KISTORE_FUZZ, KISTORE_FUZZ_SECONDS, KISTORE_SANITIZE  passed on to
#                           scripts/test.sh (the quicker loops it documents)
set -euo pipefail
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
shared="$(cd "$src/../shared" 2>/dev/null && pwd)" || {
  echo "fresh_root: ../shared is not beside the checkout ($src/../shared)" >&2
  exit 1
}
[[ $(id -u) == 0 ]] || { echo "fresh_root: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
release=bookworm
cache="${KISTORE_CI_CACHE:-/var/tmp/kistore-ci}"
base="$cache/debian-$release-minbase.tar"
mkdir -p "$cache"
start=$SECONDS
stage() { printf '==== fresh root: %s (at %d s)\n' "$*" "$((SECONDS - start))"; }

# The machine's own Debian mirror: the first URIs: line of its deb822 sources,
# or the first deb line of sources.list; deb.debian.org if it has neither.
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[[ -n $mirror ]] || mirror=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[[ -n $mirror ]] || mirror=http://deb.debian.org/debian

if [[ ! -s $base ]]; then
  stage "no cached $base: debootstrap --variant=minbase $release from $mirror"
  command -v debootstrap >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  } >/dev/null
  boot=$(mktemp -d "$cache/bootstrap.XXXXXX")
  if ! debootstrap --variant=minbase "$release" "$boot/root" "$mirror" >"$boot/log" 2>&1; then
    tail -n 20 "$boot/log" >&2
    exit 1
  fi
  tar -C "$boot/root" -cf "$base.part" . && mv "$base.part" "$base"
  rm -rf --one-file-system "$boot"
fi

work=$(mktemp -d "$cache/run.XXXXXX")
root=$work/root
cleanup() {
  # The mounts were made in a namespace that is gone by now; refuse to remove
  # anything if one is somehow still there.
  if grep -q " $root/" /proc/self/mounts; then
    echo "fresh_root: mounts remain under $root; not removing it" >&2
  elif [[ ${KISTORE_CI_KEEP:-0} == 1 ]]; then
    echo "fresh_root: kept $root" >&2
  else
    rm -rf --one-file-system "$work"
  fi
}
trap cleanup EXIT
stage "unpacking a fresh root in $root"
mkdir "$root"
tar -C "$root" -xf "$base"

# What goes in: the machine's Debian sources (not its other vendors' lists),
# name resolution, a clone of HEAD and ../shared. Nothing else.
rm -f "$root/etc/apt/sources.list"
if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
  cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
else
  grep -E '^deb ' /etc/apt/sources.list >"$root/etc/apt/sources.list"
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# A package's maintainer script must not start its service (sshd on port 22,
# nginx on 80) in a chroot that shares the machine's network: the same file
# Debian's container images carry.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
mkdir -p "$root/src" "$root/home/new"
git clone -q --no-hardlinks "$src" "$root/src/kistore"
cp -a "$shared/." "$root/src/shared"
chmod -R a-w "$root/src/shared"
find "$root/root" -mindepth 1 -delete

inner='
set -euo pipefail
cd /src/kistore
t0=$SECONDS
step() { printf "==== in the root: %s (at %d s)\n" "$*" "$((SECONDS - t0))"; }
step "scripts/test.sh $*"
bash scripts/test.sh "$@"
step "scripts/test.sh passed"
if [[ ${KISTORE_CI_RELEASE:-1} != 0 ]]; then
  for cxx in g++ clang++; do
    step "Release build with $cxx, warnings as errors"
    cmake -S . -B "build-release-$cxx" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_COMPILER="$cxx" -DKISTORE_WERROR=ON >/dev/null
    ninja -C "build-release-$cxx" -j "$(nproc)" kistore >"build-release-$cxx.log" 2>&1 ||
      { tail -n 40 "build-release-$cxx.log"; exit 1; }
    "build-release-$cxx/kistore" --version
  done
fi
step "done"
'
stage "running scripts/test.sh in the root"
status=0
# In the background, so that an interrupt of this script ends the root's
# processes too: --kill-child kills the namespace's first process when unshare
# dies, and with it every process of the namespace.
unshare --mount --propagation private --pid --fork --kill-child bash -c '
  set -euo pipefail
  root=$1; shift
  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro sysfs "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=755 tmpfs "$root/run"
  exec chroot "$root" /usr/bin/env -i HOME=/home/new PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 CI=true KISTORE_CI_RELEASE="${KISTORE_CI_RELEASE:-1}" \
    ${KISTORE_FUZZ_SECONDS:+KISTORE_FUZZ_SECONDS=$KISTORE_FUZZ_SECONDS} ${KISTORE_FUZZ:+KISTORE_FUZZ=$KISTORE_FUZZ} \
    ${KISTORE_SANITIZE:+KISTORE_SANITIZE=$KISTORE_SANITIZE} \
    bash -c "$@"
' fresh-root "$root" "$inner" inner "$@" </dev/null &
child=$!
trap 'kill -9 "$child" 2>/dev/null; wait "$child" 2>/dev/null; exit 130' INT TERM HUP
wait "$child" || status=$?
stage "finished with exit status $status"
exit "$status"
