#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Tampering with stock git only.  Build a store with kistore, then commit, with
# git plumbing alone (hash-object, read-tree into a scratch index, update-index,
# write-tree, commit-tree, update-ref), trees that break the store's rules:
# other bytes at an object's path (another zstd frame, a frame without its
# checksum, a flipped byte, a truncated frame, plain bytes), a removed object, a
# file outside the layout, an edited group value, a level moved to reproduced,
# index entries removed or pointed elsewhere.  Each must make `kistore verify`
# exit 1 with --json problems naming the expected kind and path; several at
# once must all be reported; verify must not change the store; `verify --deep`
# must catch an object whose bytes hash to its name but are not JCS.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root).  Runs in < 60 s,
# as root or not, with stdin closed; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
# ------------------------------------------------------------------------------

work_in w
S=$W/store
S0=$W/store0

RUN=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
RH=${RUN#sha256:}
objpath() { local h=${1#sha256:}; printf 'objects/sha256/%s/%s/%s' "${h:0:2}" "${h:2:2}" "${h:4}"; }
RUNP=$(objpath "$RUN")
NULL_ENTRY='0 0000000000000000000000000000000000000000'

# ------------------------------ stock git tools -------------------------------
g() { git --git-dir="$S" "$@"; }
# blob < BYTES : store BYTES as a git blob, print its id
blob() { g hash-object -w --stdin; }
# tamper MSG < INDEX-INFO : commit on main the tree of main changed by the
# `git update-index --index-info` lines on stdin ("MODE SP blob SP ID TAB PATH";
# mode 0 with the null id removes PATH)
tamper() { commit_index_info "$S" "$1" >/dev/null; }
put() { printf '100644 blob %s\t%s\n' "$1" "$2"; }   # put BLOB PATH
del() { printf '%s\t%s\n' "$NULL_ENTRY" "$1"; }      # del PATH
# Tampering only adds git objects and moves main: moving main back restores the
# store's state (what verify reads is the branch and its history).
reset_store() { g update-ref refs/heads/main "$C0"; }
# state of the store that verify must not change
store_state() { printf 'main %s\n' "$(head_of "$S")"; (cd "$S" && find . -type f | LC_ALL=C sort | xargs -d '\n' sha256sum); }

# expect_problem KIND PATH [DETAIL-SUBSTRING] : after `verify --json`, a
# problem of KIND at PATH (exactly) is listed
expect_problem() {
    local got
    got=$(jq -r --arg k "$1" --arg p "$2" '.problems[] | select(.kind == $k and .path == $p) | .detail' <<<"$OUT" 2>/dev/null) || got=
    if [[ -z $got ]]; then
        printf '  problems: %s\n' "$(jq -c '.problems' <<<"$OUT" 2>/dev/null || echo "$OUT")" >&2
        fail "verify --json: expected a problem {kind: $1, path: $2}"
    elif [[ -n ${3:-} ]]; then
        assert_contains "$got" "$3" "verify --json: detail of $1 at $2"
    fi
}
# verify_fails NAME : verify exits 1 (text and --json, ok false), store unchanged
verify_fails() {
    local before
    before=$(store_state)
    assert_exit 1 ks --store "$S" verify
    assert_exit 1 ks --store "$S" --json verify
    assert_eq false "$(jv .ok)" "$1: ok"
    assert_eq "$before" "$(store_state)" "$1: verify must not change the store"
}

# ---------------------------------- a store -----------------------------------
assert_exit 0 ks --store "$S0" init
assert_exit 0 ks --store "$S0" add "$FX"
mkruns --start 1 --count 4 >"$W/four.jsonl"
assert_exit 0 ks --store "$S0" add "$W/four.jsonl"
assert_exit 0 ks --store "$S0" --json verify
assert_eq true "$(jv .ok)" "pristine store verifies"
OBJECTS=$(jv .objects)
assert_exit 0 ks --store "$S0" verify --deep
assert_exit 0 git --git-dir="$S0" fsck --strict
mapfile -t VAR < <(mkruns --start 1 --count 4 --digests)
GROUP_ENTRY=$(git --git-dir="$S0" ls-tree -r --name-only main -- refs/groups | grep "/$RH\$")
[[ -n $GROUP_ENTRY ]] || fail "no group entry for the run in the pristine store"
GROUP_ENTRY_V3=${GROUP_ENTRY%/*}/${VAR[3]#sha256:}
git --git-dir="$S0" cat-file -e "main:$GROUP_ENTRY_V3" || fail "no group entry $GROUP_ENTRY_V3"
SOURCE_V2=$(git --git-dir="$S0" cat-file -p "main:$(objpath "${VAR[1]}")" | zstd -q -dc | jq -r .spec.sourceNative.externalId)
SOURCE_V2=refs/sources/liger-kernel-bench/$SOURCE_V2
git --git-dir="$S0" cat-file -e "main:$SOURCE_V2" || fail "no source entry $SOURCE_V2"
cp -a "$S0" "$S"
C0=$(head_of "$S")
pass "a store built by kistore: $OBJECTS objects, verify clean, fsck --strict clean"

# ------------------------- other bytes at an object path -----------------------
reset_store
printf '{"a":1}' >"$W/other.json"
OTHER=$(sha256sum <"$W/other.json" | cut -c1-64)
tamper "forge: another zstd frame at the run's path" < <(put "$(zstd -q -c --check "$W/other.json" | blob)" "$RUNP")
verify_fails "other zstd frame"
expect_problem object-hash-mismatch "$RUNP" "$OTHER"
expect_problem object-hash-mismatch "$RUNP" "$RH"
pass "a valid zstd frame of other JSON at the run's path: object-hash-mismatch naming both digests"
assert_exit '!0' ks --store "$S" cat "$RUN"
assert_not_contains "$OUT" '{"a":1}' "cat must not print forged bytes"
assert_contains "$ERR" "$RUNP" "cat of a forged object names its path"
pass "cat of the forged object fails (re-hash) and prints none of its bytes"

reset_store
tamper "forge: plain bytes at the run's path" < <(put "$(printf 'definitely not zstd' | blob)" "$RUNP")
verify_fails "plain bytes"
expect_problem object-corrupt "$RUNP"
pass "plain (non-zstd) bytes at the run's path: object-corrupt"

reset_store
tamper "forge: no content checksum" < <(put "$(g cat-file blob "main:$RUNP" | zstd -q -dc | zstd -q -c --no-check | blob)" "$RUNP")
verify_fails "frame without checksum"
expect_problem object-corrupt "$RUNP" "checksum"
pass "the right bytes in a zstd frame without content checksum: object-corrupt (checksum)"

reset_store
tamper "forge: one flipped byte" < <(put "$(g cat-file blob "main:$RUNP" | "$PY" -c 'import sys
b = bytearray(sys.stdin.buffer.read()); b[len(b) // 2] ^= 1; sys.stdout.buffer.write(b)' | blob)" "$RUNP")
verify_fails "flipped byte"
expect_problem object-corrupt "$RUNP"
pass "one flipped byte inside the frame: object-corrupt"

reset_store
tamper "forge: truncated frame" < <(put "$(g cat-file blob "main:$RUNP" | head -c 100 | blob)" "$RUNP")
verify_fails "truncated frame"
expect_problem object-corrupt "$RUNP"
pass "a truncated frame: object-corrupt"

# ------------------------------- a removed object ------------------------------
reset_store
tamper "forge: remove the run" < <(del "$RUNP")
verify_fails "removed object"
expect_problem history-rewritten "$RUNP"
expect_problem dangling-ref "refs/levels/source-native/$(fan "$RH")"
expect_problem dangling-ref "$GROUP_ENTRY"
pass "a removed object: history-rewritten at its path and dangling-ref for its index entries"

# ------------------------------ outside the layout -----------------------------
reset_store
tamper "forge: a README" < <(put "$(printf 'hello\n' | blob)" README.md)
verify_fails "README.md"
expect_problem layout README.md
pass "a file outside the layout (README.md): layout"
MISNAMED=(objects/sha256/zz/extra "$RUNP.bak" "objects/sha256/${RH:0:2}/${RH:2:2}/short"
    "refs/levels/gold/$(fan "$RH")" refs/other/x objects/sha1/ab/cd)
reset_store
HELLO=$(printf 'hello\n' | blob)
tamper "forge: misnamed paths" < <(for p in "${MISNAMED[@]}"; do put "$HELLO" "$p"; done)
verify_fails "misnamed paths"
for p in "${MISNAMED[@]}"; do expect_problem layout "$p"; done
pass "misnamed paths under objects/ and refs/ (bad hex, suffix, short name, unknown level, unknown folder, sha1): layout"

# ------------------------------- the index (refs/) -----------------------------
reset_store
tamper "forge: a faster group value" < <(put "$(printf '{"metric":"latency","statistic":"median","unit":"ns","value":1}' | blob)" "$GROUP_ENTRY")
verify_fails "group value"
expect_problem group-mismatch "$GROUP_ENTRY" "2606080"
pass "an edited group value: group-mismatch naming the real primary value"

reset_store
tamper "forge: promote to reproduced" < <(
    del "refs/levels/source-native/$(fan "$RH")"
    put "$(g rev-parse "main:refs/levels/source-native/$(fan "$RH")")" "refs/levels/reproduced/$(fan "$RH")"
)
verify_fails "level moved"
expect_problem level-unjustified "refs/levels/reproduced/$(fan "$RH")"
pass "a level entry moved to reproduced without a signed rerun: level-unjustified"

reset_store
tamper "forge: a second level" < <(put "$(printf '{"evidence":null}' | blob)" "refs/levels/reproduced/$(fan "$RH")")
verify_fails "second level"
expect_problem level-unjustified "refs/levels/reproduced/$(fan "$RH")"
pass "a second level entry (reproduced) beside source-native: reported"

reset_store
tamper "forge: drop group entry" < <(del "$GROUP_ENTRY")
verify_fails "group entry removed"
assert_contains "$(jv '.problems[].path')" "$GROUP_ENTRY" "removed group entry reported at its path"
pass "a removed group entry: reported at its path"

reset_store
tamper "forge: drop level entry" < <(del "refs/levels/source-native/$(fan "$RH")")
verify_fails "level entry removed"
assert_contains "$(jv '.problems[].path')" "refs/levels/source-native/$(fan "$RH")" "removed level entry reported at its path"
pass "a removed level entry: reported at its path"

reset_store
tamper "forge: source points elsewhere" < <(put "$(printf '%s' "$RUN" | blob)" "$SOURCE_V2")
verify_fails "source entry edited"
expect_problem source-mismatch "$SOURCE_V2" "${VAR[1]}"
pass "a source entry pointing at another run: source-mismatch naming the right run"

reset_store
tamper "forge: metadata for nothing" < <(put "$(printf '{"title":"x"}' | blob)" "refs/metadata/$(fan "$OTHER")")
verify_fails "metadata of no object"
expect_problem dangling-ref "refs/metadata/$(fan "$OTHER")"
pass "metadata for a digest that is not in the store: dangling-ref"

# ------------------------- several tamperings at once --------------------------
reset_store
V0P=$(objpath "${VAR[0]}")
V2H=${VAR[2]#sha256:}
tamper "forge: everything at once" < <(
    put "$(zstd -q -c --check "$W/other.json" | blob)" "$RUNP"
    put "$(printf 'junk' | blob)" "$V0P"
    del "$(objpath "${VAR[2]}")"
    put "$(printf 'hello\n' | blob)" README.md
    put "$(printf '{"metric":"latency","statistic":"median","unit":"ns","value":1}' | blob)" "$GROUP_ENTRY_V3"
    del "refs/levels/source-native/$(fan "${VAR[1]#sha256:}")"
    put "$(printf '{"evidence":null}' | blob)" "refs/levels/reproduced/$(fan "${VAR[1]#sha256:}")"
)
verify_fails "several at once"
expect_problem object-hash-mismatch "$RUNP"
expect_problem object-corrupt "$V0P"
expect_problem history-rewritten "$(objpath "${VAR[2]}")"
expect_problem dangling-ref "refs/levels/source-native/$(fan "$V2H")"
expect_problem layout README.md
expect_problem level-unjustified "refs/levels/reproduced/$(fan "${VAR[1]#sha256:}")"
expect_problem group-mismatch "$GROUP_ENTRY_V3"
pass "seven tamperings in one commit (four runs, README, group, level): every one is reported"

# a tampered commit buried under a later, honest kistore add is still found
mkruns --start 50 --count 1 >"$W/later.jsonl"
ks --store "$S" add "$W/later.jsonl" >/dev/null 2>&1 || true
assert_exit 1 ks --store "$S" --json verify
expect_problem object-hash-mismatch "$RUNP"
expect_problem layout README.md
pass "after a later add on top, the tampering is still reported"

# ------------------------------------ --deep -----------------------------------
# place FILE : put zstd(FILE) at the path of FILE's own sha256 (a name that
# matches its bytes), print the path
place() {
    local h p
    h=$(sha256sum <"$1" | cut -c1-64)
    p=$(objpath "$h")
    tamper "forge: place $(basename "$1")" < <(put "$(zstd -q -c --check "$1" | blob)" "$p")
    printf '%s' "$p"
}
reset_store
jq . "$FX" | jq '.protocol | del(.metadata) | .spec.harness.name = "pretty"' >"$W/pretty.json"
P=$(place "$W/pretty.json")
assert_exit 0 ks --store "$S" verify
pass "pretty JSON at the path of its own sha256: plain verify accepts it (bytes match the name)"
verify_before=$(store_state)
assert_exit 1 ks --store "$S" verify --deep
assert_exit 1 ks --store "$S" --json verify --deep
expect_problem object-not-canonical "$P"
assert_eq "$verify_before" "$(store_state)" "verify --deep must not change the store"
pass "verify --deep: pretty JSON whose bytes hash to its name is object-not-canonical"

reset_store
printf '{"kind":"Implementation","apiVersion":"kernelindex.dev/v1alpha1","spec":{"name":"x"}}' >"$W/unsorted.json"
P=$(place "$W/unsorted.json")
assert_exit 1 ks --store "$S" --json verify --deep
expect_problem object-not-canonical "$P"
pass "verify --deep: compact JSON with unsorted members is object-not-canonical"

reset_store
printf '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":7}}' >"$W/invalid.json"
P=$(place "$W/invalid.json")
assert_exit 1 ks --store "$S" --json verify --deep
expect_problem object-invalid "$P" "/spec/name"
pass "verify --deep: a canonical but invalid document is object-invalid naming /spec/name"

summary
