#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# What each importer writes is pinned byte for byte: the tree of the commit
# and every object of the pack but the commit (id, type, size, size in the
# pack, offset, as `git verify-pack -v` lists them) for the real files of
# each harness in tests/data, and for a Liger table of 3,000 rows (three of
# the importer's batches, and the store's dictionary trained on the way). A
# change that makes the same documents faster must leave these as they are;
# one that means to change what is stored changes them here, on purpose.
# The pins hold for the zstd (1.5.4) and zlib (1.2.13) of Debian 12, whose
# bytes they include (pinned with the importers of 0c1cfcb, before their
# documents were made once; pinned again when new frames went from zstd
# level 9 to 3 and index files from zlib level 6 to 1: the trees of refs/
# and dictionaries/ stayed as they were, docs/benchmarks.md "Importers"). PRINT_IDS=1 prints the values instead of checking them.
set -euo pipefail
# shellcheck source=lib/preamble.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/preamble.sh"
export KISTORE_AUTHOR="Ids Test <ids@example.org>" KISTORE_DATE=1700000000
work_in import-ids
D=$KISTORE_SOURCE_DIR/tests/data
ENV_H200=$D/tritonbench/env-h200.json

"$PY" "$SRC/tests/e2e/lib/liger_rows.py" "$D/liger/sample.csv" "$W/liger.csv" 3000

# made STORE : the tree, then a digest of the pack's objects but the commit.
made() {
    local tree objects
    tree=$(git --git-dir="$1" rev-parse 'HEAD^{tree}')
    objects=$(for p in "$1"/objects/pack/*.pack; do git verify-pack -v "$p"; done |
        awk '$2 != "commit" && NF >= 5 { print $1, $2, $3, $4, $5 }' | sort)
    echo "$tree $(sha256sum <<<"$objects" | cut -c1-16) $(wc -l <<<"$objects")"
}

# pinned NAME "TREE PACK OBJECTS" IMPORT-ARGS... : imports into a fresh store.
pinned() {
    local name=$1 want=$2
    shift 2
    rm -rf "$W/s"
    assert_exit 0 ks init "$W/s"
    assert_exit 0 ks --store "$W/s" import "$@"
    local got
    got=$(made "$W/s")
    if [[ ${PRINT_IDS:-} == 1 ]]; then
        printf 'pinned %s "%s"\n' "$name" "$got" >&2
        return
    fi
    [[ $got == "$want" ]] || fail "$name: expected the tree, pack and object count $want, found $got"
    pass "$name: tree ${got:0:12}, the same pack"
}

pinned nvbench "0e06955e8d12c73864c6ae0877356ff011180af9 a7c3e75f9132b71c 83" \
    nvbench "$D/nvbench/test_ref.cut.json" "$D/nvbench/test_cmp.cut.json"
pinned kernelbench "6bd985108e666a25c8aec0b79928147532b86926 29a0be8afa42965c 78" \
    kernelbench --level 1 --run-name codex_l1 "$D/kernelbench/eval_results.sample.json"
pinned kernelbench-baseline "827d11267f2d7925473cb7c979ad5862e069617a 79676929b69d172b 46" \
    kernelbench "$D/kernelbench/baseline_time_torch.sample.json"
pinned tritonbench-json "db429596722f180223b4e7fc45a687bf1b6181b9 23f3830097892b86 949" \
    tritonbench --environment "$ENV_H200" "$D/tritonbench/tb-vector_add.json" "$D/tritonbench/tb-softmax.json"
pinned tritonbench-csv "c5399f39022c86a10b47152a8211150b5370b966 f2bad8b52fda0955 197" \
    tritonbench --environment "$ENV_H200" --op vector_add "$D/tritonbench/tb-vector_add.csv"
pinned flashinfer-bench "8863c12be14695413989d8729c679b57872f2741 34e22bbd0da9e2b9 81" \
    flashinfer-bench "$D/flashinfer-bench/traces.sample.jsonl" "$D/flashinfer-bench/traces.legacy.sample.jsonl"
pinned liger "e7f2ec8b213d1f2ccbdba947c8ee3eacda47384e 5ffb6ab9a6aaa56a 167" liger "$D/liger/sample.csv"
pinned liger-3000 "1a9b9bdc43f0b956168c28db0ff6b4f739efe1ad c26d571d3f497a8e 12363" liger "$W/liger.csv"

summary
