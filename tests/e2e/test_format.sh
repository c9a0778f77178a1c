#!/usr/bin/env bash
# Store formats end to end (SPEC §2): the golden tree of a small format-3
# store, byte for byte, and forged lines refused; the upgrade of stores the
# format-1 and format-2 releases made (tests/data/format1, tests/data/format2),
# after which everything reads the same; writers and syncs refused across
# formats with the advice to upgrade, leaving the store byte for byte as it
# was; a FORMAT naming a later format refused by every command.
# KISTORE_ACCEPT=1 rewrites the golden files.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
data="$here/../data"
export KISTORE_AUTHOR="Format Test <format@example.org>" KISTORE_DATE=1767225600
cd "$SERVERS_DIR"
cp "$data/keys/controller" "$data/keys/controller.pub" .
chmod 600 controller
seed=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0

# make_rerun STORE RUN MEDIAN_NS OUT : the run's bundle with another median, as a controller's rerun
make_rerun() {
    ks --store "$1" show "$2" --canonical >bundle.json
    rerun_bundle bundle.json "$3" "rerun-$3" >"$4"
}

# golden NAME ACTUAL WHAT : ACTUAL equals tests/data/format3/NAME (rewritten with KISTORE_ACCEPT=1)
golden() {
    local file="$data/format3/$1"
    if [[ ${KISTORE_ACCEPT:-} == 1 ]]; then printf '%s\n' "$2" >"$file"; fi
    assert_eq "$(cat "$file")" "$2" "$3"
}

# ---- (1) The golden tree of a small format-3 store -------------------------
G=$SERVERS_DIR/golden
assert_exit 0 ks --store "$G" init
assert_exit 0 ks --store "$G" add "$data/e2e/seed-run-tiled-geglu-backward.json"
assert_exit 0 ks --store "$G" attest "$seed" --note "matches our numbers"
assert_exit 0 ks --store "$G" trust add controller@example.org controller.pub
make_rerun "$G" "$seed" 3400000 far.json
assert_exit 0 ks --store "$G" rerun "$seed" far.json --sign controller
tree=$(git --git-dir="$G" ls-tree -r main)
golden tree.golden "$tree" "git ls-tree -r of the golden store"
index=$(git --git-dir="$G" ls-tree -r --name-only main | grep -v '^objects/' | while read -r p; do
    printf '%s\n%s\n\n' "$p" "$(git --git-dir="$G" cat-file blob "main:$p")"
done)
golden index.golden "$index" "every blob outside objects/, byte for byte"
assert_eq "6b6973746f726520330a" "$(git --git-dir="$G" cat-file blob main:FORMAT | od -An -tx1 | tr -d ' \n')" "FORMAT bytes"
# Every path is one of SPEC §2's, with modes 100644 (blobs) only: index files
# named by one hex digit in folders named by hex digits.
h='[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}'
bad=$(git --git-dir="$G" ls-tree -r main | grep -Ev "^100644 blob [0-9a-f]{40}	(FORMAT|objects/sha256/$h|refs/(metadata|groups|levels|reruns|attestations|sources)/([0-9a-f]+/)*[0-9a-f])$" || true)
assert_eq "" "$bad" "paths outside SPEC §2's table"
# One line per fact, each the JCS of an object whose first member is @key.
"$PY" - "$G" <<'PY' || fail "an index line is not as SPEC §2 says"
import json, subprocess, sys
g = sys.argv[1]
paths = subprocess.run(["git", "--git-dir", g, "ls-tree", "-r", "--name-only", "main", "refs/"], capture_output=True, text=True, check=True).stdout.split()
for p in paths:
    text = subprocess.run(["git", "--git-dir", g, "cat-file", "blob", "main:" + p], capture_output=True, text=True, check=True).stdout
    assert text.endswith("\n"), p
    keys = []
    for line in text[:-1].split("\n"):
        o = json.loads(line)
        assert json.dumps(o, separators=(",", ":"), sort_keys=True, ensure_ascii=False) == line, (p, line)
        assert next(iter(o)) == "@key", (p, line)
        keys.append(o["@key"])
    assert keys == sorted(set(keys)), p
PY
assert_contains "$(index_line "$G" levels "${seed#sha256:}")" '"level":"disputed"' "the disputed run's level line"
assert_exit 0 ks --store "$G" verify
pass "golden format-3 tree: FORMAT, JSON Lines index files in a trie, the rerun in refs/reruns; verify ok"

assert_exit 0 ks --store "$G" --json rank "$seed"
[[ $(jv '.members | length') == 1 ]] || fail "the rerun is a member of the group: $OUT"
assert_eq "disputed" "$(jv '.members[0].level')" "the run is disputed"
assert_eq "disputed" "$(jv '.members[0].reruns[0].level')" "rank --json: the rerun beside the run"
rerun_digest=$(jv '.members[0].reruns[0].run')
ratio=$(jv '.members[0].reruns[0].ratio')
python3 -c "import sys; r=float(sys.argv[1]); assert abs(r - 3400000/2606080) < 1e-9, r" "$ratio" ||
    fail "rerun ratio $ratio"
assert_exit 0 ks --store "$G" rank "$seed"
assert_contains "$OUT" "rerun disputed" "rank: the rerun's line"
assert_contains "$OUT" "${rerun_digest:7:12}" "rank: the rerun's digest"
assert_contains "$OUT" "| 1 runs" "rank: one run in the group"
assert_exit 0 ks --store "$G" --json show "$seed"
assert_contains "$OUT" "\"reruns\":[{\"level\":\"disputed\",\"ratio\":$ratio,\"run\":\"$rerun_digest\"}]" "show --json: reruns"
pass "rank and show list the rerun beside its run (level, ratio), never as a competitor"

# What stock `git show` prints of an add, a rerun and a merge, outside objects/
# (docs/format.md §5 "What git show prints" quotes these files): each commit
# reads as the lines it added or changed. The merge unions two attestations
# made on either side of a clone into the one file both changed.
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 controller.pub)" >signers
M=$SERVERS_DIR/merged
cp -a "$G" "$M"
assert_exit 0 ks clone --allowed-signers signers "$M" "$SERVERS_DIR/side"
KISTORE_AUTHOR="Bo <bo@example.org>" KISTORE_DATE=1767229200 \
    assert_exit 0 ks --store "$SERVERS_DIR/side" attest "$seed" --note "same on our 4090"
KISTORE_AUTHOR="Cy <cy@example.org>" KISTORE_DATE=1767232800 \
    assert_exit 0 ks --store "$M" attest "$seed" --note "within 1% here"
assert_exit 0 ks --store "$M" remote add side "$SERVERS_DIR/side"
KISTORE_DATE=1767236400 assert_exit 0 ks --store "$M" pull side
[[ $(git --git-dir="$M" rev-list --parents -n 1 main | wc -w) == 3 ]] || fail "the pull made no merge commit"
shown() { git --git-dir="$M" -c core.pager=cat show --no-color --diff-merges=first-parent "$1" -- . ':!objects'; }
golden show-add.golden "$(shown main~4)" "git show of an add"
golden show-rerun.golden "$(shown main~2)" "git show of a signed rerun"
golden show-merge.golden "$(shown main)" "git show of a merge (against its first parent)"
assert_exit 0 ks --store "$M" verify --allowed-signers signers
pass "git show of an add, a rerun and a merge reads as the lines each added or changed"

blob_of() { git --git-dir="$G" hash-object -w --stdin; }
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 controller.pub)" >signers
assert_exit 0 ks clone --allowed-signers signers "$G" "$SERVERS_DIR/clean"
# forged_lines NAME KIND PATH MSG [PULL-KIND] : G's main with the --index-info
# lines on stdin committed by stock git, which verify reports as KIND at PATH,
# and a pull of which is refused as PULL-KIND (default KIND: a pull judges the
# commit's change, verify the tree it leaves); G itself is left as it was.
forged_lines() {
    local name=$1 kind=$2 path=$3 pull_kind=${5:-$2} c
    rm -rf "$SERVERS_DIR/forged" && git clone -q --bare "$G" "$SERVERS_DIR/forged"
    echo "$G/objects" >>"$SERVERS_DIR/forged/objects/info/alternates"  # set_line's blobs
    c=$(commit_index_info "$SERVERS_DIR/forged" "$4")
    assert_exit 1 ks --store "$SERVERS_DIR/forged" --json verify --allowed-signers signers
    [[ $(jv --arg k "$kind" --arg p "$path" '[.problems[] | select(.kind == $k and (.path | startswith($p)))] | length') -ge 1 ]] ||
        fail "$name: verify does not report $kind at $path: $OUT"
    ks --store "$SERVERS_DIR/clean" remote remove "$name" >/dev/null 2>&1 || true
    assert_exit 0 ks --store "$SERVERS_DIR/clean" remote add "$name" "$SERVERS_DIR/forged"
    assert_exit_unchanged 1 "$SERVERS_DIR/clean" "$name: refused pull" ks --store "$SERVERS_DIR/clean" pull "$name"
    assert_contains "$ERR" "$pull_kind" "$name: the pull names the problem"
    : "$c"
}
seed_hex=${seed#sha256:} rerun_hex=${rerun_digest#sha256:}
rerun_key=$seed_hex$rerun_hex
rerun_file=$(index_file "$G" reruns "$rerun_key")
group_key=$(index_keys "$G" groups | head -1)
group_key=${group_key:0:64}
set_line "$G" reruns "$rerun_key" "{\"@key\":\"$rerun_key\",\"level\":\"disputed\",\"ratio\":1}" |
    forged_lines "wrong-ratio" rerun-mismatch "$rerun_file" "ratio"
set_line "$G" groups "$group_key$rerun_hex" "{\"@key\":\"$group_key$rerun_hex\",\"metric\":\"latency\",\"statistic\":\"median\",\"unit\":\"ns\",\"value\":3400000}" |
    forged_lines "rerun-in-group" group-mismatch "$(index_file "$G" groups "$group_key$rerun_hex")" "group"
# A format-2 entry in a format-3 tree is outside the layout.
printf '100644 %s\trefs/levels/reported/%s\n' "$(printf '{"evidence":null}' | blob_of)" "$(fan "$rerun_hex")" |
    forged_lines "format-2-path" layout "refs/levels/reported" "format-2 path"
printf '0 %s\tFORMAT\n' 0000000000000000000000000000000000000000 | forged_lines "no-format" layout FORMAT "format"
set_line "$G" reruns "$rerun_key" - | forged_lines "unindexed" rerun-mismatch "$rerun_file" "unindexed" index-removed
# A line out of order, and a key twice, in the levels file.
lf=$(index_file "$G" levels "$seed_hex")
line=$(index_line "$G" levels "$seed_hex")
printf '100644 %s\t%s\n' "$(printf '%s\n%s\n' "$line" "$line" | blob_of)" "$lf" | forged_lines "key-twice" layout "$lf" "twice"
printf '100644 %s\t%s\n' "$(printf '%s \n' "$line" | blob_of)" "$lf" | forged_lines "not-jcs" layout "$lf" "space"
pass "verify and pull check every line against the objects and the signed history, and format 3's files exactly"

# ---- (2) Upgrading the store the format-1 release made -----------------------
F=$SERVERS_DIR/f1
git clone -q --bare "$data/format1/store.bundle" "$F"
git --git-dir="$F" symbolic-ref HEAD refs/heads/main
git --git-dir="$F" remote remove origin
assert_exit 0 ks --store "$F" trust add controller@example.org controller.pub
[[ -z $(git --git-dir="$F" ls-tree main FORMAT) ]] || fail "the fixture has a FORMAT file"
assert_exit 0 ks --store "$F" verify
r628=sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354
before_objects=$(git --git-dir="$F" rev-parse main:objects)
before_head=$(git --git-dir="$F" rev-parse main)
ks --store "$F" --json log >log.before
ks --store "$F" --json ls >ls.before
for l in reproduced disputed reported source-native; do ks --store "$F" ls --level "$l" >"level-$l.before"; done
# Format 1's upstream ids, as (source, externalId, run): refs/sources/<source>/<id> holds the run.
git --git-dir="$F" ls-tree -r --name-only main refs/sources | while read -r p; do
    printf '%s\t%s\n' "${p#refs/sources/}" "$(git --git-dir="$F" cat-file blob "main:$p")"
done | sort >sources.before
[[ -s sources.before ]] || fail "the fixture has no upstream ids"
ks --store "$F" --json show "$r628" | jq -c '.document' >show628.before
[[ $(jq -r '.run.metadata | length' show628.before) -gt 0 ]] || fail "show --json: no metadata to compare"
ks --store "$F" --json show "$seed" | jq -c '.document' >show334.before
pass "the format-1 fixture reads: verify ok"

# Writers refuse it, naming the way out, before anything is written.
before=$(store_fingerprint "$F")
assert_exit 3 ks --store "$F" add "$data/e2e/seed-run-tiled-geglu-backward.json"
assert_contains "$ERR" "this store is format 1" "add: names the format"
assert_contains "$ERR" "run \`kistore upgrade\`" "add: says to upgrade"
assert_contains "$ERR" "nothing was written" "add: says nothing was written"
assert_exit 3 ks --store "$F" import liger "$data/liger/sample.csv"
assert_contains "$ERR" "kistore upgrade" "import: says to upgrade"
assert_exit 3 ks --store "$F" attest "$r628" --note "again"
assert_contains "$ERR" "kistore upgrade" "attest: says to upgrade"
make_rerun "$F" "$r628" 2600000 close.json
assert_exit 3 ks --store "$F" rerun "$r628" close.json --sign controller
assert_contains "$ERR" "kistore upgrade" "rerun: says to upgrade"
assert_store_unchanged "$before" "$F" "writers on a format-1 store"
pass "add, import, attest, rerun refuse a format-1 store (exit 3, says to run kistore upgrade), store unchanged"

# No sync between formats, in either direction.
assert_exit 0 ks --store "$G" remote add f1 "$F"
assert_exit 0 ks --store "$F" remote add g "$G"
# (A push keeps its packing settings in the store's local kistore/ folder: made once here.)
assert_exit 1 ks --store "$G" push f1
before_g=$(store_fingerprint "$G")
assert_exit 1 ks --store "$G" pull f1
assert_contains "$ERR" "format-1" "pull from format 1: names the format"
assert_contains "$ERR" "kistore upgrade" "pull from format 1: says to upgrade"
assert_store_unchanged "$before_g" "$G" "pull from a format-1 store"
assert_exit 1 ks --store "$G" push f1
assert_contains "$ERR" "kistore upgrade" "push to format 1: says to upgrade"
assert_store_unchanged "$before_g" "$G" "push to a format-1 store (the pull it makes)"
before=$(store_fingerprint "$F")
assert_exit 3 ks --store "$F" pull g
assert_contains "$ERR" "this store is format 1" "pull into format 1: names the format"
assert_contains "$ERR" "kistore upgrade" "pull into format 1: says to upgrade"
assert_exit 3 ks --store "$F" push g
assert_contains "$ERR" "kistore upgrade" "push from format 1: says to upgrade"
assert_store_unchanged "$before" "$F" "pull into and push from a format-1 store"
assert_exit 1 ks clone "$F" "$SERVERS_DIR/clone-f1"
assert_contains "$ERR" "kistore upgrade" "clone of format 1: says to upgrade"
[[ ! -e $SERVERS_DIR/clone-f1 ]] || fail "a refused clone left its folder"
pass "pull, push and clone between format 1 and format 3 are refused (exit 1 for the remote's data, 3 for this store's), stores unchanged"

# The upgrade: one commit, no object touched, everything reads the same.
assert_exit 0 ks --store "$F" remote remove g
assert_exit 0 ks --store "$F" upgrade
assert_contains "$OUT" "upgraded" "upgrade says what it did"
assert_contains "$OUT" "2 reruns moved" "upgrade counts the reruns"
assert_eq "$before_head" "$(git --git-dir="$F" rev-parse main^)" "one commit on the old head"
assert_eq "1" "$(git --git-dir="$F" rev-list --count "$before_head..main")" "exactly one commit"
assert_contains "$(git --git-dir="$F" log -1 --format=%B main)" "Kistore-Op: upgrade" "the upgrade trailer"
assert_eq "$before_objects" "$(git --git-dir="$F" rev-parse main:objects)" "objects/ subtree id"
assert_eq "kistore 3" "$(git --git-dir="$F" cat-file blob main:FORMAT)" "FORMAT written"
assert_eq "3" "$(git --git-dir="$F" config kistore.formatversion)" "the config's note of the format follows"
assert_exit 0 ks --store "$F" verify
assert_contains "$OUT" "0 problems, 5 warnings" "the same five warnings (external references, a claimed source id)"
for l in reproduced disputed reported source-native; do
    assert_eq "$(cat "level-$l.before")" "$(ks --store "$F" ls --level "$l")" "ls --level $l"
done
assert_contains "$(ks --store "$F" ls --level reproduced)" "$r628" "628643ba is reproduced"
assert_contains "$(ks --store "$F" ls --level disputed)" "$seed" "334face3 is disputed"
assert_eq "$(cat ls.before)" "$(ks --store "$F" --json ls)" "ls --json"
# Each id format 1 held, as a line of refs/sources (source and id split at the first "/").
for k in $(index_keys "$F" sources); do index_line "$F" sources "$k"; done |
    jq -r '[.source + "/" + .externalId, .run] | @tsv' | sort >sources.after
assert_eq "" "$(comm -23 sources.before sources.after)" "every upstream id of format 1 is a line of refs/sources"
assert_eq "$(cat show628.before)" "$(ks --store "$F" --json show "$r628" | jq -c '.document')" "show 628643ba: bundle and metadata"
assert_eq "$(cat show334.before)" "$(ks --store "$F" --json show "$seed" | jq -c '.document')" "show 334face3: bundle and metadata"
assert_exit 0 ks --store "$F" --json show "$r628"
assert_contains "$OUT" '"attestations":1' "the attestation"
assert_contains "$OUT" '"level":"reproduced"' "show: reproduced"
assert_contains "$OUT" '"reruns":[{"level":"reproduced"' "show: its rerun beside it"
ks --store "$F" --json log >log.after
assert_eq "upgrade" "$(jq -r '.entries[0].op' log.after)" "log: the upgrade on top"
assert_eq "$(jq -c '.entries' log.before)" "$(jq -c '.entries[1:]' log.after)" "log: the signed history below it, entry for entry"
pass "upgrade: one commit (Kistore-Op: upgrade), objects untouched, levels, attestation, sources, metadata read the same, verify ok"

assert_exit 0 ks --store "$F" --json rank "$r628"
assert_eq "4" "$(jv '.members | length')" "the rerun left the group"
assert_eq "reproduced" "$(jv --arg r "$r628" '.members[] | select(.run == $r) | .reruns[0].level')" "628643ba's rerun beside it"
after=$(git --git-dir="$F" rev-parse main)
assert_exit 0 ks --store "$F" upgrade
assert_contains "$OUT" "already format 3" "a second upgrade"
assert_eq "$after" "$(git --git-dir="$F" rev-parse main)" "a second upgrade writes nothing"
pass "after the upgrade: reruns beside their runs; upgrading again is a no-op (exit 0)"

# Signed like any write.
F2=$SERVERS_DIR/f1-signed
git clone -q --bare "$data/format1/store.bundle" "$F2"
git --git-dir="$F2" symbolic-ref HEAD refs/heads/main
assert_exit 0 ks --store "$F2" trust add controller@example.org controller.pub
assert_exit 0 ks --store "$F2" --json upgrade --sign controller
assert_eq "true" "$(jv .upgraded)" "upgrade --json"
assert_eq "2" "$(jv .reruns)" "upgrade --json: reruns"
assert_exit 0 git -c gpg.ssh.allowedSignersFile=signers --git-dir="$F2" verify-commit main
pass "upgrade --sign: stock git verifies the upgrade commit"

# Without the controllers, no rerun commit is valid: the upgrade moves no rerun,
# and verify says of the levels after it what it said before.
F3=$SERVERS_DIR/f1-untrusted
git clone -q --bare "$data/format1/store.bundle" "$F3"
git --git-dir="$F3" symbolic-ref HEAD refs/heads/main
assert_exit 1 ks --store "$F3" --json verify
problems_before=$(jv -c '[.problems[] | [.kind, (.path | gsub("/"; "") | .[-64:])]] | sort')
assert_exit 0 ks --store "$F3" upgrade
assert_contains "$OUT" "0 reruns moved" "an untrusted history moves no rerun"
assert_exit 1 ks --store "$F3" --json verify
assert_eq "$problems_before" "$(jv -c '[.problems[] | [.kind, (.path | gsub("/"; "") | .[-64:])]] | sort')" \
    "the same problems, about the same runs"
assert_contains "$problems_before" "level-unjustified" "the levels are what verify reports"
pass "upgrade without the controllers: no rerun moves, verify reports the same unjustified levels"

# An upgraded store syncs: a clone checks its format-1 history, the upgrade
# commit and what follows; two clones upgraded apart merge into one tree.
assert_exit 0 ks clone --allowed-signers signers "$F2" "$SERVERS_DIR/clone-upgraded"
assert_exit 0 ks --store "$SERVERS_DIR/clone-upgraded" verify --allowed-signers signers
assert_exit 0 ks --store "$SERVERS_DIR/clone-upgraded" rank "$r628"
assert_contains "$OUT" "rerun reproduced" "the clone lists the rerun beside its run"
assert_exit 0 ks --store "$F" remote add signed "$F2"
assert_exit 0 ks --store "$F" pull signed
assert_contains "$OUT" "merge commit" "two upgrades apart merge"
assert_eq "$(git --git-dir="$F2" rev-parse main^{tree})" "$(git --git-dir="$F" rev-parse main^{tree})" "the same tree after the merge"
assert_exit 0 ks --store "$F" verify
pass "an upgraded store clones (format-1 history, upgrade commit checked) and two upgrades made apart merge"

# ---- (2b) Upgrading the store the format-2 release made ----------------------
# tests/data/format2: signed reruns, an attestation, metadata; outputs.golden
# is what that release printed of it. After the upgrade kistore prints the
# same, the upgrade commit aside (it changes no fact, so no run's story shows it).
T=$SERVERS_DIR/f2
git clone -q --bare "$data/format2/store.bundle" "$T"
git --git-dir="$T" symbolic-ref HEAD refs/heads/main
git --git-dir="$T" remote remove origin
assert_exit 0 ks --store "$T" trust add controller@example.org controller.pub
assert_eq "kistore 2" "$(git --git-dir="$T" cat-file blob main:FORMAT)" "the fixture is format 2"
before=$(store_fingerprint "$T")
assert_exit 3 ks --store "$T" add "$data/e2e/seed-run-tiled-geglu-backward.json"
assert_contains "$ERR" "this store is format 2" "add: names the format"
assert_contains "$ERR" "run \`kistore upgrade\`" "add: says to upgrade"
assert_exit 3 ks --store "$T" attest "$r628" --note "again"
assert_contains "$ERR" "kistore upgrade" "attest: says to upgrade"
assert_store_unchanged "$before" "$T" "writers on a format-2 store"
assert_exit 0 ks --store "$G" remote add f2 "$T"
before_g=$(store_fingerprint "$G")
assert_exit 1 ks --store "$G" pull f2
assert_contains "$ERR" "the remote is a format-2 store" "pull from format 2: names the format"
assert_contains "$ERR" "kistore upgrade" "pull from format 2: says to upgrade"
assert_exit 1 ks --store "$G" push f2
assert_contains "$ERR" "kistore upgrade" "push to format 2: says to upgrade"
assert_store_unchanged "$before_g" "$G" "pull from and push to a format-2 store"
assert_store_unchanged "$before" "$T" "a format-2 remote, pulled and pushed to"
pass "writers refuse a format-2 store; pull and push between format 2 and 3 are refused, saying to upgrade; stores unchanged"

f2_head=$(git --git-dir="$T" rev-parse main)
f2_objects=$(git --git-dir="$T" rev-parse main:objects)
assert_exit 0 ks --store "$T" upgrade
assert_contains "$OUT" "upgraded" "upgrade says what it did"
assert_contains "$OUT" "from format 2 to format 3" "upgrade names both formats"
assert_eq "$f2_head" "$(git --git-dir="$T" rev-parse main^)" "one commit on the old head"
assert_eq "$f2_objects" "$(git --git-dir="$T" rev-parse main:objects)" "objects/ subtree id"
assert_eq "kistore 3" "$(git --git-dir="$T" cat-file blob main:FORMAT)" "FORMAT written"
assert_exit 0 ks --store "$T" verify
assert_contains "$OUT" "48 objects, 0 problems, 5 warnings" "verify: as before the upgrade"
r588=sha256:588a4b483894c9c688ffed3529e59df566d7696c5e2475e264d0f5de598240f9
{
    for r in $r628 $seed; do echo "\$ kistore rank ${r:7:8}"; ks --store "$T" rank "$r"; done
    for r in $r628 $seed $r588; do
        echo "\$ kistore show ${r:7:8}"; ks --store "$T" show "$r"
        echo "\$ kistore --json show ${r:7:8}"; ks --store "$T" --json show "$r"; echo
    done
    for r in $r628 $seed; do echo "\$ kistore log --run ${r:7:8}"; ks --store "$T" log --run "$r"; done
    for l in reproduced disputed reported source-native; do echo "\$ kistore ls --level $l"; ks --store "$T" ls --level "$l"; done
} >outputs.after
diff "$data/format2/outputs.golden" outputs.after >outputs.diff || fail "the upgraded store prints otherwise: $(head -40 outputs.diff)"
assert_exit 0 ks --store "$T" log --group "$r628"
assert_contains "$OUT" "628643ba9218 liger_tiled: level source-native → reproduced (rerun 588a4b483894)" "log --group reads across the upgrade"
assert_not_contains "$OUT" "Op:     upgrade" "log --group: the upgrade changed nothing of the group"
pass "the format-2 release's store upgrades (one commit, objects untouched) and rank, show, log --run and ls print what that release printed"

# ---- (3) A FORMAT naming a later format ---------------------------------------
L=$SERVERS_DIR/later
git clone -q --bare "$G" "$L"
idx=$SERVERS_DIR/later.index
GIT_INDEX_FILE=$idx git --git-dir="$L" read-tree main
GIT_INDEX_FILE=$idx git --git-dir="$L" update-index --cacheinfo "100644,$(printf 'kistore 4\n' | git --git-dir="$L" hash-object -w --stdin),FORMAT"
c=$(git --git-dir="$L" -c user.name=t -c user.email=t@example.org commit-tree "$(GIT_INDEX_FILE=$idx git --git-dir="$L" write-tree)" -p main -m later)
git --git-dir="$L" update-ref refs/heads/main "$c"
rm -f "$idx"
before=$(store_fingerprint "$L")
for cmd in "verify" "ls" "rank $seed" "upgrade" "add $data/e2e/seed-run-tiled-geglu-backward.json"; do
    # shellcheck disable=SC2086
    assert_exit 3 ks --store "$L" $cmd
    assert_contains "$ERR" 'FORMAT holds "kistore 4\n"' "$cmd: names what FORMAT holds"
done
assert_store_unchanged "$before" "$L" "commands on a later format"
assert_exit 0 ks --store "$G" remote add later "$L"
before_g=$(store_fingerprint "$G")
assert_exit 1 ks --store "$G" pull later
assert_contains "$ERR" 'FORMAT holds "kistore 4\n"' "pull: names what FORMAT holds"
assert_store_unchanged "$before_g" "$G" "pull of a later format"
pass "FORMAT \"kistore 4\\n\": every command refuses it (exit 3), a pull of it is refused (exit 1), nothing written"

summary
