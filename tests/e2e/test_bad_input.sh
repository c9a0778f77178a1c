#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Bad input, table-driven: one row per case (input content, exit code, message
# substrings with file:line:col or the JSON pointer).  For every row `kistore
# add FILE` must exit 2, say what is wrong and where, and leave the store exactly
# as it was (same head of main, same git objects, no new files).  Then the cases
# that are not a single file: one bad line among 10,000 good JSON Lines (nothing
# written), --keep-going, a missing path, no store, bad REFs, bad command lines.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root).  Runs in < 60 s,
# as root or not, with stdin closed; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
# ------------------------------------------------------------------------------

PROT=sha256:080e6e66e4ec75a131aa0c9121c74b8e8eed64e7b6d621d567c6a28f79548be8
work_in w in
IN=$W/in
S=$W/store

# store_state : everything that must not change when an add is refused
store_state() {
    printf 'main %s\n' "$(head_of "$S")"
    git --git-dir="$S" count-objects -v | grep -E '^(count|in-pack|packs|garbage):'
    (cd "$S" && find . -type f ! -name 'FETCH_HEAD' | LC_ALL=C sort)
}

# A store with something in it: the fixture and two variations.
assert_exit 0 ks --store "$S" init
assert_exit 0 ks --store "$S" add "$FX"
mkruns --start 1 --count 2 >"$IN/good.jsonl"
assert_exit 0 ks --store "$S" add "$IN/good.jsonl"
assert_exit 0 ks --store "$S" verify
BASE_STATE=$(store_state)
pass "a store with the fixture and two variations"

# ============================ the table of bad files ==========================
# make_input FILE SPEC : writes FILE from SPEC
#   txt:FMT   printf FMT (so \n, \xff work; write \\u for a JSON \u escape)
#   fx:CODE   the fixture as d, changed by the Python statements CODE, pretty
#   py:CODE   Python statements that write the file named out
make_input() {
    local file=$1 spec=$2
    case $spec in
    txt:*)
        # shellcheck disable=SC2059
        printf "${spec#txt:}" >"$file"
        ;;
    fx:*)
        "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
exec(sys.argv[3])
open(sys.argv[2], "w", encoding="utf-8").write(json.dumps(d, indent=2, ensure_ascii=False) + "\n")' "$FX" "$file" "${spec#fx:}"
        ;;
    py:*) "$PY" -c "out = '$file'
${spec#py:}" ;;
    *) fail "bad table row: $spec" ;;
    esac
}

# The protocol's digest once its timer is edited, computed here (sorted keys, no
# whitespace), independently of kistore.
EDITED_PROT=sha256:$("$PY" -c 'import json, sys
p = json.load(open(sys.argv[1], encoding="utf-8"))["protocol"]
p.pop("metadata")
p["spec"]["measurement"]["timer"] = "wallclock"
sys.stdout.write(json.dumps(p, sort_keys=True, separators=(",", ":"), ensure_ascii=False))' "$FX" | sha256sum | cut -c1-64)
KINDS='BenchmarkRun|BenchmarkProtocol|ExecutionEnvironment|Workload|Implementation|Attestation'
MiB16=$((16 * 1024 * 1024))

# name | exit | message substrings, '|'-separated | content
TABLE=(
    'syntax.json'      2 'syntax.json:3:8'                              'txt:{\n  "a": 1,\n  "b": x\n}\n'
    'empty.json'       2 'empty.json:1:1'                               'txt:'
    'trailing.json'    2 'trailing.json:1:9'                            'txt:{"a":1} {"b":2}'
    'utf8.json'        2 'utf8.json:1:7|UTF-8'                          'txt:{"a":"\xff"}'
    'overlong.json'    2 'overlong.json:1:7|UTF-8'                      'txt:{"a":"\xc0\xaf"}'
    'low-surr.json'    2 'low-surr.json:1:7|surrogate|\udc00'           'txt:{"a":"\\udc00"}'
    'high-surr.json'   2 'high-surr.json:1:7|surrogate|\ud800'          'txt:{"a":"\\ud800x"}'
    'dup.json'         2 'dup.json:1:8|duplicate|"a"'                   'txt:{"a":1,"a":2}'
    'dup-deep.json'    2 'dup-deep.json:3:20|duplicate|"unit"'          'txt:{"run":\n {"kind":"BenchmarkRun",\n  "spec":{"unit":1,"unit":1}}}'
    'number.json'      2 'number.json:1:6|1e400'                        'txt:{"a":1e400}'
    'neg-number.json'  2 'neg-number.json:1:6|-1e400'                   'txt:{"a":-1e400}'
    'deep.json'        2 'deep.json:1:65|64'                            'py:open(out, "w").write("[" * 65 + "]" * 65)'
    'deep-obj.json'    2 'deep-obj.json:1:321|64'                       'py:open(out, "w").write("{\"a\":" * 65 + "1" + "}" * 65)'
    'huge.json'        2 "huge.json|$MiB16"                             "py:open(out, 'w').write('{\"a\":\"' + 'x' * $MiB16 + '\"}')"
    'kind.json'        2 "/run/kind|BenchmarkRn|$KINDS"                 'fx:d["run"]["kind"] = "BenchmarkRn"'
    'kind-doc.json'    2 "/kind|GpuKernel|$KINDS"                       'txt:{"apiVersion":"kernelindex.dev/v1alpha1","kind":"GpuKernel","spec":{}}'
    'no-meas.json'     2 '/run/spec/measurements'                       'fx:del d["run"]["spec"]["measurements"]'
    'no-unit.json'     2 '/run/spec/measurements/0/unit'                'fx:del d["run"]["spec"]["measurements"][0]["unit"]'
    'status.json'      2 '/run/spec/status'                             'fx:d["run"]["spec"]["status"] = 7'
    'no-vendor.json'   2 '/environment/spec/hardware/vendor'            'fx:del d["environment"]["spec"]["hardware"]["vendor"]'
    'observed.json'    2 '/run/spec/observedAt|yesterday'               'fx:d["run"]["spec"]["observedAt"] = "yesterday"'
    'digest.json'      2 '/run/spec/workloadDigest|sha256:XYZ'          'fx:d["run"]["spec"]["workloadDigest"] = "sha256:XYZ"'
    'digest-up.json'   2 '/run/spec/environmentDigest'                  'fx:d["run"]["spec"]["environmentDigest"] = d["run"]["spec"]["environmentDigest"].upper()'
    'protocol.json'    2 "/run/spec/protocolDigest|$PROT|$EDITED_PROT"  'fx:d["protocol"]["spec"]["measurement"]["timer"] = "wallclock"'
    'api.json'         2 '/run/apiVersion|kernelindex.dev/v1alpha1|kernelindex.dev/v2' 'fx:d["run"]["apiVersion"] = "kernelindex.dev/v2"'
    'role.json'        2 '/extra'                                       'fx:d["extra"] = d["protocol"]'
    'attest.json'      2 '/spec/type|rumour'                            'txt:{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Attestation","spec":{"subject":"sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0","type":"rumour","author":"x","body":"y"}}'
    'lines.jsonl'      2 'lines.jsonl:2:6'                              'txt:{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"x"}}\n{"a":\n'
    'doc-line.jsonl'   2 'doc-line.jsonl:2|/spec/name'                  'txt:{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":"x"}}\n{"apiVersion":"kernelindex.dev/v1alpha1","kind":"Implementation","spec":{"name":7}}\n'
)

for ((i = 0; i < ${#TABLE[@]}; i += 4)); do
    name=${TABLE[i]} want=${TABLE[i + 1]} needles=${TABLE[i + 2]} spec=${TABLE[i + 3]}
    make_input "$IN/$name" "$spec"
    assert_exit "$want" ks --store "$S" add "$IN/$name"
    IFS='|' read -r -a parts <<<"$needles"
    for n in "${parts[@]}"; do assert_contains "$ERR" "$n" "add $name: message"; done
    assert_eq "$BASE_STATE" "$(store_state)" "add $name must leave the store unchanged"
    pass "add $name: exit $want, '${needles//|/, }', store unchanged"
done

# --json: the refusal is also machine-readable
assert_exit 2 ks --store "$S" --json add "$IN/status.json"
assert_eq 1 "$(jv '.rejected|length')" "--json rejected"
assert_eq 0 "$(jv .added)" "--json added"
assert_contains "$(jv '.rejected[0].error')" "/run/spec/status" "--json rejected error"
assert_contains "$(jv '.rejected[0].source')" "status.json" "--json rejected source"
assert_eq "$BASE_STATE" "$(store_state)" "--json refusal leaves the store"
pass "add --json of a bad file: exit 2, rejected names the file and pointer"

# a bad file among good ones: all or nothing
mkruns --start 10 --count 3 >"$IN/good2.jsonl"
assert_exit 2 ks --store "$S" add "$IN/good2.jsonl" "$IN/dup.json"
assert_contains "$ERR" "dup.json:1:8" "mixed: the bad file is named"
assert_eq "$BASE_STATE" "$(store_state)" "mixed good and bad: nothing written"
pass "good and bad files in one add: exit 2, nothing written"

# the limits are exact: depth 64 and 16 MiB are accepted as JSON (canon)
make_input "$IN/depth64.json" 'py:open(out, "w").write("[" * 64 + "]" * 64)'
assert_exit 0 ks canon "$IN/depth64.json"
make_input "$IN/exact16.json" "py:open(out, 'w').write('\"' + 'x' * ($MiB16 - 2) + '\"')"
assert_exit 0 ks canon "$IN/exact16.json"
assert_eq "$MiB16" "$(wc -c <"$OUT_FILE" | tr -d ' ')" "canon of a 16 MiB string"
make_input "$IN/over16.json" "py:open(out, 'w').write('\"' + 'x' * ($MiB16 - 1) + '\"')"
assert_exit 2 ks canon "$IN/over16.json"
assert_contains "$ERR" "over16.json" "canon over 16 MiB names the file"
pass "nesting 64 deep and a file of exactly 16 MiB are fine; 16 MiB + 1 byte is refused"
for name in deep.json number.json low-surr.json dup.json utf8.json; do
    assert_exit 2 ks canon "$IN/$name"
    assert_contains "$ERR" "$name:1:" "canon $name names file:line:col"
done
pass "canon refuses the same inputs as add, with file:line:col (exit 2)"

# ================== one bad line among 10,000 good JSON Lines =================
# Run documents alone, without metadata: 10,000 lines stay under 16 MiB.
mkruns --start 1000 --count 10000 --run-only --no-metadata --bad-line 4321 >"$IN/many.jsonl"
t0=$SECONDS
assert_exit 2 ks --store "$S" add "$IN/many.jsonl"
assert_contains "$ERR" "many.jsonl:4321" "bad line named"
assert_contains "$ERR" "/spec/status" "bad line pointer"
assert_not_contains "$ERR" "many.jsonl:4320" "only the bad line is named"
assert_eq "$BASE_STATE" "$(store_state)" "10,000 lines with one bad: nothing written"
pass "10,000 JSON Lines with line 4321 bad: exit 2 naming many.jsonl:4321, nothing written ($((SECONDS - t0)) s)"
"$PY" - "$IN/many.jsonl" "$IN/many-syntax.jsonl" <<'EOF'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
lines[4320] = lines[4320].replace('"status":7', '"status":"passed"')
lines[7776] = lines[7776][:40]          # line 7777: cut in the middle of a member
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(lines))
EOF
assert_exit 2 ks --store "$S" add "$IN/many-syntax.jsonl"
assert_contains "$ERR" "many-syntax.jsonl:7777:" "syntax error line"
assert_eq "$BASE_STATE" "$(store_state)" "10,000 lines with one cut: nothing written"
pass "10,000 JSON Lines with line 7777 cut short: exit 2 naming many-syntax.jsonl:7777:COL, nothing written"

# ================================ --keep-going ================================
mkruns --start 20000 --count 200 --run-only --no-metadata --bad-line 50 >"$IN/keep.jsonl"
"$PY" - "$IN/keep.jsonl" <<'EOF'
import sys
p = sys.argv[1]
lines = open(p, encoding="utf-8").read().split("\n")
lines[119] = '{"apiVersion":'          # line 120: not JSON
open(p, "w", encoding="utf-8").write("\n".join(lines))
EOF
mapfile -t KEEP < <(mkruns --start 20000 --count 200 --digests)
assert_exit '!0' ks --store "$S" add "$IN/keep.jsonl"
assert_eq "$BASE_STATE" "$(store_state)" "without --keep-going nothing is written"
ks --store "$S" --json add --keep-going "$IN/keep.jsonl" >"$W/keep.out" 2>"$W/keep.err" && rc=0 || rc=$?
OUT=$(cat "$W/keep.out")
# SPEC does not say which status --keep-going returns when it rejected some
# inputs: accept 0 (what was asked for was done) or 2 (some input was bad).
[[ $rc == 0 || $rc == 2 ]] || fail "add --keep-going: exit $rc, expected 0 or 2; stderr: $(cat "$W/keep.err")"
assert_eq 198 "$(jv .added)" "--keep-going added"
assert_eq 2 "$(jv '.rejected|length')" "--keep-going rejected count"
assert_eq "keep.jsonl:50" "$(jv '.rejected[0].source | sub(".*/"; "")')" "--keep-going rejected[0].source is file:line"
assert_eq "keep.jsonl:120" "$(jv '.rejected[1].source | sub(".*/"; "")')" "--keep-going rejected[1].source is file:line"
assert_contains "$(jv '.rejected[0].error')" "/spec/status" "--keep-going rejected[0].error"
assert_eq "$(head_of "$S")" "$(jv .commit)" "--keep-going commit"
pass "add --keep-going (exit $rc): adds the 198 good lines, --json rejected lists keep.jsonl:50 and keep.jsonl:120"
assert_exit 0 ks --store "$S" ls --kind BenchmarkRun
for n in "${!KEEP[@]}"; do
    if ((n == 49 || n == 119)); then
        assert_not_contains "$OUT" "${KEEP[n]}" "rejected line $((n + 1)) must not be stored"
    else
        assert_contains "$OUT" "${KEEP[n]}" "line $((n + 1)) stored"
    fi
done
assert_exit 0 ks --store "$S" verify
pass "every good line is in the store, the rejected ones are not, and the store verifies"
ks --store "$S" add --keep-going "$IN/keep.jsonl" >"$W/keep.out" 2>"$W/keep.err" || true
assert_contains "$(cat "$W/keep.err")" "keep.jsonl:50" "--keep-going text lists the rejected line 50"
assert_contains "$(cat "$W/keep.err")" "keep.jsonl:120" "--keep-going text lists the rejected line 120"
pass "add --keep-going (text) lists the rejected inputs by file:line"
BASE_STATE=$(store_state)

# ============================ paths, stores, REFs =============================
assert_exit 2 ks --store "$S" add "$IN/does-not-exist.json"
assert_contains "$ERR" "does-not-exist.json" "missing path named"
assert_exit 2 ks --store "$S" add "$IN/good2.jsonl" "$IN/no-such-dir/"
assert_contains "$ERR" "no-such-dir" "missing folder named"
assert_eq "$BASE_STATE" "$(store_state)" "missing path: nothing written"
pass "a path that does not exist: exit 2 (input error) naming it, nothing written"

mkdir -p "$W/empty" && cd "$W/empty"
for cmd in "add $FX" "ls" "show 334face3" "cat 334face3" "log" "verify"; do
    # shellcheck disable=SC2086
    assert_exit 3 ks $cmd
    assert_contains "$ERR" "kistore init" "no store: $cmd tells to run init"
done
[[ ! -e .kistore ]] || fail "a command without a store created .kistore"
assert_exit 3 ks --store "$W/nowhere" ls
assert_contains "$ERR" "$W/nowhere" "no store: names the folder"
assert_exit 3 env KISTORE_DIR="$W/nowhere" "$KISTORE" ls
pass "no store (cwd, --store, KISTORE_DIR): exit 3 with a message telling to run kistore init"
cd "$W"

ZERO=sha256:$(printf '0%.0s' {1..64})
for ref in "$ZERO" deadbeef 0000000000; do
    for cmd in show cat; do
        assert_exit 1 ks --store "$S" "$cmd" "$ref"
        assert_contains "$ERR" "$ref" "$cmd $ref: names the REF"
    done
done
pass "show/cat of a REF that is not in the store: exit 1 naming it"
for ref in 334face xyz12345 sha256:334face sha512:334face3 "sha256:${ZERO#sha256:}0" "" 'g34face3'; do
    for cmd in show cat; do
        assert_exit 2 ks --store "$S" "$cmd" "$ref"
    done
done
assert_exit 2 ks --store "$S" log --run 334face
pass "show/cat/log --run with a malformed REF (short, non-hex, other algorithm, too long, empty): exit 2"

assert_exit 2 ks --store "$S" add
assert_exit 2 ks --store "$S" add --no-such-flag "$FX"
assert_contains "$ERR" "--no-such-flag" "unknown flag named"
assert_exit 2 ks --store "$S" ls --level golden
assert_exit 2 ks --store "$S" log -n many
assert_exit 2 "$KISTORE"
assert_eq "$BASE_STATE" "$(store_state)" "usage errors: nothing written"
pass "usage errors (missing PATH, unknown flag, bad option values, no command): exit 2"
# Format 3 keys an upstream id by sha256(source NUL externalId): the only id
# that cannot be a key holds U+0000. Inside a bundle the pointer starts at the
# run's role (/run/...), as for every other check.
make_input "$IN/extid.json" 'fx:d["run"]["spec"]["sourceNative"]["externalId"] += "\u0000/../x"'
assert_exit 2 ks --store "$S" add "$IN/extid.json"
assert_eq "$BASE_STATE" "$(store_state)" "add extid.json must leave the store unchanged"
assert_contains "$ERR" "extid.json" "externalId error names the file"
assert_contains "$ERR" "/run/spec/sourceNative/externalId" "externalId error: pointer from the bundle's root"
assert_contains "$ERR" "U+0000" "externalId error: says what it found"
pass "add of a bundle whose externalId holds U+0000: exit 2 naming /run/spec/sourceNative/externalId"

assert_exit 2 ks --store "$S" frobnicate
assert_contains "$ERR" "frobnicate" "unknown command named"
pass "an unknown command: exit 2 naming it"

# ====================== oversize input, bounded reading =======================
# Each is refused after reading at most ~16 MiB of it, in seconds, exit 2,
# naming the file (and line, or line:column for a CSV cell) and the limit; the
# store's git directory stays byte for byte as it was. Big files are sparse
# (truncate) or made on demand by a pipe: the test writes little to disk.
# shellcheck source=lib/fingerprint.sh
. "$here/lib/fingerprint.sh"
FP=$(store_fingerprint "$S")
oversize() { # oversize WHAT NEEDLES CMD... : exit 2 within 10 s, message, store unchanged
    local what=$1 needles=$2 t0=$SECONDS n
    shift 2
    assert_exit 2 "$@"
    ((SECONDS - t0 <= 10)) || fail "$what: took $((SECONDS - t0)) s, expected seconds"
    IFS='|' read -r -a parts <<<"$needles"
    for n in "${parts[@]}"; do assert_contains "$ERR" "$n" "$what: message"; done
    assert_store_unchanged "$FP" "$S" "$what"
    pass "$what: exit 2 in $((SECONDS - t0)) s, '${needles//|/, }', store unchanged"
}
GiB=$((1024 * 1024 * 1024))
truncate -s "$GiB" "$IN/gig.jsonl"
oversize "add of a 1 GiB one-line JSON Lines file" "gig.jsonl:1|$MiB16" ks --store "$S" add "$IN/gig.jsonl"
mkruns --start 1 --count 2 >"$IN/gig3.jsonl" && truncate -s "+$GiB" "$IN/gig3.jsonl"
oversize "add of JSON Lines whose line 3 is 1 GiB" "gig3.jsonl:3|$MiB16" ks --store "$S" add "$IN/gig3.jsonl"
rm -f "$IN/gig3.jsonl"
truncate -s "$GiB" "$IN/gig.json"
oversize "add of a 1 GiB .json file (refused by its size)" "gig.json|$MiB16|$GiB" ks --store "$S" add "$IN/gig.json"
rm -f "$IN/gig.json" "$IN/gig.jsonl"
mkfifo "$W/pipe.jsonl"
head -c "$GiB" /dev/zero >"$W/pipe.jsonl" 2>/dev/null &
PIPE_WRITER=$!
oversize "add of a named pipe streaming 1 GiB on one line" "pipe.jsonl:1|$MiB16" ks --store "$S" add "$W/pipe.jsonl"
kill "$PIPE_WRITER" 2>/dev/null || true
wait "$PIPE_WRITER" 2>/dev/null || true
rm -f "$W/pipe.jsonl"
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
oversize "add - of 1 GiB on stdin" "<stdin>:1|$MiB16" \
    bash -c 'head -c '"$GiB"' /dev/zero 2>/dev/null | "$0" --no-progress --store "$1" add -' "$KISTORE" "$S"

# A CSV cell: any cell at most 1 MiB (the reader's bound, with line:column);
# a name that becomes a path segment at most 255 bytes (git trees, file
# systems). The 30 MiB cell once imported and left a store that failed verify.
LIGER_HEADER=kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version
liger_row() { # liger_row KERNEL CONFIG
    printf '%s,liger,forward,speed,ms,V,vocab size,4096,0.53,0.52,0.54,"%s",NVIDIA A100-SXM4-80GB,2024-09-03 15:31:39,0.2.1\n' "$1" "$2"
}
{ echo "$LIGER_HEADER"; liger_row cross_entropy '{""B"": 8, ""T"": 2048}'; liger_row "$(head -c $((30 << 20)) /dev/zero | tr '\0' a)" '{}'; } >"$IN/cell30.csv"
oversize "import of a CSV with a 30 MiB kernel_name cell" "cell30.csv:3:1|1048576" ks --store "$S" import liger "$IN/cell30.csv"
{ echo "$LIGER_HEADER"; liger_row cross_entropy "{\"\"B\"\": 8, \"\"pad\"\": \"\"$(head -c $((2 << 20)) /dev/zero | tr '\0' x)\"\"}"; } >"$IN/cell2.csv"
oversize "import of a CSV with a 2 MiB quoted config cell" "cell2.csv:2:|field 12|1048576" ks --store "$S" import liger "$IN/cell2.csv"
{ echo "$LIGER_HEADER"; liger_row "k$(printf 'a%.0s' {1..300})" '{""B"": 8}'; } >"$IN/name300.csv"
oversize "import of a CSV whose kernel_name has 301 bytes" "name300.csv:2|kernel_name|255" ks --store "$S" import liger "$IN/name300.csv"
rm -f "$IN/cell30.csv" "$IN/cell2.csv"
# An externalId is no path in format 3: one with '..', a 300-byte segment and
# 14 segments (each refused by format 2, whose index named ids by path) is an
# ordinary key, and the store that holds it verifies. In a store of its own,
# so that the one above stays as the tests below expect.
make_input "$IN/extid-odd.json" 'fx:d["run"]["spec"]["sourceNative"]["externalId"] = "/".join(["a"] * 14) + "/../.git/" + "b" * 300'
ks init "$W/extid-store" >/dev/null
assert_exit 0 ks --store "$W/extid-store" add "$IN/extid-odd.json"
assert_exit 0 ks --store "$W/extid-store" verify
assert_contains "$(git --git-dir="$W/extid-store" grep -h '' main -- refs/sources)" '/../.git/bbbb' "the id is written as a line, not a path"
pass "an externalId with '..', a 300-byte segment and 14 segments is a key in format 3: added and verified"
assert_exit 0 ks --store "$S" verify
pass "after every oversize input the store verifies"

# ======================= --store on a repository that is not a store ========
# Refused before anything is written (exit 3, as for a folder with no store),
# saying what was found; the user's repository, .git and work tree, is byte for
# byte as it was. An empty repository whose HEAD names main (what `kistore
# init` or a clone of an empty store leave) may become a store.
ugit() { git -c user.name=u -c user.email=u@example.org -c init.defaultBranch=master "$@"; }
SEED=334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
{ echo "$LIGER_HEADER"; liger_row cross_entropy '{""B"": 8, ""T"": 2048}'; } >"$IN/one.csv"
U=$W/user
ugit init -q "$U/readme" && echo hello >"$U/readme/README.md" && ugit -C "$U/readme" add README.md &&
    ugit -C "$U/readme" commit -q -m "my project"
# a clone of a store (so that the seed run is there) with a file of the user's
# committed into objects/
git clone -q "$S" "$U/objects" && echo mine >"$U/objects/objects/notes.txt" &&
    ugit -C "$U/objects" add objects && ugit -C "$U/objects" commit -q -m "notes"
ugit init -q "$U/empty-master"
ugit init -q --bare "$U/bare-readme.git" && ugit -C "$U/readme" push -q "$U/bare-readme.git" master
# name | what the message says was found | readers refused too (a repository
# with nothing of kistore's) or not (some of kistore's names: a store that was
# tampered with opens, so that verify can report it, but is never written)
cases=(
    readme 'its branch master holds README.md' yes
    bare-readme.git 'its branch master holds README.md' yes
    empty-master 'HEAD names the branch master, which has no commits' yes
    objects 'its branch main holds objects/notes.txt' no
)
for ((i = 0; i < ${#cases[@]}; i += 3)); do
    repo=$U/${cases[i]} why=${cases[i + 1]} readers=${cases[i + 2]}
    before=$(store_fingerprint "$repo")
    cmds=("add $FX" "attest $SEED --note hi" "import liger $IN/one.csv")
    # (rerun on the tampered clone stops earlier, at its trust check: no controller)
    [[ $readers == yes ]] && cmds+=("rerun $SEED $FX --sign $DATA/../keys/controller" "ls" "verify")
    for cmd in "${cmds[@]}"; do
        # shellcheck disable=SC2086
        assert_exit 3 ks --store "$repo" $cmd
        assert_contains "$ERR" "not a kistore store" "${cases[i]}: $cmd"
        assert_contains "$ERR" "$why" "${cases[i]}: $cmd says what was found"
        assert_store_unchanged "$before" "$repo" "${cases[i]}: $cmd"
    done
    if [[ $readers == no ]]; then
        assert_exit 1 ks --store "$repo" verify
        assert_contains "$OUT$ERR" "objects/notes.txt" "${cases[i]}: verify names the foreign file"
        assert_store_unchanged "$before" "$repo" "${cases[i]}: verify"
    fi
    pass "--store on ${cases[i]} (${cmds[*]%% *}): exit 3, '$why', repository unchanged"
done
ugit init -q --bare -b main "$U/empty-main"
assert_exit 0 ks --store "$U/empty-main" add "$FX"
assert_exit 0 ks --store "$U/empty-main" verify
assert_eq "refs/heads/main" "$(git --git-dir="$U/empty-main" for-each-ref --format='%(refname)')" "empty-main: only main was made"
pass "an empty repository whose HEAD names main becomes a store on the first add"

summary
