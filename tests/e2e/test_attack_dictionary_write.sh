#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# A dictionary that zstd decodes with but cannot compress with (issue "Trust
# 3": every new way in gets a gate). Writers compress new objects with the
# store's dictionary of the highest ID, and dictionaries are immutable: a
# remote that slipped one such dictionary in under a high ID would stop every
# later add, import and attest of the store that took it, for ever. The
# shape, made here by hand from what `zstd --train` writes: a ZDICT header
# whose literals Huffman table describes two byte values only (header byte
# 0x80, weights 0x10). zstd 1.5.4 loads it for decoding (ZSTD_createDDict)
# and refuses it for compression (ZSTD_createCDict returns NULL; stock
# `zstd -D` cannot compress with it either).
#
# - pull and clone refuse it: exit 1, the path and why named, the store byte
#   for byte as it was, no clone folder left;
# - verify reports it (a dictionary-read-only warning: it can never be
#   removed, and frames naming it still decode);
# - a store that already holds one (an older kistore took it in) stays
#   writable: add, import and attest pass it over for the highest dictionary
#   zstd can compress with, or none, and the store verifies --deep.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in dictro samples

# A good dictionary of ID 424242, and the hostile one, of a higher ID (both in a store's own range).
for i in $(seq 1 200); do ks canon <<<"{\"kind\":\"Implementation\",\"apiVersion\":\"kernelindex.dev/v1alpha1\",\"spec\":{\"name\":\"k$i\",\"repo\":\"https://github.com/x/y$((i * 7))\"}}" >"samples/$i.json"; done
zstd -q --train samples/* --maxdict=2048 --dictID=424242 -o good 2>/dev/null
HOSTILE_ID=2000000000
"$PY" - good hostile "$HOSTILE_ID" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
# RFC 8878 §5: magic, Dictionary_ID, then the literals Huffman table; a header
# byte under 128 is the size of the FSE-compressed weights that follow it.
h = d[8]
assert d[:4] == b"\x37\xa4\x30\xec" and h < 128
# Direct weights instead (header 128 + 1): symbol 0 weight 1, symbol 1's implied.
open(sys.argv[2], "wb").write(d[:4] + struct.pack("<I", int(sys.argv[3])) + b"\x80\x10" + d[9 + h:])
EOF
printf '{"a":"stock zstd cannot compress with this"}' >plain
zstd -q -f -D good plain -o /dev/null || fail "zstd cannot compress with the good dictionary"
if zstd -q -f -D hostile plain -o "$W/with-hostile" 2>/dev/null; then fail "stock zstd compressed with the hostile dictionary"; fi
pass "the hostile dictionary (ID $HOSTILE_ID, a two-symbol literals table): stock zstd -D cannot compress with it"

mkruns --start 1 --count 1 >b1.jsonl
mkruns --start 2 --count 2 >b2.jsonl
mkruns --start 10 --count 1 >b3.jsonl
V=$W/victim
assert_exit 0 ks init "$V"
assert_exit 0 ks --store "$V" add b1.jsonl
git clone -q --bare "$V" "$W/victim0.git"  # as it was before any pull

# with_dictionaries REPO PATH=FILE... : one more commit on REPO's main, as git plumbing makes it,
# that adds each FILE at PATH (what an older kistore that took the dictionaries in would hold).
with_dictionaries() {
    local r=$1 idx=$W/plumb.index c tree spec
    shift
    GIT_INDEX_FILE=$idx gd "$r" read-tree main
    for spec in "$@"; do
        GIT_INDEX_FILE=$idx gd "$r" update-index --add --cacheinfo "100644,$(gd "$r" hash-object -w "${spec#*=}"),${spec%%=*}"
    done
    tree=$(GIT_INDEX_FILE=$idx gd "$r" write-tree)
    c=$(gd "$r" commit-tree "$tree" -p main -m "add: dictionaries")
    gd "$r" update-ref refs/heads/main "$c"
    rm -f "$idx"
}

# ---- a remote that adds it: pull and clone refuse it ----------------------------
R=$W/hostile.git
git clone -q --bare "$W/victim0.git" "$R"
with_dictionaries "$R" "dictionaries/$HOSTILE_ID=hostile"
assert_exit_unchanged 1 "$V" "a pull of a dictionary zstd cannot compress with" ks --store "$V" pull "$R"
assert_contains "$ERR" "refused" "pull: says refused"
assert_contains "$ERR" "dictionaries/$HOSTILE_ID" "pull: names the dictionary"
assert_contains "$ERR" "cannot compress with it" "pull: says why"
assert_exit 0 ks --store "$V" add b2.jsonl
pass "pull of a remote that adds a dictionary zstd cannot compress with: exit 1, named, the store unchanged and writable"

rm -rf "$W/cloned"
assert_exit 1 ks clone "$R" "$W/cloned"
assert_contains "$ERR" "dictionaries/$HOSTILE_ID" "clone: names the dictionary"
assert_contains "$ERR" "cannot compress with it" "clone: says why"
[[ ! -e $W/cloned ]] || fail "a refused clone left $W/cloned"
pass "clone of that remote: exit 1, named, nothing left behind"

# The remote beside a good dictionary, as a merge would bring it: still refused.
R2=$W/hostile2.git
git clone -q --bare "$W/victim0.git" "$R2"
with_dictionaries "$R2" "dictionaries/424242=good" "dictionaries/$HOSTILE_ID=hostile"
rm -rf "$W/v2" && git clone -q --bare "$W/victim0.git" "$W/v2"
assert_exit_unchanged 1 "$W/v2" "a pull of a good and a hostile dictionary" ks --store "$W/v2" pull "$R2"
assert_contains "$ERR" "dictionaries/$HOSTILE_ID" "pull beside a good dictionary: named"
assert_not_contains "$ERR" "dictionaries/424242" "pull beside a good dictionary: the good one is not blamed"
pass "a remote that adds it beside a good dictionary: refused, only the hostile one named, the store unchanged"

# ---- verify reports it ---------------------------------------------------------
assert_exit 0 ks --store "$R" --json verify
assert_eq true "$(jv .ok)" "verify of a store holding it: its frames (none here) decode"
ro='[.warnings[] | select(.kind == "dictionary-read-only")]'
assert_eq "dictionaries/$HOSTILE_ID" "$(jv -j "$ro | map(.path) | join(\",\")")" "verify: the warning"
assert_contains "$(jv "$ro[0].detail")" "cannot compress with it" "verify: says why"
assert_exit 0 ks --store "$R" verify
assert_contains "$OUT$ERR" "dictionaries/$HOSTILE_ID" "verify (text): names it"
pass "verify of a store that holds it: ok, and a dictionary-read-only warning naming dictionaries/$HOSTILE_ID (text and --json)"

# ---- a store that already holds it stays writable ------------------------------
# writes STORE WHAT : add, import and attest into STORE succeed, and verify --deep is ok (no problem; the
# dictionary-read-only warning, beside the external references the generated runs make).
writes() {
    local s=$1 what=$2 run
    assert_exit 0 ks --store "$s" add b3.jsonl
    assert_exit 0 ks --store "$s" --json import liger "$DATA/liger-sample.csv"
    (($(jv .added) > 0)) || fail "$what: import added nothing"
    run=$(ks digest b3.jsonl | awk '$2 == "BenchmarkRun" {print $1}')
    assert_exit 0 ks --store "$s" attest "$run" --note "seen it"
    assert_exit 0 ks --store "$s" --json verify --deep
    assert_eq true "$(jv .ok)" "$what: verify --deep after the writes"
    assert_eq "dictionaries/$HOSTILE_ID" "$(jv -j "$ro | map(.path) | join(\",\")")" "$what: the warning"
    git --git-dir="$s" fsck --full --no-progress >/dev/null 2>&1 || fail "$what: git fsck --full"
}
# dict_of STORE : the DictIDs that the objects of the newest 3 commits name (zstd -l: 0 for none), sorted, unique.
dict_of() {
    local s=$1 p
    while IFS= read -r p; do
        gd "$s" cat-file blob "main:$p" >frame
        zstd -l -v frame 2>&1 | awk '/DictID/ {print $2}'
    done < <(gd "$s" diff-tree -r --name-only --diff-filter=A main~3 main -- objects/) | sort -u | paste -sd,
}

S=$W/holds-only-it
git clone -q --bare "$W/victim0.git" "$S"
with_dictionaries "$S" "dictionaries/$HOSTILE_ID=hostile"
writes "$S" "a store that holds only it"
assert_eq "0" "$(dict_of "$S")" "its new objects name no dictionary"
pass "a store that holds only it: add, import and attest succeed, their objects name no dictionary, verify --deep is ok"

S=$W/holds-both
git clone -q --bare "$W/victim0.git" "$S"
with_dictionaries "$S" "dictionaries/424242=good" "dictionaries/$HOSTILE_ID=hostile"
writes "$S" "a store that holds it and a good one"
assert_eq "424242" "$(dict_of "$S")" "its new objects name the good dictionary"
zstd -q -d -c -D good frame >/dev/null || fail "stock zstd -D does not read a new object"
pass "a store that holds it and dictionary 424242: writes use 424242 (stock zstd -D reads them), verify --deep is ok"

summary
