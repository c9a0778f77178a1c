#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153,SC2016
# Attacks on the fast pull path: whether the store holds an object is answered
# from its mapped pack indexes and one listing of its loose folders
# (incoming_walk.h ObjectReader::has), blobs are read through the pack reader
# without a rehash in the quarantine (layout_trees.h), a commit of 64 new
# objects or more has its objects checked on several threads before the
# in-order checks (IncomingChecker::prefetch_facts), and a merge places the
# remote's entries by blob id and takes a run's level entry from the remote
# where the local side lacks the run (merge.cc; format 3: its refs/levels line). Each hostile history is made
# with stock git or a few lines of Python; each refused pull must exit 1, say
# what it refused, and leave the store byte for byte as it was
# (lib/fingerprint.sh); each legitimate one must end in a store that
# `kistore verify` accepts:
#   (a) dictionary frames in a commit big enough for the threaded check: a
#       good one, with its dictionary in the same commit, is taken (fast-forward
#       and merge); a missing, impostor, junk or misnamed dictionary is refused
#       with the same problems as the same attack in a commit of two runs;
#   (b) a remote pack index that lists an id at an entry holding other bytes:
#       for an object the store lacks (refused), and for the store's own head
#       tree (the store's copy is used, the pull is taken);
#   (c) one blob under two document paths in one big commit, one of them the
#       wrong digest; the seed's frame under a new digest in a big commit;
#   (d) the store holding an empty loose file under the id of a blob the
#       remote brings; the store's own tree named as a document, and its
#       blob as a folder (ids the store has, of another type);
#   (e) merges: the remote adds many runs and a run with a signed rerun
#       (taken, verified, levels as the history gives); the remote's run
#       the local side lacks with a forged level line (unsigned, its key twice
#       in refs/levels, a rerun signed by a key the victim does not trust):
#       refused; a local
#       signed rerun and the remote's, merged: each verdict stays;
#   (f) the same refusals and merges over git:// (a network pack); a remote
#       holding documents the store has under other frames (plain zstd where
#       the store has dictionary frames): merged, the store's frames kept; a
#       merge commit holding a frame neither parent has: refused.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs with stdin
# closed, as root or not; everything lives in a temp dir it removes.
# E2E_KEEP_GOING=1 records a failed check and goes on (to see every failure).
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

CRAFT=("$PY" "$here/lib/craft_objects.py")
BASE=$SERVERS_DIR/repos
work_in w "$BASE" samples other
ks() { timeout -k 2 60 "$KISTORE" --no-progress "$@" </dev/null; }
objpath() { local h=${1#sha256:}; printf 'objects/sha256/%s' "$(fan "$h")"; }
BULK=80  # new runs in a big commit: more than IncomingChecker::kPrefetchAtLeast (64) new objects

cp "$SRC/tests/data/keys/controller" "$SRC/tests/data/keys/controller.pub" \
   "$SRC/tests/data/keys/outsider" "$SRC/tests/data/keys/outsider.pub" .
chmod 600 controller outsider
printf 'controller@example.org %s\n' "$(cut -d' ' -f1,2 controller.pub)" >signers

# The victim V: the seed run and one more; V0 a bare copy of it as it was.
V=$W/victim
assert_exit 0 ks init "$V"
assert_exit 0 ks --store "$V" add "$FX"
mkruns --start 1 --count 1 >v1.jsonl
assert_exit 0 ks --store "$V" add v1.jsonl
assert_exit 0 ks --store "$V" trust add controller@example.org controller.pub
H=$(head_of "$V")
git clone -q --bare "$V" "$BASE/v0.git"
mkruns --start 100 --count "$BULK" --tag bulk >bulk.jsonl
mkruns --start 2 --count 2 >small.jsonl
pass "setup: the victim (two runs, trusts the controller) and a bare copy of it"

# fresh_victim DIR : a kistore copy of the victim as it was (cp -a of V at H).
fresh_victim() { rm -rf "$1" && cp -a "$V" "$1"; }

# ---- (a) dictionary frames through the threaded check -----------------------
for i in $(seq 1 200); do "$KISTORE" canon <<<"{\"kind\":\"Implementation\",\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"spec\":{\"name\":\"k$i\",\"repo\":\"https://github.com/x/y$((i * 7))\"}}" >"samples/$i.json"; done
zstd -q --train samples/* --maxdict=2048 --dictID=424242 -o dict424242 2>/dev/null
for i in $(seq 1 200); do printf 'zzzz qqqq %d wwww %d %.0s' "$i" $((i * 13)) {1..20} >"other/$i"; done
zstd -q --train other/* --maxdict=2048 --dictID=424242 -o other424242 2>/dev/null
printf 'not a dictionary' >junk

# framed RUNS : once per RUNS, a bare copy of the victim with one kistore add
# of RUNS, every object that add wrote re-compressed by `zstd -D dict424242` and
# written with git plumbing; $W/RUNS.info lists them (update-index --index-info).
framed() {
    local r=$BASE/framed-$1.git
    [[ -e $r ]] && return 0
    git clone -q --bare "$BASE/v0.git" "$r"
    assert_exit 0 ks --store "$r" add "$1"
    reframe_added "$r" "$(head_of "$r")" dict424242 >"$W/$1.info"
}
# dict_remote NAME RUNS DICTPATH DICTFILE : a copy of framed RUNS whose main is
# that add's commit (same parent and message) with the re-compressed frames,
# and DICTFILE at DICTPATH ("" for none) in the same commit. Prints its path.
dict_remote() {
    local runs=$2 dpath=$3 dfile=$4 r=$BASE/$1.git
    framed "$runs"
    rm -rf "$r" && git clone -q --bare "$BASE/framed-$runs.git" "$r"
    { cat "$W/$runs.info"; [[ -z $dpath ]] || cacheinfo_lines "100644,$(gd "$r" hash-object -w "$dfile"),$dpath"; } |
        commit_index_info "$r" - "$H" >/dev/null
    printf '%s\n' "$r"
}

R=$(dict_remote good-bulk bulk.jsonl dictionaries/424242 dict424242)
n=$(gd "$R" diff-tree -r --name-only --diff-filter=A main^ main -- objects/ | wc -l)
((n >= 64)) || fail "(a) the big commit adds only $n objects"
ONE=$(gd "$R" diff-tree -r --name-only --diff-filter=A main^ main -- objects/ | sed -n 1p)
ONE_DIGEST=sha256:$(tr -d / <<<"${ONE#objects/sha256/}")
gd "$R" cat-file blob "main:$ONE" | zstd -q -d -c -D dict424242 >one.bytes
# frames_taken STORE RESULT : STORE pulls R, by RESULT (fast-forward or merge);
# the frame ONE then reads as zstd -D reads it, and the store verifies.
frames_taken() {
    assert_exit 0 ks --store "$1" --json pull "$R"
    assert_eq "$2" "$(jv .result)" "(a) the big commit of dictionary frames: taken by $2"
    assert_exit 0 ks --store "$1" cat "$ONE_DIGEST"
    assert_eq "$(cat one.bytes)" "$OUT" "(a) a frame taken by $2 reads as zstd -D reads it"
    assert_exit 0 ks --store "$1" --json verify
    assert_eq "true" "$(jv .ok)" "(a) verify after the $2 of $n dictionary frames"
}
fresh_victim "$W/va"
frames_taken "$W/va" fast-forward
# The same commit merged into a victim that moved on.
fresh_victim "$W/vm"
mkruns --start 50 --count 1 >v50.jsonl
assert_exit 0 ks --store "$W/vm" add v50.jsonl
frames_taken "$W/vm" merge
pass "(a) $n dictionary frames and their dictionary in one commit: taken by fast-forward and by merge, verified"

# Every wrong dictionary, in a commit of two runs and in a big one: refused
# alike, the store unchanged.
wrong_dictionary() {
    local name=$1 what=$2 dpath=$3 dfile=$4 small_problems
    shift 4
    fresh_victim "$W/vd"
    pull_refused "$W/vd" "$(dict_remote "small-$name" small.jsonl "$dpath" "$dfile")" "$what (2 runs)" "$@"
    small_problems=$(cat "$W/problems")
    pull_refused "$W/vd" "$(dict_remote "bulk-$name" bulk.jsonl "$dpath" "$dfile")" "$what ($BULK runs)" "$@"
    [[ -n $small_problems ]] || fail "$what: no problem lines in the refusal"
    assert_eq "$small_problems" "$(cat "$W/problems")" "$what: the big commit's problems are the small one's"
    pass "(a) $what: refused in a commit of 2 runs and of $BULK, the same problems, the store unchanged"
}
wrong_dictionary missing "frames naming a dictionary the remote lacks" "" "" "dictionary 424242"
wrong_dictionary impostor "another dictionary under ID 424242" dictionaries/424242 other424242 "does not decode"
wrong_dictionary junk "bytes that are no dictionary at dictionaries/424242" dictionaries/424242 junk "magic number 0xEC30A437"
wrong_dictionary misnamed "dictionary 424242 kept as dictionaries/77777" dictionaries/77777 dict424242 "Dictionary_ID is 77777"

# ---- (b) a remote pack index that lies ----------------------------------------
# explode REPO : every object of REPO's packs as a loose object, no pack left.
explode() {
    local p
    mkdir -p "$W/packs" && mv "$1"/objects/pack/* "$W/packs/"
    for p in "$W"/packs/*.pack; do gd "$1" unpack-objects -q <"$p"; done
    rm -rf "$W/packs"
}
# A document the victim lacks, its frame and blob id, from a scratch store.
mkruns --start 5 --count 1 >v5.jsonl
V5_PATH=$(objpath "$(mkruns --start 5 --count 1 --digests)")
assert_exit 0 ks init "$W/scratch"
assert_exit 0 ks --store "$W/scratch" add v5.jsonl
V5_BLOB=$(gd "$W/scratch" rev-parse "main:$V5_PATH")
gd "$W/scratch" cat-file blob "$V5_BLOB" >v5.frame
HEAD_TREE=$(gd "$V" rev-parse 'main^{tree}')

# The index lists the new document's blob at an entry holding other bytes.
R=$BASE/idx-lies.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
printf 'not the frame its id names' | "${CRAFT[@]}" pack-idx-as "$R" blob "$V5_BLOB"
X=$(commit_with "$R" "add: forged index" "100644,$V5_BLOB,$V5_PATH")
fresh_victim "$W/vb"
pull_refused "$W/vb" "$R" "(b) an index listing a blob at other bytes" "holds bytes whose id is" "$V5_PATH" "${X:0:12}"
pass "(b) a remote index listing a new blob's id at other bytes: refused, the store unchanged"

# The remote's only copy of the victim's head tree is an index entry holding
# the tree before it; a good new commit on top. The store's own copy is the
# one read: the pull is taken and the tree is the victim's.
R=$BASE/idx-head-tree.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
assert_exit 0 ks --store "$R" add v5.jsonl
X=$(head_of "$R")
explode "$R"
rm -f "$R/objects/${HEAD_TREE:0:2}/${HEAD_TREE:2}"
gd "$V" cat-file tree 'main~1^{tree}' | "${CRAFT[@]}" pack-idx-as "$R" tree "$HEAD_TREE"
[[ $(gd "$R" cat-file tree "$HEAD_TREE" | sha1sum) != $(gd "$V" cat-file tree "$HEAD_TREE" | sha1sum) ]] ||
    fail "(b): the remote's head tree is not forged"
fresh_victim "$W/vb"
assert_exit 0 ks --store "$W/vb" --json pull "$R"
assert_eq "fast-forward $X" "$(jv '"\(.result) \(.commit)"')" "(b) the good commit over a forged copy of the store's tree"
assert_eq "$(gd "$V" cat-file tree "$HEAD_TREE" | sha1sum)" "$(gd "$W/vb" cat-file tree "$HEAD_TREE" | sha1sum)" \
    "(b) the store's head tree keeps its bytes"
assert_exit 0 ks --store "$W/vb" --json verify
assert_eq "true" "$(jv .ok)" "(b) verify after the pull"
gd "$W/vb" fsck --strict --no-progress >/dev/null 2>&1 || fail "(b) git fsck after the pull"
pass "(b) a remote index listing the store's head tree at other bytes: the store's copy is used, the pull verifies"

# ---- (c) one blob under two paths, and a frame under another digest, in a big commit
# amend REPO MODE,BLOB,PATH... : main replaced by a commit with main's parent
# and message whose tree is main's with these entries added. Prints it.
amend() { cacheinfo_lines "${@:2}" | commit_index_info "$1" - main^; }
R=$BASE/two-paths.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
cat bulk.jsonl v5.jsonl >bulk5.jsonl
assert_exit 0 ks --store "$R" add bulk5.jsonl
P2=$(objpath "$(mkruns --start 6 --count 1 --digests)")
X=$(amend "$R" "100644,$V5_BLOB,$P2")
fresh_victim "$W/vc"
pull_refused "$W/vc" "$R" "(c) one blob at its path and at another digest's" object-hash-mismatch "$P2" "${X:0:12}"
[[ $(wc -l <"$W/problems") == 1 ]] || fail "(c) more than the second path refused: $(cat "$W/problems")"
R=$BASE/seed-frame.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
assert_exit 0 ks --store "$R" add bulk.jsonl
SEED_BLOB=$(gd "$R" rev-parse "main:$(objpath sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0)")
X=$(amend "$R" "100644,$SEED_BLOB,$V5_PATH")
pull_refused "$W/vc" "$R" "(c) the seed's frame under a new digest" object-hash-mismatch "$V5_PATH" "${X:0:12}"
pass "(c) one blob under two document paths, and the seed's frame under a new digest, in big commits: refused"

# ---- (d) an empty loose file in the store under the id of a blob that comes in
R=$BASE/v5.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
assert_exit 0 ks --store "$R" add v5.jsonl
[[ $(gd "$R" rev-parse "main:$V5_PATH") == "$V5_BLOB" ]] || fail "(d) the remote's frame is not the scratch store's"
fresh_victim "$W/vd"
mkdir -p "$W/vd/objects/${V5_BLOB:0:2}"
: >"$W/vd/objects/${V5_BLOB:0:2}/${V5_BLOB:2}"
assert_exit_unchanged 3 "$W/vd" "(d) a pull over an empty loose file" ks --store "$W/vd" pull "$R"
assert_contains "$ERR" "reading blob $V5_BLOB" "(d) names the blob the store cannot read"
assert_exit 0 ks --store "$W/vd" verify
pass "(d) an empty loose file in the store under an incoming blob's id: a store error (exit 3) naming it, the store unchanged"

# ---- (d) the store's objects named as another type ----------------------------
# A new document path naming the store's head tree as a blob, and a new
# folder naming the seed's frame (a blob the store has) as a tree: the store
# holds both ids, so nothing is read from the remote; each is still refused
# as remote data (exit 1), not taken for trusted nor a store error. (Over a
# path only: git daemon's pack-objects cannot pack either; a network pack's
# objects go through the same walk.)
SEED_FRAME=$(gd "$V" rev-parse "main:$(objpath sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0)")
R=$BASE/tree-as-blob.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
X=$(commit_with "$R" "add: a tree as a document" "100644,$HEAD_TREE,$V5_PATH")
fresh_victim "$W/vt"
pull_refused "$W/vt" "$R" "(d) the store's tree named as a blob" "is a tree, where its referrer says blob" "${X:0:12}"
R=$BASE/blob-as-tree.git
rm -rf "$R" && git clone -q --bare "$BASE/v0.git" "$R"
ROOT=$("${CRAFT[@]}" tree-plus "$R" "$HEAD_TREE" zz 40000 "$SEED_FRAME")
X=$("${CRAFT[@]}" commit "$R" "$ROOT" --parent "$H" --message "add: a blob as a folder")
gd "$R" update-ref refs/heads/main "$X"
pull_refused "$W/vt" "$R" "(d) the store's blob named as a folder" "is a blob, where its referrer says tree" "${X:0:12}"
pass "(d) the store's own tree named as a document, and its blob as a folder: refused as remote data, the store unchanged"

# ---- (e) merges ----------------------------------------------------------------
# level_of STORE RUN-DIGEST : "level evidence" of each of the run's lines in
# main's refs/levels (format 3), read with stock git; "default" where it has
# none (a run at its default level has no line).
level_of() {
    local h=${2#sha256:} out="" line
    if [[ -n $(index_keys "$1" levels "$h") ]]; then
        while IFS= read -r line; do
            out+="$(jq -r '"\(.level) \(.evidence)"' <<<"$line") "
        done < <(gd "$1" cat-file blob "main:$(index_file "$1" levels "$h")" | grep -F "\"@key\":\"$h\"")
    fi
    out=${out% }
    printf '%s\n' "${out:-default}"
}
# rerun_of STORE RUN-DIGEST OUT : a rerun bundle of the run, its median +1 %
rerun_of() {
    ks --store "$1" show "$2" --canonical >"$W/rerun-base.json"
    "$PY" - "$W/rerun-base.json" >"$3" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
r = b["run"]["spec"]
r["timing"]["latencyNs"]["median"] = int(r["timing"]["latencyNs"]["median"] * 1.01)
r["observedAt"] = "2026-11-30T09:00:00.000Z"
del r["sourceNative"]
print(json.dumps(b))
PY
}
# The remote: many new runs, then a run the victim lacks, then a signed
# rerun of it (reproduced); the victim moved on meanwhile: a merge.
mkruns --start 60 --count 1 >v60.jsonl
RX=$(mkruns --start 60 --count 1 --digests)
E=$BASE/honest.git
rm -rf "$E" "$W/honest"
assert_exit 0 ks clone --allowed-signers signers "$BASE/v0.git" "$W/honest"
assert_exit 0 ks --store "$W/honest" add bulk.jsonl
assert_exit 0 ks --store "$W/honest" add v60.jsonl
rerun_of "$W/honest" "$RX" rx-rerun.json
assert_exit 0 ks --store "$W/honest" rerun "$RX" rx-rerun.json --sign controller
WANT=$(level_of "$W/honest" "$RX")
[[ $WANT == "reproduced sha256:"* ]] || fail "(e) the honest remote's rerun: $WANT"
git clone -q --bare "$W/honest" "$E"
fresh_victim "$W/ve"
assert_exit 0 ks --store "$W/ve" add v50.jsonl
assert_exit 0 ks --store "$W/ve" --json pull "$E"
assert_eq "merge" "$(jv .result)" "(e) the honest remote is merged"
assert_eq "$WANT" "$(level_of "$W/ve" "$RX")" "(e) the remote's rerun run keeps its signed level"
B100=$(mkruns --start 100 --count 1 --tag bulk --digests)
assert_eq "default" "$(level_of "$W/ve" "$B100")" "(e) a remote run no rerun is about: no level line"
assert_exit 0 ks --store "$W/ve" --json show "$B100"
assert_eq "source-native" "$(jv .evidence.level)" "(e) a remote run no rerun is about: its default level"
assert_exit 0 ks --store "$W/ve" --json verify
assert_eq "true" "$(jv .ok)" "(e) verify after the merge"
assert_exit 0 ks --store "$W/ve" --json rank "$RX"
assert_eq "reproduced true" "$(jv --arg r "$RX" '.members[] | select(.run == $r) | "\(.level) \(.verified)"')" \
    "(e) rank shows the merged rerun as verified"
pass "(e) a merge of $BULK remote runs and a remote run with a signed rerun: levels as the history gives, verify clean"

# forged NAME EDIT [ARG...] : a copy of the honest remote before its rerun
# (main at the add of RX), one unsigned commit on top made with stock git: the
# `update-index --index-info` lines that `EDIT REPO ARG...` prints (set_line
# and the like). Prints the remote's path.
forged() {
    local name=$1 r=$BASE/$1.git
    shift
    rm -rf "$r" && git clone -q --bare "$E" "$r"
    gd "$r" update-ref refs/heads/main main^
    "$1" "$r" "${@:2}" | commit_index_info "$r" $'rerun: promote\n\nKistore-Op: rerun' >/dev/null
    printf '%s\n' "$r"
}
# level_twice REPO KEY LINE1 LINE2 : the --index-info line of refs/levels' file
# for KEY holding both lines under that one key (in that order), its blob written.
level_twice() {
    local path blob
    path=$(index_file "$1" levels "$2")
    blob=$({ gd "$1" cat-file blob "main:$path" 2>/dev/null || true; printf '%s\n%s\n' "$3" "$4"; } |
        jq -c --sort-keys -s 'sort_by(.["@key"])[]' | gd "$1" hash-object -w --stdin)
    printf '100644 %s\t%s\n' "$blob" "$path"
}
RXH=${RX#sha256:}
SEED=sha256:334face30acaee76778d58ce984b0b0c0d1e0749650f88ab778b4563c58241a0
# Format 3: a run at its default level has no line; the forgery adds one,
# its evidence the seed run (a document the remote has, and no rerun at all).
FAKE_LINE="{\"@key\":\"$RXH\",\"evidence\":\"sha256:${SEED#sha256:}\",\"level\":\"reproduced\"}"
R=$(forged unsigned-level set_line levels "$RXH" "$FAKE_LINE")
LEVELS_FILE=$(index_file "$R" levels "$RXH")
[[ $(level_of "$R" "$RX") == "reproduced $SEED" ]] || fail "(e) setup: the forged level line is not there"
fresh_victim "$W/vf" && assert_exit 0 ks --store "$W/vf" add v50.jsonl
pull_refused "$W/vf" "$R" "(e) a remote-only run made reproduced unsigned" level-unjustified "refs/levels" "@$RXH"
# Format 2's "two level entries" for one run is, in format 3, one key twice:
# the forged reproduced line and a disputed one under the same key.
R=$(forged two-levels level_twice "$RXH" "$FAKE_LINE" "${FAKE_LINE/reproduced/disputed}")
[[ $(level_of "$R" "$RX") == "reproduced $SEED disputed $SEED" ]] || fail "(e) setup: the key is not there twice"
pull_refused "$W/vf" "$R" "(e) a remote-only run's key twice in refs/levels" "$LEVELS_FILE" "$RXH"
# A rerun signed by a key the remote trusts and the victim does not.
rm -rf "$W/outsider-store"
cp signers signers-outsider
printf 'second@example.org %s\n' "$(cut -d' ' -f1,2 outsider.pub)" >>signers-outsider
assert_exit 0 ks clone --allowed-signers signers-outsider "$E" "$W/outsider-store"
git --git-dir="$W/outsider-store" update-ref refs/heads/main main^
git --git-dir="$W/outsider-store" update-ref -d refs/remotes/origin/main 2>/dev/null || true
assert_exit 0 ks --store "$W/outsider-store" rerun "$RX" rx-rerun.json --sign outsider
pull_refused "$W/vf" "$W/outsider-store" "(e) a remote-only run's rerun signed by a key the victim does not trust" \
    level-unjustified "$RXH"
pass "(e) a remote-only run's forged level line (unsigned, its key twice, an untrusted signer), merged into a moved store: refused"

# The victim's own signed rerun of its seed run, then a merge of the honest
# remote (which has none about it): the victim's verdict stays.
fresh_victim "$W/vg"
rerun_of "$W/vg" "$SEED" seed-rerun.json
assert_exit 0 ks --store "$W/vg" rerun "$SEED" seed-rerun.json --sign controller
MINE=$(level_of "$W/vg" "$SEED")
[[ $MINE == "reproduced sha256:"* || $MINE == "disputed sha256:"* ]] || fail "(e) the victim's own rerun: $MINE"
assert_exit 0 ks --store "$W/vg" --json pull "$E"
assert_eq "merge" "$(jv .result)" "(e) the honest remote merged into a store with its own rerun"
assert_eq "$MINE" "$(level_of "$W/vg" "$SEED")" "(e) the local rerun's verdict stays"
assert_eq "$WANT" "$(level_of "$W/vg" "$RX")" "(e) and the remote's too"
assert_exit 0 ks --store "$W/vg" --json verify
assert_eq "true" "$(jv .ok)" "(e) verify after the merge of two sides' reruns"
pass "(e) a local signed rerun and the remote's, merged: each run keeps its verdict, verify clean"

# ---- over git:// (a network pack, checked in the quarantine) -------------------
start_git_daemon "$BASE"
fresh_victim "$W/vn"
pull_refused "$W/vn" "$GIT_DAEMON_URL/bulk-missing.git" "(a) over git://: frames naming a missing dictionary" "dictionary 424242"
pull_refused "$W/vn" "$GIT_DAEMON_URL/two-paths.git" "(c) over git://: one blob under two paths" object-hash-mismatch "$P2"
assert_exit 0 ks --store "$W/vn" add v50.jsonl
assert_exit 0 ks --store "$W/vn" --json pull "$GIT_DAEMON_URL/good-bulk.git"
assert_eq "merge" "$(jv .result)" "(a) over git://: the big commit of dictionary frames merged"
assert_exit 0 ks --store "$W/vn" --json verify
assert_eq "true" "$(jv .ok)" "over git://: verify after the merge"
# The honest remote holds the same $BULK documents in plain frames, the store
# in dictionary frames: the merge keeps the store's frame of each (both decode
# to the same bytes, each checked on its side) and both sides' dictionaries.
B1=$(gd "$W/honest" ls-tree -r --name-only main -- objects/ | grep -vxF -f <(gd "$BASE/v0.git" ls-tree -r --name-only main -- objects/) | sed -n 1p)
MYFRAME=$(gd "$W/vn" rev-parse "main:$B1")
[[ $MYFRAME != "$(gd "$W/honest" rev-parse "main:$B1")" ]] || fail "(f) setup: the two sides hold $B1 under one frame"
cp -a "$W/vn" "$W/vn-path"
assert_exit 0 ks --store "$W/vn" --json pull "$GIT_DAEMON_URL/honest.git"
assert_eq "merge" "$(jv .result)" "(f) over git://: the same documents in other frames, merged"
assert_eq "$MYFRAME" "$(gd "$W/vn" rev-parse "main:$B1")" "(f) the merge keeps the store's frame"
assert_eq "$WANT" "$(level_of "$W/vn" "$RX")" "(f) and the remote's rerun verdict"
assert_exit 0 ks --store "$W/vn" --json verify
assert_eq "true" "$(jv .ok)" "(f) verify after merging other frames of the same documents"
assert_exit 0 ks --store "$W/vn-path" --json pull "$E"
assert_eq "merge" "$(jv .result)" "(f) over a path: the same documents in other frames, merged"
assert_exit 0 ks --store "$W/vn-path" verify
pass "(f) the same documents under other frames on the two sides: merged, each keeps the store's frame, verify clean"

# Merge commits made with stock git, parents the dictionary frames' commit and
# the plain frames' one. With the first's tree (every frame one parent has):
# taken, and verify agrees. With a third frame of one document, which neither
# parent has (same bytes, zstd -19): refused, as verify reports it.
R=$BASE/crafted-merge.git
rm -rf "$R" && git clone -q --bare "$BASE/good-bulk.git" "$R"
PLAIN=$(gd "$BASE/framed-bulk.jsonl.git" rev-parse main)
gd "$R" fetch -q "$BASE/framed-bulk.jsonl.git" "main:refs/plain"
X=$(printf 'merge: both\n\nKistore-Op: merge\n' | gd "$R" commit-tree "main^{tree}" -p main -p "$PLAIN")
gd "$R" update-ref refs/heads/main "$X"
assert_exit 0 ks --store "$R" verify
fresh_victim "$W/vp"
assert_exit 0 ks --store "$W/vp" --json pull "$GIT_DAEMON_URL/crafted-merge.git"
assert_eq "fast-forward" "$(jv .result)" "(f) a merge commit keeping the first parent's frames: taken"
assert_exit 0 ks --store "$W/vp" verify
B2=$(gd "$R" diff-tree -r --name-only --diff-filter=A "$H" "$PLAIN" -- objects/ | sed -n 1p)
R3=$BASE/third-frame.git
rm -rf "$R3" && git clone -q --bare "$R" "$R3"
gd "$R3" fetch -q "$BASE/framed-bulk.jsonl.git" "main:refs/plain"
gd "$R3" cat-file blob "$PLAIN:$B2" | zstd -q -d -c | zstd -q -19 --check -c >third
[[ $(gd "$R3" hash-object third) != "$(gd "$R3" rev-parse "$PLAIN:$B2")" ]] || fail "(f) setup: the third frame is the plain one"
idx=$W/third.index
GIT_INDEX_FILE=$idx gd "$R3" read-tree "$X^1"
GIT_INDEX_FILE=$idx gd "$R3" update-index --cacheinfo "100644,$(gd "$R3" hash-object -w third),$B2"
X3=$(printf 'merge: both\n\nKistore-Op: merge\n' | gd "$R3" commit-tree "$(GIT_INDEX_FILE=$idx gd "$R3" write-tree)" -p "$X^1" -p "$PLAIN")
gd "$R3" update-ref refs/heads/main "$X3"
assert_exit 1 ks --store "$R3" verify
assert_contains "$OUT$ERR" "$B2" "(f) verify names the third frame's path"
fresh_victim "$W/vq"
pull_refused "$W/vq" "$GIT_DAEMON_URL/third-frame.git" "(f) over git://: a merge holding a frame neither parent has" \
    history-rewritten "$B2" "none of the merge's parents has"
pull_refused "$W/vq" "$R3" "(f) over a path: a merge holding a frame neither parent has" \
    history-rewritten "$B2"
pass "(f) crafted merges: the first parent's frames taken (verify agrees); a third frame of a document: refused, the store unchanged"
fresh_victim "$W/vo"
assert_exit 0 ks --store "$W/vo" add v50.jsonl
assert_exit 0 ks --store "$W/vo" --json pull "$GIT_DAEMON_URL/honest.git"
assert_eq "merge" "$(jv .result)" "(e) over git://: the honest remote merged"
assert_eq "$WANT" "$(level_of "$W/vo" "$RX")" "(e) over git://: the remote's rerun verdict"
assert_exit 0 ks --store "$W/vo" --json verify
assert_eq "true" "$(jv .ok)" "over git://: verify after the merge of a signed rerun"
pass "over git://: the same refusals, the good commits merged (dictionary frames, a signed rerun), verify clean"

finished_within test_attack_pull_fast 120
summary
