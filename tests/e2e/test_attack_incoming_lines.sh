#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks on the incoming check of format 3's lines (store/core/index_diff.cc
# diff_incoming, store/sync/incoming.cc): the first parent's lines are split,
# not parsed (trusted: the store's own or an incoming commit checked before),
# the incoming tree's changed files are split and checked for shape, and only
# the lines the parent does not hold byte for byte are parsed and checked
# against the objects; a new object's lines are found in the commit's own
# changes; the merge joins two diffs for the local side's lines. Each hostile
# history is made with stock git and lib/index_lines.py; each refused pull
# must exit 1, name the file or key, and leave the store byte for byte as it
# was (lib/fingerprint.sh):
#   (a) a chain: commit 1 forges a line, commit 2 leaves it as it is (and adds
#       a good run): refused at commit 1; a merge whose first parent forges a
#       line and whose second is the victim's head; the same merge with the
#       forged commit as its second parent;
#   (b) a parent's line moved, byte for byte, into a file under other digits;
#       a parent's file copied whole to another digit's path; a folder of more
#       than T lines folded into one file holding exactly the parent's lines;
#   (c) lines whose "@key" text and parsed key differ or do not read: a
#       duplicate "@key" member, a \u escape in the key, uppercase hex; an
#       empty index file; a new run beside a reruns file that is not lines;
#   (d) a new run whose group line an earlier forged commit put (the run's
#       own commit does not change it); an unsigned level line carried by a
#       later commit;
#   (e) an upgrade commit (format 2 to 3) whose index holds a forged line:
#       refused by pull and by clone (its lines were not checked at all);
#       the same upgrade unforged is taken;
#   (f) two stores that both add runs and attestations (and one a signed
#       rerun), synced both ways: identical refs/ trees, both verify;
#   (g) a merge of a store where a run is a signed controlled rerun and one
#       where the same document was added as a plain run: the group line
#       (or the rerun line) inherited from a parent beyond the first was
#       taken unchecked, leaving a rerun ranked in its run's group.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in w
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }
keys=$SRC/tests/data/keys
cp "$keys/controller" "$keys/controller.pub" .
chmod 600 controller
SIGNERS=$W/signers
printf 'controller@example.org %s\n' "$(cat controller.pub)" >"$SIGNERS"

# S0: the seed and runs 1-3, an attestation; V0 its copy, the victim's start.
S0=$W/s0.git
assert_exit 0 ks init "$S0"
assert_exit 0 ks --store "$S0" add "$FX"
mkruns --start 1 --count 3 >r3.jsonl
assert_exit 0 ks --store "$S0" add r3.jsonl
SEED=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
assert_exit 0 ks --store "$S0" attest "$SEED" --note "base note"
assert_exit 0 ks --store "$S0" trust add controller@example.org controller.pub
mkruns --start 4 --count 1 >r4.jsonl
mkruns --start 5 --count 1 >r5.jsonl
fresh() { rm -rf "$1" && git clone -q --bare "$S0" "$1" && gd "$1" remote remove origin; }
fresh_victim() { fresh "$1" && ks --store "$1" trust add controller@example.org "$W/controller.pub" >/dev/null 2>&1; }
blob() { printf '%b' "$2" | gd "$1" hash-object -w --stdin; }

# refused WHAT REMOTE NEEDLE... : a fresh victim pulls REMOTE: exit 1, every
# NEEDLE in the message, the victim byte for byte as it was.
refused() {
    local what=$1 remote=$2 v=$W/victim before n
    shift 2
    fresh_victim "$v"
    before=$(store_fingerprint "$v")
    assert_exit 1 ks --store "$v" pull "$remote"
    for n in "$@"; do assert_contains "$ERR" "$n" "$what: the message names $n"; done
    assert_store_unchanged "$before" "$v" "$what"
    pass "$what: refused, naming ${*:-nothing more}, the store unchanged"
}

G1=$(index_keys "$S0" groups | sed -n 2p)
G1_LINE=$(index_line "$S0" groups "$G1")
FORGED_G1=$(printf '%s' "$G1_LINE" | sed -E 's/"value":[0-9.e+-]+/"value":1/')
[[ $FORGED_G1 != "$G1_LINE" ]] || fail "setup: could not forge the group line $G1_LINE"

# ---- (a) chains and merges over a forged commit ---------------------------------
R=$W/chain.git
fresh "$R"
c1=$(set_line "$R" groups "$G1" "$FORGED_G1" | commit_index_info "$R" "add: forged value")
assert_exit 0 ks --store "$R" add r4.jsonl
[[ $(gd "$R" rev-parse main^) == "$c1" ]] || fail "(a) setup: the good add is expected on the forged commit"
assert_eq "$FORGED_G1" "$(index_line "$R" groups "$G1")" "(a) setup: commit 2 keeps the forged line"
refused "(a) a forged line in commit 1, kept by a good commit 2" "$R" "${c1:0:12}" "refs/groups @$G1" "primary measurement"

R=$W/merge1.git
fresh "$R"
x=$(set_line "$R" groups "$G1" "$FORGED_G1" | commit_index_info "$R" "add: forged value")
m=$(gd "$R" commit-tree "$x^{tree}" -p "$x" -p "$(gd "$S0" rev-parse main)" -m "merge: forged first parent")
gd "$R" update-ref refs/heads/main "$m"
refused "(a) a merge whose first parent forges a line, its second the victim's head" "$R" "${x:0:12}" "refs/groups @$G1"

R=$W/merge2.git
fresh "$R"
x=$(set_line "$R" groups "$G1" "$FORGED_G1" | commit_index_info "$R" "add: forged value")
m=$(gd "$R" commit-tree "$x^{tree}" -p "$(gd "$S0" rev-parse main)" -p "$x" -m "merge: forged second parent")
gd "$R" update-ref refs/heads/main "$m"
refused "(a) a merge of the victim's head and a forged commit (second parent)" "$R" "${x:0:12}" "refs/groups @$G1"

# ---- (b) the parent's bytes at other places -----------------------------------------
# G1's line moved, byte for byte, to a file of another digit of refs/groups/.
R=$W/moved.git
fresh "$R"
F1=$(index_file "$R" groups "$G1")
other=$(gd "$R" ls-tree --name-only main refs/groups/ | grep -v "^${F1%%/*}" | sed -n 1p || true)
[[ -n $other ]] || other=refs/groups/f
tree_info=$(set_line "$R" groups "$G1" -)
if gd "$R" cat-file -e "main:$other" 2>/dev/null && [[ $(gd "$R" cat-file -t "main:$other") == blob ]]; then
    text=$(gd "$R" cat-file blob "main:$other")$'\n'$G1_LINE
else
    other=refs/groups/$(printf '%x' $(((16#${G1:0:1} + 1) % 16)))
    text=$G1_LINE
fi
c=$( { printf '%s\n' "$tree_info"; printf '100644 %s\t%s\n' "$(printf '%s\n' "$text" | gd "$R" hash-object -w --stdin)" "$other"; } |
    commit_index_info "$R" "add: a line moved")
refused "(b) a parent's line moved into a file under other digits" "$R" "$other" "${c:0:12}"

# F1's blob, whole, at a path of another digit (the parent has none there).
R=$W/copied.git
fresh "$R"
F1=$(index_file "$R" groups "$G1")
d=${F1#refs/groups/}
d=${d%%/*}
spare=""
for x in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
    gd "$R" cat-file -e "main:refs/groups/$x" 2>/dev/null || { spare=$x; break; }
done
[[ -n $spare ]] || fail "(b) setup: refs/groups has every digit"
c=$(commit_with "$R" "add: a file copied" "100644,$(gd "$R" rev-parse "main:$F1"),refs/groups/$spare")
refused "(b) a parent's file copied whole to another digit's path" "$R" "refs/groups/$spare" "${c:0:12}"

# A folder of more than T (256) lines folded into one file of the parent's lines.
R=$W/big.git
fresh "$R"
mkruns --start 100 --count 300 --run-only --no-metadata >r300.jsonl
assert_exit 0 ks --store "$R" add r300.jsonl
folder=$(gd "$R" ls-tree main refs/groups/ | awk '$2 == "tree" { print $4; exit }')
[[ -n $folder ]] || fail "(b) setup: expected refs/groups to hold a folder past T lines"
all=$(gd "$R" ls-tree -r --name-only main "$folder" | while read -r p; do gd "$R" cat-file blob "main:$p"; done)
assert_eq 1 "$(( $(nlines "$all") > 256 ))" "(b) setup: the folder holds more than T lines"
c=$( { printf '0 %s\t%s\n' 0000000000000000000000000000000000000000 "$folder"
        gd "$R" ls-tree -r --name-only main "$folder" | while read -r p; do printf '0 %s\t%s\n' 0000000000000000000000000000000000000000 "$p"; done
        printf '100644 %s\trefs/groups/%s\n' "$(printf '%s\n' "$all" | gd "$R" hash-object -w --stdin)" "${folder#refs/groups/}"
    } | commit_index_info "$R" "add: one file past T")
gd "$R" ls-tree main refs/groups/ | grep -q blob || fail "(b) setup: the folder is expected to be a file now"
assert_eq 1 "$(( $(nlines "$(gd "$R" cat-file blob "main:$folder")") > 256 ))" "(b) setup: the file holds past T lines"
refused "(b) a file past T lines, every line the parent's" "$R" "$folder" "${c:0:12}"

# ---- (c) lines whose "@key" text does not say their key ---------------------------------
forge_line() { # NAME LINE : a remote whose G1 line is LINE; refused naming G1's file
    local R=$W/$1.git c
    fresh "$R"
    c=$(set_line "$R" groups "$G1" "$2" | commit_index_info "$R" "add: $1")
    refused "(c) $1" "$R" "$(index_file "$S0" groups "$G1")" "${c:0:12}"
}
G2=$(index_keys "$S0" groups | sed -n 3p)
forge_line "a duplicate @key member naming another key" "{\"@key\":\"$G1\",\"@key\":\"$G2\",${G1_LINE#*\",}"
forge_line "a duplicate @key member naming the same key" "{\"@key\":\"$G1\",\"@key\":\"$G1\",${G1_LINE#*\",}"
forge_line "a \\u0030-style escape in the key" "{\"@key\":\"\\u00${G1:0:1}${G1:1:1}${G1:2}\",${G1_LINE#*\",}"
forge_line "uppercase hex in the key" "{\"@key\":\"${G1^^}\",${G1_LINE#*\",}"
forge_line "the key's text and a member after it" "${G1_LINE%\}},\"value\":2}"

R=$W/empty.git
fresh "$R"
c=$(commit_with "$R" "add: an empty file" "100644,$(blob "$R" ''),refs/attestations/$spare")
refused "(c) an empty index file" "$R" "refs/attestations/$spare" "expected at least one line" "${c:0:12}"

# A commit that adds a run (so the check asks which runs are controlled reruns) beside a reruns
# file that is not lines: a listed refusal naming refs/reruns, not an error that ends the pull.
R=$W/junk-reruns.git
fresh "$R"
assert_exit 0 ks --store "$R" add r5.jsonl
c=$(cacheinfo_lines "100644,$(blob "$R" 'not a line\n'),refs/reruns/0" |
    commit_index_info "$R" "add: run 5 and a reruns file that is not lines" "$(gd "$S0" rev-parse main)")
refused "(c) a new run beside a reruns file that is not lines" "$R" "refs/reruns" "${c:0:12}"

# ---- (d) lines a forged earlier commit put, kept by a later one -----------------------------
R=$W/pregroup.git
fresh "$R"
assert_exit 0 ks --store "$R" add r5.jsonl
run5_key=$(index_keys "$R" groups | grep -vxF -f <(index_keys "$S0" groups))
run5_line=$(index_line "$R" groups "$run5_key")
good=$(gd "$R" rev-parse main)
gd "$R" update-ref refs/heads/main "$(gd "$S0" rev-parse main)"
# Commit 1: run 5's group line without run 5; commit 2: run 5's objects and
# every other line of its add, the group line as commit 1 left it.
c1=$(set_line "$R" groups "$run5_key" "$run5_line" | commit_index_info "$R" "add: a group line alone")
c2=$(gd "$R" commit-tree "$good^{tree}" -p "$c1" -m "add: run 5")
gd "$R" update-ref refs/heads/main "$c2"
assert_eq "" "$(gd "$R" diff --name-only "$c1" "$c2" -- refs/groups)" "(d) setup: commit 2 leaves the group line as it is"
refused "(d) a new run whose group line a forged earlier commit put" "$R" "${c1:0:12}" "refs/groups @$run5_key"

R=$W/level.git
fresh "$R"
r1=$(ks --store "$S0" digest r3.jsonl | awk '$2 == "BenchmarkRun" { print $1; exit }')
c1=$(set_line "$R" levels "${r1#sha256:}" "{\"@key\":\"${r1#sha256:}\",\"evidence\":\"$SEED\",\"level\":\"reproduced\"}" |
    commit_index_info "$R" "rerun: unsigned")
assert_exit 0 ks --store "$R" add r4.jsonl
refused "(d) an unsigned level line, kept by a later good commit" "$R" "${c1:0:12}" "${r1#sha256:}"

# ---- (e) an upgrade commit with a forged line --------------------------------------
U=$W/upgraded.git
git clone -q --bare "$SRC/tests/data/format2/store.bundle" "$U"
gd "$U" symbolic-ref HEAD refs/heads/main
gd "$U" remote remove origin
assert_exit 0 ks --store "$U" upgrade
UC=$W/upgraded-clean.git
git clone -q --bare "$U" "$UC"
k=$(index_keys "$U" groups | sed -n 1p)
line=$(index_line "$U" groups "$k")
set_line "$U" groups "$k" "$(printf '%s' "$line" | sed -E 's/"value":[0-9.e+-]+/"value":1/')" | commit_index_info "$U" - main^ >/dev/null
assert_eq "upgrade" "$(gd "$U" log -1 --format=%B main | sed -n 's/^Kistore-Op: //p')" "(e) setup: the forged commit is the upgrade"
E=$W/empty-victim.git
assert_exit 0 ks init "$E"
assert_exit 0 ks --store "$E" trust add controller@example.org controller.pub
before=$(store_fingerprint "$E")
assert_exit 1 ks --store "$E" pull "$U"
assert_contains "$ERR" "refs/groups @$k" "(e) pull: names the forged key"
assert_contains "$ERR" "primary measurement" "(e) pull: says what is wrong"
assert_store_unchanged "$before" "$E" "(e) pull of a forged upgrade"
assert_exit 1 ks clone --allowed-signers "$SIGNERS" "$U" "$W/upgrade-clone"
assert_contains "$ERR" "refs/groups @$k" "(e) clone: names the forged key"
[[ ! -e $W/upgrade-clone ]] || fail "(e) a refused clone leaves its folder"
assert_exit 0 ks clone --allowed-signers "$SIGNERS" "$UC" "$W/upgrade-clone"
assert_exit 0 ks --store "$W/upgrade-clone" verify
pass "(e) an upgrade commit's forged line: pull and clone refused naming the key; the unforged upgrade cloned and verified"

# ---- (f) two stores add apart and sync both ways: one refs/ tree --------------------------
A=$W/a.git
B=$W/b.git
fresh_victim "$A"
fresh_victim "$B"
mkruns --start 10 --count 3 --tag a >ra.jsonl
mkruns --start 20 --count 3 --tag b >rb.jsonl
assert_exit 0 ks --store "$A" add ra.jsonl
assert_exit 0 ks --store "$B" add rb.jsonl
ra=$(ks --store "$A" digest ra.jsonl | awk '$2 == "BenchmarkRun" { print $1; exit }')
rb=$(ks --store "$B" digest rb.jsonl | awk '$2 == "BenchmarkRun" { print $1; exit }')
assert_exit 0 ks --store "$A" attest "$ra" --note "a on a"
assert_exit 0 ks --store "$A" attest "$SEED" --note "a on the seed"
assert_exit 0 ks --store "$B" attest "$rb" --note "b on b"
assert_exit 0 ks --store "$B" attest "$SEED" --note "b on the seed"
ks --store "$B" show "$r1" --canonical >r1.json
rerun_bundle r1.json 2600000 rerun-b >r1-rerun.json
assert_exit 0 ks --store "$B" rerun "$r1" r1-rerun.json --sign controller
assert_exit 0 ks --store "$A" pull "$B"
assert_exit 0 ks --store "$B" pull "$A"
assert_eq "$(gd "$A" rev-parse main:refs)" "$(gd "$B" rev-parse main:refs)" "(f) both stores end on one refs/ tree"
assert_eq "$(gd "$A" rev-parse main:objects)" "$(gd "$B" rev-parse main:objects)" "(f) and one objects/ tree"
assert_exit 0 ks --store "$A" verify
assert_exit 0 ks --store "$B" verify
assert_exit 0 ks --store "$A" rank "$r1"
assert_contains "$OUT" "reproduced" "(f) the rerun's level reached the other side"
pass "(f) two stores' runs, attestations and a signed rerun, synced both ways: identical refs/ trees, both verify"

# ---- (g) a rerun in a group, each line from another parent ------------------------------
RX=$W/rx.git
RY=$W/ry.git
fresh_victim "$RX"
fresh_victim "$RY"
ks --store "$RX" show "$SEED" --canonical >seed.json
rerun_bundle seed.json 2600000 rr >rr.json
assert_exit 0 ks --store "$RX" rerun "$SEED" rr.json --sign controller
assert_exit 0 ks --store "$RY" add rr.json
rr=$(ks --store "$RY" digest rr.json | awk '$2 == "BenchmarkRun" { print $1; exit }')
# swap_in REPO REF FAMILY : REPO's main tree with refs/FAMILY taken from REF
swap_in() {
    local t
    t=$(gd "$1" ls-tree main:refs | awk -v g="$(gd "$1" rev-parse "$2:refs/$3")" -v f="$3" -F'\t' \
        '{ split($1, a, " "); if ($2 == f) printf "%s %s %s\t%s\n", a[1], a[2], g, $2; else print }' | gd "$1" mktree)
    gd "$1" ls-tree main | awk -v g="$t" -F'\t' '{ split($1, a, " "); if ($2 == "refs") printf "%s %s %s\t%s\n", a[1], a[2], g, $2; else print }' |
        gd "$1" mktree
}
gd "$RX" fetch -q "$RY" main:refs/heads/y
m=$(gd "$RX" commit-tree "$(swap_in "$RX" y groups)" -p main -p y -m "merge: a rerun in its run's group")
gd "$RX" update-ref refs/heads/main "$m"
refused "(g) a merge taking a group line for a controlled rerun from its second parent" "$RX" "${m:0:12}" "${rr#sha256:}" "controlled rerun"
gd "$RY" fetch -q "$RX" "$(gd "$RX" rev-parse main^1):refs/heads/x"
m=$(gd "$RY" commit-tree "$(swap_in "$RY" x reruns)" -p main -p x -m "merge: a group member made a rerun")
gd "$RY" update-ref refs/heads/main "$m"
refused "(g) a merge taking a rerun line from its second parent for a run its first parent groups" "$RY" "${m:0:12}" "${rr#sha256:}"

finished_within test_attack_incoming_lines 60
summary
