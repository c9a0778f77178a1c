#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the unit tests of each
# layer, the layering check and the end-to-end tests of the real binary against
# real git servers started on loopback.
#
# Each test runs once, and, by default, under AddressSanitizer and
# UndefinedBehaviorSanitizer: a second tree (build-sanitize/) builds the unit
# tests and the binary with them, and any sanitizer report fails the run, even
# one from a kistore process whose exit a test did not check. The plain tree
# (build/, what users run: -O2, warnings as errors) runs what the sanitizers
# cannot: the layering check, the bounded-memory add under `ulimit -v`, and the
# core tour as a check of the optimised binary. With KISTORE_SANITIZE=0 the
# plain tree runs every test instead (the quicker loop while developing).
#
# Between the two, when clang++ is there, builds the libFuzzer targets
# (tests/fuzz/) and runs each for KISTORE_FUZZ_SECONDS from its seed corpus.
#
# Usage: scripts/test.sh [ctest -R REGEX]   (the regex applies to every run)
# Env:   KISTORE_BUILD_DIR           the plain tree (default build/)
#        KISTORE_SANITIZE_BUILD_DIR  the sanitized tree (default build-sanitize/)
#        KISTORE_SANITIZE=0          no sanitized tree: every test in the plain one
#        KISTORE_FUZZ_BUILD_DIR      the fuzz tree (default build-fuzz/)
#        KISTORE_FUZZ_SECONDS        seconds per fuzz target (default 15; eight targets)
#        KISTORE_FUZZ=0              skip the fuzz run
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/deps.sh" test
# deps.sh installed every package the tests need: a test that finds a program
# missing fails, naming it, instead of skipping the part that needs it.
export KISTORE_ALL_TOOLS=1
build="${KISTORE_BUILD_DIR:-$root/build}"
# The tests that run in the plain tree when the sanitized one runs the rest.
plain_only='^(layering|e2e_test_bulk_add|e2e_test_core)$'
if [[ ${KISTORE_SANITIZE:-1} == 0 ]]; then
  bash "$root/scripts/build.sh"
  (cd "$build" && ctest --output-on-failure -j 2 "$@")
else
  # The product only: its unit tests run in the sanitized tree.
  bash "$root/scripts/build.sh" kistore
  (cd "$build" && ctest --output-on-failure -j 2 -R "$plain_only" "$@")
fi

if [[ ${KISTORE_FUZZ:-1} != 0 ]] && command -v clang++ >/dev/null; then
  fuzz="${KISTORE_FUZZ_BUILD_DIR:-$root/build-fuzz}"
  cmake -S "$root" -B "$fuzz" -G Ninja -DKISTORE_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DKISTORE_FUZZ_SECONDS=${KISTORE_FUZZ_SECONDS:-15}" >/dev/null
  ninja -C "$fuzz" -j "$(nproc)" fuzz_pack_indexer fuzz_pack_delta fuzz_jcs fuzz_document fuzz_liger_csv fuzz_harness_import fuzz_tritonbench_csv fuzz_raw_tree fuzz_http_response
  # Two at a time: each fuzzer keeps one core busy for its whole run.
  (cd "$fuzz" && ctest --output-on-failure -j 2 -L fuzz "$@")
fi

[[ ${KISTORE_SANITIZE:-1} == 0 ]] && exit 0
sanitized="${KISTORE_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
# -O1 -g1: what the sanitizers recommend (usable speed, line numbers in reports),
# and quicker to compile than the plain tree's -O2 -g.
cmake -S "$root" -B "$sanitized" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DKISTORE_SANITIZE=ON -DKISTORE_WERROR=ON >/dev/null
ninja -C "$sanitized" -j "$(nproc)" kistore test_objects test_refs test_store test_cli

reports="$sanitized/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# Reports go to files (log_path), so that none is lost in a test that expects
# kistore to fail; their own exit codes tell them from kistore's (0-4). The
# store's unit tests and test_sync add fast_unwind_on_malloc=0 (CMakeLists.txt):
# for a short stack elsewhere, rerun that test with it to see where a leak began.
export ASAN_OPTIONS="detect_leaks=1:check_initialization_order=1:strict_init_order=1:exitcode=86:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=87:log_path=$reports/ubsan"
# Leaks of libgit2 1.5.1 itself, each named with its reason, in the file.
export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
# Everything runs several times slower: the e2e tests' own time limits widen.
export KISTORE_E2E_TIME_LIMIT=1200
# The e2e tests that bound memory with ulimit -v cannot under AddressSanitizer.
export KISTORE_SANITIZED=1
# Every test but the layering check (it compiles, it runs no kistore code).
# Three at a time: the end-to-end tests spend much of their time waiting on
# git servers and child processes.
status=0
(cd "$sanitized" && ctest --output-on-failure -j 3 -E '^layering$' "$@") || status=$?
if compgen -G "$reports/*" >/dev/null; then
  echo "sanitizer reports (from $reports):" >&2
  for f in "$reports"/*; do printf '==== %s\n' "$f" >&2; cat "$f" >&2; done
  exit 1
fi
exit "$status"
