#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks on what a merge commit may take from its parents beyond the first
# (SPEC §2 "Hostile input"; store/sync/incoming.cc, store/verify/verify.cc): a merge may
# hold, at an object's path, the blob of any of its parents there (one
# document under two stores' frames), and takes that parent's dictionaries,
# index entries and format with it. Each hostile merge is made with stock git
# plumbing on sides made by kistore; `verify` of the remote must report it
# and a pull of it must be refused, exit 1, naming the path, the store byte
# for byte as it was (lib/fingerprint.sh); each legitimate one must be taken
# and verify clean afterwards:
#   (a) a merge that keeps the frames of its second parent but drops (or
#       swaps for its first parent's) the dictionary they name; the same in
#       an octopus merge, in a pull that must merge, and over git://;
#   (b) a merge that keeps its second parent's run but drops its group line
#       or its claim (refs/sources), or gives it a level line no signed rerun
#       justifies (format 3 has no line to drop for a default level);
#   (c) a merge of a format-3 tree whose second parent is a format-1 commit;
#   (d) second parents that never passed the checks: a bad frame at the
#       path, the blob under mode 100755, another document's frame at the
#       path: each refused on its own side, whichever frame the merge keeps;
#   (e) legitimate merges: one document under a dictionary frame and a plain
#       one, either frame kept (fast-forward, a merge on top, an octopus).
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

BASE=$SERVERS_DIR/repos
work_in w "$BASE" samples other
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }

# The victim V: the seed run and one more; P, the pool every side and every
# merge is made in (a bare copy of V at H), and the remote pulled from.
V=$W/victim
P=$BASE/pool.git
assert_exit 0 ks init "$V"
assert_exit 0 ks --store "$V" add "$FX"
mkruns --start 1 --count 1 >r1.jsonl
assert_exit 0 ks --store "$V" add r1.jsonl
H=$(head_of "$V")
git clone -q --bare "$V" "$P"
for i in 2 3 4 50; do mkruns --start "$i" --count 1 >"r$i.jsonl"; done
for i in $(seq 1 200); do "$KISTORE" canon <<<"{\"kind\":\"Implementation\",\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"spec\":{\"name\":\"k$i\",\"repo\":\"https://github.com/x/y$((i * 7))\"}}" >"samples/$i.json"; done
zstd -q --train samples/* --maxdict=2048 --dictID=424242 -o dict424242 2>/dev/null
for i in $(seq 1 200); do printf 'zzzz qqqq %d wwww %d %.0s' "$i" $((i * 13)) {1..20} >"other/$i"; done
zstd -q --train other/* --maxdict=2048 --dictID=424242 -o other424242 2>/dev/null
DICT=dictionaries/424242

# side RUNS [DICTFILE] : in P, a commit on H made by `kistore add RUNS`; with
# DICTFILE, that commit again (same message) with every object it added
# re-compressed by `zstd -D DICTFILE` and DICTFILE at dictionaries/424242.
# Leaves main at H; prints the commit.
side() {
    local runs=$1 dict=${2:-} c p idx=$W/side.index tree
    gd "$P" update-ref refs/heads/main "$H"
    ks --store "$P" add "$runs" >/dev/null
    c=$(head_of "$P")
    if [[ -n $dict ]]; then
        rm -f "$idx"
        GIT_INDEX_FILE=$idx gd "$P" read-tree "$c"
        while IFS= read -r p; do
            gd "$P" cat-file blob "$c:$p" | zstd -q -d -c >plain
            zstd -q -f --check -D "$dict" plain -o framed
            GIT_INDEX_FILE=$idx gd "$P" update-index --cacheinfo "100644,$(gd "$P" hash-object -w framed),$p"
        done < <(gd "$P" diff-tree -r --name-only --diff-filter=A "$H" "$c" -- objects/)
        GIT_INDEX_FILE=$idx gd "$P" update-index --add --cacheinfo "100644,$(gd "$P" hash-object -w "$dict"),$DICT"
        tree=$(GIT_INDEX_FILE=$idx gd "$P" write-tree)
        c=$(gd "$P" cat-file commit "$c" | sed '1,/^$/d' | gd "$P" commit-tree "$tree" -p "$H")
        rm -f "$idx"
    fi
    gd "$P" update-ref "refs/sides/$runs${dict:+-$dict}" "$c"
    gd "$P" update-ref refs/heads/main "$H"
    printf '%s\n' "$c"
}
# merge PARENTS -- EDIT... : in P, a merge commit (Kistore-Op: merge) of the
# parents, first first, whose tree is the first parent's with each EDIT:
# "+C" what commit C added since H (the paths it added below objects/ and
# dictionaries/; of each format-3 index file it added or changed, the union
# of its lines and the merge's), "-PATH" removed, "MODE,BLOB,PATH" set,
# "~FAMILY KEY LINE" KEY's index line replaced by LINE (or removed, LINE "-";
# lib/index_lines.py set). Moves P's main to it; prints it.
merge() {
    local parents=() idx=$W/merge.index e tree c family key line lines
    while [[ $1 != -- ]]; do parents+=(-p "$1"); shift; done
    shift
    rm -f "$idx"
    GIT_INDEX_FILE=$idx gd "$P" read-tree "${parents[1]}"
    for e in "$@"; do
        # Each edit's lines are made first, then applied (an edit reads the index).
        lines=$(case $e in
            +*) gd "$P" diff-tree -r --no-commit-id --diff-filter=A "$H" "${e#+}" -- objects/ dictionaries/ |
                    while read -r _ mode _ id _ path; do printf '%s %s\t%s\n' "$mode" "$id" "$path"; done
                union_lines "${e#+}" ;;
            -*) printf '0 %040d\t%s\n' 0 "${e#-}" ;;
            \~*) tree=$(GIT_INDEX_FILE=$idx gd "$P" write-tree)
                read -r family key line <<<"${e#\~}"
                INDEX_REF=$tree set_line "$P" "$family" "$key" "$line" ;;
            *) IFS=, read -r mode id path <<<"$e"; printf '%s %s\t%s\n' "$mode" "$id" "$path" ;;
        esac)
        [[ -z $lines ]] || GIT_INDEX_FILE=$idx gd "$P" update-index --index-info <<<"$lines"
    done
    tree=$(GIT_INDEX_FILE=$idx gd "$P" write-tree)
    c=$(printf 'merge: crafted\n\nKistore-Op: merge\n' | gd "$P" commit-tree "$tree" "${parents[@]}")
    rm -f "$idx"
    gd "$P" update-ref refs/heads/main "$c"
    printf '%s\n' "$c"
}
# union_lines C : (in merge, with its index) the --index-info lines that give
# each refs/ file C added or changed since H the union of its lines in C and
# in the index, in key order (a line's bytes sort as its key: SPEC §2). The
# sides here hold a few runs, so each family is one file per first digit on
# every side and the union keeps that trie.
union_lines() {
    local path blob
    while IFS= read -r path; do
        blob=$({ GIT_INDEX_FILE=$idx gd "$P" cat-file blob ":$path" 2>/dev/null || true; gd "$P" cat-file blob "$1:$path"; } |
            LC_ALL=C sort -u | gd "$P" hash-object -w --stdin)
        printf '100644 %s\t%s\n' "$blob" "$path"
    done < <(gd "$P" diff-tree -r --name-only --diff-filter=AM "$H" "$1" -- refs/)
}
# fresh_victim DIR : a copy of the victim as it was.
fresh_victim() { rm -rf "$1" && cp -a "$V" "$1"; }
# both_refuse WHAT NEEDLE... : verify of P (at its crafted main) exits 1 and
# names every NEEDLE; a copy of the victim pulling P (a fast-forward) is
# refused, exit 1, names every NEEDLE, and stays byte for byte as it was, in
# text and --json; the victim moved on (a merge) is refused alike.
both_refuse() {
    local what=$1 n
    shift
    assert_exit 1 ks --store "$P" verify
    for n in "$@"; do assert_contains "$OUT$ERR" "$n" "$what: verify of the remote names $n"; done
    fresh_victim "$W/v"
    refused "$W/v" "$what (fast-forward)" "$@"
    fresh_victim "$W/vm"
    assert_exit 0 ks --store "$W/vm" add r50.jsonl
    refused "$W/vm" "$what (merge)" "$@"
}
# refused STORE WHAT NEEDLE... : STORE pulls P: exit 1, "refused" and every
# NEEDLE on stderr, then the same with --json; the store as it was (pull_refused).
refused() { pull_refused "$1" "$P" "${@:2}"; }
# taken WHAT RESULT : verify of P is clean; a copy of the victim pulls P
# (RESULT: fast-forward, or merge when it moved on first) and verifies clean.
taken() {
    local what=$1 result=$2 store=$W/t
    assert_exit 0 ks --store "$P" --json verify
    assert_eq true "$(jv .ok)" "$what: verify of the remote"
    fresh_victim "$store"
    [[ $result == merge ]] && assert_exit 0 ks --store "$store" add r50.jsonl
    assert_exit 0 ks --store "$store" --json pull "$P"
    assert_eq "$result" "$(jv .result)" "$what: the pull"
    assert_exit 0 ks --store "$store" --json verify
    assert_eq true "$(jv .ok)" "$what: verify after the pull"
}

A=$(side r3.jsonl)                 # r3, plain frames
C=$(side r4.jsonl)                 # r4, plain frames
B=$(side r2.jsonl dict424242)      # r2 in frames of dictionary 424242, with it
B2=$(side r2.jsonl)                # r2 again, in a plain frame
AO=$(side r3.jsonl other424242)    # r3 in frames of another dictionary 424242
R2=$(gd "$P" diff-tree -r --name-only --diff-filter=A "$H" "$B" -- objects/)
R3=$(gd "$P" diff-tree -r --name-only --diff-filter=A "$H" "$A" -- objects/)
[[ $(printf '%s\n%s\n' "$R2" "$R3" | grep -c .) == 2 && $(gd "$P" rev-parse "$B:$R2") != $(gd "$P" rev-parse "$B2:$R2") ]] ||
    fail "setup: expected one new object per side, r2 under two frames"
pass "setup: sides r3, r4 (plain), r2 (dictionary frames and plain), r3 (another dictionary of the same ID)"

# ---- (a) the dictionary a kept frame names ---------------------------------------
merge "$A" "$B" -- "+$B" "-$DICT" >/dev/null
both_refuse "(a) a merge keeping the second parent's frames without their dictionary" "$DICT"
merge "$AO" "$B" -- "+$B" >/dev/null  # AO's dictionary of ID 424242 kept, B's frames
both_refuse "(a) a merge keeping the second parent's frames and the first parent's dictionary of their ID" "$DICT"
merge "$B" "$AO" -- "+$AO" >/dev/null  # the same, the other way round
both_refuse "(a) the same with the parents swapped" "$DICT"
merge "$AO" "$B" -- "+$B" "100644,$(gd "$P" rev-parse "$B:$DICT"),$DICT" >/dev/null  # B's dictionary, AO's frames
both_refuse "(a) a merge keeping the first parent's frames and the second parent's dictionary of their ID" "$DICT"
merge "$A" "$C" "$B" -- "+$C" "+$B" "-$DICT" >/dev/null
both_refuse "(a) an octopus merge keeping the third parent's frames without their dictionary" "$DICT"
start_git_daemon "$BASE"
fresh_victim "$W/vn"
assert_exit_unchanged 1 "$W/vn" "(a) over git://" ks --store "$W/vn" pull "$GIT_DAEMON_URL/pool.git"
assert_contains "$ERR" "$DICT" "(a) over git://: names the dictionary"
pass "(a) merges keeping frames whose dictionary they dropped or swapped (two parents, octopus, over a path and git://): verify reports, pull refuses, the store unchanged"

# ---- (b) the index lines of a kept run --------------------------------------
# B's run r2 has a line in refs/groups and its claim in refs/sources; the
# merge keeps r2 and drops that line from the file (the file's other lines
# stay). verify names "<file> @<key>"; a pull names "refs/<family> @<key>".
# Format 3 has no line for a run at its default level, so format 2's "level
# entry dropped" has no meaning; its nearest attack: the merge gives r2 a
# reproduced line that no signed rerun justifies.
RUN2=$(mkruns --start 2 --count 1 --digests)
RUN2=${RUN2#sha256:}
GROUP_KEY=$(INDEX_REF=$B index_keys "$P" groups | grep "$RUN2\$")
SOURCE_KEY=$(comm -13 <(INDEX_REF=$H index_keys "$P" sources) <(INDEX_REF=$B index_keys "$P" sources))
[[ -n $GROUP_KEY && $(nlines "$SOURCE_KEY") == 1 ]] || fail "(b) setup: r2's group line or claim not found"
GROUP=$(INDEX_REF=$B index_file "$P" groups "$GROUP_KEY")
SOURCE=$(INDEX_REF=$B index_file "$P" sources "$SOURCE_KEY")
LEVEL=$(INDEX_REF=$B index_file "$P" levels "$RUN2")
# dropped WHAT FILE KEY KIND : verify of P names "FILE @KEY" and KIND (then both_refuse).
dropped() {
    assert_exit 1 ks --store "$P" verify
    assert_contains "$OUT$ERR" "$4: $2 @$3" "$1: verify names the file and the key"
}
merge "$A" "$B" -- "+$B" "~groups $GROUP_KEY -" >/dev/null
[[ $(gd "$P" cat-file blob "main:$GROUP") == *'"@key"'* ]] || fail "(b) setup: the group file went with the line"
dropped "(b) r2's group line dropped" "$GROUP" "$GROUP_KEY" missing-group
both_refuse "(b) a merge keeping the second parent's run without its group line" "refs/groups" "@$GROUP_KEY"
merge "$A" "$B" -- "+$B" "~sources $SOURCE_KEY -" >/dev/null
dropped "(b) r2's claim dropped" "$SOURCE" "$SOURCE_KEY" missing-source
both_refuse "(b) a merge keeping the second parent's run without its claim" "refs/sources" "@$SOURCE_KEY"
merge "$A" "$B" -- "+$B" "~levels $RUN2 {\"@key\":\"$RUN2\",\"evidence\":\"sha256:$RUN2\",\"level\":\"reproduced\"}" >/dev/null
dropped "(b) r2 given an unjustified level line" "$LEVEL" "$RUN2" level-unjustified
both_refuse "(b) a merge giving the second parent's run a level no signed rerun gives" level-unjustified "refs/levels" "@$RUN2"
pass "(b) merges dropping the second parent's group line or claim of a run they keep, or giving it a level line no rerun justifies: verify reports, pull refuses"

# ---- (c) a format-1 parent ----------------------------------------------------
# F1: the format-1 fixture store's second commit (its history before any
# rerun); U: its upgrade. Merges of A and U, and of A and F1, whose tree
# is A's with what U adds.
git clone -q --bare "$SRC/tests/data/format1/store.bundle" "$W/f1.git"
gd "$W/f1.git" symbolic-ref HEAD refs/heads/main
gd "$W/f1.git" update-ref refs/heads/main main~3
assert_exit 0 ks --store "$W/f1.git" upgrade
gd "$P" fetch -q "$W/f1.git" main:refs/sides/upgraded
U=$(gd "$P" rev-parse refs/sides/upgraded)
F1=$(gd "$P" rev-parse "$U^")
merge "$A" "$U" -- "+$U" >/dev/null
taken "(c) control: a merge of the upgraded format-1 store and a format-3 side" fast-forward
merge "$A" "$F1" -- "+$U" >/dev/null
both_refuse "(c) a format-3 merge whose second parent is a format-1 commit" FORMAT
pass "(c) a format-3 merge of a format-1 parent: verify reports, pull refuses (through the upgrade: taken)"

# ---- (d) second parents that never passed the checks -----------------------------
# X: B with r2's frame replaced by another frame that names r2's path (the
# bytes of r3), XM: B with r2's blob as an executable.
X=$(printf 'add: forged\n\nKistore-Op: add\n' | gd "$P" commit-tree "$(
    idx=$W/x.index; GIT_INDEX_FILE=$idx gd "$P" read-tree "$B"
    GIT_INDEX_FILE=$idx gd "$P" update-index --cacheinfo "100644,$(gd "$P" rev-parse "$A:$R3"),$R2"
    GIT_INDEX_FILE=$idx gd "$P" write-tree; rm -f "$idx")" -p "$H")
XM=$(printf 'add: forged\n\nKistore-Op: add\n' | gd "$P" commit-tree "$(
    idx=$W/x.index; GIT_INDEX_FILE=$idx gd "$P" read-tree "$B"
    GIT_INDEX_FILE=$idx gd "$P" update-index --cacheinfo "100755,$(gd "$P" rev-parse "$B:$R2"),$R2"
    GIT_INDEX_FILE=$idx gd "$P" write-tree; rm -f "$idx")" -p "$H")
merge "$A" "$X" -- "+$B" "100644,$(gd "$P" rev-parse "$A:$R3"),$R2" >/dev/null
both_refuse "(d) a merge keeping another document's frame at a path, as its second parent has it" object-hash-mismatch "$R2"
merge "$B" "$X" -- >/dev/null  # the first parent's good frame kept: the second parent is still refused
fresh_victim "$W/v"
refused "$W/v" "(d) a merge of a side with another document's frame, keeping the good one" object-hash-mismatch "$R2"
merge "$A" "$XM" -- "+$B" >/dev/null
fresh_victim "$W/v"
refused "$W/v" "(d) a merge whose second parent holds the kept blob as an executable" 100755
pass "(d) second parents that fail their own checks (another document's frame, mode 100755): refused whatever the merge keeps"

# ---- (e) legitimate merges of one document under two frames ---------------------
merge "$B2" "$B" -- "$(gd "$P" rev-parse "$B:$R2" | sed 's/^/100644,/'),$R2" "100644,$(gd "$P" rev-parse "$B:$DICT"),$DICT" >/dev/null
taken "(e) a merge keeping the second parent's dictionary frame and its dictionary" fast-forward
taken "(e) the same, pulled by a store that moved on" merge
merge "$B" "$B2" -- >/dev/null
taken "(e) a merge keeping the first parent's dictionary frame" fast-forward
merge "$B2" "$B" -- "100644,$(gd "$P" rev-parse "$B:$DICT"),$DICT" >/dev/null
taken "(e) a merge keeping the first parent's plain frame and the second's dictionary" fast-forward
merge "$A" "$C" "$B" -- "+$C" "+$B" >/dev/null
taken "(e) an octopus merge of three sides" fast-forward
pass "(e) one document under two frames, either kept, by fast-forward, by a merge on top, in an octopus: taken, verify clean"

finished_within test_attack_merge_frames 60
summary
