#!/usr/bin/env bash
# The layers objects <- refs <- store <- cli, as the build enforces them.
#
# 1. Includes. Each probe here (LAYER_sees_WHAT.cc) includes one header and is
#    compiled with LAYER's include folders (CMakeLists.txt: target probe_NAME).
#    A right-way include must compile; a wrong-way one must fail because the
#    header is not found (not for any other reason, so that a broken probe or
#    a broken build cannot pass for a refused include).
# 2. Libraries. nm lists what each layer's code calls: only objects calls
#    OpenSSL and zstd, only store calls libgit2 and zlib, only store/sync
#    calls mbedTLS (http_refusal.cc: a refusal's words, over the TLS library
#    libgit2 uses), and only cli/command_table.cc holds CLI11's code.
#
# 3. Rooms. store/ is a set of rooms (CMakeLists.txt: KISTORE_ROOMS); the
#    build writes a probe for every ordered pair of rooms and a table of what
#    each must do (ROOMS.txt: "probe ok|refused header"), checked as in 1.
#    nm shows which rooms call libgit2: only git/ may. The gates (edge), the
#    Store and its Snapshots (core), the importers (ingest), the readers
#    (query), the writers (write), the history (history), verify (verify)
#    and sync (sync) must not; they go through store/git/'s functions (the
#    Store's through store_repo.h, libgit2_trees.h, commit_author.h,
#    parallel_blob_walk.h), its commit-reading door (store/git/commit_graph.h)
#    and, for sync, its remote, quarantine and transport doors
#    (store/git/remote_*.h, quarantine_odb.h, sync_repo.h).
#
# Usage: check_layers.sh BUILD_DIR PROBE_DIR OBJECTS.a REFS.a "ROOM=ROOM.a;..." "CLI.o;CLI.o;..." ROOMS.txt
set -uo pipefail
build=$1 probes=$2 objects_lib=$3 refs_lib=$4 room_libs=$5 cli_objects=$6 room_table=$7
declare -A room_lib
store_lib=""
for entry in ${room_libs//;/ }; do
  room_lib[${entry%%=*}]=${entry#*=}
  store_lib+=" ${entry#*=}"
done
passed=0 failed=0
ok() { passed=$((passed + 1)); printf 'ok %d - %s\n' "$passed" "$*"; }
bad() { failed=$((failed + 1)); printf 'FAIL: %s\n' "$*"; }

# probe                 expected  (ok: compiles; refused: the header is not found)
cases=(
  "objects_sees_objects ok"
  "objects_sees_refs    refused"
  "objects_sees_store   refused"
  "objects_sees_cli     refused"
  "refs_sees_objects    ok"
  "refs_sees_refs       ok"
  "refs_sees_store      refused"
  "refs_sees_cli        refused"
  "store_sees_refs      ok"
  "store_sees_store     ok"
  "store_sees_cli       refused"
  "store_sees_tests     refused"
  "cli_sees_store       ok"
  "cli_sees_cli         ok"
  "cli_sees_tests       refused"
  "cliout_sees_store    ok"
  "cliout_sees_cli      refused"
  "cliout_sees_site     refused"
  "clisite_sees_output  ok"
  "clisite_sees_cli     refused"
)

declared=()
for c in "${cases[@]}"; do
  read -r probe expected <<<"$c"
  declared+=("$probe")
  [[ -f $probes/$probe.cc ]] || { bad "$probe: no $probes/$probe.cc"; continue; }
  header=$(sed -n 's/^#include "\(.*\)"$/\1/p' "$probes/$probe.cc")
  out=$(cmake --build "$build" --target "probe_$probe" 2>&1)
  rc=$?
  if [[ $expected == ok ]]; then
    if ((rc == 0)); then ok "$probe: $header compiles"; else bad "$probe: $header should compile:"$'\n'"$out"; fi
  elif ((rc == 0)); then
    bad "$probe: $header compiled, but this layer must not see it"
  elif grep -q "$header: No such file or directory" <<<"$out"; then
    ok "$probe: $header is refused (not found)"
  else
    bad "$probe: failed, but not for want of $header:"$'\n'"$out"
  fi
done
for f in "$probes"/*.cc; do
  name=$(basename "$f" .cc)
  [[ " ${declared[*]} " == *" $name "* ]] || bad "$name.cc is not in the table of cases"
done

# The rooms: every ordered pair, as the build declared them.
[[ -s $room_table ]] || bad "no table of room probes at $room_table"
while read -r probe expected header; do
  out=$(cmake --build "$build" --target "probe_$probe" 2>&1)
  rc=$?
  if [[ $expected == ok ]]; then
    if ((rc == 0)); then ok "$probe: $header compiles"; else bad "$probe: $header should compile:"$'\n'"$out"; fi
  elif ((rc == 0)); then
    bad "$probe: $header compiled, but this room must not see it"
  elif grep -q "$header: No such file or directory" <<<"$out"; then
    ok "$probe: $header is refused (not found)"
  else
    bad "$probe: failed, but not for want of $header:"$'\n'"$out"
  fi
done <"$room_table"

# undefined_in FILE... : the external functions these objects call
undefined_in() { nm --undefined-only --format=posix "$@" | awk 'NF >= 2 && $2 == "U" {print $1}' | sort -u; }
for f in "$objects_lib" "$refs_lib" $store_lib ${cli_objects//;/ }; do
  [[ -f $f ]] || bad "no such file: $f (is the tree built?)"
done
openssl='^(EVP_|SHA[0-9]|OPENSSL_|ERR_|CRYPTO_|BIO_)'
zstd='^(ZSTD_|ZDICT_)'
libgit2='^git_'
zlib='^(deflate|inflate|adler32|crc32|compress|uncompress|zlibVersion)'
mbedtls='^mbedtls_'
# must_not_call / must_call LAYER FILES PATTERN WHAT : whether LAYER's code calls WHAT
must_not_call() {
  local layer=$1 pattern=$3 what=$4 found
  found=$(undefined_in $2 | grep -E "$pattern" | head -5 | tr '\n' ' ')
  if [[ -z $found ]]; then ok "$layer calls no $what"; else bad "$layer calls $what: $found"; fi
}
must_call() {
  local layer=$1 pattern=$3 what=$4
  if [[ -n $(undefined_in $2 | grep -E "$pattern") ]]; then ok "$layer calls $what"; else bad "$layer should call $what (is nm working?)"; fi
}
cli_files=${cli_objects//;/ }
must_call objects "$objects_lib" "$openssl" OpenSSL
must_call objects "$objects_lib" "$zstd" zstd
must_not_call objects "$objects_lib" "$libgit2" libgit2
must_not_call objects "$objects_lib" "$zlib" zlib
for lib in openssl zstd libgit2 zlib mbedtls; do must_not_call refs "$refs_lib" "${!lib}" "$lib"; done
must_not_call objects "$objects_lib" "$mbedtls" mbedTLS
must_call store "$store_lib" "$libgit2" libgit2
must_not_call store "$store_lib" "$openssl" OpenSSL
must_not_call store "$store_lib" "$zstd" zstd
for room in edge core history ingest query sync verify write; do must_not_call "store/$room" "${room_lib[$room]}" "$libgit2" libgit2; done
for room in edge git core history ingest query verify write; do must_not_call "store/$room" "${room_lib[$room]}" "$mbedtls" mbedTLS; done
must_call store/sync "${room_lib[sync]}" "$mbedtls" mbedTLS
# The environment is read in cli/ alone and passed down as values.
getenv_pattern='^(getenv|secure_getenv|environ)$'
for layer in objects refs; do
  lib_var="${layer}_lib"
  must_not_call "$layer" "${!lib_var}" "$getenv_pattern" "getenv"
done
must_not_call store "$store_lib" "$getenv_pattern" "getenv"
for lib in openssl zstd libgit2 zlib mbedtls; do must_not_call cli "$cli_files" "${!lib}" "$lib"; done
# CLI11 is header-only: its code is compiled into each file that includes it.
with_cli11=()
for o in $cli_files; do
  [[ -n $(nm -C --defined-only "$o" 2>/dev/null | grep ' CLI::') ]] && with_cli11+=("$(basename "$o")")
done
if [[ ${with_cli11[*]} == command_table.cc.o ]]; then ok "only command_table.cc compiles CLI11"
else bad "CLI11 is compiled into: ${with_cli11[*]:-nothing} (expected command_table.cc.o alone)"; fi
for lib in "$objects_lib" "$refs_lib" $store_lib; do
  [[ -z $(nm -C --defined-only "$lib" 2>/dev/null | grep ' CLI::') ]] || bad "$(basename "$lib") compiles CLI11"
done

printf '%d passed, %d failed\n' "$passed" "$failed"
((failed == 0))
