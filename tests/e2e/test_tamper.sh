#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Tampering with stock git only.  Build a store with kistore, then commit, with
# git plumbing alone (hash-object, read-tree into a scratch index, update-index,
# write-tree, commit-tree, update-ref), trees that break the store's rules:
# other bytes at an object's path (another zstd frame, a frame without its
# checksum, a flipped byte, a truncated frame, plain bytes), a removed object, a
# file outside the layout, and lines of format 3's index files (SPEC §2)
# edited: a group value, a level line no signed rerun gives, a key twice, a
# line removed, a claim pointed elsewhere, metadata for nothing.  Each must
# make `kistore verify` exit 1 with --json problems naming the expected kind
# and path (an index line as "<file> @<key>"); several at once must all be
# reported; verify must not change the store; `verify --deep` must catch an
# object whose bytes hash to its name but are not JCS.
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
# The seed and runs v1-v4; v4 (VAR[3]) reproduced by a controller's signed
# rerun, so that the store holds a level line (a run at its default level has
# none in format 3).
assert_exit 0 ks --store "$S0" init
assert_exit 0 ks --store "$S0" add "$FX"
mkruns --start 1 --count 4 >"$W/four.jsonl"
assert_exit 0 ks --store "$S0" add "$W/four.jsonl"
mapfile -t VAR < <(mkruns --start 1 --count 4 --digests)
V3H=${VAR[3]#sha256:}
cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" "$W/"
chmod 600 "$W/controller"
assert_exit 0 ks --store "$S0" trust add controller@example.org "$W/controller.pub"
ks --store "$S0" show "${VAR[3]}" --canonical >"$W/v4.json"
rerun_bundle "$W/v4.json" 2650000 >"$W/v4-rerun.json"
assert_exit 0 ks --store "$S0" rerun "${VAR[3]}" "$W/v4-rerun.json" --sign "$W/controller"
assert_exit 0 ks --store "$S0" --json verify
assert_eq true "$(jv .ok)" "pristine store verifies"
OBJECTS=$(jv .objects)
assert_exit 0 ks --store "$S0" verify --deep
assert_exit 0 git --git-dir="$S0" fsck --strict
# An index line's problem path: "<file> @<key>" (docs/format.md §5).
at() { printf '%s @%s' "$(index_file "$S0" "$1" "$2")" "$2"; }
LEVEL_V3=$(index_line "$S0" levels "$V3H")
V3_RERUN=$(jq -r .evidence <<<"$LEVEL_V3")
assert_eq reproduced "$(jq -r .level <<<"$LEVEL_V3")" "v4's signed rerun gives it a level line"
GROUP_KEY=$(index_keys "$S0" groups | grep "$RH\$")
[[ $GROUP_KEY =~ ^[0-9a-f]{128}$ ]] || fail "no group line for the run in the pristine store: $GROUP_KEY"
GK=${GROUP_KEY:0:64}
GROUP_ENTRY=$(at groups "$GROUP_KEY")
GROUP_KEY_V3=$GK$V3H
index_line "$S0" groups "$GROUP_KEY_V3" >/dev/null || fail "no group line $GROUP_KEY_V3"
GROUP_ENTRY_V3=$(at groups "$GROUP_KEY_V3")
# A claim's key: sha256 of source NUL externalId.
SOURCE_KEY_V2=$(printf 'liger-kernel-bench\0%s' "$(git --git-dir="$S0" cat-file -p "main:$(objpath "${VAR[1]}")" | zstd -q -dc |
    jq -r .spec.sourceNative.externalId)" | sha256sum | cut -c1-64)
SOURCE_LINE_V2=$(index_line "$S0" sources "$SOURCE_KEY_V2")
assert_eq "${VAR[1]}" "$(jq -r .run <<<"$SOURCE_LINE_V2")" "the claim of v2's id names v2"
SOURCE_V2=$(at sources "$SOURCE_KEY_V2")
cp -a "$S0" "$S"
C0=$(head_of "$S")
pass "a store built by kistore: $OBJECTS objects, a signed rerun, verify clean, fsck --strict clean"

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
# (Format 2's source-native level entry of the run is no line in format 3: its
# metadata, group and claim lines are what dangle.)
reset_store
tamper "forge: remove the run" < <(del "$RUNP")
verify_fails "removed object"
expect_problem history-rewritten "$RUNP"
expect_problem dangling-ref "$(at metadata "$RH")"
expect_problem dangling-ref "$GROUP_ENTRY"
expect_problem source-mismatch "$(at sources "$(printf 'liger-kernel-bench\0%s' "$(jq -r .run.spec.sourceNative.externalId "$FX")" | sha256sum | cut -c1-64)")" "not a run in the store"
pass "a removed object: history-rewritten at its path, dangling-ref for its metadata and group lines, its claim names no run"

# ------------------------------ outside the layout -----------------------------
reset_store
tamper "forge: a README" < <(put "$(printf 'hello\n' | blob)" README.md)
verify_fails "README.md"
expect_problem layout README.md
pass "a file outside the layout (README.md): layout"
# Format 2's unknown level folder (refs/levels/gold/...) has no meaning in
# format 3, where a family's files are named by hex digits: an index file named
# by a non-hex digit and one named by two digits stand in for it. Each holds a
# well-formed level line, so only the name is wrong.
MISNAMED=(objects/sha256/zz/extra "$RUNP.bak" "objects/sha256/${RH:0:2}/${RH:2:2}/short"
    refs/levels/g "refs/levels/${RH:0:2}" refs/other/x objects/sha1/ab/cd)
reset_store
HELLO=$(printf 'hello\n' | blob)
LEVEL_RH=$(printf '{"@key":"%s","evidence":"%s","level":"reproduced"}\n' "$RH" "$V3_RERUN" | blob)
tamper "forge: misnamed paths" < <(for p in "${MISNAMED[@]}"; do
    if [[ $p == refs/levels/* ]]; then put "$LEVEL_RH" "$p"; else put "$HELLO" "$p"; fi
done)
verify_fails "misnamed paths"
for p in "${MISNAMED[@]}"; do expect_problem layout "$p"; done
expect_problem layout refs/levels/g "one lowercase hex digit"
expect_problem layout "refs/levels/${RH:0:2}" "one lowercase hex digit"
pass "misnamed paths under objects/ and refs/ (bad hex, suffix, short name, index file not named by one hex digit, unknown folder, sha1): layout"

# ------------------------------- the index (refs/) -----------------------------
# Each forgery edits lines of format 3's index files (set_line: the file with
# one line replaced, inserted in key order, or removed).
# forge_line MSG FAMILY KEY LINE|- : commit the family's file with KEY's line so
forge_line() { set_line "$S" "$2" "$3" "$4" | tamper "$1"; }

reset_store
forge_line "forge: a faster group value" groups "$GROUP_KEY" "$(index_line "$S" groups "$GROUP_KEY" | jq -c '.value = 1')"
verify_fails "group value"
expect_problem group-mismatch "$GROUP_ENTRY" "2606080"
pass "an edited group value: group-mismatch naming the real primary value"

# Format 2 moved the run's source-native entry to reproduced/; in format 3 a
# run at its default level has no line, so the forgery adds one, naming as
# evidence a genuine signed rerun, of another run (v4's).
reset_store
forge_line "forge: promote to reproduced" levels "$RH" "{\"@key\":\"$RH\",\"evidence\":\"$V3_RERUN\",\"level\":\"reproduced\"}"
verify_fails "level line added"
expect_problem level-unjustified "$(at levels "$RH")" "no valid rerun commit: default level source-native"
pass "a level line (reproduced) no signed rerun of the run gives: level-unjustified at its file and key"

# Format 2's second level entry beside the first: in format 3, v4's level
# file lists its key twice (its genuine reproduced line, then a disputed one).
reset_store
tamper "forge: a second level" < <(put "$(printf '%s\n%s\n' "$LEVEL_V3" "$(jq -c '.level = "disputed"' <<<"$LEVEL_V3")" | blob)" \
    "$(index_file "$S" levels "$V3H")")
verify_fails "second level"
expect_problem layout "$(index_file "$S" levels "$V3H")" "expected each key once, found $V3H again"
pass "a second level line for one run (a key twice in its file): layout naming the file and the key"

# A line in a file whose digits its key does not start with: v4's level line
# moved into the seed's file.
reset_store
tamper "forge: a level line in the wrong file" < <(
    set_line "$S" levels "$V3H" -
    put "$(printf '%s\n' "$LEVEL_V3" | blob)" "refs/levels/${RH:0:1}"
)
verify_fails "line in the wrong file"
expect_problem layout "refs/levels/${RH:0:1}" "expected a key starting with ${RH:0:1}"
pass "a level line in a file its key's digits do not lead to: layout at that file"

reset_store
forge_line "forge: drop group line" groups "$GROUP_KEY" -
verify_fails "group line removed"
expect_problem missing-group "$GROUP_ENTRY"
pass "a removed group line: missing-group at its file and key"

# (Format 2 removed a default level's entry; format 3 has none, so this
# removes v4's level line, which its signed rerun justifies.)
reset_store
forge_line "forge: drop level line" levels "$V3H" -
verify_fails "level line removed"
expect_problem missing-level "$(at levels "$V3H")"
pass "a removed level line (a signed rerun's): missing-level at its file and key"

reset_store
forge_line "forge: source points elsewhere" sources "$SOURCE_KEY_V2" "$(jq -c --arg r "$RUN" '.run = $r' <<<"$SOURCE_LINE_V2")"
verify_fails "source line edited"
expect_problem source-mismatch "$SOURCE_V2" "${VAR[1]}"
pass "a claim pointing at another run: source-mismatch naming the right run"

reset_store
forge_line "forge: metadata for nothing" metadata "$OTHER" "{\"@key\":\"$OTHER\",\"metadata\":{\"title\":\"x\"}}"
verify_fails "metadata of no object"
expect_problem dangling-ref "$(at metadata "$OTHER")"
pass "metadata for a digest that is not in the store: dangling-ref"

# ------------------------- several tamperings at once --------------------------
reset_store
V0P=$(objpath "${VAR[0]}")
V1H=${VAR[1]#sha256:}
V2H=${VAR[2]#sha256:}
tamper "forge: everything at once" < <(
    put "$(zstd -q -c --check "$W/other.json" | blob)" "$RUNP"
    put "$(printf 'junk' | blob)" "$V0P"
    del "$(objpath "${VAR[2]}")"
    put "$(printf 'hello\n' | blob)" README.md
    set_line "$S" groups "$GROUP_KEY_V3" "$(index_line "$S" groups "$GROUP_KEY_V3" | jq -c '.value = 1')"
    set_line "$S" levels "$V1H" "{\"@key\":\"$V1H\",\"evidence\":\"$V3_RERUN\",\"level\":\"reproduced\"}"
)
verify_fails "several at once"
expect_problem object-hash-mismatch "$RUNP"
expect_problem object-corrupt "$V0P"
expect_problem history-rewritten "$(objpath "${VAR[2]}")"
expect_problem dangling-ref "$(at groups "$GK$V2H")"
expect_problem layout README.md
expect_problem level-unjustified "$(at levels "$V1H")"
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
