#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR disable=SC2153
# The site's size, where users host it (issue 30): GitHub Pages caps a site at
# 1 GB, so a site of a million runs must stay under it: under 950 bytes a run,
# everything included (docs/benchmarks.md, "Size": 935 bytes a run measured
# with `du -sb` at 100,000 runs). A size, not a time: two stores of runs shaped
# like Liger's (bench/gen.py, 8 runs a group, 93 % of groups drawing a series)
# of 1,000 and 3,000 runs, each built into a site; the bytes of the site's
# files a run at 3,000 runs, and what each run past the first 1,000 adds (the
# growth a million runs would follow), are held under their bounds. Measured
# when the bounds were set: 903 and 890 bytes a run.
#
# Env: KISTORE (the binary), KISTORE_SOURCE_DIR (repo root). Runs in ~10 s.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"

work_in work
per_run=930   # bytes a run of the site of 3,000 runs
marginal=920  # bytes each run past the first 1,000 adds

bytes() { find "$1" -type f -printf '%s\n' | awk '{s += $1} END {print s}'; }
for n in 1000 3000; do
  "$PY" "$SRC/bench/gen.py" "$n" --out "$W/runs-$n.jsonl"
  assert_exit 0 ks --store "$W/store-$n" init
  assert_exit 0 ks --store "$W/store-$n" add "$W/runs-$n.jsonl"
  assert_exit 0 ks --json --store "$W/store-$n" site "$W/site-$n"
  assert_eq "$n" "$(jv .runs)" "every run of the $n is on the site"
  eval "b$n=$(bytes "$W/site-$n")"
done
# shellcheck disable=SC2154 # b1000 and b3000 are set by the eval above
echo "site of 1,000 runs: $b1000 bytes; of 3,000: $b3000 bytes ($((b3000 / 3000)) a run, $(((b3000 - b1000) / 2000)) a run past the first 1,000)"
(( b3000 <= per_run * 3000 )) || fail "the site of 3,000 runs takes $((b3000 / 3000)) bytes a run, over $per_run"
(( b3000 - b1000 <= marginal * 2000 )) || fail "each run past the first 1,000 adds $(((b3000 - b1000) / 2000)) bytes, over $marginal"
pass "a site grows by under $marginal bytes a run ($per_run all included at 3,000 runs): a million runs fit GitHub Pages' 1 GB"

# What a run costs is its row, not a page or a JSON file of its own: the site of 3,000 runs holds
# a page a group, the documents once, no run's JSON (no string is cut) and no group's.
groups=$(ks --json --store "$W/store-3000" groups | jq '.groups | length')
assert_eq "$groups" "$(find "$W/site-3000/groups" -type f | wc -l)" "a page a group, nothing else in groups/"
assert_eq 0 "$(find "$W/site-3000/runs" -type f | wc -l)" "no run's own file"
assert_eq 3000 "$(cat "$W"/site-3000/groups/*.html | grep -c '<tr id="run-')" "a row a run"
pass "a page a group, a row a run, no file a run"

summary
