#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Objects whose zstd frame names a dictionary (SPEC §2 dictionaries/<id>): a
# store whose newest commit holds frames that stock `zstd -D` made, with the
# dictionary that `zstd --train` made beside them, reads, verifies and pulls
# like any other; every way a remote can get dictionaries wrong (missing,
# another dictionary under the ID, an ID that is not its name, a bad name, a
# dictionary changed after it came in) is refused with the store byte for byte
# as it was, and `verify` of such a store reports it.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in dict samples other

# Two dictionaries of ID 424242 (a store's own range: 32768 to 2^31 - 1): one trained on documents like the store's, one
# on other text; and the bundles: one the victim has, two a remote adds.
for i in $(seq 1 200); do ks canon <<<"{\"kind\":\"Implementation\",\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"spec\":{\"name\":\"k$i\",\"repo\":\"https://github.com/x/y$((i * 7))\"}}" >"samples/$i.json"; done
zstd -q --train samples/* --maxdict=2048 --dictID=424242 -o dict424242 2>/dev/null
for i in $(seq 1 200); do printf 'zzzz qqqq %d wwww %d %.0s' "$i" $((i * 13)) {1..20} >"other/$i"; done
zstd -q --train other/* --maxdict=2048 --dictID=424242 -o other424242 2>/dev/null
mkruns --start 1 --count 1 >b1.jsonl
mkruns --start 2 --count 2 >b2.jsonl

V=$W/victim
assert_exit 0 ks init "$V"
assert_exit 0 ks --store "$V" add b1.jsonl
BASE=$(head_of "$V")
git clone -q --bare "$V" "$W/victim0.git"  # as it was before any pull

# remote NAME DICTPATH DICTFILE [FRAMEDICT] : a bare clone of the victim (before any pull)
# with one kistore add of b2.jsonl, rewritten with git plumbing: every object
# that add wrote re-compressed by `zstd -D FRAMEDICT` (default dict424242), DICTFILE at DICTPATH
# ("" for none). The commit keeps its parent, message and index entries.
remote() {
    local dpath=$2 dfile=$3 r=$W/$1.git
    rm -rf "$r" && git clone -q --bare "$W/victim0.git" "$r"
    assert_exit 0 ks --store "$r" add b2.jsonl
    reframe_added "$r" "$(head_of "$r")" "${4:-dict424242}" >"$W/$1.info"
    [[ -z $dpath ]] || cacheinfo_lines "100644,$(gd "$r" hash-object -w "$dfile"),$dpath" >>"$W/$1.info"
    commit_index_info "$r" - "$BASE" <"$W/$1.info" >/dev/null
    printf '%s\n' "$r"
}

# ---- a store of dictionary frames reads, verifies and pulls ---------------------
R=$(remote good dictionaries/424242 dict424242)
RUN=$(gd "$R" diff-tree -r --name-only --diff-filter=A "main^" main -- objects/ | head -1)
DIGEST=sha256:$(tr -d / <<<"${RUN#objects/sha256/}")
gd "$R" cat-file blob "main:$RUN" >frame
[[ $(zstd -l -v frame 2>&1 | awk '/DictID/ {print $2}') == 424242 ]] || fail "the remote's frames name no dictionary"
zstd -q -d -c -D dict424242 frame >stock.bytes
assert_exit 0 ks --store "$R" cat "$DIGEST"
assert_eq "$(cat stock.bytes)" "$OUT" "cat of a dictionary frame: the bytes zstd -D gives"
assert_exit 0 ks --store "$R" --json verify
assert_eq "true" "$(jv .ok)" "verify of a store with dictionary frames"
assert_exit 0 ks --store "$R" show "$DIGEST"
pass "a store whose objects name dictionary 424242 (made by zstd --train and zstd -D) reads and verifies"

assert_exit 0 ks --store "$V" pull "$R"
assert_eq "$(head_of "$R")" "$(head_of "$V")" "the pull took the remote's commit"
assert_exit 0 ks --store "$V" cat "$DIGEST"
assert_eq "$(cat stock.bytes)" "$OUT" "the pulled object reads the same"
assert_exit 0 ks --store "$V" verify
assert_exit 0 ks --store "$V" rank "$DIGEST"
git --git-dir="$V" fsck --full --no-progress >/dev/null 2>&1 || fail "git fsck --full after the pull"
pass "a pull of dictionary frames and their dictionary is taken; cat, rank and verify agree"

# ---- every wrong dictionary is refused ------------------------------------------
# refused REMOTE WHAT NEEDLE... : a fresh victim (at BASE) pulls REMOTE: exit 1,
# "refused" and every NEEDLE on stderr, the store unchanged; then verify of
# the remote itself reports the first NEEDLE (exit 1).
refused() {
    local r=$1 what=$2 before n
    shift 2
    rm -rf "$W/v2" && git clone -q --bare "$W/victim0.git" "$W/v2"
    before=$(store_fingerprint "$W/v2")
    assert_exit 1 ks --store "$W/v2" pull "$r"
    assert_contains "$ERR" "refused" "$what: says refused"
    for n in "$@"; do assert_contains "$ERR" "$n" "$what: names $n"; done
    assert_store_unchanged "$before" "$W/v2" "$what"
    assert_exit 1 ks --store "$r" verify
    assert_contains "$OUT$ERR" "$1" "$what: verify of the remote reports it"
    pass "$what: pull refused (exit 1, '$(IFS='|' && echo "$*")'), the store byte for byte as it was; verify reports it"
}
R=$(remote missing "" "")
refused "$R" "frames naming a dictionary the remote lacks" "dictionaries/424242" "dictionary 424242"
R=$(remote impostor dictionaries/424242 other424242)
refused "$R" "another dictionary under ID 424242" "does not decode"
R=$(remote misnamed dictionaries/77777 dict424242)
refused "$R" "dictionary 424242 kept as dictionaries/77777" "Dictionary_ID is 77777" "dictionaries/77777"
zstd -q --train samples/* --maxdict=2048 --dictID=4242 -o dict4242 2>/dev/null
R=$(remote reserved dictionaries/4242 dict4242 dict4242)
refused "$R" "a dictionary of a reserved Dictionary_ID (4242)" "dictionaries/4242" "zstd reserves"
R=$(remote leading-zero dictionaries/0424242 dict424242)
refused "$R" "a dictionary named 0424242" "dictionaries/0424242"
printf 'not a dictionary' >junk
R=$(remote junk dictionaries/424242 junk)
refused "$R" "bytes that are no dictionary at dictionaries/424242" "magic number 0xEC30A437"

# A dictionary the victim has, changed by the remote's next commit.
R=$W/good.git
gd "$R" cat-file blob main:dictionaries/424242 >/dev/null
commit_with "$R" "add: a better dictionary" "100644,$(gd "$R" hash-object -w other424242),dictionaries/424242" >/dev/null
assert_exit_unchanged 1 "$V" "a changed dictionary" ks --store "$V" pull "$R"
assert_contains "$ERR" "dictionaries/424242" "a changed dictionary: named"
assert_contains "$ERR" "immutable" "a changed dictionary: says why"
pass "a commit that changes a dictionary the store has is refused (exit 1, 'immutable'), the store unchanged"

summary
