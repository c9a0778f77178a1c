#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time, at low priority, from its
# committed seed corpus (read, never written: new inputs go to FOUND_DIR).
# Fails on a crash, a sanitizer report, a leak, an input that runs over 10 s
# or over 2 GiB; libFuzzer then writes the input as crash-*/timeout-*/oom-*
# into FOUND_DIR and prints how to reproduce it.
#
# Usage: run_fuzz.sh TARGET CORPUS_DIR FOUND_DIR SECONDS
set -euo pipefail
target=$1 corpus=$2 found=$3 seconds=$4
mkdir -p "$found"
dict="$(dirname "${BASH_SOURCE[0]}")/$(basename "$corpus").dict"
extra=()
[[ -f $dict ]] && extra+=("-dict=$dict")
exec nice -n 10 "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$found/" -print_final_stats=1 "${extra[@]}" "$found" "$corpus"
