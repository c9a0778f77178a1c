#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# Writing dictionary-compressed objects (SPEC §2 dictionaries/<id>, issue 15):
# a bulk add into a store without a dictionary trains one and records it in
# the same commit, all or nothing; stock zstd reads every object with it;
# stats shows it; a stock git clone verifies; a changed dictionary is caught
# by verify; two stores that trained different dictionaries merge into one
# that keeps both.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
work_in dictwrite

# ---- all or nothing: a bad last line leaves no dictionary and no file -------------
S=$W/store
assert_exit 0 ks init "$S"
mkruns --start 1 --count 1 >seed.jsonl
assert_exit 0 ks --store "$S" add seed.jsonl
mkruns --start 2 --count 1500 --bad-line 1500 >bad.jsonl
assert_exit_unchanged 2 "$S" "a bulk add whose last line is bad" ks --store "$S" add bad.jsonl
assert_contains "$ERR" "bad.jsonl:1500" "the bad line is named"
[[ -z $(gd "$S" ls-tree main dictionaries/) ]] || fail "a dictionary was recorded by a refused add"
pass "a bulk add of 1,500 bundles whose last line is bad: exit 2, no dictionary, the store byte for byte as it was"

# ---- the same add without the bad line trains a dictionary, in the same commit ---
mkruns --start 2 --count 1500 >good.jsonl
assert_exit 0 ks --store "$S" add good.jsonl
mapfile -t dicts < <(gd "$S" ls-tree --name-only main dictionaries/)
assert_eq 1 "${#dicts[@]}" "one dictionary after the first large add"
D=${dicts[0]}
ID=${D#dictionaries/}
((ID >= 32768 && ID < 2147483648)) || fail "dictionary ID $ID is in a range zstd reserves"
assert_eq "$D" "$(gd "$S" diff-tree -r --name-only --diff-filter=A main^ main -- dictionaries/)" \
    "the dictionary came in with the add's own commit"
gd "$S" cat-file blob "main:$D" >dict
pass "the add trained dictionary $ID (outside zstd's reserved ranges) and recorded it in its commit"

# Every object of that commit names it (stats counts the frames that name
# one; the seed's came before any dictionary), and stock zstd reads a few of
# them by hand.
mapfile -t added < <(gd "$S" diff-tree -r --name-only --diff-filter=A main^ main -- objects/)
((${#added[@]} >= 1500)) || fail "expected the add's 1,500 runs and their documents, found ${#added[@]} objects"
for path in "${added[@]:0:3}" "${added[@]: -2}"; do
    gd "$S" cat-file blob "main:$path" >frame
    [[ $(zstd -l -v frame 2>&1 | awk '/DictID/ {print $2}') == "$ID" ]] || fail "$path does not name dictionary $ID"
    digest=sha256:$(tr -d / <<<"${path#objects/sha256/}")
    zstd -q -d -c -D dict frame >by-hand
    assert_exit 0 ks --store "$S" cat "$digest"
    assert_eq "$(cat by-hand)" "$OUT" "zstd -D $D -d reads $path as kistore cat does"
    [[ $(sha256sum by-hand | cut -c1-64) == "${digest#sha256:}" ]] || fail "$path: zstd's bytes do not hash to the name"
done
first=${added[0]}
assert_exit 0 ks --store "$S" --json stats
assert_eq "${#added[@]}" "$(jv .objects.with_dictionary)" "every object of the add names a dictionary; none before it"
pass "all ${#added[@]} objects of the add name dictionary $ID; zstd -D dictionaries/$ID -d reads them, the bytes hash to their names"

assert_exit 0 ks --store "$S" --json verify --deep
assert_eq true "$(jv .ok)" "verify --deep of a store with a trained dictionary"
assert_exit 0 ks --store "$S" --json stats
assert_eq 1 "$(jv .dictionaries.count)" "stats: one dictionary"
assert_eq "$ID" "$(jv '.dictionaries.ids[0]')" "stats: its ID"
assert_eq "$(gd "$S" ls-tree -r main objects/ | wc -l)" "$(jv .objects.count)" "stats: objects counted"
assert_eq 1501 "$(jv .runs)" "stats: runs"
jq -e '.compression_ratio > 4 and .disk.bytes > 0 and .trees.bytes > 0 and .index.bytes > 0' <<<"$OUT" >/dev/null ||
    fail "stats: expected a compression ratio over 4 and sizes, found $OUT"
assert_exit 0 ks --store "$S" stats
assert_contains "$OUT" "dictionaries/$ID" "stats names the dictionary"
assert_contains "$OUT" "bytes/run" "stats prints bytes per run"
pass "verify --deep is clean; stats shows the dictionary, the runs and a compression ratio over 4 (text and --json)"

# ---- a stock git clone verifies --------------------------------------------------
git clone -q "$S" "$W/clone"
assert_exit 0 ks --store "$W/clone" --json verify
assert_eq true "$(jv .ok)" "verify of a stock git clone"
assert_exit 0 ks --store "$W/clone" cat "sha256:$(tr -d / <<<"${first#objects/sha256/}")"
pass "a clone made by stock git (with a work tree) verifies and reads its dictionary frames"

# ---- a changed dictionary is caught ----------------------------------------------
T=$W/tampered.git
git clone -q --bare "$S" "$T"
for i in $(seq 1 200); do printf 'zzzz qqqq %d wwww %d %.0s' "$i" $((i * 13)) {1..20} >"other$i"; done
zstd -q --train other* --maxdict=4096 --dictID="$ID" -o other.dict 2>/dev/null
idx=$W/t.index
GIT_INDEX_FILE=$idx gd "$T" read-tree main
GIT_INDEX_FILE=$idx gd "$T" update-index --cacheinfo "100644,$(gd "$T" hash-object -w other.dict),$D"
C=$(gd "$T" commit-tree "$(GIT_INDEX_FILE=$idx gd "$T" write-tree)" -p main -m "add: a better dictionary")
gd "$T" update-ref refs/heads/main "$C"
assert_exit 1 ks --store "$T" --json verify
assert_contains "$OUT" "$D" "verify names the changed dictionary"
assert_contains "$OUT" "changed a dictionary" "verify says the history changed it"
assert_contains "$OUT" "does not decode" "verify finds the frames that no longer decode"
# The same swap with the history rewritten (no commit names the old one): still caught.
C=$(gd "$T" commit-tree "$(GIT_INDEX_FILE=$idx gd "$T" write-tree)" -m "add: rewritten")
gd "$T" update-ref refs/heads/main "$C"
assert_exit 1 ks --store "$T" --json verify
assert_contains "$OUT" "does not decode" "verify of the rewritten history"
pass "a dictionary swapped for another of the same ID is caught by verify (exit 1): the change and the frames"

# ---- two stores that trained different dictionaries merge, keeping both ----------
A=$W/a.git B=$W/b.git
assert_exit 0 ks init "$A"
assert_exit 0 ks --store "$A" add seed.jsonl
git clone -q --bare "$A" "$B"
mkruns --start 5000 --count 1200 --tag a >a.jsonl
mkruns --start 9000 --count 1400 --tag b --no-metadata >b.jsonl
assert_exit 0 ks --store "$A" add a.jsonl
assert_exit 0 ks --store "$B" add b.jsonl
DA=$(gd "$A" ls-tree --name-only main dictionaries/)
DB=$(gd "$B" ls-tree --name-only main dictionaries/)
[[ -n $DA && -n $DB && $DA != "$DB" ]] || fail "expected two different dictionaries, found '$DA' and '$DB'"
# Both then add the same runs: one document, a frame of each dictionary.
mkruns --start 15000 --count 20 --tag s >shared.jsonl
assert_exit 0 ks --store "$A" add shared.jsonl
assert_exit 0 ks --store "$B" add shared.jsonl
sobj=$(gd "$A" diff-tree -r --name-only --diff-filter=A main^ main -- objects/ | sed -n 1p)
SA=$(gd "$A" rev-parse "main:$sobj") SB=$(gd "$B" rev-parse "main:$sobj")
[[ $SA != "$SB" ]] || fail "expected the shared document under two frames"
assert_exit 0 ks --store "$A" pull "$B"
assert_eq "$SA" "$(gd "$A" rev-parse "main:$sobj")" "a document both hold keeps the store's frame"
assert_eq "$(printf '%s\n%s\n' "$DA" "$DB" | sort)" "$(gd "$A" ls-tree --name-only main dictionaries/)" \
    "the merge keeps both dictionaries"
assert_exit 0 ks --store "$A" --json verify
assert_eq true "$(jv .ok)" "verify after the merge"
bobj=$(gd "$B" diff-tree -r --name-only --diff-filter=A main^ main -- objects/ | sed -n 1p)
assert_exit 0 ks --store "$A" cat "sha256:$(tr -d / <<<"${bobj#objects/sha256/}")"
# B takes the merge (a fast-forward to the frames A kept) and verifies.
assert_exit 0 ks --store "$B" --json pull "$A"
assert_eq fast-forward "$(jv .result)" "B takes A's merge"
assert_exit 0 ks --store "$B" verify
# The next writes use one of them (the highest ID) and train no third.
mkruns --start 20000 --count 1100 --tag c >c.jsonl
assert_exit 0 ks --store "$A" add c.jsonl
assert_eq 2 "$(gd "$A" ls-tree --name-only main dictionaries/ | wc -l)" "no third dictionary"
high=$(printf '%s\n%s\n' "${DA#dictionaries/}" "${DB#dictionaries/}" | sort -n | sed -n 2p)
cobj=$(gd "$A" diff-tree -r --name-only --diff-filter=A main^ main -- objects/ | sed -n 1p)
gd "$A" cat-file blob "main:$cobj" >frame
assert_eq "$high" "$(zstd -l -v frame 2>&1 | awk '/DictID/ {print $2}')" "new frames use the highest ID"
assert_exit 0 ks --store "$A" verify
pass "stores that trained $DA and $DB merge with both kept, a document both hold under its store's frame; their frames read and verify on both sides; later adds use the highest"

# ---- a remote holding another dictionary under the store's ID: refused ------------
# The remote (a clone of A's base) adds two bundles whose frames name A's
# dictionary ID, made by zstd --train --dictID from other text: the merge
# cannot keep both (an ID names one dictionary), so the pull is refused and
# A stays as it was.
ID_A=${DA#dictionaries/}
R=$W/clash.git
rm -rf "$R"; git clone -q --bare "$W/b.git" "$R"
gd "$R" update-ref refs/heads/main "$(gd "$A" rev-list --max-parents=0 main)"
mkruns --start 30000 --count 2 --tag x >x.jsonl
assert_exit 0 ks --store "$R" add x.jsonl
zstd -q --train other* --maxdict=4096 --dictID="$ID_A" -o clash.dict 2>/dev/null
c=$(head_of "$R"); idx=$W/clash.index
GIT_INDEX_FILE=$idx gd "$R" read-tree "$c"
while IFS= read -r p; do
    gd "$R" cat-file blob "$c:$p" | zstd -q -d -c >plain
    zstd -q -f --check -D clash.dict plain -o framed
    GIT_INDEX_FILE=$idx gd "$R" update-index --cacheinfo "100644,$(gd "$R" hash-object -w framed),$p"
done < <(gd "$R" diff-tree -r --name-only --diff-filter=A "$c^" "$c" -- objects/)
GIT_INDEX_FILE=$idx gd "$R" update-index --add --cacheinfo "100644,$(gd "$R" hash-object -w clash.dict),$DA"
c=$(gd "$R" cat-file commit "$c" | sed '1,/^$/d' | gd "$R" commit-tree "$(GIT_INDEX_FILE=$idx gd "$R" write-tree)" -p "$c^")
gd "$R" update-ref refs/heads/main "$c"
assert_exit 0 ks --store "$R" verify
assert_exit_unchanged 1 "$A" "a pull whose dictionary clashes with the store's" ks --store "$A" pull "$R"
assert_contains "$ERR" "$DA" "a clashing dictionary: named"
assert_contains "$ERR" "another dictionary under this ID" "a clashing dictionary: says why"
assert_exit 0 ks --store "$A" verify
pass "a remote holding another dictionary under the store's ID $ID_A: pull refused (exit 1), the store as it was"

summary
