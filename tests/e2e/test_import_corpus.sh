#!/usr/bin/env bash
# The whole published Liger-Kernel corpus, imported with the real binary:
# 3,897 rows -> 3,897 runs, each findable by its upstream id; a second import
# changes nothing; the fixture's row ranks 3 of 4; verify is clean.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
corpus="${KISTORE_SOURCE_DIR:?}/../shared/data/liger"
[[ -f $corpus/all_benchmark_data.csv ]] || fail "the corpus is not at $corpus"
export KISTORE_AUTHOR="Corpus Test <corpus@example.org>"
use_store "$SERVERS_DIR/store"

assert_exit 0 "$KISTORE" init
assert_exit 0 "$KISTORE" --json import liger "$corpus"/*.csv
python3 - "$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
assert r["rejected"] == [] and r["commit"], r
assert r["added"] + r["present"] == 5 * 3897, r
PY
pass "import of the whole corpus: one commit, nothing rejected"
# Format 3: a run at its default level (source-native here) has no levels line;
# every run that is not a controlled rerun has one group line.
runs=$(index_keys "$S" groups | wc -l)
assert_eq 3897 "$runs" "3,897 runs, each with one group line"
assert_eq 0 "$(index_keys "$S" levels | wc -l)" "no levels line: every run at its default level"
native=$(ks ls --kind run --level source-native --format tsv | tail -n +2 | wc -l)
assert_eq 3897 "$native" "ls --level source-native lists all 3,897 runs"
sources=$(index_keys "$S" sources | wc -l)
assert_eq 3897 "$sources" "3,897 upstream ids in refs/sources"
id=tiled_geglu/backward/liger_tiled/nvidia-geforce-rtx-4090/batch2-hidden2048-intermediate4096-seq1024-bf16/2025-11-11-06-22-57
# A claim's key: sha256(source NUL externalId) (source_key).
claim=$(index_line "$S" sources "$(source_key liger-kernel-bench "$id")")
run=$(jq -r .run <<<"$claim")
assert_eq sha256:628643ba921878ef6035a1321da64c56f5b4a470a3fa12e9ab5239c742fec354 "$run" "the fixture's row by its upstream id"
assert_eq "liger-kernel-bench $id" "$(jq -r '.source + " " + .externalId' <<<"$claim")" "the claim names its source and externalId"
pass "every row findable by its claim in refs/sources (key sha256(source NUL externalId))"
head=$(git --git-dir="$S" rev-parse main)
assert_exit 0 "$KISTORE" --json import liger "$corpus"/*.csv
assert_contains "$OUT" '"added":0' "re-import adds nothing"
assert_eq "$head" "$(git --git-dir="$S" rev-parse main)" "re-import makes no commit"
pass "re-import changes nothing"
assert_exit 0 "$KISTORE" --json rank "$run"
python3 - "$OUT" "$run" <<'PY'
import json, sys
m = json.loads(sys.argv[1])["members"]
assert len(m) == 4, m
me = [x for x in m if x["run"] == sys.argv[2]][0]
assert me["rank"] == 3 and me["implementation"] == "liger_tiled", me
assert sorted(x["implementation"] for x in m) == ["deepspeed_tiled", "huggingface", "liger", "liger_tiled"]
PY
pass "the fixture's row ranks 3 of 4 among liger, huggingface, liger_tiled, deepspeed_tiled"
assert_exit 0 "$KISTORE" verify
git --git-dir="$S" fsck --strict --no-dangling >/dev/null 2>&1 || fail "git fsck --strict"
pass "verify and git fsck --strict"
summary
