#!/usr/bin/env bash
# How fast each harness importer runs, and in how much memory (issue 32, item 5: each importer
# >= 20,000 runs/s from a warm cache, memory bounded). docs/benchmarks.md, "Importers (issue 32)".
#
#   bench/importers.sh [KISTORE] [RUNS]   defaults: build/kistore, 100000
#
# Writes synthetic inputs for each harness by replicating the real files of ../shared/data (and
# tests/data) with varied parameters (bench/importers_gen.py): nvbench JSON files of many states,
# tritonbench JSON files and one CSV of many x values, KernelBench eval results of many problems,
# FlashInfer-Bench JSON Lines of many traces, a Liger table of many rows; about RUNS runs each
# (the JSON formats in files of at most 16 MiB, a JSON text's limit). Imports each into a fresh
# store, once to warm the page cache and once measured, and prints runs/s (wall and CPU),
# user+sys CPU and peak RSS (/usr/bin/time); then the importer alone (all but the store's writing);
# then the memory bound: FlashInfer-Bench files of about BIG_MB (default 200) MB, plain and
# zstd-compressed, of repeated traces (under ulimit -v 200 MiB, as `kistore add` in
# tests/e2e/test_bulk_add.sh) and of new ones.
# Environment: WORK (default a temporary folder, removed at the end; KEEP=1 keeps it), BIG_MB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KS=$(readlink -f "${1:-$root/build/kistore}")
RUNS=${2:-100000}
BIG_MB=${BIG_MB:-200}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
export KISTORE_AUTHOR="Bench <bench@example.org>" LC_ALL=C
ENV_H200=$root/tests/data/tritonbench/env-h200.json
cd "$WORK"

echo "kistore: $KS ($("$KS" --version)), checkout $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$here/importers_gen.py" "$root" "$WORK/in" "$RUNS" "$BIG_MB"

# run LABEL RUNS FORMAT ARGS... : a fresh store, a warm-up import, then the measured one.
run() {
  local label=$1 runs=$2
  shift 2
  rm -rf s && "$KS" init s >/dev/null 2>&1
  # Warms the page cache (and the binary); a kistore that cannot read this input says so.
  if ! "$KS" --store s --no-progress import "$@" >/dev/null 2>err.txt; then
    printf '  %-34s %8d runs   not imported: %s\n' "$label" "$runs" "$(head -c 150 err.txt | head -1)"
    return 0
  fi
  rm -rf s && "$KS" init s >/dev/null 2>&1
  /usr/bin/time -f '%e %U %S %M' -o time.txt "$KS" --store s --no-progress --json import "$@" >out.json
  read -r wall user sys rss <time.txt
  added=$(python3 -c 'import json,sys; print(json.load(open("out.json"))["added"])')
  awk -v l="$label" -v n="$runs" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v a="$added" \
    'BEGIN { printf "  %-34s %8d runs %7.2f s wall %7.2f s cpu %9.0f runs/s wall %9.0f runs/s cpu  peak RSS %6.1f MiB  (%d documents)\n",
             l, n, w, u + s, n / w, n / (u + s), r / 1024, a }'
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
run "nvbench (JSON files)" "$(cat in/nvbench.runs)" nvbench in/nvbench/*.json
run "tritonbench (JSON files)" "$(cat in/tritonbench-json.runs)" tritonbench --environment "$ENV_H200" in/tritonbench/*.json
run "tritonbench (CSV)" "$(cat in/tritonbench-csv.runs)" tritonbench --environment "$ENV_H200" --op vector_add in/tritonbench.csv
run "kernelbench (eval results)" "$(cat in/kernelbench.runs)" kernelbench --level 1 --run-name bench in/kernelbench/*.json
run "flashinfer-bench (JSON Lines)" "$(cat in/flashinfer.runs)" flashinfer-bench in/flashinfer.jsonl
run "liger (CSV)" "$(cat in/liger.runs)" liger in/liger.csv
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# alone LABEL RUNS BAD FORMAT-AND-ARGS... -- FILES... : the importer alone. BAD (one bad record)
# comes first, so the import reads, maps and checks every record and then writes nothing (exit 2).
alone() {
  local label=$1 runs=$2 bad=$3
  shift 3
  local args=() files=()
  while [[ $1 != -- ]]; do args+=("$1"); shift; done
  shift
  files=("$@")
  rm -rf s && "$KS" init s >/dev/null 2>&1
  "$KS" --store s --no-progress import "${args[@]}" "$bad" "${files[@]}" >/dev/null 2>&1 || true  # warm
  /usr/bin/time -f '%e %U %S %M' -o time.txt "$KS" --store s --no-progress import "${args[@]}" "$bad" "${files[@]}" \
    >/dev/null 2>err.txt && { echo "  $label: the bad record was not refused"; return 0; }
  grep -q "rejected; nothing was written" err.txt || { echo "  $label: $(tail -1 err.txt)"; return 0; }
  read -r wall user sys rss < <(tail -1 time.txt)  # after "Command exited with non-zero status 2"
  awk -v l="$label" -v n="$runs" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
    'BEGIN { printf "  %-34s %8d runs %7.2f s wall %7.2f s cpu %9.0f runs/s wall %9.0f runs/s cpu  peak RSS %6.1f MiB\n",
             l, n, w, u + s, n / w, n / (u + s), r / 1024 }'
}
echo "the importers alone (everything but the store's writing), load $(cut -d' ' -f1-3 /proc/loadavg):"
alone "nvbench (JSON files)" "$(cat in/nvbench.runs)" in/bad/nvbench.json nvbench -- in/nvbench/*.json
alone "tritonbench (JSON files)" "$(cat in/tritonbench-json.runs)" in/bad/tritonbench.json tritonbench --environment "$ENV_H200" -- in/tritonbench/*.json
alone "tritonbench (CSV)" "$(cat in/tritonbench-csv.runs)" in/bad/tritonbench.csv tritonbench --environment "$ENV_H200" --op vector_add -- in/tritonbench.csv
alone "kernelbench (eval results)" "$(cat in/kernelbench.runs)" in/bad/kernelbench.json kernelbench --level 1 --run-name bench -- in/kernelbench/*.json
alone "flashinfer-bench (JSON Lines)" "$(cat in/flashinfer.runs)" in/bad/flashinfer.jsonl flashinfer-bench -- in/flashinfer.jsonl
alone "liger (CSV)" "$(cat in/liger.runs)" in/bad/liger.csv liger -- in/liger.csv
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The memory bound. rep.jsonl: BIG_MB MB of 20,000 distinct traces repeated, under the address-space
# limit tests/e2e/test_bulk_add.sh gives `kistore add` of 350 MB (200 MiB): what an import holds must
# not grow with its input. big.jsonl: as large, every trace new: the bulk add keeps a compact record
# of each new document until its commit (docs/benchmarks.md, "Known limits"), so that grows.
limited() { bash -c 'ulimit -v $((200 << 10)) && exec "$@"' _ "$@"; }
echo "memory: $(du -m in/rep.jsonl | cut -f1) MB of JSON Lines ($(cat in/rep.runs) traces, 20,000 distinct; $(du -k in/rep.jsonl.zst | cut -f1) KiB compressed)," \
     "$(du -m in/big.jsonl | cut -f1) MB of new ones ($(cat in/big.runs) traces; $(du -k in/big.jsonl.zst | cut -f1) KiB compressed)"
for f in in/rep.jsonl in/rep.jsonl.zst in/big.jsonl in/big.jsonl.zst; do
  if [[ $f == *.zst ]] && ! "$KS" import --help | grep -q zstd; then echo "  $f: this kistore reads no zstd input"; continue; fi
  rm -rf s && "$KS" init s >/dev/null 2>&1
  /usr/bin/time -f '%e %U %S %M' -o time.txt "$KS" --store s --no-progress --json import flashinfer-bench "$f" >out.json
  read -r wall user sys rss <time.txt
  printf '  %-34s %7.2f s wall %7.2f s cpu  peak RSS %6.1f MiB  (%s documents new)\n' "$f" "$wall" \
    "$(echo "$user + $sys" | bc)" "$(echo "scale=1; $rss / 1024" | bc)" \
    "$(python3 -c 'import json; print(json.load(open("out.json"))["added"])')"
  rm -rf s && "$KS" init s >/dev/null 2>&1
  if limited "$KS" --store s --no-progress import flashinfer-bench "$f" >/dev/null 2>limited.err; then
    echo "    under ulimit -v 200 MiB: imported"
  else
    echo "    under ulimit -v 200 MiB: FAILED: $(tail -1 limited.err)"
  fi
done
