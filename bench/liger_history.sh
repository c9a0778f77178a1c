#!/usr/bin/env bash
# The real Liger corpus over time (docs/statistics.md, "The Liger corpus over time"): how many
# series it holds, the series of more than one point, and `kistore check` of the newest release
# (0.8.1) against the rest, and of the measurements made since 2026-06-01 against the earlier ones.
#
#   bench/liger_history.sh [KISTORE] [DATA]   defaults: build/kistore, ../shared/data/liger
#
# Splits Liger's three published tables (all_benchmark_data*.csv) by release and by date, imports
# each part as its own commit into a fresh store, and prints the reports. Reads nothing else.
# Environment: WORK (default a temporary folder, removed at the end).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KS=$(readlink -f "${1:-$root/build/kistore}")
DATA=$(readlink -f "${2:-$root/../shared/data/liger}")
WORK=${WORK:-$(mktemp -d)}
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
export KISTORE_AUTHOR="Bench <bench@example.org>" LC_ALL=C
cd "$WORK"

# split WHAT OLD-TEST : writes old-*.csv (rows where the Python test OLD-TEST on row x holds)
# and new-*.csv (the others), one pair per table.
split() {
  python3 - "$DATA" "$1" <<'PY'
import csv, glob, os, sys
for path in sorted(glob.glob(os.path.join(sys.argv[1], "all_benchmark_data*.csv"))):
    rows = list(csv.DictReader(open(path, newline="")))
    for part, keep in (("old", True), ("new", False)):
        chosen = [x for x in rows if bool(eval(sys.argv[2], {"x": x})) == keep]
        if chosen:
            with open(f"{part}-{os.path.basename(path)}", "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
                w.writeheader()
                w.writerows(chosen)
PY
}

# report TITLE OLD-TEST : a fresh store, the old rows then the new ones, and check.
report() {
  rm -rf store ./*.csv
  split "$2"
  "$KS" init store >/dev/null 2>&1
  "$KS" --store store --quiet import liger old-*.csv
  "$KS" --store store --quiet import liger new-*.csv
  echo "== $1"
  echo "\$ kistore check"
  "$KS" --store store check || true
}

report "the newest release (0.8.1) against the rest" 'x["liger_version"] != "0.8.1"'

echo "== series in the whole corpus"
"$KS" --store store export --format jsonl >runs.jsonl
python3 - "$KS" <<'PY'
import collections, json, subprocess, sys
ks = sys.argv[1]
rows = [json.loads(line) for line in open("runs.jsonl")]
series = collections.Counter((r["group"], r["implementation"]) for r in rows)
several = [k for k, n in series.items() if n > 1]
releases = collections.Counter()
changes = 0
for group, impl in several:
    d = json.loads(subprocess.run([ks, "--store", "store", "--json", "series", group, "--implementation", impl],
                                  capture_output=True, text=True, check=True).stdout)
    revisions = {p["revision"] for p in d["points"]}
    releases[len(revisions)] += 1
    changes += len(d["changePoints"])
print(f"{len(rows)} runs in {len({r['group'] for r in rows})} groups: {len(series)} series, "
      f"{len(several)} of 2 or more points; of those, by how many revisions they span: "
      f"{dict(sorted(releases.items()))} (None counts as one); {changes} change points")
PY

report "the measurements since 2026-06-01 against the earlier ones" 'x["timestamp"] < "2026-06-01"'
