#!/usr/bin/env bash
# kistore vs git: the benchmark of docs/benchmarks.md.
#
#   bench/run.sh [N...]        default: 20000 100000, plus the real Liger corpus ("liger") when
#                              `kistore import` exists; `bench/run.sh 2000` is a smoke run (< 1 min)
#
# Each data set N is N synthetic bundles from bench/gen.py (5 documents each; protocols,
# environments, workloads and implementations shared). A data set may also be named `liger`.
# For every operation kistore and git run alternately in this one invocation (kistore, git,
# kistore, git, ...), REPS_FAST times for quick operations and REPS_SLOW for slow ones, each on a
# fresh copy where the operation changes its repository; the figure is the median. Reported per
# line: wall-clock seconds (and user+sys CPU seconds, steadier on a shared machine), ratio
# kistore / git.
#
# Environment: KISTORE (binary; default build-bench/kistore), BENCH_WORK (scratch folder;
# default /tmp/kistore-bench), REPS_FAST (5), REPS_SLOW (3), KEEP=1 keeps the scratch folder.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
KISTORE=${KISTORE:-$root/build-bench/kistore}
KISTORE=$(readlink -f "$KISTORE")
WORK=${BENCH_WORK:-/tmp/kistore-bench}
REPS_FAST=${REPS_FAST:-5}
REPS_SLOW=${REPS_SLOW:-3}
LIGER_DIR=${LIGER_DIR:-/work/shared/data/liger}

export KISTORE_AUTHOR="Bench <bench@example.org>"
export GIT_AUTHOR_NAME=Bench GIT_AUTHOR_EMAIL=bench@example.org
export GIT_COMMITTER_NAME=Bench GIT_COMMITTER_EMAIL=bench@example.org
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK/home   # no user config influences git or kistore
export LC_ALL=C

[ -x "$KISTORE" ] || { echo "no kistore binary at $KISTORE (build it, or set KISTORE)" >&2; exit 2; }
help=$("$KISTORE" --help 2>/dev/null || true)
have() { grep -Eq "^  $1( |\$)" <<<"$help"; }

sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
  sets=(20000 100000)
  have import && sets+=(liger)
fi

mkdir -p "$WORK" "$HOME"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT

# ---- timing -------------------------------------------------------------------------------

# t OUTFILE CMD...: runs CMD (output to $WORK/last.log) and appends "wall cpu" seconds to
# OUTFILE: wall from bash's microsecond clock, cpu = user + sys from /usr/bin/time (10 ms grain).
t() {
  local out=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%U %S" -o "$WORK/time.tmp" "$@" >"$WORK/last.log" 2>&1 || {
    echo "FAILED: $*" >&2; tail -20 "$WORK/last.log" >&2; exit 3; }
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" '{printf "%.4f %.2f\n", b - a, $1 + $2}' "$WORK/time.tmp" >>"$out"
}

# median FILE COLUMN
median() {
  sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {
    if (NR % 2) print v[(NR+1)/2]; else printf "%.3f\n", (v[NR/2] + v[NR/2+1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "inf" }'; }

# report NAME KFILE GFILE REPS: prints the medians and ratios
report() {
  local name=$1 k=$2 g=$3 reps=$4
  local kw gw kc gc
  kw=$(median "$k" 1); gw=$(median "$g" 1); kc=$(median "$k" 2); gc=$(median "$g" 2)
  printf '%-9s kistore %8.3f s, git %8.3f s, ratio %5s   (cpu: kistore %.2f s, git %.2f s, ratio %s; median of %d)\n' \
    "$name:" "$kw" "$gw" "$(ratio "$kw" "$gw")" "$kc" "$gc" "$(ratio "$kc" "$gc")" "$reps"
}

cmdline() { printf '          $ %s\n' "$*"; }

# ---- one data set -------------------------------------------------------------------------

run_set() {
  local set=$1 d=$WORK/$1
  rm -rf "$d"; mkdir -p "$d"
  local data=$d/data single=$d/single.jsonl store=$d/store gitfi=$d/gitfi

  # Inputs, out of timing.
  if [ "$set" = liger ]; then
    have import || { echo "== liger: skipped (no \`kistore import\` yet)"; return; }
    local csvs=("$LIGER_DIR"/*.csv)
    "$KISTORE" init "$d/ref" >/dev/null 2>&1
    "$KISTORE" --store "$d/ref" --no-progress --quiet import liger "${csvs[@]}" >/dev/null
    python3 "$here/git_stream.py" from-store "$d/ref" "$d/stream.fi" "$d/pretty.fi"
    rm -rf "$d/ref"
    # the single bundle: a synthetic one (its own workload, implementation, ...)
    python3 "$here/gen.py" 1 --seed 7 --out "$single"
    local add_k=("$KISTORE" --store "$store" --no-progress --quiet import liger "${csvs[@]}")
    local add_show="kistore --store STORE import liger $LIGER_DIR/*.csv"
  else
    python3 "$here/gen.py" "$set" --out "$data/" --extra "$single"
    python3 "$here/git_stream.py" fast-import "$data" >"$d/stream.fi"
    python3 "$here/git_stream.py" pretty "$data" >"$d/pretty.fi"
    local add_k=("$KISTORE" --store "$store" --no-progress --quiet add "$data")
    local add_show="kistore --store STORE add DATA/   (DATA/part-*.jsonl: gen.py $set --out DATA/)"
  fi
  local ndocs; ndocs=$(grep -c '^blob$' "$d/stream.fi")
  echo "== data set $set: $ndocs distinct documents, $(du -sh "$d/stream.fi" | cut -f1) of JCS in the fast-import stream"
  echo "   (kistore $("$KISTORE" --version 2>/dev/null | awk '{print $2}'), $(git --version), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"

  # 1. add everything into an empty store vs git fast-import into an empty bare repository.
  : >"$d/add.k"; : >"$d/add.g"
  for ((i = 0; i < REPS_SLOW; i++)); do
    rm -rf "$store"; "$KISTORE" init "$store" >/dev/null 2>&1
    t "$d/add.k" "${add_k[@]}"
    rm -rf "$gitfi"; git init -q --bare "$gitfi"
    t "$d/add.g" sh -c "git -C '$gitfi' fast-import --quiet <'$d/stream.fi'"
  done
  report add "$d/add.k" "$d/add.g" "$REPS_SLOW"
  cmdline kistore init STORE "&&" "$add_show"
  cmdline git init --bare G "&&" git -C G fast-import --quiet "<" stream.fi

  # 2. verify vs git fsck --full, both of the store kistore wrote.
  : >"$d/verify.k"; : >"$d/verify.g"
  for ((i = 0; i < REPS_FAST; i++)); do
    t "$d/verify.k" "$KISTORE" --store "$store" --no-progress --quiet verify
    t "$d/verify.g" git -C "$store" fsck --full --no-progress
  done
  report verify "$d/verify.k" "$d/verify.g" "$REPS_FAST"
  cmdline kistore --store STORE verify
  cmdline git -C STORE fsck --full

  # 3. one more bundle into the big store vs git add + commit of one file in a checkout of it.
  local one_path
  one_path=$(python3 -c "
import json, sys; sys.path.insert(0, '$here'); import gen
d = json.loads(open('$single').readline())['run']; h = gen.digest(d)[7:]
print('objects/sha256/%s/%s/%s' % (h[:2], h[2:4], h[4:]))")
  python3 -c "
import json, sys; sys.path.insert(0, '$here'); import gen
sys.stdout.buffer.write(gen.canonical(json.loads(open('$single').readline())['run']))" >"$d/one.json"
  git clone -q "$store" "$d/checkout"
  git -C "$d/checkout" status --short >/dev/null   # a warm index, as a user's checkout has
  local base; base=$(git -C "$d/checkout" rev-parse HEAD)
  : >"$d/one.k"; : >"$d/one.g"
  for ((i = 0; i < REPS_FAST; i++)); do
    rm -rf "$d/store1"; cp -a "$store" "$d/store1"
    t "$d/one.k" "$KISTORE" --store "$d/store1" --no-progress --quiet add "$single"
    git -C "$d/checkout" reset -q --hard "$base"
    mkdir -p "$d/checkout/$(dirname "$one_path")"; cp "$d/one.json" "$d/checkout/$one_path"
    t "$d/one.g" sh -c "cd '$d/checkout' && git add '$one_path' && git commit -q -m 'add one run'"
  done
  report one-add "$d/one.k" "$d/one.g" "$REPS_FAST"
  # ... and the same add into an empty store: how the cost of one add grows with the store.
  : >"$d/one.e"
  for ((i = 0; i < REPS_FAST; i++)); do
    rm -rf "$d/store0"; "$KISTORE" init "$d/store0" >/dev/null 2>&1
    t "$d/one.e" "$KISTORE" --store "$d/store0" --no-progress --quiet add "$single"
  done
  printf '%-9s kistore %8.3f s into the %s-bundle store, %8.3f s into an empty one, ratio %5s   (median of %d; bytes written into the big store: %s KiB)\n' \
    one-add-scaling: "$(median "$d/one.k" 1)" "$set" "$(median "$d/one.e" 1)" "$(ratio "$(median "$d/one.k" 1)" "$(median "$d/one.e" 1)")" "$REPS_FAST" \
    "$(( $(du -sk "$d/store1/objects" | cut -f1) - $(du -sk "$store/objects" | cut -f1) ))"
  cmdline kistore init EMPTY "&&" kistore --store EMPTY add single.jsonl
  rm -rf "$d/store0"
  cmdline kistore --store STORE add single.jsonl "   (fresh copy of the big store each time)"
  cmdline git add "$one_path" "&&" git commit -m "'add one run'" "   (in a git clone of STORE)"
  git -C "$d/checkout" reset -q --hard "$base"

  # 4. rank: a run's comparison group.
  if have rank; then
    local run   # a run of the store's first group
    run=$(git -C "$store" ls-tree -r --name-only main refs/groups | awk -F/ 'NR == 1 {print $6}')  # refs/groups/<key fanned out>/<run>
    : >"$d/rank.k"
    for ((i = 0; i < REPS_FAST * 2; i++)); do
      t "$d/rank.k" "$KISTORE" --store "$store" rank "${run:0:12}"
    done
    printf '%-9s kistore %8.1f ms (median of %d, wall; git: no counterpart)\n' rank: \
      "$(awk '{print $1 * 1000}' "$d/rank.k" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" $((REPS_FAST * 2))
    cmdline kistore --store STORE rank "${run:0:12}"
  else
    echo "rank:     skipped: this kistore has no \`rank\` command yet"
  fi

  # 5. size: the objects of the store kistore wrote vs those of a git repository of the same
  # documents as pretty JSON files after git gc (fast-import + repack -adf + gc: the same fresh
  # delta search that `git add` + `git commit` + `git gc` of loose objects gets, without a
  # hundred thousand files on disk; checked equal within 2 % at N=2000).
  git init -q --bare "$d/plain"
  git -C "$d/plain" fast-import --quiet <"$d/pretty.fi"
  git -C "$d/plain" repack -q -a -d -f
  git -C "$d/plain" gc -q
  local ks ps gs kgc
  ks=$(du -sk "$store/objects" | cut -f1)
  ps=$(du -sk "$d/plain/objects" | cut -f1)
  gs=$(du -sk "$gitfi/objects" | cut -f1)
  cp -a "$store" "$d/store-gc"; git -C "$d/store-gc" gc -q; kgc=$(du -sk "$d/store-gc/objects" | cut -f1)
  printf '%-9s kistore %8d KiB, git %8d KiB, ratio %5s   (objects/ of the store vs of git of the pretty JSON after gc; also: the JCS fast-import repo %d KiB, the kistore store after git gc %d KiB)\n' \
    size: "$ks" "$ps" "$(ratio "$ks" "$ps")" "$gs" "$kgc"
  cmdline du -sk STORE/objects
  cmdline git fast-import "<" pretty.fi "&&" git repack -a -d -f "&&" git gc "&&" du -sk objects \
    "  (pretty.fi: each document with metadata, json.dump(indent=2), same paths)"
  rm -rf "$d/store-gc" "$d/plain"
  # Where the store's bytes go (issue 15): objects, dictionaries, metadata, index, trees.
  if have stats; then "$KISTORE" --store "$store" stats | sed 's/^/          /'; fi

  # 6. push to an empty bare repository.
  if have push; then
    : >"$d/push.k"; : >"$d/push.g"
    for ((i = 0; i < REPS_SLOW; i++)); do
      rm -rf "$d/store1" "$d/remote.k" "$d/remote.g"; cp -a "$store" "$d/store1"
      git init -q --bare "$d/remote.k"; git init -q --bare "$d/remote.g"
      "$KISTORE" --store "$d/store1" remote add bench "$d/remote.k" >/dev/null 2>&1
      t "$d/push.k" "$KISTORE" --store "$d/store1" --no-progress --quiet push bench
      t "$d/push.g" git -C "$store" push -q "$d/remote.g" main
    done
    report push "$d/push.k" "$d/push.g" "$REPS_SLOW"
    cmdline kistore --store STORE remote add bench REMOTE "&&" kistore --store STORE push bench
    cmdline git -C STORE push REMOTE main

    # 7. pull of one new run: a second store (a clone of the remote) adds one bundle and
    # pushes; the big store pulls it (fast-forward). git: a fetch of the same commit into a
    # copy of the store (git fetch only moves a remote-tracking ref; kistore also checks
    # what came in and moves the branch).
    rm -rf "$d/other"
    "$KISTORE" --quiet clone "$d/remote.k" "$d/other" >/dev/null 2>&1
    "$KISTORE" --store "$d/other" --no-progress --quiet add "$single" >/dev/null
    "$KISTORE" --store "$d/other" --no-progress --quiet push origin >/dev/null
    : >"$d/pull.k"; : >"$d/pull.g"
    for ((i = 0; i < REPS_FAST; i++)); do
      rm -rf "$d/store1"; cp -a "$store" "$d/store1"
      "$KISTORE" --store "$d/store1" remote add bench "$d/remote.k" >/dev/null 2>&1
      t "$d/pull.k" "$KISTORE" --store "$d/store1" --no-progress --quiet pull bench
      rm -rf "$d/store2"; cp -a "$store" "$d/store2"
      t "$d/pull.g" git -C "$d/store2" fetch -q "$d/remote.k" main
    done
    report pull-one "$d/pull.k" "$d/pull.g" "$REPS_FAST"
    cmdline kistore --store STORE pull bench "   (REMOTE holds STORE + one new run)"
    cmdline git -C STORE fetch REMOTE main
    rm -rf "$d/other" "$d/store2"
  else
    echo "push:     skipped: this kistore has no \`push\` command yet"
  fi
  rm -rf "$d"
}

echo "kistore benchmark: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(lscpu | sed -n 's/^Model name: *//p')"
for s in "${sets[@]}"; do run_set "$s"; done
