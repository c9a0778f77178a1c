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
# documents were made once). PRINT_IDS=1 prints the values instead of checking them.
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

pinned nvbench "1695f1ed0a7b4f957a7660c8093fb7ef6d29215c 29b44d3a699b3bcd 83" \
    nvbench "$D/nvbench/test_ref.cut.json" "$D/nvbench/test_cmp.cut.json"
pinned kernelbench "7f366d0d1cce6325a51b19c6abdb2ea6dc1d2f8a c72db759e05ddef6 78" \
    kernelbench --level 1 --run-name codex_l1 "$D/kernelbench/eval_results.sample.json"
pinned kernelbench-baseline "cc6865843c3d53ae6f2d27978c2a5e56e6e9905b 74fdcf348702e2df 46" \
    kernelbench "$D/kernelbench/baseline_time_torch.sample.json"
pinned tritonbench-json "4687f38848fddd5e11f2fa9592ea1073fd1768ed b13340d2b992e9bf 949" \
    tritonbench --environment "$ENV_H200" "$D/tritonbench/tb-vector_add.json" "$D/tritonbench/tb-softmax.json"
pinned tritonbench-csv "63f4bec066679b1b67e560480b7457584cd15bca 0c329129835b95cb 197" \
    tritonbench --environment "$ENV_H200" --op vector_add "$D/tritonbench/tb-vector_add.csv"
pinned flashinfer-bench "a31ea88ee2f4f7ad73733251ce1d32da639685ef e1f8c71ac2706b1a 81" \
    flashinfer-bench "$D/flashinfer-bench/traces.sample.jsonl" "$D/flashinfer-bench/traces.legacy.sample.jsonl"
pinned liger "5cd56fd791e43ef5530e3ef5aadee6fe4fcf6d1e f97692f8fff786b2 167" liger "$D/liger/sample.csv"
pinned liger-3000 "eb70d530481074426a67fe4d939945d73f6acb63 d823a5c5bb045a2b 12363" liger "$W/liger.csv"

summary
